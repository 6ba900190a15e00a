package stream

import (
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/expr"
)

// recycleSpy counts the batches given back through Chunk.Recycle.
type recycleSpy struct {
	mu   sync.Mutex
	recs []arrow.RecordBatch
}

func (s *recycleSpy) recycle(rec arrow.RecordBatch) {
	s.mu.Lock()
	s.recs = append(s.recs, rec)
	s.mu.Unlock()
}

func (s *recycleSpy) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.recs)
}

// TestWindowAggReturnsBuffers: a window aggregate gives back each chunk
// it consumed whole (its state copies the values), once; a chunk with a
// late row is not given back, since the late rows' batch may be the
// chunk's own.
func TestWindowAggReturnsBuffers(t *testing.T) {
	w := simpleWinAgg(WindowSpec{Kind: Tumble, Size: 10}, EmitSpec{Mode: EmitOnWindowClose})
	h := newWinHarness(t, w)
	spy := &recycleSpy{}
	c := winChunk(nil, winRow{1, 1, 5}, winRow{2, 4, 1})
	c.Recycle = spy.recycle
	h.send(ChunkMsg(c))
	h.watermark(10)
	expectWinRows(t, "closed at 10", h.barrier(), w.Cols, "insert 0|10|1|1|5", "insert 0|10|2|1|1")
	if spy.count() != 1 || spy.recs[0] != c.Rec {
		t.Fatalf("given back %d batches, want the chunk's once", spy.count())
	}
	late := winChunk(nil, winRow{1, 3, 7}, winRow{1, 12, 1}) // the first row is late
	late.Recycle = spy.recycle
	h.send(ChunkMsg(late))
	h.barrier()
	if h.lateCount() != 1 || spy.count() != 1 {
		t.Fatalf("late rows %d, given back %d: a chunk with a late row was given back", h.lateCount(), spy.count())
	}
}

// TestHashAggReturnsBuffers: a hash aggregate gives back each chunk it
// consumed, once, and its results are those of the chunk's rows.
func TestHashAggReturnsBuffers(t *testing.T) {
	env := newEnv(t)
	spy := &recycleSpy{}
	in := make(chan Message, 4)
	c := aggChunk(t, nil, inRow{"a", int64(1), 1.0})
	c.Recycle = spy.recycle
	in <- ChunkMsg(c)
	in <- BarrierMsg(Barrier{Epoch: 1})
	close(in)
	h := newAgg(false)
	h.Input = &source{in}
	got := drain(t, env, h.Start(env, []<-chan Message{in}))
	if spy.count() != 1 || spy.recs[0] != c.Rec {
		t.Fatalf("given back %d batches, want the chunk's once", spy.count())
	}
	if len(got) != 2 || got[0].Kind != KindChunk {
		t.Fatalf("messages %+v", got)
	}
	expectOut(t, render(got[0].Chunk), outRow{Insert, "a|1|1|1|1|1|1|1|1|1"})
}

// TestProjectCarriesRecycle: a Project's chunk carries its input's
// Recycle, so a hash aggregate over it gives back the projected batch
// (the input's arrays it kept) once; a chunk without Recycle stays so.
func TestProjectCarriesRecycle(t *testing.T) {
	env := newEnv(t)
	spy := &recycleSpy{}
	in := make(chan Message, 4)
	c := aggChunk(t, nil, inRow{"a", int64(1), 1.0}, inRow{"b", int64(2), 2.0})
	c.Recycle = spy.recycle
	plain := aggChunk(t, nil, inRow{"a", int64(3), 3.0})
	in <- ChunkMsg(c)
	in <- ChunkMsg(plain)
	in <- BarrierMsg(Barrier{Epoch: 1})
	close(in)
	p := &Project{Input: &source{in}, Exprs: []expr.Expr{colK, colV, colF}, Cols: aggIn}
	h := newAgg(false)
	h.Input = p
	got := drain(t, env, h.Start(env, []<-chan Message{p.Start(env, []<-chan Message{in})}))
	if spy.count() != 1 {
		t.Fatalf("given back %d batches, want 1", spy.count())
	}
	back := spy.recs[0]
	if back == c.Rec || back.Column(1).Data().Buffers()[1] != c.Rec.Column(1).Data().Buffers()[1] {
		t.Fatalf("given back %v, want the projected batch over the input's arrays", back)
	}
	if len(got) != 2 || got[0].Kind != KindChunk {
		t.Fatalf("messages %+v", got)
	}
	expectOut(t, render(got[0].Chunk), outRow{Insert, "a|2|2|4|1|3|4|2|1|3"}, outRow{Insert, "b|1|1|2|2|2|2|2|2|2"})
}

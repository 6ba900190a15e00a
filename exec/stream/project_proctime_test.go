package stream

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// tickClock returns 1 s, 2 s, 3 s... after the epoch, one step per Now, so
// the order in which Project reads it is visible.
type tickClock struct{ n atomic.Int64 }

func (c *tickClock) Now() time.Time { return time.Unix(c.n.Add(1), 0) }
func (c *tickClock) After(d time.Duration) <-chan time.Time {
	return make(chan time.Time) // never fires: Project has no timer
}

// TestProjectStampsProcTime: each chunk's rows carry the clock read once
// for the chunk, and before each barrier the PROCTIME() column gets a
// watermark at the clock's time then, no lower than any stamp sent.
func TestProjectStampsProcTime(t *testing.T) {
	env := newEnv(t)
	env.Clock = &tickClock{}
	pt, err := expr.NewCall("proctime", nil)
	if err != nil {
		t.Fatal(err)
	}
	in := make(chan Message, 8)
	in <- ChunkMsg(chunk(nil, 1, 2))
	in <- ChunkMsg(chunk(nil, 3))
	in <- BarrierMsg(Barrier{Epoch: 1})
	close(in)
	a := &expr.ColRef{Idx: 0, T: types.TInt8, Name: "a"}
	p := &Project{Input: &source{in}, Exprs: []expr.Expr{a, pt},
		Cols: []types.Column{{Name: "a", Type: types.TInt8}, {Name: "p", Type: types.TTimestampTZ}}}
	if c := p.ProcTimeCols(); fmt.Sprint(c) != "[1]" {
		t.Fatalf("ProcTimeCols %v", c)
	}
	var s []string
	for _, m := range drain(t, env, p.Start(env, []<-chan Message{in})) {
		switch m.Kind {
		case KindChunk:
			ts := m.Chunk.Rec.Column(1).(*array.Timestamp).TimestampValues()
			s = append(s, fmt.Sprint("chunk", ts))
		case KindWatermark:
			s = append(s, fmt.Sprintf("wm%d=%d", m.Watermark.Col, m.Watermark.Value))
		case KindBarrier:
			s = append(s, fmt.Sprint("barrier", m.Barrier.Epoch))
		}
	}
	want := "[chunk[1000000 1000000] chunk[2000000] wm1=3000000 barrier1]"
	if fmt.Sprint(s) != want {
		t.Fatalf("messages %v, want %s", s, want)
	}
}

package stream

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

var cols = []types.Column{{Name: "a", Type: types.TInt8}}

func chunk(ops []Op, vals ...int64) *Chunk {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.AppendValues(vals, nil)
	return &Chunk{Rec: array.NewRecordBatch(types.ArrowSchema(cols), []arrow.Array{b.NewArray()}, int64(len(vals))), Ops: ops}
}

func values(c *Chunk) []int64 { return c.Rec.Column(0).(*array.Int64).Int64Values() }

// source is a Node whose output is a channel the test feeds.
type source struct{ ch chan Message }

func (s *source) Columns() []types.Column                     { return cols }
func (s *source) Inputs() []Node                              { return nil }
func (s *source) Explain() string                             { return "test source" }
func (s *source) Start(*Env, []<-chan Message) <-chan Message { return s.ch }

func newEnv(t *testing.T) *Env {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return NewEnv(ctx, expr.Context{})
}

func drain(t *testing.T, env *Env, out <-chan Message) []Message {
	var got []Message
	for m := range out {
		got = append(got, m)
	}
	if err := env.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestFilterFixesSplitUpdates(t *testing.T) {
	env := newEnv(t)
	a := &expr.ColRef{Idx: 0, T: types.TInt8, Name: "a"}
	cond, err := expr.NewBinary(">", a, &expr.Const{V: int64(10), T: types.TInt8})
	if err != nil {
		t.Fatal(err)
	}
	in := make(chan Message, 4)
	in <- ChunkMsg(chunk([]Op{Insert, UpdateBefore, UpdateAfter, UpdateBefore, UpdateAfter, Delete, UpdateBefore, UpdateAfter}, 1, 5, 50, 60, 2, 70, 80, 90))
	in <- BarrierMsg(Barrier{Epoch: 1})
	close(in)
	f := &Filter{Input: &source{in}, Cond: cond}
	got := drain(t, env, f.Start(env, []<-chan Message{in}))
	if len(got) != 2 || got[0].Kind != KindChunk || got[1].Kind != KindBarrier {
		t.Fatalf("messages %+v", got)
	}
	c := got[0].Chunk
	wantVals := []int64{50, 60, 70, 80, 90}
	wantOps := []Op{Insert, Delete, Delete, UpdateBefore, UpdateAfter}
	for i, v := range values(c) {
		if v != wantVals[i] || c.Op(i) != wantOps[i] {
			t.Fatalf("row %d: %d %v, want %d %v", i, v, c.Op(i), wantVals[i], wantOps[i])
		}
	}
	if c.Len() != len(wantVals) {
		t.Fatalf("%d rows", c.Len())
	}
}

func TestProjectKeepsOps(t *testing.T) {
	env := newEnv(t)
	a := &expr.ColRef{Idx: 0, T: types.TInt8, Name: "a"}
	twice, err := expr.NewBinary("*", a, &expr.Const{V: int64(2), T: types.TInt8})
	if err != nil {
		t.Fatal(err)
	}
	in := make(chan Message, 2)
	in <- ChunkMsg(chunk([]Op{Insert, Delete}, 3, 4))
	close(in)
	p := &Project{Input: &source{in}, Exprs: []expr.Expr{twice}, Cols: []types.Column{{Name: "b", Type: types.TInt8}}}
	got := drain(t, env, p.Start(env, []<-chan Message{in}))
	c := got[0].Chunk
	if v := values(c); v[0] != 6 || v[1] != 8 || c.Op(0) != Insert || c.Op(1) != Delete {
		t.Fatalf("got %v %v", v, c.Ops)
	}
}

func TestUnionAlignsBarriers(t *testing.T) {
	for round := 0; round < 50; round++ {
		env := newEnv(t)
		a, b := make(chan Message, 8), make(chan Message, 8)
		a <- ChunkMsg(chunk(nil, 1))
		a <- BarrierMsg(Barrier{Epoch: 1})
		a <- ChunkMsg(chunk(nil, 2)) // epoch 2: must wait for b's barrier
		close(a)
		b <- ChunkMsg(chunk(nil, 10))
		b <- BarrierMsg(Barrier{Epoch: 1, Checkpoint: true})
		close(b)
		u := &Union{Ins: []Node{&source{a}, &source{b}}, Cols: cols}
		got := drain(t, env, u.Start(env, []<-chan Message{a, b}))
		if len(got) != 4 {
			t.Fatalf("messages %+v", got)
		}
		before := map[int64]bool{}
		for _, m := range got[:2] {
			if m.Kind != KindChunk {
				t.Fatalf("round %d: %v before the barrier", round, m.Kind)
			}
			before[values(m.Chunk)[0]] = true
		}
		if !before[1] || !before[10] {
			t.Fatalf("round %d: epoch 1 rows %v", round, before)
		}
		if got[2].Kind != KindBarrier || got[2].Barrier.Epoch != 1 || !got[2].Barrier.Checkpoint {
			t.Fatalf("round %d: barrier %+v", round, got[2])
		}
		if got[3].Kind != KindChunk || values(got[3].Chunk)[0] != 2 {
			t.Fatalf("round %d: after the barrier %+v", round, got[3])
		}
	}
}

func TestUnionWatermarkIsMinimum(t *testing.T) {
	env := newEnv(t)
	a, b := make(chan Message), make(chan Message)
	u := &Union{Ins: []Node{&source{a}, &source{b}}, Cols: cols}
	out := u.Start(env, []<-chan Message{a, b})
	expect := func(want int64) {
		t.Helper()
		m := <-out
		if m.Kind != KindWatermark || m.Watermark.Value != want {
			t.Fatalf("got %+v, want watermark %d", m, want)
		}
	}
	a <- WatermarkMsg(Watermark{Value: 10}) // b has none yet: nothing
	b <- WatermarkMsg(Watermark{Value: 5})
	expect(5)
	b <- WatermarkMsg(Watermark{Value: 20})
	expect(10)
	a <- WatermarkMsg(Watermark{Value: 8}) // never moves back
	close(a)                               // a no longer holds it back
	expect(20)
	close(b)
	if _, ok := <-out; ok {
		t.Fatal("output not closed")
	}
}

// A WHERE of several parts drops a row at its cheapest part before a later
// part is evaluated for it (exec.QualList), as the batch engine does:
// a > 0 AND 100 / a > 10 keeps 1..9 and never divides by 0 or a negative.
func TestFilterPartsSkipDroppedRows(t *testing.T) {
	env := newEnv(t)
	a := &expr.ColRef{Idx: 0, T: types.TInt8, Name: "a"}
	bin := func(op string, l, r expr.Expr) expr.Expr {
		e, err := expr.NewBinary(op, l, r)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	k := func(v int64) expr.Expr { return &expr.Const{V: v, T: types.TInt8} }
	div := bin(">", bin("/", k(100), a), k(10)) // costs 2, so runs second
	cond := &expr.And{Args: []expr.Expr{div, bin(">", a, k(0))}}
	in := make(chan Message, 2)
	in <- ChunkMsg(chunk(nil, 0, 5, -3, 9, 12, 0))
	close(in)
	out := (&Filter{Input: &source{in}, Cond: cond}).Start(env, []<-chan Message{in})
	var got []int64
	for _, m := range drain(t, env, out) {
		if m.Kind == KindChunk {
			got = append(got, values(m.Chunk)...)
		}
	}
	if len(got) != 2 || got[0] != 5 || got[1] != 9 {
		t.Fatalf("got %v, want [5 9]", got)
	}
}

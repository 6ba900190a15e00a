package stream

import (
	"errors"
	"testing"
	"time"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// TestHashAggStateBytes: the hash aggregation's state estimate follows
// its live groups: it grows with new keys and goes back to nothing when
// every group's rows are deleted.
func TestHashAggStateBytes(t *testing.T) {
	r := startRun(t, newAgg(false))
	size := func() int64 { return hashAggState{r}.stateBytes() }
	if n := size(); n != 0 {
		t.Fatalf("empty state %d bytes", n)
	}
	rows := []inRow{{"a", int64(1), 1.5}, {"b", int64(3), nil}}
	step(t, r, aggChunk(t, nil, rows...))
	two := size()
	step(t, r, aggChunk(t, nil, inRow{"c", int64(1), 1.0}, inRow{"d", nil, 2.0}, inRow{"e", int64(5), 3.0}))
	five := size()
	if two <= 0 || five <= two || five != two*5/2 {
		t.Errorf("2 groups: %d bytes, 5 groups: %d bytes", two, five)
	}
	step(t, r, aggChunk(t, []Op{Delete, Delete}, rows...))
	if n := size(); n != five-two {
		t.Errorf("after deleting 2 of 5 groups: %d bytes, want %d", n, five-two)
	}
}

// TestMeterBusyAndState: an operator given a Meter reports its busy time,
// not counting the time blocked on its full output queue, and (when
// stateful) its state at each barrier; a stateless one reports none.
func TestMeterBusyAndState(t *testing.T) {
	parent := newEnv(t)
	var m Meter
	env := parent.WithMeter(&m)
	a := &expr.ColRef{Idx: 0, T: types.TInt8, Name: "a"}
	cond, err := expr.NewBinary(">", a, &expr.Const{V: int64(0), T: types.TInt8})
	if err != nil {
		t.Fatal(err)
	}
	in := make(chan Message, ChannelSize*2+2)
	for i := range ChannelSize * 2 {
		in <- ChunkMsg(chunk(nil, int64(i+1)))
	}
	in <- BarrierMsg(Barrier{Epoch: 1})
	close(in)
	f := &Filter{Input: &source{in}, Cond: cond}
	out := f.Start(env, []<-chan Message{in})
	// Let the filter fill its output queue and block on it for a while.
	const hold = 200 * time.Millisecond
	deadline := time.Now().Add(5 * time.Second)
	for len(out) < ChannelSize && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(hold)
	got := drain(t, env, out)
	if len(got) != ChannelSize*2+1 {
		t.Fatalf("%d messages", len(got))
	}
	if w := time.Duration(m.sendWait.Load()); w < hold*3/4 {
		t.Errorf("blocked on output %v, want about %v", w, hold)
	}
	if b := m.Busy(); b <= 0 || b >= hold/2 {
		t.Errorf("busy %v: not the handling time alone", b)
	}
	if _, ok := m.StateBytes(); ok {
		t.Error("a filter reports state")
	}

	// A stateful operator's state as of the barrier.
	var hm Meter
	h := newAgg(false)
	hin := make(chan Message, 3)
	hin <- ChunkMsg(aggChunk(t, nil, inRow{"a", int64(1), 1.5}, inRow{"b", int64(3), nil}))
	hin <- BarrierMsg(Barrier{Epoch: 1})
	close(hin)
	h.Input = &source{hin}
	drain(t, parent, h.Start(parent.WithMeter(&hm), []<-chan Message{hin}))
	if n, ok := hm.StateBytes(); !ok || n <= 0 {
		t.Errorf("hash agg state %d (reported: %v)", n, ok)
	}
}

// TestWithMeterErr: an operator Env made by WithMeter fails its parent
// and sees the parent's failures (a view reads Err to tell an upstream
// failure from the end of its input).
func TestWithMeterErr(t *testing.T) {
	parent := newEnv(t)
	a, b := parent.WithMeter(&Meter{}), parent.WithMeter(&Meter{})
	boom := errors.New("boom")
	a.Fail(boom)
	if !errors.Is(parent.Err(), boom) || !errors.Is(b.Err(), boom) || parent.Ctx.Err() == nil {
		t.Fatalf("parent %v, sibling %v, ctx %v", parent.Err(), b.Err(), parent.Ctx.Err())
	}
}

package dataflow

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
)

// splitHub connects the two ends of named streams in one process: the
// stand-in for the network between two nodes.
type splitHub struct {
	mu    sync.Mutex
	slots map[string]chan (<-chan stream.Message)
	names []string // every stream put, in order
	gets  []string // every stream asked for, in order
}

func (h *splitHub) slot(name string) chan (<-chan stream.Message) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.slots == nil {
		h.slots = map[string]chan (<-chan stream.Message){}
	}
	s := h.slots[name]
	if s == nil {
		s = make(chan (<-chan stream.Message), 1)
		h.slots[name] = s
	}
	return s
}

func (h *splitHub) put(name string, ch <-chan stream.Message) {
	h.mu.Lock()
	h.names = append(h.names, name)
	h.mu.Unlock()
	h.slot(name) <- ch
}

func (h *splitHub) get(ctx context.Context, name string) <-chan stream.Message {
	h.mu.Lock()
	h.gets = append(h.gets, name)
	h.mu.Unlock()
	out := make(chan stream.Message, stream.ChannelSize)
	go func() {
		defer close(out)
		var in <-chan stream.Message
		select {
		case in = <-h.slot(name):
		case <-ctx.Done():
			return
		}
		for m := range in {
			select {
			case out <- m:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// hubSplits is a SplitPlacement over a splitHub: the coordinator's
// (coord) or the other node's; here says which splits and instances
// the coordinator runs.
type hubSplits struct {
	hub       *splitHub
	coord     bool
	here      func(k int) bool
	elsewhere []string // the instances the coordinator was told run on the other node (hub.mu)
}

func (h *hubSplits) Place(InstancePlace, []<-chan stream.Message) (<-chan stream.Message, bool) {
	return nil, false
}
func (h *hubSplits) PlaceSplits(uint32) bool                      { return true }
func (h *hubSplits) Local(_ uint32, k, _ int) bool                { return h.here(k) == h.coord }
func (h *hubSplits) Send(x SplitStream, ch <-chan stream.Message) { h.hub.put(dataName(x), ch) }
func (h *hubSplits) Recv(x SplitStream) <-chan stream.Message {
	return h.hub.get(x.Ctx, dataName(x))
}
func (h *hubSplits) Control(x SplitStream, out <-chan stream.Message) <-chan stream.Message {
	ctl, pos := fmt.Sprintf("ctl p%d s%d in%d", x.Op, x.Split, x.Input), fmt.Sprintf("pos p%d s%d in%d", x.Op, x.Split, x.Input)
	if h.coord {
		h.hub.put(ctl, out)
		return h.hub.get(x.Ctx, pos)
	}
	h.hub.put(pos, out)
	return h.hub.get(x.Ctx, ctl)
}
func (h *hubSplits) Output(in InstancePlace) <-chan stream.Message {
	return h.hub.get(in.Ctx, fmt.Sprintf("out p%d #%d", in.Op, in.Instance))
}
func (h *hubSplits) Elsewhere(in InstancePlace) {
	h.hub.mu.Lock()
	h.elsewhere = append(h.elsewhere, fmt.Sprintf("p%d #%d", in.Op, in.Instance))
	h.hub.mu.Unlock()
}

func dataName(x SplitStream) string {
	return fmt.Sprintf("data p%d #%d in%d s%d", x.Op, x.Instance, x.Input, x.Split)
}

// placedRun runs spec over two "nodes" in one process, the coordinator
// running splits and instances 0 and 1 of every placed operator, the
// other runtime (ServePlaced of each placed root of the plan) 2 and 3,
// every stream between them through a hub; after FLUSH it returns the
// coordinator's job and the hub.
func placedRun(t *testing.T, spec JobSpec, in Inputs) (*Job, *splitHub, *hubSplits) {
	t.Helper()
	hub := &splitHub{}
	here := func(k int) bool { return k < 2 }
	sp := &hubSplits{hub: hub, coord: true, here: here}
	coord := New(Config{BarrierInterval: -1, Placement: sp}, in)
	t.Cleanup(coord.Close)
	node := newRuntime(t, in)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	env := stream.NewEnv(ctx, expr.Context{})
	for op := range ParallelNodes(spec.Plan) {
		if !node.PlacedRoot(spec.Plan, op) {
			continue
		}
		outs, err := node.ServePlaced(ctx, env, spec.ID, spec.Name, spec.Plan, op, &hubSplits{hub: hub, here: here}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(outs) != 2 || outs[2] == nil || outs[3] == nil {
			t.Fatalf("the node runs instances %v of operator %d, want 2 and 3", slices.Collect(maps.Keys(outs)), op)
		}
		for k, ch := range outs {
			hub.put(fmt.Sprintf("out p%d #%d", op, k), ch)
		}
	}
	j, err := coord.StartJob(spec)
	if err != nil {
		t.Fatal(err)
	}
	flush(t, coord)
	if err := env.Err(); err != nil {
		t.Fatal(err)
	}
	if err := j.Err(); err != nil {
		t.Fatal(err)
	}
	return j, hub, sp
}

// hubNames are the streams put on hub and asked of it so far.
func hubNames(hub *splitHub) (put, got []string) {
	hub.mu.Lock()
	defer hub.mu.Unlock()
	return slices.Clone(hub.names), slices.Clone(hub.gets)
}

// TestPlacedSplitsEqualSerial: parSplitChain at parallelism 4 placed
// over two "nodes" (placedRun): its inner aggregation with its source
// splits, filters and exchanges, and the outer aggregation above it
// (upper.go): the senders of each node send to the other node's
// instances directly (N×N), barriers and FLUSH come from the
// coordinator over the control streams, only the outer aggregation's
// outputs come back to the coordinator, and the rows and the view's
// watermark equal one reader's and one instance's.
func TestPlacedSplitsEqualSerial(t *testing.T) {
	const rows, n = 25, 4
	serial := newRuntime(t, &splitInputs{rows: rows})
	j1, err := serial.StartJob(parSplitChain(1))
	if err != nil {
		t.Fatal(err)
	}
	flush(t, serial)
	want := anyRows(t, j1)

	spec := parSplitChain(n)
	rt := newRuntime(t, &splitInputs{rows: rows})
	if !rt.PlacedOp(spec.Plan, 1) || !rt.PlacedOp(spec.Plan, 0) || !rt.PlacedRoot(spec.Plan, 0) || rt.PlacedRoot(spec.Plan, 1) {
		t.Fatal("the inner aggregation (over the split source) and the outer one (over the inner) are placed, the outer one their root")
	}
	j, hub, sp := placedRun(t, spec, &splitInputs{rows: rows})
	if got := anyRows(t, j); !slices.Equal(got, want) {
		t.Fatalf("placed: %v, want %v", got, want)
	}
	if wm, ok := j.Watermark(); !ok || wm != rows-2 {
		t.Fatalf("watermark %d (%v), want %d", wm, ok, rows-2)
	}
	// Each node's senders feed the other node's instances directly.
	names, gets := hubNames(hub)
	for _, name := range []string{"data p1 #2 in0 s0", "data p1 #3 in0 s1", "data p1 #0 in0 s2", "data p1 #1 in0 s3", "ctl p1 s2 in0", "pos p1 s3 in0",
		"data p0 #2 in0 s0", "data p0 #3 in0 s1", "data p0 #0 in0 s2", "data p0 #1 in0 s3", "out p0 #2", "out p0 #3"} {
		if !slices.Contains(names, name) {
			t.Fatalf("no stream %q between the nodes: %v", name, names)
		}
	}
	for _, name := range names {
		if name == "data p1 #0 in0 s0" || name == "data p1 #2 in0 s3" || name == "data p0 #0 in0 s1" || name == "data p0 #3 in0 s2" {
			t.Fatalf("a sender's stream to an instance on its own node crossed the hub: %s", name)
		}
	}
	noInnerOutputs(t, names, gets, sp, 1)
}

// noInnerOutputs fails unless the outputs of placed operator op stayed
// on the nodes (the coordinator asked for none, the node sent none) and
// the coordinator was told that its instances 2 and 3 run on the other
// node (their checkpoints are reported there).
func noInnerOutputs(t *testing.T, names, gets []string, sp *hubSplits, op int) {
	t.Helper()
	for _, name := range append(slices.Clone(names), gets...) {
		if strings.HasPrefix(name, fmt.Sprintf("out p%d ", op)) {
			t.Fatalf("the outputs of operator %d went through the coordinator: %s", op, name)
		}
	}
	sp.hub.mu.Lock()
	defer sp.hub.mu.Unlock()
	for _, k := range []int{2, 3} {
		if !slices.Contains(sp.elsewhere, fmt.Sprintf("p%d #%d", op, k)) {
			t.Fatalf("the coordinator does not know that instance %d of operator %d runs on the node: %v", k, op, sp.elsewhere)
		}
	}
}

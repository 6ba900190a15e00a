package dataflow

import (
	"context"
	"fmt"
	"maps"
	"slices"
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
	hub   *splitHub
	coord bool
	here  func(k int) bool
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

func dataName(x SplitStream) string {
	return fmt.Sprintf("data p%d #%d in%d s%d", x.Op, x.Instance, x.Input, x.Split)
}

// TestPlacedSplitsEqualSerial: parSplitChain at parallelism 4 with its
// inner aggregation placed whole (its source splits, filters and
// exchanges) over two "nodes" in one process, the coordinator running
// splits and instances 0 and 1, the other runtime (ServePlaced) 2 and 3,
// every stream between them through a hub: the senders of each node
// send to the other node's instances directly (N×N), barriers and FLUSH
// come from the coordinator over the control streams, and the rows and
// the view's watermark equal one reader's and one instance's.
func TestPlacedSplitsEqualSerial(t *testing.T) {
	const rows, n = 25, 4
	serial := newRuntime(t, &splitInputs{rows: rows})
	j1, err := serial.StartJob(parSplitChain(1))
	if err != nil {
		t.Fatal(err)
	}
	flush(t, serial)
	want := anyRows(t, j1)

	hub := &splitHub{}
	here := func(k int) bool { return k < 2 }
	coord := New(Config{BarrierInterval: -1, Placement: &hubSplits{hub: hub, coord: true, here: here}}, &splitInputs{rows: rows})
	t.Cleanup(coord.Close)
	node := newRuntime(t, &splitInputs{rows: rows})
	spec := parSplitChain(n)
	if !node.PlacedOp(spec.Plan, 1) || node.PlacedOp(spec.Plan, 0) {
		t.Fatal("the inner aggregation (over the split source) is placed whole, the outer one (over the inner) is not")
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	env := stream.NewEnv(ctx, expr.Context{})
	outs, err := node.ServePlaced(ctx, env, spec.ID, spec.Name, parSplitChain(n).Plan, 1, &hubSplits{hub: hub, here: here}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 2 || outs[2] == nil || outs[3] == nil {
		t.Fatalf("the node runs instances %v, want 2 and 3", slices.Collect(maps.Keys(outs)))
	}
	for k, ch := range outs {
		hub.put(fmt.Sprintf("out p1 #%d", k), ch)
	}
	j, err := coord.StartJob(spec)
	if err != nil {
		t.Fatal(err)
	}
	flush(t, coord)
	if err := env.Err(); err != nil {
		t.Fatal(err)
	}
	if got := anyRows(t, j); !slices.Equal(got, want) {
		t.Fatalf("placed: %v, want %v", got, want)
	}
	if wm, ok := j.Watermark(); !ok || wm != rows-2 {
		t.Fatalf("watermark %d (%v), want %d", wm, ok, rows-2)
	}
	// Each node's senders feed the other node's instances directly.
	hub.mu.Lock()
	names := slices.Clone(hub.names)
	hub.mu.Unlock()
	for _, name := range []string{"data p1 #2 in0 s0", "data p1 #3 in0 s1", "data p1 #0 in0 s2", "data p1 #1 in0 s3", "ctl p1 s2 in0", "pos p1 s3 in0"} {
		if !slices.Contains(names, name) {
			t.Fatalf("no stream %q between the nodes: %v", name, names)
		}
	}
	for _, name := range names {
		if name == "data p1 #0 in0 s0" || name == "data p1 #2 in0 s3" {
			t.Fatalf("a sender's stream to an instance on its own node crossed the hub: %s", name)
		}
	}
}

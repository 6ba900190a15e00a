package dataflow

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/connector"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/types"
)

// A hash exchange passes a chunk routed for it (Part of its routing) to
// the part's instance as it is (the same chunk, not a copy), after the
// rows it gathered before it; a chunk whose Part is of another routing,
// and a chunk without one, it routes by hashing.
func TestExchangePassesRoutedParts(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	j := &Job{env: &stream.Env{Ctx: ctx}}
	const n = 2
	rt, other := stream.NewRouting(n), stream.NewRouting(n)
	// values per instance
	var own [n][]int64
	for v := int64(0); len(own[0]) < 40 || len(own[1]) < 40; v++ {
		k := rt.Owner(v)
		own[k] = append(own[k], v)
	}
	mixed := func(lo, hi int) []int64 { return append(append([]int64{}, own[0][lo:hi]...), own[1][lo:hi]...) }
	first := &stream.Chunk{Rec: rec(mixed(0, 10)...)}                     // hashed, gathered
	routed := &stream.Chunk{Rec: rec(own[1][10:20]...), Part: rt.Part(1)} // passed on
	// routed by another routing that claims every row for instance 0: hashed
	foreign := &stream.Chunk{Rec: rec(mixed(20, 30)...), Part: other.Part(0)}
	in := make(chan stream.Message, 8)
	in <- stream.ChunkMsg(first)
	in <- stream.ChunkMsg(routed)
	in <- stream.ChunkMsg(foreign)
	in <- stream.BarrierMsg(stream.Barrier{Epoch: 1})
	close(in)
	sent := make([]atomic.Int64, n)
	outs := j.exchange(in, []int{0}, []types.T{types.TInt8}, n, sent, rt)
	got := make([][]*stream.Chunk, n)
	for k, msgs := range drainAll(outs) {
		for _, m := range msgs {
			if m.Kind == stream.KindChunk {
				got[k] = append(got[k], m.Chunk)
			}
		}
	}
	for k := range n {
		var vals []int64
		for _, c := range got[k] {
			vals = append(vals, c.Rec.Column(0).(*array.Int64).Int64Values()...)
		}
		want := append(append(append([]int64{}, own[k][0:10]...), own[k][10:20]...), own[k][20:30]...)
		if k == 0 {
			want = append(append([]int64{}, own[0][0:10]...), own[0][20:30]...)
		}
		if len(vals) != len(want) {
			t.Fatalf("instance %d got %v, want %v", k, vals, want)
		}
		for i := range want {
			if vals[i] != want[i] {
				t.Fatalf("instance %d got %v, want %v", k, vals, want)
			}
		}
		if int(sent[k].Load()) != len(want) {
			t.Fatalf("instance %d: %d rows counted, %d sent", k, sent[k].Load(), len(want))
		}
	}
	passed := false
	for _, c := range got[1] {
		passed = passed || c == routed
	}
	if !passed {
		t.Fatal("the routed chunk was not passed on as it is")
	}
}

// scanColumn maps an exchange's key through fused Projects (plain column
// references only) and Filters to the scan's column.
func TestScanColumnThroughChain(t *testing.T) {
	scan := &stream.Scan{Name: "bid", Kind: stream.ScanSource}
	ref := func(i int) expr.Expr { return &expr.ColRef{Idx: i, T: types.TInt8} }
	filter := &stream.Filter{Input: scan, Cond: ref(0)}
	proj := &stream.Project{Input: filter, Exprs: []expr.Expr{ref(2), ref(0), &expr.Const{T: types.TInt8}}}
	if s, col := scanColumn(proj, 0); s != scan || col != 2 {
		t.Fatalf("column 0: %v, %d; want the scan's column 2", s, col)
	}
	if s, col := scanColumn(proj, 1); s != scan || col != 0 {
		t.Fatalf("column 1: %v, %d; want the scan's column 0", s, col)
	}
	if s, _ := scanColumn(proj, 2); s != nil {
		t.Fatal("a computed column maps to a scan column")
	}
	if s, _ := scanColumn(&stream.Union{Ins: []stream.Node{scan}}, 0); s != nil {
		t.Fatal("a union maps to a scan column")
	}
}

// routeAsks records, per run, whether each split reader of roundInputs
// was asked to route (OpenSourceRouted with a route); its readers do not
// route (no RunParts), so they read as before.
type routeAsks struct {
	*roundInputs
	mu     sync.Mutex
	routed []bool
}

func (in *routeAsks) OpenSourceColumns(job, oid uint32, _ []int, pos []byte, split, splits int, onErr func(error)) (SourceReader, error) {
	return in.OpenSourceRouted(job, oid, nil, nil, pos, split, splits, onErr)
}

func (in *routeAsks) OpenSourceRouted(job, oid uint32, _ []int, route *connector.Route, pos []byte, split, splits int, onErr func(error)) (SourceReader, error) {
	in.mu.Lock()
	in.routed = append(in.routed, route != nil)
	in.mu.Unlock()
	return in.OpenSourceSplit(job, oid, pos, split, splits, onErr)
}

// TestResumedReadersRoute: the readers of a split source under a hash
// exchange by a bigint key are asked to route their rows when the job
// resumes from a checkpoint (its readers open before its operators
// start) as when it starts anew; before, a resumed view read unrouted
// until its next rebuild, and a generator whose steps depended on the
// routing could not resume at all.
func TestResumedReadersRoute(t *testing.T) {
	const n = 2
	spec := func() JobSpec {
		scan := &stream.Scan{Rel: 1, Name: "src", Kind: stream.ScanSource, Cols: tsCols, AppendOnly: true, Splittable: true, Readers: n}
		k := &expr.ColRef{Idx: 1, T: types.TInt8, Name: "k"}
		cols := []types.Column{{Name: "k", Type: types.TInt8}, {Name: "n", Type: types.TInt8}}
		agg := parAt(&stream.HashAgg{Input: scan, GroupBy: []expr.Expr{k}, Aggs: []stream.AggSpec{{Kind: stream.AggCountStar}}, Cols: cols},
			[][]int{{1}}, []types.T{types.TInt8}, n)
		return JobSpec{ID: 4, Name: "routed", Plan: agg, Key: []int{0}, Cols: cols}
	}
	dir := t.TempDir()
	in := &routeAsks{roundInputs: newRoundInputs()}
	rng := rand.New(rand.NewPCG(4, 2))
	store, _ := openStore(t, dir)
	rt := New(Config{BarrierInterval: -1, CheckpointInterval: -1, Checkpoints: store}, in)
	if _, err := rt.StartJob(spec()); err != nil {
		t.Fatal(err)
	}
	in.push(0, rng)
	flush(t, rt)
	checkpointNow(t, rt)
	rt.Close()
	if !slices.Equal(in.routed, []bool{true, true}) {
		t.Fatalf("new job: readers asked to route %v", in.routed)
	}
	in.routed = nil
	store2, cp := openStore(t, dir)
	rt2 := New(Config{BarrierInterval: -1, CheckpointInterval: -1, Checkpoints: store2, Recovered: cp}, in)
	defer rt2.Close()
	j, err := rt2.StartJob(spec())
	if err != nil {
		t.Fatal(err)
	}
	rt2.EndRecovery()
	in.push(1, rng)
	flush(t, rt2)
	if !j.resumed {
		t.Fatalf("the job did not resume: %+v", j.Recovery())
	}
	if !slices.Equal(in.routed, []bool{true, true}) {
		t.Fatalf("resumed job: readers asked to route %v", in.routed)
	}
}

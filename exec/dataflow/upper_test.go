package dataflow

import (
	"slices"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/types"
)

// modCount is SELECT k % 7 AS g, count(*) AS c FROM src GROUP BY g over
// the split source read by n readers, the aggregation as n instances
// routed by g (the projection fused into the readers).
func modCount(n int) stream.Node {
	scan := &stream.Scan{Rel: 1, Name: "src", Kind: stream.ScanSource, Cols: tsCols, AppendOnly: true,
		Watermark: &stream.ScanWatermark{Col: 0, Expr: minus(1)}, Splittable: true}
	if n > 1 {
		scan.Readers = n
	}
	g, err := expr.NewBinary("%", &expr.ColRef{Idx: 1, T: types.TInt8, Name: "k"}, &expr.Const{V: int64(7), T: types.TInt8})
	if err != nil {
		panic(err)
	}
	gCol := types.Column{Name: "g", Type: types.TInt8}
	proj := &stream.Project{Input: scan, Exprs: []expr.Expr{g}, Cols: []types.Column{gCol}}
	return parAt(&stream.HashAgg{Input: proj, GroupBy: []expr.Expr{&expr.ColRef{Idx: 0, T: types.TInt8, Name: "g"}},
		Aggs: []stream.AggSpec{{Kind: stream.AggCountStar}}, Cols: []types.Column{gCol, {Name: "c", Type: types.TInt8}}},
		[][]int{{0}}, []types.T{types.TInt8}, n)
}

// upperJoin is Nexmark q5's shape: a join whose left input is a keyed
// operator over the split source and whose right input is a keyed
// operator over another one:
//
//	SELECT l.g, l.c, r.c, r.n FROM (modCount) l
//	JOIN (SELECT c, count(*) AS n FROM (modCount) GROUP BY c) r ON l.c = r.c
//
// every operator as n instances: the right aggregation routed by c
// above its input's instances (a projection fused between), the join by
// c on both sides.
func upperJoin(n int) JobSpec {
	c := &expr.ColRef{Idx: 1, T: types.TInt8, Name: "c"}
	proj := &stream.Project{Input: modCount(n), Exprs: []expr.Expr{c}, Cols: []types.Column{{Name: "c", Type: types.TInt8}}}
	rcols := []types.Column{{Name: "c", Type: types.TInt8}, {Name: "n", Type: types.TInt8}}
	right := parAt(&stream.HashAgg{Input: proj, GroupBy: []expr.Expr{&expr.ColRef{Idx: 0, T: types.TInt8, Name: "c"}},
		Aggs: []stream.AggSpec{{Kind: stream.AggCountStar}}, Cols: rcols}, [][]int{{0}}, []types.T{types.TInt8}, n)
	out := []types.Column{{Name: "g", Type: types.TInt8}, {Name: "lc", Type: types.TInt8}, {Name: "rc", Type: types.TInt8}, {Name: "n", Type: types.TInt8}}
	join := &stream.HashJoin{Left: modCount(n), Right: right, Kind: exec.InnerJoin,
		LeftKeys: []expr.Expr{c}, RightKeys: []expr.Expr{&expr.ColRef{Idx: 0, T: types.TInt8, Name: "c"}}, Cols: out}
	return JobSpec{ID: 3, Name: "upperjoin", Plan: parAt(join, [][]int{{1}, {0}}, []types.T{types.TInt8}, n), Cols: out}
}

// upperNoShuffle is Nexmark q9's shape: a keyed operator that takes its
// input's instances directly (no shuffle) above a keyed operator over the
// split source: SELECT g, c, count(*) FROM (modCount) GROUP BY g, c,
// routed by g.
func upperNoShuffle(n int) JobSpec {
	out := []types.Column{{Name: "g", Type: types.TInt8}, {Name: "c", Type: types.TInt8}, {Name: "n", Type: types.TInt8}}
	agg := &stream.HashAgg{Input: modCount(n), GroupBy: []expr.Expr{&expr.ColRef{Idx: 0, T: types.TInt8, Name: "g"}, &expr.ColRef{Idx: 1, T: types.TInt8, Name: "c"}},
		Aggs: []stream.AggSpec{{Kind: stream.AggCountStar}}, Cols: out}
	var plan stream.Node = agg
	if n > 1 {
		plan = &stream.Parallel{Input: agg, Keys: [][]int{{0}}, KeyTypes: []types.T{types.TInt8}, N: n, NoShuffle: true}
	}
	return JobSpec{ID: 4, Name: "noshuffle", Plan: plan, Key: []int{0, 1}, Cols: out}
}

// TestPlacedUpperEqualSerial: the q5 and q9 shapes at parallelism 4
// placed over two "nodes" (placedRun): every operator runs on the nodes,
// only the top one's outputs come back to the coordinator; the join's
// and the right aggregation's inputs cross between the nodes sender to
// instance, the no-shuffle aggregation's never do (instance k takes
// instance k's output on its node); the rows and the view's watermark
// equal the serial plan's.
func TestPlacedUpperEqualSerial(t *testing.T) {
	const rows, n = 200, 4
	for _, c := range []struct {
		spec   func(int) JobSpec
		placed []int // the operators (ParallelNodes) under the root
		cross  []string
		local  []string
	}{
		// ParallelNodes: 0 the join, 1 its left aggregation, 2 the right
		// aggregation, 3 the count under it.
		{upperJoin, []int{1, 2, 3}, []string{"data p0 #2 in0 s0", "data p0 #0 in1 s3", "data p2 #3 in0 s1", "data p2 #1 in0 s2", "data p3 #2 in0 s1"},
			[]string{"data p0 #0 in0 s1", "data p2 #3 in0 s2"}},
		// 0 the no-shuffle aggregation, 1 the count under it
		{upperNoShuffle, []int{1}, []string{"data p1 #2 in0 s0"}, []string{"data p0 "}},
	} {
		spec := c.spec(n)
		t.Run(spec.Name, func(t *testing.T) {
			serial := newRuntime(t, &splitInputs{rows: rows})
			j1, err := serial.StartJob(c.spec(1))
			if err != nil {
				t.Fatal(err)
			}
			flush(t, serial)
			want := anyRows(t, j1)
			if len(want) < 7 {
				t.Fatalf("too few rows to test anything: %v", want)
			}
			wantWM, _ := j1.Watermark()

			rt := newRuntime(t, &splitInputs{rows: rows})
			if !rt.PlacedRoot(spec.Plan, 0) {
				t.Fatal("the top operator is not placed on the nodes")
			}
			for _, op := range c.placed {
				if !rt.PlacedOp(spec.Plan, op) || rt.PlacedRoot(spec.Plan, op) {
					t.Fatalf("operator %d is not placed under the top one", op)
				}
			}
			j, hub, sp := placedRun(t, spec, &splitInputs{rows: rows})
			if got := anyRows(t, j); !slices.Equal(got, want) {
				t.Fatalf("placed: %v, want %v", got, want)
			}
			if wm, _ := j.Watermark(); wm != wantWM {
				t.Fatalf("watermark %d, want %d", wm, wantWM)
			}
			names, gets := hubNames(hub)
			for _, name := range c.cross {
				if !slices.Contains(names, name) {
					t.Fatalf("no stream %q between the nodes: %v", name, names)
				}
			}
			for _, name := range names {
				for _, l := range c.local {
					if strings.HasPrefix(name, l) {
						t.Fatalf("a stream that stays on its node crossed the hub: %s", name)
					}
				}
			}
			for _, op := range c.placed {
				noInnerOutputs(t, names, gets, sp, op)
			}
			if !slices.Contains(names, "out p0 #2") || !slices.Contains(gets, "out p0 #3") {
				t.Fatalf("the top operator's outputs did not come back to the coordinator: %v, %v", names, gets)
			}
			t.Logf("%d streams put on the hub, %d asked of it", len(names), len(gets))
		})
	}
}

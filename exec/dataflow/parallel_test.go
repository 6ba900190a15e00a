package dataflow

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/types"
)

// parAgg is SELECT a, count(*), sum(a) FROM t GROUP BY a over table 100,
// its aggregation run as n instances (n > 1: behind a hash exchange).
func parAgg(n int) JobSpec {
	scan := &stream.Scan{Rel: 100, Name: "t", Kind: stream.ScanTable, Cols: cols}
	col := &expr.ColRef{Idx: 0, T: types.TInt8, Name: "a"}
	out := []types.Column{{Name: "a", Type: types.TInt8}, {Name: "n", Type: types.TInt8}, {Name: "s", Type: types.TNumeric}}
	var plan stream.Node = &stream.HashAgg{Input: scan, GroupBy: []expr.Expr{col},
		Aggs: []stream.AggSpec{{Kind: stream.AggCountStar}, {Kind: stream.AggSum, Arg: col}}, Cols: out}
	if n > 1 {
		plan = &stream.Parallel{Input: plan, Keys: [][]int{{0}}, KeyTypes: []types.T{types.TInt8}, N: n}
	}
	return JobSpec{ID: 1, Name: "agg", Plan: plan, Key: []int{0}, Cols: out}
}

// viewRows renders a job's rows as sorted "a n s" lines.
func viewRows(t *testing.T, j *Job) []string {
	t.Helper()
	_, recs, err := j.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		for i := 0; i < int(r.NumRows()); i++ {
			out = append(out, fmt.Sprintf("%d %d %s", r.Column(0).(*array.Int64).Value(i), r.Column(1).(*array.Int64).Value(i),
				r.Column(2).ValueStr(i)))
		}
	}
	slices.Sort(out)
	return out
}

// randomWrites applies rounds of inserts and deletes to tbl, calling
// after each round.
func randomWrites(tbl *fakeTable, rng *rand.Rand, rounds int, after func()) {
	for range rounds {
		for range 1 + rng.IntN(20) {
			if len(tbl.rows) > 0 && rng.IntN(3) == 0 {
				tbl.delete(tbl.rows[rng.IntN(len(tbl.rows))])
				continue
			}
			vals := make([]int64, 1+rng.IntN(30))
			for i := range vals {
				vals[i] = rng.Int64N(50) - 10
			}
			tbl.insert(vals...)
		}
		after()
	}
}

// TestParallelAggEqualsSerial: the same writes, epoch by epoch, give the
// same view at parallelism 1, 3 and 8.
func TestParallelAggEqualsSerial(t *testing.T) {
	for seed := range uint64(3) {
		var want [][]string
		for _, n := range []int{1, 3, 8} {
			tbl := &fakeTable{rows: []int64{1, 2, 2, 3}}
			rt := newRuntime(t, &fakeInputs{tables: map[uint32]*fakeTable{100: tbl}})
			j, err := rt.StartJob(parAgg(n))
			if err != nil {
				t.Fatal(err)
			}
			var got [][]string
			randomWrites(tbl, rand.New(rand.NewPCG(seed, 7)), 15, func() {
				flush(t, rt)
				got = append(got, viewRows(t, j))
			})
			rt.Close()
			if n == 1 {
				want = got
				continue
			}
			for e := range want {
				if !slices.Equal(got[e], want[e]) {
					t.Fatalf("seed %d, parallelism %d, epoch %d: %v, want %v", seed, n, e, got[e], want[e])
				}
			}
		}
	}
}

// TestParallelRestart checkpoints a parallel aggregation and restarts it
// twice, each time with the parallelism of the list: with the same one
// every instance resumes from its own state, with another the instances
// restore the vnodes they own now from every old instance's state
// (rescaling); either way the job reads only the writes after the cut.
// The second restart also checks that the first snapshots after a
// rescale are full ones. Each view equals an uninterrupted serial run.
func TestParallelRestart(t *testing.T) {
	for _, ns := range [][3]int{{3, 3, 3}, {4, 2, 3}, {2, 3, 1}, {1, 4, 2}, {4, 1, 8}} {
		t.Run(fmt.Sprintf("%d-%d-%d", ns[0], ns[1], ns[2]), func(t *testing.T) {
			dir := t.TempDir()
			tbl := &fakeTable{}
			in := &ckInputs{fakeInputs: fakeInputs{tables: map[uint32]*fakeTable{100: tbl}}}
			rng := rand.New(rand.NewPCG(uint64(ns[0]), uint64(ns[1])))
			store, _ := openStore(t, dir)
			rt := New(Config{BarrierInterval: -1, CheckpointInterval: -1, Checkpoints: store}, in)
			if _, err := rt.StartJob(parAgg(ns[0])); err != nil {
				t.Fatal(err)
			}
			randomWrites(tbl, rng, 5, func() { flush(t, rt) })
			checkpointNow(t, rt)
			before := len(tbl.log)
			randomWrites(tbl, rng, 3, func() {})
			rt.Close()
			for step, n := range ns[1:] {
				store2, cp := openStore(t, dir)
				rt2 := New(Config{BarrierInterval: -1, CheckpointInterval: -1, Checkpoints: store2, Recovered: cp}, in)
				j, err := rt2.StartJob(parAgg(n))
				if err != nil {
					t.Fatal(err)
				}
				rt2.EndRecovery()
				flush(t, rt2)
				rec := j.Recovery()
				if !j.resumed || rec.Epoch == 0 {
					t.Fatalf("restart %d at %d did not resume: %+v", step, n, rec)
				}
				if old := ns[step]; (old != n) != (rec.RescaledFrom == old) {
					t.Fatalf("restart %d from %d to %d: RescaledFrom %d", step, old, n, rec.RescaledFrom)
				}
				var after int64
				for _, d := range tbl.log[before:] {
					for _, r := range append(d.Inserted, d.Deleted...) {
						after += r.NumRows()
					}
				}
				if got := j.Counters().RowsIn; got != after {
					t.Fatalf("restart %d: the resumed job read %d rows, want the %d written after the checkpoint", step, got, after)
				}
				// The uninterrupted serial run over the same table.
				rt3 := newRuntime(t, &fakeInputs{tables: map[uint32]*fakeTable{100: tbl}})
				j3, err := rt3.StartJob(parAgg(1))
				if err != nil {
					t.Fatal(err)
				}
				flush(t, rt3)
				if got, want := viewRows(t, j), viewRows(t, j3); !slices.Equal(got, want) {
					t.Fatalf("after restart %d (%d to %d) %v, want %v", step, ns[step], n, got, want)
				}
				rt3.Close()
				randomWrites(tbl, rng, 3, func() { flush(t, rt2) })
				checkpointNow(t, rt2)
				before = len(tbl.log)
				randomWrites(tbl, rng, 2, func() {})
				rt2.Close()
			}
		})
	}
}

// TestPlanRescaleOldRecords: checkpoint records written before shapes
// (no Shape, no Par) still rescale when their plan can be recognised:
// one written at parallelism 1 into any N, one at N > 1 into another
// N > 1; one at N > 1 into a single instance rebuilds, saying why.
func TestPlanRescaleOldRecords(t *testing.T) {
	old := func(n int) *jobMeta {
		p := parAgg(n).Plan
		return &jobMeta{ID: 1, Fingerprint: fingerprint(p), Parallelism: planParallelism(p)}
	}
	for _, c := range []struct {
		from, to int
		why      string
	}{{1, 3, ""}, {4, 2, ""}, {3, 3, ""}, {4, 1, "predates state kept per vnode"}} {
		rp, why := planRescale(old(c.from), parAgg(c.to).Plan)
		if c.why != "" {
			if rp != nil || !strings.Contains(why, c.why) {
				t.Errorf("%d to %d: %v %q, want a rebuild saying %q", c.from, c.to, rp, why, c.why)
			}
			continue
		}
		if why != "" || (rp == nil) != (c.from == c.to) {
			t.Errorf("%d to %d: %v %q", c.from, c.to, rp, why)
			continue
		}
		if rp == nil {
			continue
		}
		for n, id := range rp.oldID {
			if _, ok := n.(*stream.HashAgg); ok {
				want := "1/0"
				if c.from > 1 {
					want = "1/1"
				}
				if id != want || rp.oldN[n] != c.from {
					t.Errorf("%d to %d: the aggregation's old id %s of %d, want %s of %d", c.from, c.to, id, rp.oldN[n], want, c.from)
				}
			}
		}
	}
}

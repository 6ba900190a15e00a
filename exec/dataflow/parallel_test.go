package dataflow

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
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
// The same for the chain of two aggregations exchanging N×N (parChain):
// each of its parallel operators resumes or rescales on its own.
func TestParallelRestart(t *testing.T) {
	for _, plan := range []struct {
		name string
		spec func(int) JobSpec
	}{{"agg", parAgg}, {"chain", parChain}} {
		for _, ns := range [][3]int{{3, 3, 3}, {4, 2, 3}, {2, 3, 1}, {1, 4, 2}, {4, 1, 8}} {
			t.Run(fmt.Sprintf("%s/%d-%d-%d", plan.name, ns[0], ns[1], ns[2]), func(t *testing.T) {
				testParallelRestart(t, plan.spec, ns)
			})
		}
	}
}

// testParallelRestart runs TestParallelRestart's steps for the job spec
// gives at each parallelism of ns.
func testParallelRestart(t *testing.T, spec func(int) JobSpec, ns [3]int) {
	dir := t.TempDir()
	tbl := &fakeTable{}
	in := &ckInputs{fakeInputs: fakeInputs{tables: map[uint32]*fakeTable{100: tbl}}}
	rng := rand.New(rand.NewPCG(uint64(ns[0]), uint64(ns[1])))
	store, _ := openStore(t, dir)
	rt := New(Config{BarrierInterval: -1, CheckpointInterval: -1, Checkpoints: store}, in)
	if _, err := rt.StartJob(spec(ns[0])); err != nil {
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
		j, err := rt2.StartJob(spec(n))
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
		j3, err := rt3.StartJob(spec(1))
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

// anyRows renders a job's rows, every column as text, sorted.
func anyRows(t *testing.T, j *Job) []string {
	t.Helper()
	_, recs, err := j.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		for i := 0; i < int(r.NumRows()); i++ {
			var cells []string
			for c := 0; c < int(r.NumCols()); c++ {
				cells = append(cells, r.Column(c).ValueStr(i))
			}
			out = append(out, strings.Join(cells, " "))
		}
	}
	slices.Sort(out)
	return out
}

// parAt wraps op in a Parallel of n instances routed by keys (n > 1).
func parAt(op stream.Node, keys [][]int, ts []types.T, n int) stream.Node {
	if n <= 1 {
		return op
	}
	return &stream.Parallel{Input: op, Keys: keys, KeyTypes: ts, N: n}
}

// parChain is an aggregation of an aggregation, SELECT n, count(*) FROM
// (SELECT a, count(*) AS n FROM t GROUP BY a) GROUP BY n, both run as n
// instances: the inner one's instances hash their changes (updates whose
// count changed become a delete and an insert in two instances) straight
// to the outer one's (N×N).
func parChain(n int) JobSpec {
	scan := &stream.Scan{Rel: 100, Name: "t", Kind: stream.ScanTable, Cols: cols}
	a := &expr.ColRef{Idx: 0, T: types.TInt8, Name: "a"}
	innerCols := []types.Column{{Name: "a", Type: types.TInt8}, {Name: "n", Type: types.TInt8}}
	inner := parAt(&stream.HashAgg{Input: scan, GroupBy: []expr.Expr{a}, Aggs: []stream.AggSpec{{Kind: stream.AggCountStar}}, Cols: innerCols},
		[][]int{{0}}, []types.T{types.TInt8}, n)
	// a fused projection between the two: (n, a)
	nc := &expr.ColRef{Idx: 1, T: types.TInt8, Name: "n"}
	proj := &stream.Project{Input: inner, Exprs: []expr.Expr{nc, a}, Cols: []types.Column{innerCols[1], innerCols[0]}}
	key := &expr.ColRef{Idx: 0, T: types.TInt8, Name: "n"}
	out := []types.Column{{Name: "n", Type: types.TInt8}, {Name: "c", Type: types.TInt8}, {Name: "s", Type: types.TNumeric}}
	outer := parAt(&stream.HashAgg{Input: proj, GroupBy: []expr.Expr{key},
		Aggs: []stream.AggSpec{{Kind: stream.AggCountStar}, {Kind: stream.AggSum, Arg: &expr.ColRef{Idx: 1, T: types.TInt8, Name: "a"}}}, Cols: out},
		[][]int{{0}}, []types.T{types.TInt8}, n)
	return JobSpec{ID: 1, Name: "chain", Plan: outer, Key: []int{0}, Cols: out}
}

// TestParallelChainEqualsSerial: an aggregation of an aggregation (an
// N×N exchange between them, a projection fused into the inner one's
// instances) gives, epoch by epoch, the view of one instance each, at
// parallelism 3 and 8.
func TestParallelChainEqualsSerial(t *testing.T) {
	for seed := range uint64(3) {
		var want [][]string
		for _, n := range []int{1, 3, 8} {
			tbl := &fakeTable{rows: []int64{1, 2, 2, 3}}
			rt := newRuntime(t, &fakeInputs{tables: map[uint32]*fakeTable{100: tbl}})
			j, err := rt.StartJob(parChain(n))
			if err != nil {
				t.Fatal(err)
			}
			var got [][]string
			randomWrites(tbl, rand.New(rand.NewPCG(seed, 11)), 15, func() {
				flush(t, rt)
				got = append(got, anyRows(t, j))
			})
			rt.Close()
			if n == 1 {
				want = got
				if len(want[len(want)-1]) < 3 {
					t.Fatalf("seed %d: too few groups to test anything: %v", seed, want[len(want)-1])
				}
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

// splitInputs is a finite source (oid 1) of tsCols rows ts = k = 0..rows-1
// that splits: reader i of n reads the blocks of 10 rows whose number is
// i mod n (so with 3 blocks, readers 3 and up read nothing).
type splitInputs struct {
	fakeInputs
	rows int64
}

func (in *splitInputs) OpenSourceSplit(_, _ uint32, _ []byte, split, splits int, _ func(error)) (SourceReader, error) {
	run := func(ctx context.Context, emit func(arrow.RecordBatch) error) error {
		for b := int64(split) * 10; b < in.rows; b += int64(splits) * 10 {
			var ts []int64
			for v := b; v < min(b+10, in.rows); v++ {
				ts = append(ts, v)
			}
			if err := emit(tsRec(ts...)); err != nil {
				return err
			}
		}
		return nil
	}
	return SourceReader{Run: run, Finite: true}, nil
}

func (in *splitInputs) OpenSource(oid uint32, onErr func(error)) (RunFunc, bool, error) {
	r, err := in.OpenSourceSplit(0, oid, nil, 0, 1, onErr)
	return r.Run, true, err
}

// parSplitChain is, over the split source read by n readers (watermark
// ts - 1 µs): WHERE k % 3 <> 0, then SELECT ts, count(*) AS c GROUP BY ts,
// then SELECT c, ts, count(*), sum(c) GROUP BY c, ts, both aggregations as
// n instances. The filter runs once per reader, the inner aggregation's
// instances hash to the outer one's, and the watermark on ts passes both.
func parSplitChain(n int) JobSpec {
	scan := &stream.Scan{Rel: 1, Name: "src", Kind: stream.ScanSource, Cols: tsCols, AppendOnly: true,
		Watermark: &stream.ScanWatermark{Col: 0, Expr: minus(1)}, Splittable: true}
	if n > 1 {
		scan.Readers = n
	}
	k := &expr.ColRef{Idx: 1, T: types.TInt8, Name: "k"}
	mod, err := expr.NewBinary("%", k, &expr.Const{V: int64(3), T: types.TInt8})
	if err != nil {
		panic(err)
	}
	cond, err := expr.NewBinary("<>", mod, &expr.Const{V: int64(0), T: types.TInt8})
	if err != nil {
		panic(err)
	}
	filter := &stream.Filter{Input: scan, Cond: cond}
	ts := &expr.ColRef{Idx: 0, T: types.TTimestamp, Name: "ts"}
	innerCols := []types.Column{{Name: "ts", Type: types.TTimestamp}, {Name: "c", Type: types.TInt8}}
	inner := parAt(&stream.HashAgg{Input: filter, GroupBy: []expr.Expr{ts}, Aggs: []stream.AggSpec{{Kind: stream.AggCountStar}}, Cols: innerCols},
		[][]int{{0}}, []types.T{types.TTimestamp}, n)
	c := &expr.ColRef{Idx: 1, T: types.TInt8, Name: "c"}
	out := []types.Column{{Name: "c", Type: types.TInt8}, {Name: "ts", Type: types.TTimestamp}, {Name: "n", Type: types.TInt8}, {Name: "s", Type: types.TNumeric}}
	outer := parAt(&stream.HashAgg{Input: inner, GroupBy: []expr.Expr{c, ts},
		Aggs: []stream.AggSpec{{Kind: stream.AggCountStar}, {Kind: stream.AggSum, Arg: c}}, Cols: out},
		[][]int{{1, 0}}, []types.T{types.TInt8, types.TTimestamp}, n)
	return JobSpec{ID: 2, Name: "splitchain", Plan: outer, Key: []int{0, 1}, Cols: out}
}

// TestParallelSplitChainEqualsSerial: a split source's filter runs once
// per reader and two aggregations exchange N×N; the rows equal one
// reader's and one instance's, and the view's watermark ends where one
// reader's does (rows-2): readers and instances without rows (at 8, five
// readers read nothing) hold nothing back.
func TestParallelSplitChainEqualsSerial(t *testing.T) {
	const rows = 25
	var want []string
	for _, n := range []int{1, 3, 8} {
		rt := newRuntime(t, &splitInputs{rows: rows})
		j, err := rt.StartJob(parSplitChain(n))
		if err != nil {
			t.Fatal(err)
		}
		flush(t, rt)
		got := anyRows(t, j)
		wm, ok := j.Watermark()
		if !ok || wm != rows-2 {
			t.Fatalf("parallelism %d: watermark %d (%v), want %d", n, wm, ok, rows-2)
		}
		if n > 1 {
			var scans, filters int
			for _, op := range j.Operators() {
				switch op.Name {
				case "Scan":
					scans++
				case "Filter":
					filters++
				}
			}
			if scans != n || filters != n {
				t.Fatalf("parallelism %d: %d scans and %d filters running, want one per reader", n, scans, filters)
			}
		}
		rt.Close()
		if n == 1 {
			want = got
			if len(want) != rows-(rows+2)/3 {
				t.Fatalf("%d rows: %v", len(want), want)
			}
			continue
		}
		if !slices.Equal(got, want) {
			t.Fatalf("parallelism %d: %v, want %v", n, got, want)
		}
	}
}

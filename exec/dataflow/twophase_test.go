package dataflow

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/types"
)

// globalOver is SELECT count(*), count(n), sum(n), sum(a) FROM (in): a
// global aggregation over in's columns a (int8) and n (int8), planned in
// two phases (planner.TwoPhaseOf) when in runs as several instances.
func globalOver(in stream.Node, appendOnly bool, extra ...stream.AggSpec) stream.Node {
	a := &expr.ColRef{Idx: 0, T: types.TInt8, Name: "a"}
	n := &expr.ColRef{Idx: 1, T: types.TInt8, Name: "n"}
	aggs := append([]stream.AggSpec{{Kind: stream.AggCountStar}, {Kind: stream.AggCount, Arg: n},
		{Kind: stream.AggSum, Arg: n}, {Kind: stream.AggSum, Arg: a}}, extra...)
	var cols []types.Column
	for i, s := range aggs {
		t, err := s.ResultType()
		if err != nil {
			panic(err)
		}
		cols = append(cols, types.Column{Name: "c" + string(rune('0'+i)), Type: t})
	}
	h := &stream.HashAgg{Input: in, Aggs: aggs, Cols: cols, AppendOnly: appendOnly}
	if tp := planner.TwoPhaseOf(h, stream.Width(in)); tp != nil {
		return tp
	}
	return h
}

// TestTwoPhaseGlobalAggEqualsSerial: a global aggregation over a GROUP BY
// aggregation of a table under random inserts and deletes (so the
// partials see retractions: update pairs of the groups) gives, epoch by
// epoch, the view of the serial plan at parallelism 3 and 8, and runs
// its partial phase once per instance of the GROUP BY.
func TestTwoPhaseGlobalAggEqualsSerial(t *testing.T) {
	for seed := range uint64(3) {
		var want [][]string
		for _, n := range []int{1, 3, 8} {
			tbl := &fakeTable{rows: []int64{1, 2, 2, 3}}
			rt := newRuntime(t, &fakeInputs{tables: map[uint32]*fakeTable{100: tbl}})
			spec := parAgg(n)
			plan := globalOver(spec.Plan, false)
			if n > 1 {
				if _, ok := plan.(*stream.Project); !ok {
					t.Fatalf("parallelism %d: not planned in two phases: %T", n, plan)
				}
			}
			spec = JobSpec{ID: 3, Name: "global", Plan: plan, Key: nil, Cols: plan.Columns()}
			j, err := rt.StartJob(spec)
			if err != nil {
				t.Fatal(err)
			}
			var got [][]string
			randomWrites(tbl, rand.New(rand.NewPCG(seed, 13)), 15, func() {
				flush(t, rt)
				got = append(got, anyRows(t, j))
			})
			if n > 1 {
				hashAggs := 0
				for _, op := range j.Operators() {
					if op.Name == "HashAgg" {
						hashAggs++
					}
				}
				if hashAggs != 2*n+1 { // the GROUP BY's instances, the partials, the final
					t.Fatalf("parallelism %d: %d HashAgg operators running, want %d", n, hashAggs, 2*n+1)
				}
			}
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

// TestTwoPhaseMinMaxAppendOnly: over a split source (append-only) min
// and max run in two phases too and equal one reader's result; over a
// retracting input they keep the aggregation single.
func TestTwoPhaseMinMaxAppendOnly(t *testing.T) {
	k := &expr.ColRef{Idx: 1, T: types.TInt8, Name: "k"}
	minmax := []stream.AggSpec{{Kind: stream.AggMin, Arg: k}, {Kind: stream.AggMax, Arg: k}}
	var want []string
	for _, n := range []int{1, 3, 8} {
		scan := &stream.Scan{Rel: 1, Name: "src", Kind: stream.ScanSource, Cols: tsCols, AppendOnly: true, Splittable: true}
		if n > 1 {
			scan.Readers = n
		}
		// columns a, n: k and k
		proj := &stream.Project{Input: scan, Exprs: []expr.Expr{k, k},
			Cols: []types.Column{{Name: "a", Type: types.TInt8}, {Name: "n", Type: types.TInt8}}}
		plan := globalOver(proj, true, minmax...)
		if _, ok := plan.(*stream.Project); ok != (n > 1) {
			t.Fatalf("parallelism %d: two phases %v", n, ok)
		}
		rt := newRuntime(t, &splitInputs{rows: 45})
		j, err := rt.StartJob(JobSpec{ID: 4, Name: "minmax", Plan: plan, Cols: plan.Columns()})
		if err != nil {
			t.Fatal(err)
		}
		flush(t, rt)
		got := anyRows(t, j)
		rt.Close()
		if n == 1 {
			want = got
			if len(want) != 1 || !strings.HasPrefix(want[0], "45 45 990 990 0 44") {
				t.Fatalf("serial result %v", want)
			}
			continue
		}
		if !slices.Equal(got, want) {
			t.Fatalf("parallelism %d: %v, want %v", n, got, want)
		}
	}
	if tp := globalOver(parAgg(3).Plan, false, minmax[:1]...); tp != nil {
		if _, ok := tp.(*stream.HashAgg); !ok {
			t.Fatalf("min over a retracting input planned in two phases: %T", tp)
		}
	}
}

// globalSpec is globalOver(parAgg(n)) as a job.
func globalSpec(n int) JobSpec {
	plan := globalOver(parAgg(n).Plan, false)
	return JobSpec{ID: 5, Name: "global", Plan: plan, Cols: plan.Columns()}
}

// TestTwoPhaseRestart: a two-phase aggregation checkpoints each partial
// under its instance's id; a restart at the same parallelism resumes
// (every partial from its own state) and equals an uninterrupted serial
// run; a restart at another parallelism rebuilds the view from its
// inputs, saying that the partials are kept per instance, and equals it
// too.
func TestTwoPhaseRestart(t *testing.T) {
	for _, ns := range [][2]int{{3, 3}, {3, 2}, {2, 8}, {4, 1}} {
		t.Run(fmt.Sprintf("%d-%d", ns[0], ns[1]), func(t *testing.T) {
			dir := t.TempDir()
			tbl := &fakeTable{}
			in := &ckInputs{fakeInputs: fakeInputs{tables: map[uint32]*fakeTable{100: tbl}}}
			rng := rand.New(rand.NewPCG(uint64(ns[0]), uint64(ns[1])))
			store, _ := openStore(t, dir)
			rt := New(Config{BarrierInterval: -1, CheckpointInterval: -1, Checkpoints: store}, in)
			if _, err := rt.StartJob(globalSpec(ns[0])); err != nil {
				t.Fatal(err)
			}
			randomWrites(tbl, rng, 5, func() { flush(t, rt) })
			checkpointNow(t, rt)
			randomWrites(tbl, rng, 3, func() {})
			rt.Close()

			store2, cp := openStore(t, dir)
			rt2 := New(Config{BarrierInterval: -1, CheckpointInterval: -1, Checkpoints: store2, Recovered: cp}, in)
			defer rt2.Close()
			j, err := rt2.StartJob(globalSpec(ns[1]))
			if err != nil {
				t.Fatal(err)
			}
			rt2.EndRecovery()
			flush(t, rt2)
			rec := j.Recovery()
			checkTwoPhaseRecovery(t, rec, ns[0], ns[1])
			rt3 := newRuntime(t, &fakeInputs{tables: map[uint32]*fakeTable{100: tbl}})
			defer rt3.Close()
			j3, err := rt3.StartJob(globalSpec(1))
			if err != nil {
				t.Fatal(err)
			}
			flush(t, rt3)
			if got, want := anyRows(t, j), anyRows(t, j3); !slices.Equal(got, want) || len(want) != 1 {
				t.Fatalf("after the restart %v, want %v", got, want)
			}
			t.Logf("%+v", rec)
		})
	}
}

// checkTwoPhaseRecovery checks how a job with a two-phase aggregation
// restarted from parallelism from to to: resumed at the same one, else
// rebuilt saying why (the plan's shape changes between 1 and N > 1; the
// partials are kept per instance).
func checkTwoPhaseRecovery(t *testing.T, rec Recovery, from, to int) {
	t.Helper()
	switch {
	case from == to:
		if rec.Epoch == 0 || rec.Rebuilt != "" {
			t.Fatalf("restart at the same parallelism did not resume: %+v", rec)
		}
	case to == 1 || from == 1:
		if rec.Epoch != 0 || !strings.Contains(rec.Rebuilt, "two phases") {
			t.Fatalf("restart from %d to %d resumed: %+v", from, to, rec)
		}
	default:
		if rec.Epoch != 0 || !strings.Contains(rec.Rebuilt, "two-phase aggregation") {
			t.Fatalf("restart from %d to %d: %+v, want a rebuild naming the two-phase aggregation", from, to, rec)
		}
	}
}

// oneReader is splitInputs without OpenSourceSplit: its source is read
// by one reader whatever the plan says.
type oneReader struct {
	fakeInputs
	s *splitInputs
}

func (o *oneReader) OpenSource(oid uint32, onErr func(error)) (RunFunc, bool, error) {
	return o.s.OpenSource(oid, onErr)
}

// TestTwoPhaseInputNarrowerThanPlanned: when the runtime reads a source
// planned for 3 readers with one, the partials get their rows through an
// exchange without keys (all to one instance) and the result still
// equals one reader's.
func TestTwoPhaseInputNarrowerThanPlanned(t *testing.T) {
	k := &expr.ColRef{Idx: 1, T: types.TInt8, Name: "k"}
	scan := &stream.Scan{Rel: 1, Name: "src", Kind: stream.ScanSource, Cols: tsCols, AppendOnly: true, Splittable: true, Readers: 3}
	proj := &stream.Project{Input: scan, Exprs: []expr.Expr{k, k},
		Cols: []types.Column{{Name: "a", Type: types.TInt8}, {Name: "n", Type: types.TInt8}}}
	plan := globalOver(proj, true, stream.AggSpec{Kind: stream.AggMax, Arg: k})
	if _, ok := plan.(*stream.Project); !ok {
		t.Fatalf("not two-phase: %T", plan)
	}
	rt := newRuntime(t, &oneReader{s: &splitInputs{rows: 45}})
	defer rt.Close()
	j, err := rt.StartJob(JobSpec{ID: 6, Name: "narrow", Plan: plan, Cols: plan.Columns()})
	if err != nil {
		t.Fatal(err)
	}
	flush(t, rt)
	if got := anyRows(t, j); len(got) != 1 || got[0] != "45 45 990 990 44" {
		t.Fatalf("%v, want [45 45 990 990 44]", got)
	}
}

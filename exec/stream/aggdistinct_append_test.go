package stream

import (
	"fmt"
	"maps"
	"math/rand"
	"reflect"
	"slices"
	"testing"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// appendDistinctAggs are DISTINCT aggregates of every storage (integers,
// floats with -0 and 0, numeric 1.5 and 1.50, char(n), intervals, text)
// and a pair of them over one integer column (a share), with and without
// FILTERs.
func appendDistinctAggs(t *testing.T) []propAgg {
	t.Helper()
	call := func(name, arg string, filter expr.Expr) propAgg {
		a := propCol(arg)
		fn, err := exec.ResolveAggregate(name, []types.T{a.T}, false)
		if err != nil {
			t.Fatalf("%s(%s): %v", name, arg, err)
		}
		return propAgg{call: exec.AggCall{Fn: fn, Args: []expr.Expr{a}, Distinct: true, Filter: filter}}
	}
	b := propCol("b")
	var aggs []propAgg
	for _, c := range []string{"i4", "f8", "num", "bp", "iv", "txt", "ts"} {
		aggs = append(aggs, call("count", c, nil), call("count", c, b))
	}
	aggs = append(aggs, call("sum", "f8", nil), call("sum", "num", nil), call("avg", "i4", nil),
		call("sum", "i8", nil), call("count", "i8", b), call("count", "tm", nil)) // tm: an integer alone
	return aggs
}

// TestAppendOnlyDistinct runs inserts with many duplicates through a
// HashAgg over an append-only input and one over a general input, and
// requires the same output after every barrier; the append-only one's
// DISTINCT aggregates keep no row counts and singly linked pairs (but
// the shared ones do), over an integer no representatives, and refuse a
// retraction.
func TestAppendOnlyDistinct(t *testing.T) {
	aggs := appendDistinctAggs(t)
	for _, groupBy := range [][]string{nil, {"k1"}, {"k2", "d"}} {
		t.Run(fmt.Sprint(groupBy), func(t *testing.T) {
			rng := rand.New(rand.NewSource(int64(len(groupBy)) + 11))
			ao, _ := propPlans(t, propConfig{groupBy: groupBy}, aggs)
			gen, _ := propPlans(t, propConfig{groupBy: groupBy}, aggs)
			ao.AppendOnly = true
			ra, rg := startRun(t, ao), startRun(t, gen)
			var seen [][]types.Value
			for epoch := 0; epoch < 60; epoch++ {
				var rows [][]types.Value
				for n := rng.Intn(40); n > 0; n-- {
					r := propRow(rng)
					if len(seen) > 0 && rng.Intn(2) == 0 { // a duplicate
						r = seen[rng.Intn(len(seen))]
					}
					rows, seen = append(rows, r), append(seen, r)
				}
				if len(rows) > 0 {
					rec := propRecord(t, rows)
					if err := ra.consume(&Chunk{Rec: rec}); err != nil {
						t.Fatalf("epoch %d: append-only: %v", epoch, err)
					}
					if err := rg.consume(&Chunk{Rec: rec, Ops: make([]Op, len(rows))}); err != nil {
						t.Fatalf("epoch %d: general: %v", epoch, err)
					}
				}
				oa, err := ra.flush()
				if err != nil {
					t.Fatal(err)
				}
				og, err := rg.flush()
				if err != nil {
					t.Fatal(err)
				}
				if got, want := renderAll(oa, ao.Cols), renderAll(og, gen.Cols); !reflect.DeepEqual(got, want) {
					t.Fatalf("epoch %d: append-only\n%v\ngeneral\n%v", epoch, got, want)
				}
			}
			alone, shared := 0, 0
			for _, a := range ra.aggs {
				d, ok := a.(*distinctCol)
				if !ok {
					continue
				}
				switch {
				case d.sh != nil:
					shared++
					if d.appendOnly || d.cnt.len() == 0 || d.lists.prev.len() == 0 {
						t.Errorf("a shared DISTINCT aggregate without row counts or back links")
					}
				default:
					alone++
					if !d.appendOnly || d.cnt.len() != 0 || d.lists.pg.len() != 0 || d.lists.prev.len() != 0 {
						t.Errorf("an append-only DISTINCT aggregate keeps row counts or back links")
					}
					if d.noRep != (d.st == stInt) || (d.noRep && d.rep.n != 0) {
						t.Errorf("an append-only DISTINCT aggregate over %s: noRep %v, %d representatives", d.t, d.noRep, d.rep.n)
					}
				}
			}
			if alone != 13 || shared != 7 { // integer columns (i4, ts, i8) share
				t.Fatalf("%d DISTINCT aggregates alone, %d shared; want 13 and 7", alone, shared)
			}
			if err := ra.consume(&Chunk{Rec: propRecord(t, seen[:1]), Ops: []Op{Delete}}); err == nil {
				t.Fatal("a retraction on an append-only input: no error")
			}
		})
	}
}

// TestAppendOnlyDistinctCheckpointRestore is TestHashAggCheckpointRestore
// and TestHashAggRescale for append-only DISTINCT aggregates (which
// checkpoint their pairs' values from the pair table when they keep no
// representatives), with and without closing groups.
func TestAppendOnlyDistinctCheckpointRestore(t *testing.T) {
	aggs := appendDistinctAggs(t)
	for _, cfg := range ckAggConfigs {
		if !cfg.appendOnly {
			continue
		}
		for seed := 1; seed <= 3; seed++ {
			t.Run(fmt.Sprintf("%s/%d", cfg.name, seed), func(t *testing.T) {
				rng := rand.New(rand.NewSource(int64(seed) + 40))
				h, _ := propPlans(t, propConfig{groupBy: cfg.groupBy}, aggs)
				h.AppendOnly, h.Clean = true, cfg.clean
				h.Input = &Scan{Cols: propCols}
				in := genCkAggInput(t, rng, cfg, 30)
				full := map[int]bool{}
				orig := runCkAgg(t, h, in, 0, nil, full)
				if len(orig.cpIn) == 0 {
					t.Fatal("no checkpoints")
				}
				for k, at := range orig.cpIn {
					rest := runCkAgg(t, h, in, at+1, orig.states[k], full)
					if want := orig.out[orig.cpOut[k]:]; !slices.Equal(rest.out, want) {
						t.Fatalf("restored at checkpoint %d: output\n%s", k, diffLines(rest.out, want))
					}
					for j, st := range rest.states {
						if want := orig.states[k+1+j]; !maps.Equal(st, want) {
							t.Fatalf("restored at checkpoint %d: its checkpoint %d differs: %s", k, j, diffStates(st, want))
						}
					}
				}
				keys, ok := ColumnKeys(h.GroupBy)
				if !ok {
					t.Fatal("group keys are not columns")
				}
				ts := make([]types.T, len(keys))
				for i, g := range h.GroupBy {
					ts[i] = g.Type()
				}
				checkRescale(t, h, keys, ts, func() []Message { return in })
			})
		}
	}
}

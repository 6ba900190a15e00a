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

// shareAggs are DISTINCT aggregates over integer columns with and without
// FILTERs, a FILTERed one first in each column (its pairs a subset of the
// later ones'), so that they share their pairs per column.
func shareAggs(t *testing.T) []propAgg {
	t.Helper()
	cmp := func(op, col string, v int64) expr.Expr {
		c := propCol(col)
		e, err := expr.NewBinary(op, c, &expr.Const{V: v, T: c.T})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	call := func(name, arg string, distinct bool, filter expr.Expr) propAgg {
		a := propCol(arg)
		fn, err := exec.ResolveAggregate(name, []types.T{a.T}, false)
		if err != nil {
			t.Fatalf("%s(%s): %v", name, arg, err)
		}
		return propAgg{call: exec.AggCall{Fn: fn, Args: []expr.Expr{a}, Distinct: distinct, Filter: filter}}
	}
	b := propCol("b")
	var aggs []propAgg
	for _, c := range []string{"i2", "i8", "d", "ts", "o"} {
		aggs = append(aggs, call("count", c, true, b), call("count", c, true, nil),
			call("count", c, true, cmp("<", "i2", 0)), call("max", c, true, cmp(">=", "i2", 0)),
			call("count", c, false, b), call("min", c, true, nil))
	}
	for _, c := range []string{"i2", "i8"} {
		aggs = append(aggs, call("sum", c, true, cmp(">", "i2", -50)), call("avg", c, true, b))
	}
	aggs = append(aggs, call("count", "i4", true, b)) // alone: not shared
	return aggs
}

// TestSharedDistinctMatchesGeneralPath runs random changelogs through a
// HashAgg whose DISTINCT aggregates share their pairs and one whose do
// not, and requires the same output after every barrier, and no pairs
// left once every row is retracted.
func TestSharedDistinctMatchesGeneralPath(t *testing.T) {
	aggs := shareAggs(t)
	for _, groupBy := range [][]string{nil, {"k1"}, {"k1", "k2"}} {
		t.Run(fmt.Sprint(groupBy), func(t *testing.T) {
			rng := rand.New(rand.NewSource(int64(len(groupBy)) + 7))
			shared, _ := propPlans(t, propConfig{groupBy: groupBy}, aggs)
			general, _ := propPlans(t, propConfig{groupBy: groupBy}, aggs)
			general.noDistinctShare = true
			rs, rg := startRun(t, shared), startRun(t, general)
			if len(rs.shares) != 5 || len(rg.shares) != 0 {
				t.Fatalf("%d and %d shares, want 5 and 0", len(rs.shares), len(rg.shares))
			}
			var live [][]types.Value
			epochs := 150
			if testing.Short() {
				epochs = 40
			}
			for epoch := 0; epoch <= epochs; epoch++ {
				var ops []Op
				var rows [][]types.Value
				for n := rng.Intn(30); n > 0 && epoch < epochs; n-- {
					switch x := rng.Intn(10); {
					case x < 3 && len(live) > 0:
						i := rng.Intn(len(live))
						ops, rows = append(ops, Delete), append(rows, live[i])
						live = append(live[:i], live[i+1:]...)
					case x < 5 && len(live) > 0: // a duplicate
						r := live[rng.Intn(len(live))]
						ops, rows = append(ops, Insert), append(rows, r)
						live = append(live, r)
					default:
						r := propRow(rng)
						ops, rows = append(ops, Insert), append(rows, r)
						live = append(live, r)
					}
				}
				if epoch == epochs { // retract everything
					rows, ops = live, make([]Op, len(live))
					for i := range ops {
						ops[i] = Delete
					}
					live = nil
				}
				if len(rows) > 0 {
					rec := propRecord(t, rows)
					if err := rs.consume(&Chunk{Rec: rec, Ops: ops}); err != nil {
						t.Fatalf("epoch %d: shared: %v", epoch, err)
					}
					if err := rg.consume(&Chunk{Rec: rec, Ops: ops}); err != nil {
						t.Fatalf("epoch %d: general: %v", epoch, err)
					}
				}
				os, err := rs.flush()
				if err != nil {
					t.Fatal(err)
				}
				og, err := rg.flush()
				if err != nil {
					t.Fatal(err)
				}
				if got, want := renderAll(os, shared.Cols), renderAll(og, general.Cols); !reflect.DeepEqual(got, want) {
					t.Fatalf("epoch %d: shared path\n%v\ngeneral path\n%v", epoch, got, want)
				}
			}
			for _, s := range rs.shares {
				if s.seen.len() != 0 {
					t.Errorf("%d pairs left after retracting every row", s.seen.len())
				}
			}
		})
	}
}

// TestSharedDistinctCheckpointRestore is TestHashAggCheckpointRestore for
// shared DISTINCT aggregates: restored at every checkpoint, a HashAgg's
// output and later checkpoints equal the original's (its pairs are
// written in each aggregate's order however the shares restore them).
func TestSharedDistinctCheckpointRestore(t *testing.T) {
	aggs := shareAggs(t)
	cfg := ckAggConfig{name: "int key", groupBy: []string{"k1"}}
	for seed := 1; seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(int64(seed)))
			h, _ := propPlans(t, propConfig{groupBy: cfg.groupBy}, aggs)
			h.Input = &Scan{Cols: propCols}
			in := genCkAggInput(t, rng, cfg, 30)
			full := map[int]bool{}
			orig := runCkAgg(t, h, in, 0, nil, full)
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
		})
	}
}

func TestMergeOrders(t *testing.T) {
	got, ok := mergeOrders([][]int32{{5, 2}, {1, 5, 3}, {1, 2, 3}, nil, {4}})
	if !ok {
		t.Fatal("no order")
	}
	pos := map[int32]int{}
	for i, id := range got {
		pos[id] = i
	}
	if len(got) != 5 || pos[1] > pos[5] || pos[5] > pos[2] || pos[5] > pos[3] || pos[2] > pos[3] {
		t.Fatalf("order %v", got)
	}
	if _, ok := mergeOrders([][]int32{{1, 2}, {2, 1}}); ok {
		t.Fatal("a cycle merged")
	}
}

// renderAll renders every row of c with its op.
func renderAll(c *Chunk, cols []types.Column) []string {
	var out []string
	for i := 0; c != nil && i < c.Len(); i++ {
		out = append(out, fmt.Sprintf("%v %q", c.Op(i), rowIdentity(c.Rec, i, cols, 0, len(cols))))
	}
	return out
}

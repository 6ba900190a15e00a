package stream

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

var varFns = []string{"var_samp", "var_pop", "stddev_samp", "stddev_pop"}

// batchVar is the batch engine's fn over vals (one group, in that order),
// as a cell.
func batchVar(t *testing.T, fn string, vals []float64) cell {
	t.Helper()
	return batchAgg(t, fn, vals)
}

// batchAgg is the batch engine's aggregate fn over the float8 columns
// (one group, rows in that order), as a cell.
func batchAgg(t *testing.T, fn string, cols ...[]float64) cell {
	t.Helper()
	ts := make([]types.T, len(cols))
	tcols := make([]types.Column, len(cols))
	arrs := make([]arrow.Array, len(cols))
	args := make([]expr.Expr, len(cols))
	for i, c := range cols {
		ts[i] = types.TFloat8
		tcols[i] = types.Column{Name: fmt.Sprintf("c%d", i), Type: types.TFloat8}
		arrs[i] = floatArray(c, nil)
		args[i] = &expr.ColRef{Idx: i, T: types.TFloat8}
	}
	agg, err := exec.ResolveAggregate(fn, ts, false)
	if err != nil {
		t.Fatal(err)
	}
	rec := array.NewRecordBatch(types.ArrowSchema(tcols), arrs, int64(len(cols[0])))
	for _, a := range arrs {
		a.Release()
	}
	defer rec.Release()
	plan := &exec.HashAgg{
		Input: &exec.FuncScan{Name: "rows", Cols: tcols, Produce: func(*exec.Context) ([]arrow.RecordBatch, error) {
			rec.Retain()
			return []arrow.RecordBatch{rec}, nil
		}},
		Aggs: []exec.AggCall{{Fn: agg, Args: args}},
		Cols: []types.Column{{Name: fn, Type: agg.Return}},
	}
	it, err := plan.Open(&exec.Context{Eval: &expr.Context{}})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	b, err := it.Next()
	if err != nil || b == nil || b.NumRows() != 1 {
		t.Fatalf("batch %s: %v rows, %v", fn, b, err)
	}
	col := b.Column(0)
	switch {
	case col.IsNull(0):
		return nullCell
	case col.DataType().ID() == arrow.INT64:
		return intCell(col.(*array.Int64).Value(0))
	}
	return floatCell(col.(*array.Float64).Value(0))
}

// near reports whether two results are equal, or within a relative 1e-9
// for finite values (a retraction's rounding).
func near(a, b cell) bool {
	if a.null || b.null {
		return a.null == b.null
	}
	x, y := math.Float64frombits(uint64(a.a)), math.Float64frombits(uint64(b.a))
	if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
		return a.a == b.a
	}
	return math.Abs(x-y) <= 1e-9*math.Max(1, math.Max(math.Abs(x), math.Abs(y)))
}

func floatArray(vals []float64, nulls []bool) arrow.Array {
	b := array.NewFloat64Builder(memory.DefaultAllocator)
	defer b.Release()
	for i, v := range vals {
		if nulls != nil && nulls[i] {
			b.AppendNull()
		} else {
			b.Append(v)
		}
	}
	return b.NewArray()
}

// TestFloatVarColChangelog feeds random changelogs (inserts, retractions
// of live values, infinities and NaN, NULLs, multiplicities) to each
// variance-family state and compares every group, after every chunk, with
// the batch engine over the group's live values: the same NULLs and NaNs,
// and values within rounding. A group emptied starts again from exactly
// 0; an append-only run equals the batch engine to the bit.
func TestFloatVarColChangelog(t *testing.T) {
	domain := []float64{0, 0.25, -1.5, 2, 1e6, -3.75, 100.5, 1e-3, 7, math.Inf(1), math.Inf(-1), math.NaN()}
	for _, fn := range varFns {
		for seed := int64(1); seed <= 5; seed++ {
			t.Run(fmt.Sprintf("%s/seed=%d", fn, seed), func(t *testing.T) {
				rng := rand.New(rand.NewSource(seed))
				const ngroups = 4
				c := newFloatVarCol(fn, seed == 1)
				c.grow(ngroups)
				live := make([][]float64, ngroups)
				appendOnly := seed == 1
				for step := 0; step < 200; step++ {
					n := 1 + rng.Intn(8)
					vals, nulls := make([]float64, n), make([]bool, n)
					gids, signs := make([]int32, n), make([]int64, n)
					for i := range n {
						g := rng.Intn(ngroups)
						gids[i] = int32(g)
						if !appendOnly && len(live[g]) > 0 && rng.Intn(3) == 0 {
							k := rng.Intn(len(live[g]))
							vals[i], signs[i] = live[g][k], -1
							live[g] = append(live[g][:k], live[g][k+1:]...)
							continue
						}
						signs[i] = 1
						if rng.Intn(10) == 0 {
							nulls[i] = true
							continue
						}
						v := domain[rng.Intn(len(domain)-3)]
						if rng.Intn(30) == 0 {
							v = domain[len(domain)-1-rng.Intn(3)]
						}
						vals[i] = v
						live[g] = append(live[g], v)
					}
					arr := floatArray(vals, nulls)
					if err := c.update(arr, gids, signs); err != nil {
						t.Fatal(err)
					}
					arr.Release()
					gs := []int32{0, 1, 2, 3}
					got := make([]cell, ngroups)
					if err := c.results(gs, got); err != nil {
						t.Fatal(err)
					}
					for g := range ngroups {
						want := batchVar(t, fn, live[g])
						ok := near(got[g], want)
						if appendOnly {
							ok = got[g] == want
						}
						if !ok {
							t.Fatalf("step %d group %d over %v: got %+v, want %+v", step, g, live[g], got[g], want)
						}
						if len(live[g]) == 0 && c.s[g] != (fvar{}) {
							t.Fatalf("step %d group %d: empty but state %+v", step, g, c.s[g])
						}
					}
				}
			})
		}
	}
}

// TestFloatVarColMerge merges states of parts of a group's values (a HOP
// window's panes) and compares with the batch engine over all of them.
func TestFloatVarColMerge(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for _, fn := range varFns {
		for round := 0; round < 50; round++ {
			parts := 1 + rng.Intn(4)
			from := newFloatVarCol(fn, round%2 == 0)
			from.grow(parts)
			var all []float64
			for p := range parts {
				n := rng.Intn(5)
				vals := make([]float64, n)
				gids := make([]int32, n)
				for i := range vals {
					vals[i] = float64(rng.Intn(2000)-1000) / 8
					if rng.Intn(40) == 0 {
						vals[i] = math.Inf(1)
					}
					gids[i] = int32(p)
				}
				all = append(all, vals...)
				arr := floatArray(vals, nil)
				if err := from.update(arr, gids, nil); err != nil {
					t.Fatal(err)
				}
				arr.Release()
			}
			acc, err := newMergeAcc(AggSpec{Kind: map[string]AggKind{"var_samp": AggVarSamp, "var_pop": AggVarPop, "stddev_samp": AggStddevSamp, "stddev_pop": AggStddevPop}[fn], Arg: &expr.ColRef{T: types.TFloat8}}, types.TFloat8)
			if err != nil {
				t.Fatal(err)
			}
			acc.grow(1)
			for p := range parts {
				if err := acc.merge([]int32{0}, from, []int32{int32(p)}); err != nil {
					t.Fatal(err)
				}
			}
			got := make([]cell, 1)
			if err := acc.results([]int32{0}, got); err != nil {
				t.Fatal(err)
			}
			if want := batchVar(t, fn, all); !near(got[0], want) {
				t.Fatalf("%s over %v in %d parts: got %+v, want %+v", fn, all, parts, got[0], want)
			}
		}
	}
}

// varPropAggs are the variance family over float4 and float8, plain,
// DISTINCT and filtered, and the corr/covar/regr family, for the state round trip (the HashAgg property
// test compares with the batch engine exactly, which a recomputation in
// value order need not match in the last bits).
func varPropAggs(t *testing.T) []propAgg {
	t.Helper()
	positive, err := expr.NewBinary(">", propCol("i2"), &expr.Const{V: int64(0), T: types.TInt2})
	if err != nil {
		t.Fatal(err)
	}
	var aggs []propAgg
	for _, c := range []string{"f4", "f8"} {
		col := propCol(c)
		for _, fn := range varFns {
			agg, err := exec.ResolveAggregate(fn, []types.T{col.T}, false)
			if err != nil {
				t.Fatal(err)
			}
			aggs = append(aggs, propAgg{call: exec.AggCall{Fn: agg, Args: []expr.Expr{col}}},
				propAgg{call: exec.AggCall{Fn: agg, Args: []expr.Expr{col}, Distinct: true}},
				propAgg{call: exec.AggCall{Fn: agg, Args: []expr.Expr{col}, Filter: positive}})
		}
	}
	for _, fn := range []string{"corr", "covar_samp", "regr_slope", "regr_count", "regr_intercept"} {
		agg, err := exec.ResolveAggregate(fn, []types.T{types.TFloat8, types.TFloat8}, false)
		if err != nil {
			t.Fatal(err)
		}
		y, x := propCol("f8"), expr.Expr(nil)
		if x, err = expr.NewCast(propCol("i2"), types.TFloat8, true); err != nil {
			t.Fatal(err)
		}
		aggs = append(aggs, propAgg{call: exec.AggCall{Fn: agg, Args: []expr.Expr{y, x}}},
			propAgg{call: exec.AggCall{Fn: agg, Args: []expr.Expr{x, y}, Filter: positive}})
	}
	return aggs
}

// TestRegrColChangelog is TestFloatVarColChangelog for corr, covar_* and
// regr_*: random changelogs of (y, x) pairs against the batch engine over
// each group's live pairs.
func TestRegrColChangelog(t *testing.T) {
	domain := []float64{0, 0.25, -1.5, 2, 1e6, -3.75, 100.5, 7, math.Inf(1), math.NaN()}
	fns := []string{"corr", "covar_pop", "covar_samp", "regr_avgx", "regr_avgy", "regr_count", "regr_intercept",
		"regr_r2", "regr_slope", "regr_sxx", "regr_sxy", "regr_syy"}
	for _, fn := range fns {
		for seed := int64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprintf("%s/seed=%d", fn, seed), func(t *testing.T) {
				rng := rand.New(rand.NewSource(seed))
				const ngroups = 3
				appendOnly := seed == 1
				c := newRegrCol(fn, appendOnly)
				c.grow(ngroups)
				live := make([][][2]float64, ngroups)
				pick := func() float64 {
					if rng.Intn(25) == 0 {
						return domain[len(domain)-1-rng.Intn(2)]
					}
					return domain[rng.Intn(len(domain)-2)]
				}
				for step := 0; step < 150; step++ {
					n := 1 + rng.Intn(6)
					ys, xs := make([]float64, n), make([]float64, n)
					gids, signs := make([]int32, n), make([]int64, n)
					for i := range n {
						g := rng.Intn(ngroups)
						gids[i] = int32(g)
						if !appendOnly && len(live[g]) > 0 && rng.Intn(3) == 0 {
							k := rng.Intn(len(live[g]))
							ys[i], xs[i], signs[i] = live[g][k][0], live[g][k][1], -1
							live[g] = append(live[g][:k], live[g][k+1:]...)
							continue
						}
						ys[i], xs[i], signs[i] = pick(), pick(), 1
						live[g] = append(live[g], [2]float64{ys[i], xs[i]})
					}
					ya, xa := floatArray(ys, nil), floatArray(xs, nil)
					if err := c.updateMulti(ya, []arrow.Array{xa}, gids, signs); err != nil {
						t.Fatal(err)
					}
					ya.Release()
					xa.Release()
					got := make([]cell, ngroups)
					if err := c.results([]int32{0, 1, 2}, got); err != nil {
						t.Fatal(err)
					}
					for g := range ngroups {
						var wy, wx []float64
						for _, p := range live[g] {
							wy, wx = append(wy, p[0]), append(wx, p[1])
						}
						want := batchAgg(t, fn, wy, wx)
						if ok := got[g] == want || (!appendOnly && near(got[g], want)); !ok {
							t.Fatalf("step %d group %d over %v: got %+v, want %+v", step, g, live[g], got[g], want)
						}
					}
				}
			})
		}
	}
}

// TestFloatVarColFiniteGone: a group whose finite values all leave while
// an infinity stays, then takes a new value and loses the infinity, has
// the new value's variance only.
func TestFloatVarColFiniteGone(t *testing.T) {
	c := newFloatVarCol("var_pop", false)
	c.grow(1)
	step := func(v float64, sign int64) {
		arr := floatArray([]float64{v}, nil)
		defer arr.Release()
		if err := c.update(arr, []int32{0}, []int64{sign}); err != nil {
			t.Fatal(err)
		}
	}
	step(1, 1)
	step(math.Inf(1), 1)
	step(1, -1)
	step(2, 1)
	step(math.Inf(1), -1)
	got := make([]cell, 1)
	if err := c.results([]int32{0}, got); err != nil {
		t.Fatal(err)
	}
	if want := floatCell(0); got[0] != want {
		t.Fatalf("var_pop over {2}: got %v, want 0", floatOf(got[0]))
	}
}

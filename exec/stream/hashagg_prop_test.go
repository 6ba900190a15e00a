package stream

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// The property test feeds random changelogs (inserts, deletes of live rows,
// update pairs, NULLs, duplicates) through HashAgg and checks after every
// barrier that the view its output builds equals the batch engine's
// exec.HashAgg over the live rows: same types, same values.

// propCols is the input: two small-domain key columns and one column of
// each type the aggregates take. Value domains hold no two values that are
// equal to SQL but spelled apart (1.5 and 1.50), whose choice by min/max
// or as a group key depends on input order in PostgreSQL too.
var propCols = []types.Column{
	{Name: "k1", Type: types.TInt4}, {Name: "k2", Type: types.TText},
	{Name: "i2", Type: types.TInt2}, {Name: "i4", Type: types.TInt4}, {Name: "i8", Type: types.TInt8},
	{Name: "f4", Type: types.TFloat4}, {Name: "f8", Type: types.TFloat8}, {Name: "num", Type: types.TNumeric},
	{Name: "txt", Type: types.TText}, {Name: "vc", Type: types.TVarchar}, {Name: "bp", Type: types.TBpchar},
	{Name: "d", Type: types.TDate}, {Name: "tm", Type: types.TTime}, {Name: "ts", Type: types.TTimestamp},
	{Name: "tstz", Type: types.TTimestampTZ}, {Name: "iv", Type: types.TInterval}, {Name: "b", Type: types.TBool},
	{Name: "by", Type: types.TBytea}, {Name: "o", Type: types.TOid},
}

func propCol(name string) *expr.ColRef {
	for i, c := range propCols {
		if c.Name == name {
			return &expr.ColRef{Idx: i, T: c.Type, Name: name}
		}
	}
	panic(name)
}

var (
	propNumerics  = []string{"0", "1.5", "-2.25", "10", "3.100", "-0.5", "123456789012345678901234567890.12", "0.001", "NaN"}
	propIntervals = []types.IntervalValue{{Days: 1}, {Months: 2}, {Micros: -3 * 3600e6}, {Months: 1, Days: 2, Micros: 1500000}, {Days: -40}, {Micros: 1}}
	propTexts     = []string{"", "a", "B", "b", "ab", "abc", "zz"}
	propFloats    = []float64{0, 0.25, -1.5, 2, 1e6, -3.75, 100.5, math.Inf(1), math.Inf(-1), math.NaN()}
	propBigInts   = []int64{0, 1, -7, 42, math.MaxInt64, math.MinInt64 + 1, 1 << 40, -(1 << 50)}
)

func propRow(rng *rand.Rand) []types.Value {
	pick := func(n int) int { return rng.Intn(n) }
	null := func() bool { return pick(6) == 0 }
	row := make([]types.Value, len(propCols))
	for c, col := range propCols {
		if (c < 2 && pick(8) == 0) || (c >= 2 && null()) {
			continue
		}
		var v types.Value
		switch col.Name {
		case "k1":
			v = int64(pick(4))
		case "k2":
			v = []string{"x", "y", "z"}[pick(3)]
		case "i2":
			v = int64(pick(200) - 100)
		case "i4":
			v = int64(pick(2_000_000_001) - 1_000_000_000)
		case "i8":
			v = propBigInts[pick(len(propBigInts))]
		case "f4", "f8":
			v = propFloats[pick(len(propFloats)-3)] // specials are rarer
			if col.Name == "f4" && v == 1e6 {
				v = 1.0 // float4 sums of these stay exact in any order
			}
			if pick(20) == 0 {
				v = propFloats[len(propFloats)-1-pick(3)]
			}
		case "num":
			v = propNumerics[pick(len(propNumerics))]
		case "txt", "vc", "bp":
			v = propTexts[pick(len(propTexts))]
		case "d":
			v = types.DateValue(pick(5) - 2)
		case "tm":
			v = types.TimeValue(int64(pick(5)) * 3600e6)
		case "ts", "tstz":
			v = types.TimestampValue(int64(pick(7)-3) * 86400e6)
		case "iv":
			v = propIntervals[pick(len(propIntervals))]
		case "b":
			v = pick(2) == 0
		case "by":
			v = []byte(propTexts[pick(len(propTexts))])
		case "o":
			v = int64(pick(5)) * 1000
		}
		row[c] = v
	}
	return row
}

func propRecord(t *testing.T, rows [][]types.Value) arrow.RecordBatch {
	t.Helper()
	arrs := make([]arrow.Array, len(propCols))
	for c, col := range propCols {
		b := types.NewBuilder(memory.DefaultAllocator, col.Type)
		for _, r := range rows {
			if err := types.AppendValue(b, r[c], col.Type); err != nil {
				t.Fatal(err)
			}
		}
		arrs[c] = b.NewArray()
		b.Release()
	}
	return array.NewRecordBatch(types.ArrowSchema(propCols), arrs, int64(len(rows)))
}

// propAgg is one aggregate: the batch call and the streaming spec (made by
// AggSpecFor unless given).
type propAgg struct {
	call exec.AggCall
	spec *AggSpec
}

func propAggs(t *testing.T) []propAgg {
	t.Helper()
	call := func(name string, arg string, distinct bool, filter expr.Expr) propAgg {
		var args []expr.Expr
		var ts []types.T
		if arg != "" {
			a := propCol(arg)
			args, ts = []expr.Expr{a}, []types.T{a.T}
		}
		fn, err := exec.ResolveAggregate(name, ts, arg == "")
		if err != nil {
			t.Fatalf("%s(%s): %v", name, arg, err)
		}
		return propAgg{call: exec.AggCall{Fn: fn, Args: args, Distinct: distinct, Filter: filter}}
	}
	positive, err := expr.NewBinary(">", propCol("i2"), &expr.Const{V: int64(0), T: types.TInt2})
	if err != nil {
		t.Fatal(err)
	}
	b := propCol("b")
	aggs := []propAgg{call("count", "", false, nil), call("count", "", false, b), call("bool_and", "b", false, nil),
		call("bool_or", "b", false, nil), call("every", "b", false, positive)}
	for _, c := range []string{"i2", "i4", "i8", "f4", "f8", "num", "iv"} {
		aggs = append(aggs, call("sum", c, false, nil), call("avg", c, false, nil),
			call("sum", c, true, nil), call("avg", c, false, positive))
	}
	for _, c := range []string{"i2", "i4", "i8", "f4", "f8", "num", "txt", "vc", "bp", "d", "tm", "ts", "tstz", "iv", "o"} {
		aggs = append(aggs, call("min", c, false, nil), call("max", c, false, nil), call("count", c, false, nil),
			call("count", c, true, nil), call("max", c, false, b), call("min", c, true, positive))
	}
	// min/max(bool) are not PostgreSQL's, but equal bool_and/bool_or
	for _, k := range []AggKind{AggMin, AggMax} {
		a := call(map[AggKind]string{AggMin: "bool_and", AggMax: "bool_or"}[k], "b", false, nil)
		a.spec = &AggSpec{Kind: k, Arg: b}
		aggs = append(aggs, a)
	}
	// string_agg and array_agg ordered by their value (ties are equal
	// values, so the result is determined), with a FILTER and NULLS FIRST.
	for _, c := range []string{"txt", "i4"} {
		col := propCol(c)
		for _, desc := range []bool{false, true} {
			a := call("array_agg", c, false, nil)
			a.call.OrderBy = []exec.SortKey{{E: col, Desc: desc, NullsFirst: desc}}
			aggs = append(aggs, a)
		}
	}
	sep := &expr.Const{V: ",", T: types.TText}
	for _, f := range []expr.Expr{nil, positive} {
		fn, err := exec.ResolveAggregate("string_agg", []types.T{types.TText, types.TText}, false)
		if err != nil {
			t.Fatal(err)
		}
		aggs = append(aggs, propAgg{call: exec.AggCall{Fn: fn, Args: []expr.Expr{propCol("txt"), sep}, Filter: f,
			OrderBy: []exec.SortKey{{E: propCol("txt"), Desc: f != nil}}}})
	}
	// DISTINCT, ordered by the arguments as the binder orders them
	da := call("array_agg", "i4", true, nil)
	da.call.OrderBy = []exec.SortKey{{E: propCol("i4")}}
	dfn, err := exec.ResolveAggregate("string_agg", []types.T{types.TText, types.TText}, false)
	if err != nil {
		t.Fatal(err)
	}
	aggs = append(aggs, da, propAgg{call: exec.AggCall{Fn: dfn, Args: []expr.Expr{propCol("txt"), sep}, Distinct: true,
		OrderBy: []exec.SortKey{{E: propCol("txt"), Desc: true}}}})
	for _, c := range []string{"i2", "i4", "i8"} {
		aggs = append(aggs, call("bit_and", c, false, nil), call("bit_or", c, false, nil), call("bit_xor", c, false, nil),
			call("bit_or", c, true, positive), call("bit_xor", c, true, nil))
	}
	return append(aggs, orderedPropAggs(t, positive)...)
}

// orderedPropAggs are percentile_cont, percentile_disc (a fraction and an
// array of them) and mode, ascending and descending, one filtered.
func orderedPropAggs(t *testing.T, positive expr.Expr) []propAgg {
	t.Helper()
	ordered := func(name string, frac expr.Expr, x string, desc bool, filter expr.Expr) propAgg {
		col := propCol(x)
		var args []expr.Expr
		var ts []types.T
		if frac != nil {
			args, ts = append(args, frac), append(ts, frac.Type())
		}
		arg := expr.Expr(col)
		if name == "percentile_cont" && !col.T.IsFloat() {
			c, err := expr.NewCast(col, types.TFloat8, true)
			if err != nil {
				t.Fatal(err)
			}
			arg = c
		}
		args, ts = append(args, arg), append(ts, arg.Type())
		fn, err := exec.ResolveAggregate(name, ts, false)
		if err != nil {
			t.Fatalf("%s(%s): %v", name, x, err)
		}
		return propAgg{call: exec.AggCall{Fn: fn, Args: args, Filter: filter, OrderBy: []exec.SortKey{{E: arg, Desc: desc, NullsFirst: desc}}}}
	}
	half := &expr.Const{V: 0.5, T: types.TFloat8}
	many := &expr.Const{V: []types.Value{0.0, 0.25, nil, 0.9, 1.0}, T: types.ArrayOf(types.TFloat8)}
	return []propAgg{
		ordered("percentile_cont", half, "f8", false, nil),
		ordered("percentile_cont", &expr.Const{V: 0.9, T: types.TFloat8}, "i4", true, positive),
		ordered("percentile_cont", many, "i2", false, nil),
		ordered("percentile_disc", half, "txt", true, nil),
		ordered("percentile_disc", many, "num", false, nil),
		ordered("percentile_disc", &expr.Const{V: 0.3, T: types.TFloat8}, "ts", false, positive),
		ordered("mode", nil, "i2", false, nil),
		ordered("mode", nil, "txt", true, nil),
	}
}

// propConfig is one query shape.
type propConfig struct {
	name       string
	groupBy    []string
	noAggs     bool // SELECT DISTINCT
	appendOnly bool // inserts only, HashAgg.AppendOnly set
}

func TestHashAggMatchesBatchEngine(t *testing.T) {
	configs := []propConfig{
		{name: "global"},
		{name: "int key", groupBy: []string{"k1"}},
		{name: "text key", groupBy: []string{"k2"}},
		{name: "two word keys", groupBy: []string{"k1", "d"}},
		{name: "mixed keys", groupBy: []string{"k1", "k2"}},
		{name: "float key", groupBy: []string{"f8"}},
		{name: "numeric and interval keys", groupBy: []string{"num", "iv"}},
		{name: "distinct", groupBy: []string{"k1", "k2"}, noAggs: true},
		{name: "append only", groupBy: []string{"k2"}, appendOnly: true},
	}
	aggs := propAggs(t)
	for ci, cfg := range configs {
		for _, par := range []int{1, 3, 8} { // as a hash exchange spreads it (parallel_test.go)
			if par > 1 && len(cfg.groupBy) == 0 {
				continue
			}
			name := cfg.name
			if par > 1 {
				name += fmt.Sprintf(" x%d", par)
			}
			t.Run(name, func(t *testing.T) {
				rng := rand.New(rand.NewSource(int64(ci) + 1))
				sh, bh := propPlans(t, cfg, aggs)
				sh.AppendOnly = cfg.appendOnly
				r := startParRun(t, sh, par)
				var live [][]types.Value
				view := map[string]string{} // key identity -> row identity
				epochs := 100
				if testing.Short() {
					epochs = 30
				}
				for epoch := 0; epoch < epochs; epoch++ {
					var ops []Op
					var rows [][]types.Value
					insertsOnly := cfg.appendOnly || rng.Intn(4) == 0 // a chunk without ops
					for n := rng.Intn(12); n > 0; n-- {
						x := rng.Intn(10)
						if insertsOnly {
							x = 9
						}
						switch {
						case x < 3 && len(live) > 0:
							i := rng.Intn(len(live))
							ops, rows = append(ops, Delete), append(rows, live[i])
							live = append(live[:i], live[i+1:]...)
						case x < 5 && len(live) > 0:
							i := rng.Intn(len(live))
							nr := propRow(rng)
							if rng.Intn(3) == 0 { // same group, other values
								copy(nr[:2], live[i][:2])
							}
							ops, rows = append(ops, UpdateBefore, UpdateAfter), append(rows, live[i], nr)
							live[i] = nr
						case x < 6 && len(live) > 0: // a duplicate
							nr := live[rng.Intn(len(live))]
							ops, rows = append(ops, Insert), append(rows, nr)
							live = append(live, nr)
						default:
							nr := propRow(rng)
							ops, rows = append(ops, Insert), append(rows, nr)
							live = append(live, nr)
						}
					}
					if insertsOnly {
						ops = nil
					}
					if len(rows) > 0 {
						if err := r.consume(&Chunk{Rec: propRecord(t, rows), Ops: ops}); err != nil {
							t.Fatalf("epoch %d: %v", epoch, err)
						}
					}
					out, err := r.flush()
					if err != nil {
						t.Fatalf("epoch %d: %v", epoch, err)
					}
					applyOut(t, view, out, sh.Cols, len(cfg.groupBy))
					checkAgainstBatch(t, epoch, view, bh, live)
				}
				if len(cfg.groupBy) > 0 && !cfg.appendOnly {
					// retract everything: every group goes, every slot is free
					if len(live) > 0 {
						ops := make([]Op, len(live))
						for i := range ops {
							ops[i] = Delete
						}
						if err := r.consume(&Chunk{Rec: propRecord(t, live), Ops: ops}); err != nil {
							t.Fatal(err)
						}
					}
					out, err := r.flush()
					if err != nil {
						t.Fatal(err)
					}
					applyOut(t, view, out, sh.Cols, len(cfg.groupBy))
					if len(view) != 0 || r.groups() != 0 {
						t.Fatalf("after retracting everything: view %v, %d groups", view, r.groups())
					}
				}
			})
		}
	}
}

// propPlans builds the streaming and the batch aggregation of cfg.
func propPlans(t *testing.T, cfg propConfig, aggs []propAgg) (*HashAgg, *exec.HashAgg) {
	t.Helper()
	sh := &HashAgg{}
	bh := &exec.HashAgg{Input: &exec.FuncScan{Name: "live", Cols: propCols}}
	for _, g := range cfg.groupBy {
		c := propCol(g)
		sh.GroupBy, bh.GroupBy = append(sh.GroupBy, c), append(bh.GroupBy, c)
		sh.Cols = append(sh.Cols, types.Column{Name: g, Type: c.T})
	}
	bh.Cols = append(bh.Cols, sh.Cols...)
	if !cfg.noAggs {
		for i, a := range aggs {
			var spec AggSpec
			if a.spec != nil {
				spec = *a.spec
			} else {
				var err error
				if spec, err = AggSpecFor(a.call); err != nil {
					t.Fatalf("AggSpecFor(%s): %v", a.call.Fn.Name, err)
				}
			}
			rt, err := spec.ResultType()
			if err != nil {
				t.Fatal(err)
			}
			if !rt.Equal(a.call.Fn.Return) {
				t.Fatalf("%s: streaming type %s, batch %s", spec, rt, a.call.Fn.Return)
			}
			sh.Aggs, bh.Aggs = append(sh.Aggs, spec), append(bh.Aggs, a.call)
			col := types.Column{Name: fmt.Sprintf("a%d", i), Type: rt}
			sh.Cols, bh.Cols = append(sh.Cols, col), append(bh.Cols, col)
		}
	}
	return sh, bh
}

// rowIdentity renders row i of rec, columns [from, to), as identity bytes.
func rowIdentity(rec arrow.RecordBatch, i int, cols []types.Column, from, to int) string {
	var b []byte
	for c := from; c < to; c++ {
		v := types.ValueAt(rec.Column(c), i, cols[c].Type)
		if f, ok := v.(float64); ok && f != f {
			v = math.NaN() // PostgreSQL has one NaN
		}
		b = appendValueKey(b, v)
	}
	return string(b)
}

func applyOut(t *testing.T, view map[string]string, out *Chunk, cols []types.Column, nk int) {
	t.Helper()
	if out == nil {
		return
	}
	for j, c := range cols {
		if !arrow.TypeEqual(out.Rec.Column(j).DataType(), c.Type.ArrowType()) {
			t.Fatalf("column %s is %s, want %s", c.Name, out.Rec.Column(j).DataType(), c.Type.ArrowType())
		}
	}
	for i := 0; i < out.Len(); i++ {
		k := rowIdentity(out.Rec, i, cols, 0, nk)
		row := rowIdentity(out.Rec, i, cols, 0, len(cols))
		switch op := out.Op(i); op {
		case Insert, UpdateAfter:
			if _, ok := view[k]; ok {
				t.Fatalf("%v of a row whose key is in the view", op)
			}
			if op == UpdateAfter && (i == 0 || out.Op(i-1) != UpdateBefore) {
				t.Fatalf("update-after without its update-before")
			}
			view[k] = row
		case Delete, UpdateBefore:
			if view[k] != row {
				t.Fatalf("%v of a row the view does not hold", op)
			}
			delete(view, k)
		}
	}
}

// checkAgainstBatch runs the batch aggregation over the live rows and
// compares its rows with the view.
func checkAgainstBatch(t *testing.T, epoch int, view map[string]string, bh *exec.HashAgg, live [][]types.Value) {
	t.Helper()
	in := bh.Input.(*exec.FuncScan)
	var batches []arrow.RecordBatch
	if len(live) > 0 {
		batches = []arrow.RecordBatch{propRecord(t, live)}
	}
	plan := *bh
	plan.Input = &exec.FuncScan{Name: in.Name, Cols: in.Cols, Produce: func(*exec.Context) ([]arrow.RecordBatch, error) { return batches, nil }}
	it, err := plan.Open(&exec.Context{Eval: &expr.Context{}})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	want := map[string]string{}
	nk := len(bh.GroupBy)
	for {
		b, err := it.Next()
		if err != nil {
			t.Fatalf("epoch %d: batch engine: %v", epoch, err)
		}
		if b == nil {
			break
		}
		for i := 0; i < int(b.NumRows()); i++ {
			want[rowIdentity(b, i, bh.Cols, 0, nk)] = rowIdentity(b, i, bh.Cols, 0, len(bh.Cols))
		}
	}
	if len(want) != len(view) {
		t.Fatalf("epoch %d: the view has %d rows, the batch engine %d", epoch, len(view), len(want))
	}
	for k, w := range want {
		if got, ok := view[k]; !ok || got != w {
			t.Fatalf("epoch %d: group %q: %s", epoch, k, diffRows(got, w, bh))
		}
	}
}

// diffRows names the first column where two row identities differ.
func diffRows(got, want string, bh *exec.HashAgg) string {
	g, w := splitIdentity(got), splitIdentity(want)
	for c := range bh.Cols {
		if c >= len(g) || c >= len(w) {
			return fmt.Sprintf("got %d columns, want %d", len(g), len(w))
		}
		if g[c] != w[c] {
			name := bh.Cols[c].Name
			if a := c - len(bh.GroupBy); a >= 0 {
				call := bh.Aggs[a]
				name = fmt.Sprintf("%s(distinct=%v %s) filter=%v", call.Fn.Name, call.Distinct, call.Args, call.Filter)
			}
			return fmt.Sprintf("column %s: got %q, want %q", name, g[c], w[c])
		}
	}
	return "rows differ"
}

// splitIdentity splits a row identity (appendValueKey of each column) into
// its columns' identities.
func splitIdentity(id string) []string {
	var out []string
	for len(id) > 0 {
		n := identityLen(id)
		out = append(out, id[:n])
		id = id[n:]
	}
	return out
}

func identityLen(id string) int {
	switch id[0] {
	case 0:
		return 1
	case 1:
		return 2
	case 2, 3, 7, 8, 9:
		return 9
	case 10:
		return 17
	case 4, 5, 6, 12:
		n, k := binary.Uvarint([]byte(id[1:]))
		return 1 + k + int(n)
	}
	return len(id)
}

func TestHashAggByteaMinMax(t *testing.T) {
	by := propCol("by")
	h := &HashAgg{GroupBy: []expr.Expr{propCol("k1")}, Aggs: []AggSpec{{Kind: AggMin, Arg: by}, {Kind: AggMax, Arg: by}},
		Cols: []types.Column{{Name: "k1", Type: types.TInt4}, {Name: "min", Type: types.TBytea}, {Name: "max", Type: types.TBytea}}}
	r := startRun(t, h)
	rng := rand.New(rand.NewSource(7))
	var live [][]types.Value
	view := map[string]string{}
	for epoch := 0; epoch < 100; epoch++ {
		var ops []Op
		var rows [][]types.Value
		for n := rng.Intn(6); n > 0; n-- {
			if len(live) > 0 && rng.Intn(3) == 0 {
				i := rng.Intn(len(live))
				ops, rows = append(ops, Delete), append(rows, live[i])
				live = append(live[:i], live[i+1:]...)
				continue
			}
			nr := propRow(rng)
			ops, rows = append(ops, Insert), append(rows, nr)
			live = append(live, nr)
		}
		if len(rows) > 0 {
			if err := r.consume(&Chunk{Rec: propRecord(t, rows), Ops: ops}); err != nil {
				t.Fatal(err)
			}
		}
		out, err := r.flush()
		if err != nil {
			t.Fatal(err)
		}
		applyOut(t, view, out, h.Cols, 1)
		// recompute: per k1, the least and greatest non-NULL by
		type mm struct{ min, max []byte }
		want := map[string]string{}
		groups := map[string]*mm{}
		keys := map[string]types.Value{}
		for _, row := range live {
			k := string(appendValueKey(nil, row[0]))
			g := groups[k]
			if g == nil {
				g = &mm{}
				groups[k], keys[k] = g, row[0]
			}
			if v, ok := row[by.Idx].([]byte); ok {
				if g.min == nil || bytes.Compare(v, g.min) < 0 {
					g.min = v
				}
				if g.max == nil || bytes.Compare(v, g.max) > 0 {
					g.max = v
				}
			}
		}
		for k, g := range groups {
			row := []types.Value{keys[k], nil, nil}
			if g.min != nil {
				row[1], row[2] = g.min, g.max
			}
			want[k] = string(appendKey(nil, row, nil))
		}
		if len(want) != len(view) {
			t.Fatalf("epoch %d: %d groups, want %d", epoch, len(view), len(want))
		}
		ks := make([]string, 0, len(want))
		for k := range want {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		for _, k := range ks {
			if view[k] != want[k] {
				t.Fatalf("epoch %d: got %q want %q", epoch, view[k], want[k])
			}
		}
	}
}

func TestHashAggAppendOnlyRefusesRetractions(t *testing.T) {
	h := newAgg(false)
	h.AppendOnly = true
	r := startRun(t, h)
	step(t, r, aggChunk(t, nil, inRow{"a", int64(1), 1.0}))
	if err := r.consume(aggChunk(t, []Op{Delete}, inRow{"a", int64(1), 1.0})); err == nil {
		t.Fatal("a retraction on an append-only input: no error")
	}
}

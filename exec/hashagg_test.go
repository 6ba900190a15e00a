package exec

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

func agg(t *testing.T, name string, star bool, args ...expr.Expr) AggCall {
	t.Helper()
	f, err := ResolveAggregate(name, exprTypes(args), star)
	if err != nil {
		t.Fatalf("resolve %s: %v", name, err)
	}
	return AggCall{Fn: f, Args: args}
}

func aggNode(in Node, keys []expr.Expr, aggs ...AggCall) *HashAgg {
	var cs []types.Column
	for i, k := range keys {
		cs = append(cs, types.Column{Name: fmt.Sprintf("k%d", i), Type: k.Type()})
	}
	for _, a := range aggs {
		cs = append(cs, types.Column{Name: a.Fn.Name, Type: a.Fn.Return})
	}
	return &HashAgg{Input: in, GroupBy: keys, Aggs: aggs, Cols: cs}
}

func TestHashAggGroups(t *testing.T) {
	s := src(cols(types.TInt4, types.TInt8, types.TText), 3,
		[]any{1, 2, 1, nil, 2, 1, nil, 3},
		[]any{10, 20, 30, 40, nil, 60, 70, nil},
		[]any{"a", "b", "a", "c", "b", "z", "c", nil})
	v := col(1, types.TInt8)
	h := aggNode(s, []expr.Expr{col(0, types.TInt4)},
		agg(t, "count", true), agg(t, "count", false, v), agg(t, "sum", false, v),
		agg(t, "avg", false, v), agg(t, "min", false, col(2, types.TText)), agg(t, "max", false, v))
	// From PostgreSQL 15 on the same rows.
	wantSameRows(t, run(t, h), [][]any{
		{int64(1), int64(3), int64(3), "100", "33.3333333333333333", "a", int64(60)},
		{int64(2), int64(2), int64(1), "20", "20.0000000000000000", "b", int64(20)},
		{nil, int64(2), int64(2), "110", "55.0000000000000000", "c", int64(70)},
		{int64(3), int64(1), int64(0), nil, nil, nil, nil},
	})
	// Text keys, two int keys.
	h2 := aggNode(s, []expr.Expr{col(2, types.TText)}, agg(t, "count", true))
	wantSameRows(t, run(t, h2), [][]any{{"a", int64(2)}, {"b", int64(2)}, {"c", int64(2)}, {"z", int64(1)}, {nil, int64(1)}})
	h3 := aggNode(s, []expr.Expr{col(0, types.TInt4), col(2, types.TText)}, agg(t, "count", true))
	wantSameRows(t, run(t, h3), [][]any{{int64(1), "a", int64(2)}, {int64(1), "z", int64(1)}, {int64(2), "b", int64(2)}, {nil, "c", int64(2)}, {int64(3), nil, int64(1)}})
	h4 := aggNode(s, []expr.Expr{col(0, types.TInt4), col(1, types.TInt8)}, agg(t, "count", true))
	if got := run(t, h4); len(got) != 8 {
		t.Fatalf("two int keys: %v", got)
	}
}

func TestHashAggEmpty(t *testing.T) {
	s := src(cols(types.TInt8), 3, []any{})
	v := col(0, types.TInt8)
	h := aggNode(s, nil, agg(t, "count", true), agg(t, "sum", false, v), agg(t, "avg", false, v), agg(t, "max", false, v),
		agg(t, "array_agg", false, v), agg(t, "bool_and", false, &fnExpr{t: types.TBool, f: func([]any) any { return true }}))
	wantRows(t, run(t, h), [][]any{{int64(0), nil, nil, nil, nil, nil}})
	wantRows(t, run(t, aggNode(s, []expr.Expr{v}, agg(t, "count", true))), nil)
}

func TestAggregatesMatchPostgres(t *testing.T) {
	i8 := src(cols(types.TInt8), 2, []any{1, 2, 4, nil})
	v := col(0, types.TInt8)
	// select avg(x), sum(x), stddev(x), variance(x), var_pop(x), stddev_pop(x) from (values (1::int8),(2),(4),(NULL)) t(x)
	wantRows(t, run(t, aggNode(i8, nil, agg(t, "avg", false, v), agg(t, "sum", false, v), agg(t, "stddev", false, v),
		agg(t, "variance", false, v), agg(t, "var_pop", false, v), agg(t, "stddev_pop", false, v))),
		[][]any{{"2.3333333333333333", "7", "1.5275252316519467", "2.3333333333333333", "1.5555555555555556", "1.2472191289246471"}})
	num := src(cols(types.TNumeric), 2, []any{"1.50", "2.125", "4"})
	n := col(0, types.TNumeric)
	wantRows(t, run(t, aggNode(num, nil, agg(t, "avg", false, n), agg(t, "sum", false, n), agg(t, "stddev", false, n), agg(t, "variance", false, n))),
		[][]any{{"2.5416666666666667", "7.625", "1.3010412496663329", "1.6927083333333333"}})
	fl := src(cols(types.TFloat8), 2, []any{1.5, 2.0, 4.0})
	f := col(0, types.TFloat8)
	got := run(t, aggNode(fl, nil, agg(t, "avg", false, f), agg(t, "stddev", false, f), agg(t, "var_pop", false, f)))
	if got[0][0] != 2.5 || !approx(got[0][1].(float64), 1.3228756555322954) || !approx(got[0][2].(float64), 1.1666666666666667) {
		t.Fatalf("float stats %v", got)
	}
	ones := src(cols(types.TInt4), 2, []any{1, 1})
	wantRows(t, run(t, aggNode(ones, nil, agg(t, "variance", false, col(0, types.TInt4)), agg(t, "stddev", false, col(0, types.TInt4)))), [][]any{{"0", "0"}})
	big := src(cols(types.TInt4), 2, []any{100000, 300000})
	wantRows(t, run(t, aggNode(big, nil, agg(t, "avg", false, col(0, types.TInt4)))), [][]any{{"200000.000000000000"}})
	ints := src(cols(types.TInt4), 2, []any{1, 2, 2, 7})
	wantRows(t, run(t, aggNode(ints, nil, agg(t, "stddev", false, col(0, types.TInt4)))), [][]any{{"2.7080128015453201"}})
	ovf := src(cols(types.TInt8), 1, []any{9223372036854775807, 9223372036854775807})
	wantRows(t, run(t, aggNode(ovf, nil, agg(t, "sum", false, col(0, types.TInt8)))), [][]any{{"18446744073709551614"}})
	iv := func(m, d int32, us int64) any {
		return types.IntervalToArrow(types.IntervalValue{Months: m, Days: d, Micros: us})
	}
	ivs := src(cols(types.TInterval), 2, []any{iv(1, 1, 0), iv(0, 1, 3*3600e6), iv(0, 0, 5e6)})
	// avg: 10 days 17:00:01.666667; sum: 1 mon 2 days 03:00:05
	wantRows(t, run(t, aggNode(ivs, nil, agg(t, "avg", false, col(0, types.TInterval)), agg(t, "sum", false, col(0, types.TInterval)))),
		[][]any{{iv(0, 10, 17*3600e6+1666667), iv(1, 2, 3*3600e6+5e6)}})
}

func TestAggDistinctFilterOrder(t *testing.T) {
	s := src(cols(types.TInt4, types.TText, types.TInt4), 2,
		[]any{1, 1, 1, 2, 2, 1},
		[]any{"b", "a", "b", "x", nil, "c"},
		[]any{3, 1, 2, 5, 4, 0})
	cnt := agg(t, "count", false, col(1, types.TText))
	cnt.Distinct = true
	sa := agg(t, "string_agg", false, col(1, types.TText), konst(types.TText, ","))
	sa.OrderBy = []SortKey{{E: col(2, types.TInt4)}}
	aa := agg(t, "array_agg", false, col(2, types.TInt4))
	aa.Filter = &fnExpr{t: types.TBool, f: func(r []any) any { return r[2].(int64) >= 2 }}
	da := agg(t, "array_agg", false, col(1, types.TText))
	da.Distinct = true
	da.OrderBy = []SortKey{{E: col(1, types.TText), Desc: true, NullsFirst: true}}
	h := aggNode(s, []expr.Expr{col(0, types.TInt4)}, cnt, sa, aa, da)
	wantSameRows(t, run(t, h), [][]any{
		{int64(1), int64(3), "c,a,b,b", []any{int64(3), int64(2)}, []any{"c", "b", "a"}},
		{int64(2), int64(1), "x", []any{int64(5), int64(4)}, []any{nil, "x"}},
	})
}

func TestResolveAggregate(t *testing.T) {
	cases := []struct {
		name string
		arg  types.T
		ret  types.T
	}{
		{"sum", types.TInt4, types.TInt8}, {"sum", types.TInt2, types.TInt8}, {"sum", types.TInt8, types.TNumeric},
		{"sum", types.TFloat4, types.TFloat4}, {"avg", types.TInt4, types.TNumeric}, {"avg", types.TFloat4, types.TFloat8},
		{"stddev", types.TInt8, types.TNumeric}, {"variance", types.TFloat4, types.TFloat8}, {"max", types.TVarchar, types.TText},
		{"min", types.TDate, types.TDate}, {"array_agg", types.TInt4, types.ArrayOf(types.TInt4)}, {"count", types.TText, types.TInt8},
	}
	for _, c := range cases {
		f, err := ResolveAggregate(c.name, []types.T{c.arg}, false)
		if err != nil || !f.Return.Equal(c.ret) {
			t.Errorf("%s(%s) = %v, %v; want %s", c.name, c.arg, f, err, c.ret)
		}
	}
	_, err := ResolveAggregate("sum", []types.T{types.TText}, false)
	if e := pgerr.As(err); e == nil || e.Code != pgerr.UndefinedFunction || e.Message != "function sum(text) does not exist" {
		t.Fatalf("sum(text): %v", err)
	}
	if !IsAggregate("count") || IsAggregate("lower") {
		t.Fatal("IsAggregate")
	}
}

// refAgg computes GROUP BY k: count(*), sum(v) the simple way.
func TestHashAggRandomized(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for trial := 0; trial < 20; trial++ {
		n := r.Intn(3000)
		ks, vs := make([]any, n), make([]any, n)
		type acc struct{ cnt, sum, nv int64 }
		ref := map[string]*acc{}
		for i := range ks {
			var k any = r.Intn(50) - 25
			if r.Intn(20) == 0 {
				k = nil
			}
			var v any = r.Intn(1000)
			if r.Intn(10) == 0 {
				v = nil
			}
			ks[i], vs[i] = k, v
			key := fmt.Sprint(k)
			if ref[key] == nil {
				ref[key] = &acc{}
			}
			ref[key].cnt++
			if v != nil {
				ref[key].sum += int64(v.(int))
				ref[key].nv++
			}
		}
		for _, kt := range []types.T{types.TInt8, types.TNumeric} {
			kvals := ks
			if kt.Kind == types.Numeric {
				kvals = make([]any, n)
				for i, k := range ks {
					if k != nil {
						kvals[i] = fmt.Sprintf("%d.%s", k, []string{"0", "00", ""}[i%3])
						if kvals[i].(string)[len(kvals[i].(string))-1] == '.' {
							kvals[i] = fmt.Sprint(k)
						}
					}
				}
			}
			s := src(cols(kt, types.TInt8), 1+r.Intn(500), kvals, vs)
			got := run(t, aggNode(s, []expr.Expr{col(0, kt)}, agg(t, "count", true), agg(t, "sum", false, col(1, types.TInt8))))
			if len(got) != len(ref) {
				t.Fatalf("trial %d %s: %d groups, want %d", trial, kt, len(got), len(ref))
			}
			for _, row := range got {
				key := "<nil>"
				if row[0] != nil {
					key = fmt.Sprint(row[0])
					if kt.Kind == types.Numeric {
						key = numericKey(row[0].(string))
					}
				}
				a := ref[key]
				var sum any
				if a != nil && a.nv > 0 {
					sum = fmt.Sprint(a.sum)
				}
				if a == nil || row[1] != a.cnt || row[2] != sum {
					t.Fatalf("trial %d %s: group %v = %v, want %+v", trial, kt, key, row, a)
				}
			}
		}
	}
}

// min/max ties take the later value, as PostgreSQL's numeric_smaller,
// float8smaller and interval_smaller do:
// select min(x), max(x) from (values (1.0),(1.00),(1.000)) t(x) gives 1.000|1.000.
func TestMinMaxTies(t *testing.T) {
	s := src(cols(types.TNumeric, types.TFloat8), 2, []any{"1.0", "1.00", "1.000"}, []any{0.0, negZero(), 0.0})
	n, f := col(0, types.TNumeric), col(1, types.TFloat8)
	got := run(t, aggNode(s, nil, agg(t, "min", false, n), agg(t, "max", false, n), agg(t, "min", false, f)))
	if got[0][0] != "1.000" || got[0][1] != "1.000" {
		t.Fatalf("numeric ties: %v", got)
	}
	s2 := src(cols(types.TFloat8), 2, []any{0.0, negZero()})
	got = run(t, aggNode(s2, nil, agg(t, "min", false, col(0, types.TFloat8))))
	if v := got[0][0].(float64); v != 0 || !signbit(v) {
		t.Fatalf("min(0, -0) = %v, want -0", got)
	}
	if _, err := ResolveAggregate("min", []types.T{types.TBool}, false); pgerr.CodeOf(err) != pgerr.UndefinedFunction {
		t.Fatalf("min(boolean): %v", err)
	}
}

// From PostgreSQL 15: select json_agg(x), jsonb_agg(s), json_object_agg(x, s), jsonb_object_agg(x, s)
// from (values (2,'a"b'),(1,null),(2,'z')) t(x,s) gives
// [2, 1, 2] | ["a\"b", null, "z"] | { "2" : "a\"b", "1" : null, "2" : "z" } | {"1": null, "2": "z"}
func TestJSONAggregates(t *testing.T) {
	s := src(cols(types.TInt4, types.TText), 2, []any{2, 1, 2}, []any{`a"b`, nil, "z"})
	x, v := col(0, types.TInt4), col(1, types.TText)
	got := run(t, aggNode(s, nil, agg(t, "json_agg", false, x), agg(t, "jsonb_agg", false, v),
		agg(t, "json_object_agg", false, x, v), agg(t, "jsonb_object_agg", false, x, v)))
	wantRows(t, got, [][]any{{`[2, 1, 2]`, `["a\"b", null, "z"]`, `{ "2" : "a\"b", "1" : null, "2" : "z" }`, `{"1": null, "2": "z"}`}})
	empty := src(cols(types.TInt4), 2, []any{})
	wantRows(t, run(t, aggNode(empty, nil, agg(t, "jsonb_agg", false, col(0, types.TInt4)))), [][]any{{nil}})
}

// From PostgreSQL 15: select corr(y,x), covar_pop(y,x), covar_samp(y,x), regr_slope(y,x),
// regr_intercept(y,x), regr_r2(y,x), regr_count(y,x), regr_avgx(y,x), regr_avgy(y,x),
// regr_sxx(y,x), regr_syy(y,x), regr_sxy(y,x) from (values (1.0::float8, 2.0::float8),
// (2, 3.5), (4, 3.9), (null, 1), (3.3, 7.1)) t(y, x); and bit_and/or/xor of 12, 10, NULL.
func TestRegressionAndBitAggregates(t *testing.T) {
	s := src(cols(types.TFloat8, types.TFloat8), 2, []any{1.0, 2.0, 4.0, nil, 3.3}, []any{2.0, 3.5, 3.9, 1.0, 7.1})
	y, x := col(0, types.TFloat8), col(1, types.TFloat8)
	names := []string{"corr", "covar_pop", "covar_samp", "regr_slope", "regr_intercept", "regr_r2", "regr_count", "regr_avgx", "regr_avgy", "regr_sxx", "regr_syy", "regr_sxy"}
	want := []any{0.6438165689494173, 1.3856249999999992, 1.847499999999999, 0.4014122759369907, 0.9191743617599137, 0.41449977445379976, int64(4), 4.125, 2.575, 13.807499999999996, 5.367499999999999, 5.542499999999997}
	var calls []AggCall
	for _, n := range names {
		calls = append(calls, agg(t, n, false, y, x))
	}
	got := run(t, aggNode(s, nil, calls...))[0]
	for i := range names {
		if f, ok := want[i].(float64); ok {
			if !approx(got[i].(float64), f) {
				t.Errorf("%s = %v, want %v", names[i], got[i], f)
			}
		} else if got[i] != want[i] {
			t.Errorf("%s = %v, want %v", names[i], got[i], want[i])
		}
	}
	b := src(cols(types.TInt4), 2, []any{12, 10, nil})
	v := col(0, types.TInt4)
	wantRows(t, run(t, aggNode(b, nil, agg(t, "bit_and", false, v), agg(t, "bit_or", false, v), agg(t, "bit_xor", false, v))), [][]any{{int64(8), int64(14), int64(6)}})
}

// Ordered-set aggregates as the planner would pass them (direct argument,
// then the ordered value; OrderBy on the value). From PostgreSQL 15:
// select g, percentile_cont(0.5) within group (order by x), percentile_cont(0.3) ...,
// percentile_disc(0.5) ..., percentile_disc(0) ..., mode() within group (order by x)
// from (values (1, 3.0::float8),(1, 1),(1, 2),(1, 2),(1,null),(1,10),(2, 5),(2,7),(2,7),(2,5)) t(g,x) group by g
// gives 1|2|2|2|1|2 and 2|6|5|5|5|5.
func TestOrderedSetAggregates(t *testing.T) {
	s := src(cols(types.TInt4, types.TFloat8), 3, []any{1, 1, 1, 1, 1, 1, 2, 2, 2, 2}, []any{3.0, 1.0, 2.0, 2.0, nil, 10.0, 5.0, 7.0, 7.0, 5.0})
	x := col(1, types.TFloat8)
	ord := []SortKey{{E: x}}
	pct := func(name string, f float64) AggCall {
		a := agg(t, name, false, konst(types.TFloat8, f), x)
		a.OrderBy = ord
		return a
	}
	mode := agg(t, "mode", false, x)
	mode.OrderBy = ord
	got := run(t, aggNode(s, []expr.Expr{col(0, types.TInt4)}, pct("percentile_cont", 0.5), pct("percentile_cont", 0.3),
		pct("percentile_disc", 0.5), pct("percentile_disc", 0), mode))
	wantSameRows(t, got, [][]any{{int64(1), 2.0, 2.0, 2.0, 1.0, 2.0}, {int64(2), 6.0, 5.0, 5.0, 5.0, 5.0}})
	_, err := runErr(aggNode(s, nil, pct("percentile_cont", 1.5)))
	if e := pgerr.As(err); e == nil || e.Message != "percentile value 1.5 is not between 0 and 1" {
		t.Fatalf("bad fraction: %v", err)
	}
}

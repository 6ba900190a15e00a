package exec

import (
	"reflect"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

var (
	defaultFrame = Frame{Mode: FrameRange, Start: FrameBound{Kind: UnboundedPreceding}, End: FrameBound{Kind: CurrentRow}}
	wholeFrame   = Frame{Mode: FrameRange, Start: FrameBound{Kind: UnboundedPreceding}, End: FrameBound{Kind: UnboundedFollowing}}
)

func wcall(t *testing.T, name string, args []expr.Expr, part []expr.Expr, order []SortKey, fr Frame) WindowCall {
	t.Helper()
	f, err := ResolveWindow(name, exprTypes(args), name == "count" && len(args) == 0)
	if err != nil {
		t.Fatalf("resolve %s: %v", name, err)
	}
	return WindowCall{Fn: f, Args: args, PartitionBy: part, OrderBy: order, Frame: fr}
}

func TestWindowMatchesPostgres(t *testing.T) {
	i4 := types.TInt4
	s := src(cols(i4, i4, i4), 3,
		[]any{1, 1, 1, 1, 2, 2, 2},
		[]any{1, 2, 2, 4, 1, nil, 3},
		[]any{10, 20, 30, 40, 5, 7, nil})
	g, o, v := col(0, i4), col(1, i4), col(2, i4)
	part := []expr.Expr{g}
	ord := []SortKey{{E: o}}
	k := func(n int64) expr.Expr { return konst(types.TInt8, n) }
	rows1 := Frame{Mode: FrameRows, Start: FrameBound{Kind: Preceding, Offset: k(1)}, End: FrameBound{Kind: Following, Offset: k(1)}}
	range1 := Frame{Mode: FrameRange, Start: FrameBound{Kind: Preceding, Offset: konst(i4, 1)}, End: FrameBound{Kind: CurrentRow}}
	groups1 := Frame{Mode: FrameGroups, Start: FrameBound{Kind: Preceding, Offset: k(1)}, End: FrameBound{Kind: CurrentRow}}
	range2 := Frame{Mode: FrameRange, Start: FrameBound{Kind: CurrentRow}, End: FrameBound{Kind: Following, Offset: konst(i4, 2)}}
	calls := []WindowCall{
		wcall(t, "row_number", nil, part, ord, defaultFrame),
		wcall(t, "rank", nil, part, ord, defaultFrame),
		wcall(t, "dense_rank", nil, part, ord, defaultFrame),
		wcall(t, "percent_rank", nil, part, ord, defaultFrame),
		wcall(t, "cume_dist", nil, part, ord, defaultFrame),
		wcall(t, "ntile", []expr.Expr{konst(i4, 3)}, part, ord, defaultFrame),
		wcall(t, "lag", []expr.Expr{v}, part, ord, defaultFrame),
		wcall(t, "lead", []expr.Expr{v, konst(i4, 2), konst(i4, -1)}, part, ord, defaultFrame),
		wcall(t, "first_value", []expr.Expr{v}, part, ord, defaultFrame),
		wcall(t, "last_value", []expr.Expr{v}, part, ord, defaultFrame),
		wcall(t, "nth_value", []expr.Expr{v, konst(i4, 2)}, part, ord, defaultFrame),
		wcall(t, "sum", []expr.Expr{v}, part, ord, defaultFrame),
		wcall(t, "sum", []expr.Expr{v}, part, ord, rows1),
		wcall(t, "sum", []expr.Expr{v}, part, ord, range1),
		wcall(t, "sum", []expr.Expr{v}, part, ord, groups1),
		wcall(t, "count", nil, nil, nil, wholeFrame),
		wcall(t, "avg", []expr.Expr{v}, part, nil, wholeFrame),
		wcall(t, "max", []expr.Expr{v}, part, ord, range2),
	}
	cs := cols(i4, i4, i4)
	for _, c := range calls {
		cs = append(cs, types.Column{Name: c.Fn.Name, Type: c.Fn.Return})
	}
	w := &Window{Input: s, Calls: calls, Cols: cs}
	// psql: with t(g,o,v) as (values ...) select g,o,v, row_number() over w, ... window w as (partition by g order by o)
	N := func(v int) any { return int64(v) }
	want := [][]any{
		{N(1), N(1), N(10), N(1), N(1), N(1), 0.0, 0.25, N(1), nil, N(30), N(10), N(10), nil, "10", "30", "10", "10", N(7), "25.0000000000000000", N(30)},
		{N(1), N(2), N(20), N(2), N(2), N(2), 1.0 / 3, 0.75, N(1), N(10), N(40), N(10), N(30), N(20), "60", "60", "60", "60", N(7), "25.0000000000000000", N(40)},
		{N(1), N(2), N(30), N(3), N(2), N(2), 1.0 / 3, 0.75, N(2), N(20), N(-1), N(10), N(30), N(20), "60", "90", "60", "60", N(7), "25.0000000000000000", N(40)},
		{N(1), N(4), N(40), N(4), N(4), N(3), 1.0, 1.0, N(3), N(30), N(-1), N(10), N(40), N(20), "100", "70", "40", "90", N(7), "25.0000000000000000", N(40)},
		{N(2), N(1), N(5), N(1), N(1), N(1), 0.0, 1.0 / 3, N(1), nil, N(7), N(5), N(5), nil, "5", "5", "5", "5", N(7), "6.0000000000000000", N(5)},
		{N(2), N(3), nil, N(2), N(2), N(2), 0.5, 2.0 / 3, N(2), N(5), N(-1), N(5), nil, nil, "5", "12", nil, "5", N(7), "6.0000000000000000", nil},
		{N(2), nil, N(7), N(3), N(3), N(3), 1.0, 1.0, N(3), nil, N(-1), N(5), N(7), nil, "12", "7", "7", "7", N(7), "6.0000000000000000", N(7)},
	}
	// sum(int4) is bigint: convert the expected text to int64.
	for _, r := range want {
		for c := 14; c <= 17; c++ {
			if s, ok := r[c].(string); ok {
				var x int64
				for _, ch := range s {
					x = x*10 + int64(ch-'0')
				}
				r[c] = x
			}
		}
	}
	got := run(t, w)
	wantSameRows(t, got, want)
}

func TestWindowErrors(t *testing.T) {
	s := src(cols(types.TInt4), 3, []any{1, 2})
	c := wcall(t, "ntile", []expr.Expr{konst(types.TInt4, 0)}, nil, nil, wholeFrame)
	_, err := runErr(&Window{Input: s, Calls: []WindowCall{c}, Cols: cols(types.TInt4, types.TInt4)})
	if e := pgerr.As(err); e == nil || e.Code != "22014" || e.Message != "argument of ntile must be greater than zero" {
		t.Fatalf("ntile(0): %v", err)
	}
	neg := Frame{Mode: FrameRows, Start: FrameBound{Kind: Preceding, Offset: konst(types.TInt8, int64(-1))}, End: FrameBound{Kind: CurrentRow}}
	c2 := wcall(t, "sum", []expr.Expr{col(0, types.TInt4)}, nil, []SortKey{{E: col(0, types.TInt4)}}, neg)
	_, err = runErr(&Window{Input: s, Calls: []WindowCall{c2}, Cols: cols(types.TInt4, types.TInt8)})
	if e := pgerr.As(err); e == nil || e.Code != "22013" || e.Message != "frame starting offset must not be negative" {
		t.Fatalf("negative offset: %v", err)
	}
	wantRows(t, run(t, &Window{Input: src(cols(types.TInt4), 3, []any{}), Calls: []WindowCall{c2}, Cols: cols(types.TInt4, types.TInt8)}), nil)
}

// RANGE offsets over dates and timestamps, given as untyped literals as the
// planner passes them. From PostgreSQL 15:
// select id, count(*) over (order by d desc range between current row and '2 days' following)
// from (values (1,'2024-01-01'::date),(2,'2024-01-03'),(3,'2024-02-01'),(4,'2024-01-31'),(5,null)) t(id, d)
// gives 1|1 2|2 3|2 4|1 5|1.
func TestWindowRangeDates(t *testing.T) {
	day := func(y, m, d int) any {
		return int(time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).Unix() / 86400)
	}
	s := src(cols(types.TInt4, types.TDate), 2, []any{1, 2, 3, 4, 5}, []any{day(2024, 1, 1), day(2024, 1, 3), day(2024, 2, 1), day(2024, 1, 31), nil})
	fr := Frame{Mode: FrameRange, Start: FrameBound{Kind: CurrentRow}, End: FrameBound{Kind: Following, Offset: konst(types.TUnknown, "2 days")}}
	c := wcall(t, "count", nil, nil, []SortKey{{E: col(1, types.TDate), Desc: true, NullsFirst: true}}, fr)
	got := run(t, &Window{Input: s, Calls: []WindowCall{c}, Cols: cols(types.TInt4, types.TDate, types.TInt8)})
	counts := map[int64]int64{}
	for _, r := range got {
		counts[r[0].(int64)] = r[2].(int64)
	}
	want := map[int64]int64{1: 1, 2: 2, 3: 2, 4: 1, 5: 1}
	if !reflect.DeepEqual(counts, want) {
		t.Fatalf("got %v, want %v", counts, want)
	}
	// A negative offset is an error (22013).
	fr.End.Offset = konst(types.TInterval, arrow.MonthDayNanoInterval{Days: -1})
	c = wcall(t, "count", nil, nil, []SortKey{{E: col(1, types.TDate)}}, fr)
	_, err := runErr(&Window{Input: s, Calls: []WindowCall{c}, Cols: cols(types.TInt4, types.TDate, types.TInt8)})
	if e := pgerr.As(err); e == nil || e.Code != "22013" || e.Message != "invalid preceding or following size in window function" {
		t.Fatalf("negative interval: %v", err)
	}
}

// Frame EXCLUDE, from PostgreSQL 15:
// select id, v, sum(v) over (order by v rows between 1 preceding and 1 following exclude current row),
// sum(v) over (order by v range between unbounded preceding and current row exclude group),
// count(*) over (order by v groups between 1 preceding and 1 following exclude ties),
// first_value(id) over (order by v rows between current row and 2 following exclude current row),
// last_value(id) over (order by v range between unbounded preceding and current row exclude ties),
// nth_value(id, 2) over (order by v rows between unbounded preceding and unbounded following exclude group)
// from (values (1,10),(2,20),(3,20),(4,30),(5,40)) t(id,v)
func TestWindowExclude(t *testing.T) {
	i4 := types.TInt4
	s := src(cols(i4, i4), 2, []any{1, 2, 3, 4, 5}, []any{10, 20, 20, 30, 40})
	id, v := col(0, i4), col(1, i4)
	ord := []SortKey{{E: v}}
	k := func(n int64) expr.Expr { return konst(types.TInt8, n) }
	fr := func(m FrameMode, s, e FrameBound, x FrameExclusion) Frame {
		return Frame{Mode: m, Start: s, End: e, Exclude: x}
	}
	up, uf, cur := FrameBound{Kind: UnboundedPreceding}, FrameBound{Kind: UnboundedFollowing}, FrameBound{Kind: CurrentRow}
	p1, f1, f2 := FrameBound{Kind: Preceding, Offset: k(1)}, FrameBound{Kind: Following, Offset: k(1)}, FrameBound{Kind: Following, Offset: k(2)}
	calls := []WindowCall{
		wcall(t, "sum", []expr.Expr{v}, nil, ord, fr(FrameRows, p1, f1, ExcludeCurrentRow)),
		wcall(t, "sum", []expr.Expr{v}, nil, ord, fr(FrameRange, up, cur, ExcludeGroup)),
		wcall(t, "count", nil, nil, ord, fr(FrameGroups, p1, f1, ExcludeTies)),
		wcall(t, "first_value", []expr.Expr{id}, nil, ord, fr(FrameRows, cur, f2, ExcludeCurrentRow)),
		wcall(t, "last_value", []expr.Expr{id}, nil, ord, fr(FrameRange, up, cur, ExcludeTies)),
		wcall(t, "nth_value", []expr.Expr{id, konst(i4, 2)}, nil, ord, fr(FrameRows, up, uf, ExcludeGroup)),
	}
	cs := cols(i4, i4)
	for _, c := range calls {
		cs = append(cs, types.Column{Name: c.Fn.Name, Type: c.Fn.Return})
	}
	N := func(x int) any { return int64(x) }
	want := [][]any{
		{N(1), N(10), N(20), nil, N(3), N(2), N(1), N(3)},
		{N(2), N(20), N(30), N(10), N(3), N(3), N(2), N(4)},
		{N(3), N(20), N(50), N(10), N(3), N(4), N(3), N(4)},
		{N(4), N(30), N(60), N(50), N(4), N(5), N(4), N(2)},
		{N(5), N(40), N(30), N(80), N(2), nil, N(5), N(2)},
	}
	wantSameRows(t, run(t, &Window{Input: s, Calls: calls, Cols: cs}), want)
}

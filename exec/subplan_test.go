package exec

import (
	"context"
	"testing"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

func TestSubPlan(t *testing.T) {
	s := src(cols(types.TInt8, types.TText), 2, []any{1, 2, 3, 4, 5}, []any{"a", "b", "c", "d", "e"})
	sp := NewSubPlan(s)
	ctx := &expr.Context{Ctx: context.Background()}
	count := func(limit int) (int, []any) {
		arrs, err := sp.Run(ctx, limit)
		if err != nil {
			t.Fatal(err)
		}
		n, vals := 0, []any{}
		for _, a := range arrs {
			for i := 0; i < a.Len(); i++ {
				vals = append(vals, goVal(a, i))
			}
			n += a.Len()
		}
		return n, vals
	}
	if n, vals := count(0); n != 5 || vals[4] != int64(5) {
		t.Fatalf("no limit: %d %v", n, vals)
	}
	if n, vals := count(3); n != 3 || vals[2] != int64(3) {
		t.Fatalf("limit 3: %d %v", n, vals)
	}
	// EXISTS (SELECT FROM ...): no columns, rows still counted.
	none := NewSubPlan(&Values{Rows: [][]expr.Expr{{}, {}}})
	arrs, err := none.Run(ctx, 1)
	if err != nil || len(arrs) != 1 || arrs[0].Len() != 1 {
		t.Fatalf("zero columns: %v %v", arrs, err)
	}
	if sp.Explain() != "Source\n" {
		t.Fatalf("explain %q", sp.Explain())
	}
}

func TestExplainTree(t *testing.T) {
	l := src(cols(types.TInt8), 2, []any{1})
	r := src(cols(types.TInt8), 2, []any{1})
	j := &HashJoin{Left: l, Right: r, Kind: LeftJoin, LeftKeys: []expr.Expr{col(0, types.TInt8)}, RightKeys: []expr.Expr{col(0, types.TInt8)}, Cols: cols(types.TInt8, types.TInt8)}
	cnt, _ := ResolveAggregate("count", nil, true)
	h := &HashAgg{Input: j, GroupBy: []expr.Expr{col(1, types.TInt8)}, Aggs: []AggCall{{Fn: cnt}}, Cols: cols(types.TInt8, types.TInt8)}
	srt := &Sort{Input: h, Keys: []SortKey{{E: col(0, types.TInt8), Desc: true, NullsFirst: false}}}
	want := "Sort: c0 DESC NULLS LAST\n  HashAggregate: count(*) group by c1\n    Hash Join (left) on c0 = c0\n      Source\n      Source\n"
	if got := Explain(srt); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

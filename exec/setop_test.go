package exec

import (
	"testing"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

func TestSetOps(t *testing.T) {
	c := cols(types.TInt4, types.TText)
	l := src(c, 2, []any{1, 1, 2, nil, nil, 3}, []any{"a", "a", "b", nil, nil, "c"})
	r := src(c, 2, []any{1, nil, 4, 1, 1}, []any{"a", nil, "d", "a", "a"})
	row := func(v any) []any {
		switch v {
		case nil:
			return []any{nil, nil}
		case 1:
			return []any{int64(1), "a"}
		case 2:
			return []any{int64(2), "b"}
		case 3:
			return []any{int64(3), "c"}
		}
		return []any{int64(4), "d"}
	}
	rs := func(vs ...any) [][]any {
		var out [][]any
		for _, v := range vs {
			out = append(out, row(v))
		}
		return out
	}
	cases := []struct {
		kind SetOpKind
		all  bool
		want [][]any
	}{
		{Union, false, rs(1, 2, nil, 3, 4)},
		{Union, true, rs(1, 1, 2, nil, nil, 3, 1, nil, 4, 1, 1)},
		{Intersect, false, rs(1, nil)},
		{Intersect, true, rs(1, 1, nil)},
		{Except, false, rs(2, 3)},
		{Except, true, rs(2, nil, 3)},
	}
	for _, cs := range cases {
		got := run(t, &SetOp{Kind: cs.kind, All: cs.all, Left: l, Right: r, Cols: c})
		wantSameRows(t, got, cs.want)
	}
	empty := src(c, 2, []any{}, []any{})
	wantRows(t, run(t, &SetOp{Kind: Intersect, Left: l, Right: empty, Cols: c}), nil)
	wantSameRows(t, run(t, &SetOp{Kind: Except, Left: l, Right: empty, Cols: c}), rs(1, 2, nil, 3))
}

func TestDistinct(t *testing.T) {
	s := src(cols(types.TFloat8, types.TText), 2,
		[]any{1.0, 0.0, 1.0, nil, nan(), nil, nan(), 2.0},
		[]any{"x", "y", "x", "z", "n", "w", "n", "x"})
	d := run(t, &Distinct{Input: s})
	if len(d) != 6 {
		t.Fatalf("distinct rows: %v", d)
	}
	// DISTINCT ON (c1): first row of each key in input order.
	on := run(t, &Distinct{Input: s, On: []expr.Expr{col(1, types.TText)}})
	if len(on) != 5 || on[0][1] != "x" || on[0][0] != 1.0 || on[1][1] != "y" || on[2][1] != "z" || on[3][1] != "n" || on[4][1] != "w" {
		t.Fatalf("distinct on: %v", on)
	}
	// -0 and 0 are one value, NaN equals NaN, as in PostgreSQL.
	z := src(cols(types.TFloat8), 3, []any{0.0, negZero(), nan(), nan()})
	if got := run(t, &Distinct{Input: z}); len(got) != 2 {
		t.Fatalf("float distinct: %v", got)
	}
}

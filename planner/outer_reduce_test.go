package planner

import (
	"testing"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

func TestRejectsNulls(t *testing.T) {
	y := &expr.ColRef{Idx: 7, T: types.TInt4, Name: "y"} // the padded side's
	x := &expr.ColRef{Idx: 1, T: types.TInt4, Name: "x"}
	k := func(v int64) expr.Expr { return &expr.Const{V: v, T: types.TInt4} }
	bin := func(op string, l, r expr.Expr) expr.Expr {
		e, err := expr.NewBinary(op, l, r)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	co, err := expr.NewCoalesce([]expr.Expr{y, k(0)})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[int]bool{7: true}
	for _, c := range []struct {
		name string
		e    expr.Expr
		want bool
	}{
		{"y > 0", bin(">", y, k(0)), true},
		{"y + x > 0", bin(">", bin("+", y, x), k(0)), true},
		{"x > 0", bin(">", x, k(0)), false},
		{"y IS NULL", &expr.IsNull{E: y}, false},
		{"y IS NOT NULL", &expr.IsNull{E: y, Not: true}, true},
		{"coalesce(y, 0) = 0", bin("=", co, k(0)), false},
		{"x > 0 OR y > 0", &expr.Or{Args: []expr.Expr{bin(">", x, k(0)), bin(">", y, k(0))}}, false},
		{"y > 0 OR y < -1", &expr.Or{Args: []expr.Expr{bin(">", y, k(0)), bin("<", y, k(-1))}}, true},
		{"x > 0 AND y > 0", &expr.And{Args: []expr.Expr{bin(">", x, k(0)), bin(">", y, k(0))}}, true},
		{"NOT (y > 0)", &expr.Not{E: bin(">", y, k(0))}, true},
		{"y IS DISTINCT FROM 1", &expr.IsDistinct{L: y, R: k(1)}, false},
	} {
		if got := rejectsNulls(c.e, ids); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

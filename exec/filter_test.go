package exec

import (
	"testing"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

func mustBin(t *testing.T, op string, l, r expr.Expr) expr.Expr {
	t.Helper()
	e, err := expr.NewBinary(op, l, r)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// The parts of a WHERE run cheapest first, ties in written order, nested
// ANDs flattened (PostgreSQL's order_qual_clauses).
func TestQualListOrder(t *testing.T) {
	c0, c1 := col(0, types.TInt8), col(1, types.TInt8)
	ten, one := &expr.Const{V: int64(10), T: types.TInt8}, &expr.Const{V: int64(1), T: types.TInt8}
	div := mustBin(t, ">", mustBin(t, "/", ten, c0), one) // cost 2
	eq := mustBin(t, "=", c1, one)                        // cost 1
	null := &expr.IsNull{E: c0}                           // cost 0
	eq2 := mustBin(t, "<>", c0, one)                      // cost 1, after eq
	got := QualList(&expr.And{Args: []expr.Expr{div, &expr.And{Args: []expr.Expr{eq, null}}, eq2}})
	want := []expr.Expr{null, eq, eq2, div}
	if len(got) != len(want) {
		t.Fatalf("got %d parts", len(got))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("part %d: got %s, want %s", i, got[i], want[i])
		}
	}
	if l := QualList(div); len(l) != 1 || l[0] != div {
		t.Fatalf("one part: %v", l)
	}
}

// A part is not evaluated for a row an earlier (cheaper) part dropped, NULL
// included: 10 / c0 never sees the row whose c0 is 0.
func TestFilterPartsSkipDroppedRows(t *testing.T) {
	s := src(cols(types.TInt8, types.TInt8), 3, []any{0, 5, 2, 20}, []any{nil, 1, 1, 1})
	c0, c1 := col(0, types.TInt8), col(1, types.TInt8)
	ten, one := &expr.Const{V: int64(10), T: types.TInt8}, &expr.Const{V: int64(1), T: types.TInt8}
	div := mustBin(t, ">=", mustBin(t, "/", ten, c0), one)
	f := &Filter{Input: s, Cond: &expr.And{Args: []expr.Expr{div, mustBin(t, "=", c1, one)}}}
	wantRows(t, run(t, f), [][]any{{int64(5), int64(1)}, {int64(2), int64(1)}})
	// written as one expression (a select list), the AND evaluates both
	// for the NULL row and fails, as PostgreSQL's does
	p := &Project{Input: s, Exprs: []expr.Expr{f.Cond}, Cols: cols(types.TBool)}
	if _, err := runErr(p); err == nil {
		t.Fatal("the AND in a select list did not fail on 10 / 0")
	}
}

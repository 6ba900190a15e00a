package expr

import (
	"slices"
	"testing"

	"github.com/streamsql/streamsql/types"
)

// TestReadsColumns: the columns an expression reads, and a CASE whose
// branches read different columns of a three-column batch evaluated on
// subsets of the rows (the unread columns are not copied).
func TestReadsColumns(t *testing.T) {
	x, y, z := ref(0, types.TInt4), ref(1, types.TText), ref(2, types.TInt4)
	c, err := NewCase([]When{{Cond: mustBinary(t, ">", x, i4(1)), Result: y}}, lit("none"))
	if err != nil {
		t.Fatal(err)
	}
	used := make([]bool, 3)
	if !readsColumns(c, used) || !slices.Equal(used, []bool{true, true, false}) {
		t.Fatalf("CASE reads %v", used)
	}
	used = make([]bool, 3)
	if readsColumns(&Subquery{}, used) {
		t.Fatal("a subquery's reads are not known")
	}
	b := batch(t,
		col{types.TInt4, []types.Value{int64(0), int64(5), nil, int64(3)}},
		col{types.TText, []types.Value{"a", "b", "c", "d"}},
		col{types.TInt4, []types.Value{int64(7), int64(8), int64(9), int64(10)}})
	expectValues(t, c, b, "none", "b", "none", "d")
	c2, err := NewCase([]When{{Cond: mustBinary(t, "=", x, i4(0)), Result: i4(0)}}, mustBinary(t, "/", z, x))
	if err != nil {
		t.Fatal(err)
	}
	expectValues(t, c2, b, int64(0), int64(1), nil, int64(3))
}

package exec

import (
	"testing"

	"github.com/streamsql/streamsql/types"
)

// TestTake checks the typed gathers, NULLs and -1 (outer join) indexes
// included, over sliced inputs.
func TestTake(t *testing.T) {
	for _, c := range []struct {
		t    types.T
		vals []any
	}{
		{types.TText, []any{"a", nil, "ccc", "", "dd", nil, "e"}},
		{types.TInt4, []any{1, nil, 3, 4, 5, nil, 7}},
		{types.TFloat8, []any{1.5, nil, 3.0, 4.0, 5.0, nil, 7.0}},
		{types.TBool, []any{true, nil, false, true, false, nil, true}},
		{types.ArrayOf(types.TInt8), []any{[]any{int64(1)}, nil, []any{}, []any{int64(2), nil}, []any{int64(5)}, nil, []any{int64(7)}}},
	} {
		full := arr(c.t, c.vals...)
		a := sliceArr(full, 1, 7) // vals[1:7]
		idx := []int32{5, -1, 0, 2, 2, 4, 1, 3}
		got := takeArray(mem, a, idx)
		for k, i := range idx {
			var want any
			if i >= 0 {
				want = c.vals[int(i)+1]
				if w, ok := want.(int); ok {
					want = int64(w)
				}
			}
			if g := goVal(got, k); rowKey([]any{g}) != rowKey([]any{want}) {
				t.Fatalf("%s: row %d = %v, want %v", c.t, k, g, want)
			}
		}
		if got.Len() != len(idx) {
			t.Fatalf("%s: len %d", c.t, got.Len())
		}
	}
	// No NULLs at all: no validity bitmap needed.
	s := takeArray(mem, arr(types.TText, "x", "y"), []int32{1, 1, 0})
	if s.NullN() != 0 || goVal(s, 0) != "y" || goVal(s, 2) != "x" {
		t.Fatalf("plain strings: %v", s)
	}
}

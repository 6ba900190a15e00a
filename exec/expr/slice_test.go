package expr

import (
	"testing"

	"github.com/streamsql/streamsql/types"
)

// TestStringKernelsOnSlices: the kernels that read string buffers directly
// honor an array's offset (a slice of a batch, as a table's deleted rows
// are) — ValueBytes starts at the slice's first row, ValueOffsets do not.
func TestStringKernelsOnSlices(t *testing.T) {
	full := batch(t, col{types.TText, []types.Value{"aa", "p", "xyz", nil, "pp", "p"}})
	b := full.NewSlice(1, 6) // "p", "xyz", NULL, "pp", "p"
	c := &ColRef{Idx: 0, T: types.TText}
	p := &Const{V: "p", T: types.TText}
	for _, tc := range []struct {
		op   string
		want []types.Value
	}{
		{"=", []types.Value{true, false, nil, false, true}},
		{"<>", []types.Value{false, true, nil, true, false}},
	} {
		e, err := NewBinary(tc.op, c, p)
		if err != nil {
			t.Fatal(err)
		}
		expectValues(t, e, b, tc.want...)
	}
	for _, name := range []string{"length", "octet_length"} {
		e, err := NewCall(name, []Expr{c})
		if err != nil {
			t.Fatal(err)
		}
		expectValues(t, e, b, int64(1), int64(3), nil, int64(2), int64(1))
	}
}

package exec

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

// TestTakeRowsFrom gathers rows of several batches (sliced, with and
// without NULLs, some taken whole) into one, for the typed gathers and
// the builder's: each row is the one named, in order.
func TestTakeRowsFrom(t *testing.T) {
	for _, c := range []struct {
		t    types.T
		vals []any
	}{
		{types.TText, []any{"a", nil, "ccc", "", "dd", nil, "e"}},
		{types.TText, []any{"a", "b", "ccc", "", "dd", "f", "e"}},
		{types.TInt8, []any{1, nil, 3, 4, 5, nil, 7}},
		{types.TInt8, []any{1, 2, 3, 4, 5, 6, 7}},
		{types.TFloat8, []any{1.5, nil, 3.0, 4.0, 5.0, nil, 7.0}},
		{types.TBool, []any{true, nil, false, true, false, nil, true}},
	} {
		schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: c.t.ArrowType(), Nullable: true}}, nil)
		batch := func(a arrow.Array) arrow.RecordBatch {
			return array.NewRecordBatch(schema, []arrow.Array{a}, int64(a.Len()))
		}
		full := arr(c.t, c.vals...)
		recs := []arrow.RecordBatch{batch(sliceArr(full, 1, 7)), batch(full), batch(sliceArr(full, 2, 5)), batch(sliceArr(full, 2, 5)), batch(sliceArr(full, 0, 3))}
		idx := [][]int32{{5, 0, 2, 2}, nil, {2, 0}, nil, nil}
		var want []any // (batch, row) named in order
		for i, r := range recs {
			a := r.Column(0)
			if idx[i] == nil {
				for k := range a.Len() {
					want = append(want, goVal(a, k))
				}
				continue
			}
			for _, k := range idx[i] {
				want = append(want, goVal(a, int(k)))
			}
		}
		got := TakeRowsFrom(mem, schema, recs, idx)
		if int(got.NumRows()) != len(want) || got.Column(0).Len() != len(want) {
			t.Fatalf("%s: %d rows, want %d", c.t, got.NumRows(), len(want))
		}
		nulls := 0
		for k, w := range want {
			if g := goVal(got.Column(0), k); rowKey([]any{g}) != rowKey([]any{w}) {
				t.Fatalf("%s: row %d = %v, want %v", c.t, k, g, w)
			}
			if w == nil {
				nulls++
			}
		}
		if got.Column(0).NullN() != nulls {
			t.Fatalf("%s: %d NULLs, want %d", c.t, got.Column(0).NullN(), nulls)
		}
	}
}

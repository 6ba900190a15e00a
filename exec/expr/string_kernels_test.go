package expr

import (
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

// TestLowerUpperUnchangedText: lower() and upper() of text they leave as
// it is (returned as the input array), of text they change, and of
// non-ASCII text (never taken as unchanged).
func TestLowerUpperUnchangedText(t *testing.T) {
	for _, c := range []struct {
		fn   string
		in   []types.Value
		want []types.Value
	}{
		{"lower", []types.Value{"apple", nil, "x-1"}, []types.Value{"apple", nil, "x-1"}},
		{"lower", []types.Value{"apple", "Google", nil}, []types.Value{"apple", "google", nil}},
		{"lower", []types.Value{"é", "ÉCOLE"}, []types.Value{"é", "école"}},
		{"upper", []types.Value{"ABC", "1"}, []types.Value{"ABC", "1"}},
		{"upper", []types.Value{"ABC", "é", "x"}, []types.Value{"ABC", "É", "X"}},
	} {
		b := batch(t, col{types.TText, c.in})
		expectValues(t, call(t, c.fn, ref(0, types.TText)), b, c.want...)
	}
}

// TestLowerOfSlice: lower() of a slice of an array (offsets not from 0,
// validity at an offset).
func TestLowerOfSlice(t *testing.T) {
	b := batch(t, col{types.TText, []types.Value{"A", nil, "Bé", "cD", nil, "EE"}})
	in := array.NewSlice(b.Column(0), 1, 5)
	defer in.Release()
	out, err := caseMap(strings.ToLower, 'A', 'Z')(testCtx(), []arrow.Array{in}, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	got := rowsOf(out, types.TText)
	if want := []types.Value{nil, "bé", "cd", nil}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v, want %#v", got, want)
	}
}

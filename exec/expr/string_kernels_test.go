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

// TestSplitField: split_part's field against strings.Split, for fields
// counted from both ends, multi-byte and empty delimiters, empty fields.
func TestSplitField(t *testing.T) {
	splitRef := func(s, d string, n int64) string {
		if s == "" {
			return ""
		}
		parts := []string{s}
		if d != "" {
			parts = strings.Split(s, d)
		}
		if n < 0 {
			n += int64(len(parts)) + 1
		}
		if n < 1 || n > int64(len(parts)) {
			return ""
		}
		return parts[n-1]
	}
	for _, s := range []string{"", "a", "/", "a/b", "//x//", "https://www.nexmark.com/abc/def/ghi/item.htm?query=1", "aXXbXXXc"} {
		for _, d := range []string{"/", "XX", "", "//", "z"} {
			for n := int64(-7); n <= 7; n++ {
				if n == 0 {
					continue
				}
				if got, want := splitField(s, d, n), splitRef(s, d, n); got != want {
					t.Errorf("split_part(%q, %q, %d) = %q, want %q", s, d, n, got, want)
				}
			}
		}
	}
	b := batch(t, col{types.TText, []types.Value{"a/b/c", nil, "x"}}, col{types.TInt4, []types.Value{int64(2), int64(1), int64(0)}})
	sp := call(t, "split_part", ref(0, types.TText), lit("/"), ref(1, types.TInt4))
	if _, err := evalValues(t, sp, b); err == nil || !strings.Contains(err.Error(), "field position must not be zero") {
		t.Fatalf("field 0: %v", err)
	}
	b2 := batch(t, col{types.TText, []types.Value{"a/b/c", nil, "x"}}, col{types.TInt4, []types.Value{int64(2), int64(1), int64(-1)}})
	expectValues(t, sp, b2, "b", nil, "x")
}

// TestReplaceKernel: replace() over a column against strings.ReplaceAll
// (an empty pattern leaves the string as it is), NULLs included.
func TestReplaceKernel(t *testing.T) {
	strs := []types.Value{"abcabc", "", nil, "xyz", "aaa", "cc c"}
	froms := []types.Value{"b", "a", "a", "", "aa", "c"}
	tos := []types.Value{"XY", "z", "z", "q", "b", ""}
	b := batch(t, col{types.TText, strs}, col{types.TText, froms}, col{types.TText, tos})
	want := make([]types.Value, len(strs))
	for i, s := range strs {
		if s == nil {
			continue
		}
		if froms[i] == "" {
			want[i] = s
		} else {
			want[i] = strings.ReplaceAll(s.(string), froms[i].(string), tos[i].(string))
		}
	}
	expectValues(t, call(t, "replace", ref(0, types.TText), ref(1, types.TText), ref(2, types.TText)), b, want...)
}

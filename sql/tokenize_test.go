package sql

import (
	"reflect"
	"testing"
)

func TestTokenize(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want []string
	}{
		{"SELECT a.b, 'it''s' FROM \"T\"\"x\";", []string{"SELECT", "a", ".", "b", ",", "'it''s'", "FROM", `"T""x"`, ";"}},
		{"E'a\\'b' x'1F' $$ ; $$ $q$ $$ $q$ $1", []string{`E'a\'b'`, "x'1F'", "$$ ; $$", "$q$ $$ $q$", "$1"}},
		{"a /* x /* y */ z */ b -- c\nd", []string{"a", "b", "d"}},
		{"x=>1 a<>b c::int 1.5e3 .5", []string{"x", "=>", "1", "a", "<>", "b", "c", "::", "int", "1.5e3", ".5"}},
		{"a-- c\n-b", []string{"a", "-", "b"}},
		{"a 'unterminated ; b", []string{"a"}},
		{"a /* unterminated", []string{"a"}},
		{"é1 x", []string{"é1", "x"}},
	} {
		var got []string
		for _, tk := range tokenize(tc.src) {
			got = append(got, tc.src[tk.start:tk.end])
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: got %q, want %q", tc.src, got, tc.want)
		}
	}
}

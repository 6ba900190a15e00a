package expr

import (
	"reflect"
	"testing"
)

// TestTranslateARE: PostgreSQL's syntax written out for both engines, and
// which patterns need the backtracking one.
func TestTranslateARE(t *testing.T) {
	for _, c := range []struct {
		pat    string
		opts   areOptions
		want   string
		needBT bool
	}{
		{`^a.b$`, areOptions{}, `\Aa(?s:.)b\z`, false},
		{`^a.b$`, areOptions{nlstop: true, nlanch: true}, `(?m:^)a[^\n]b(?m:$)`, false},
		{`[^a]`, areOptions{nlstop: true}, `[^a\n]`, false},
		{`\d\w`, areOptions{}, `[0-9][\p{L}\p{Nd}_]`, false},
		{`a\Bb\b`, areOptions{}, "a\\\\b\x08", false},
		{`\y\Y`, areOptions{}, `\b\B`, false},
		{`(a)\1`, areOptions{}, `(a)(?:\1)`, true},
		{`a(?=b)`, areOptions{}, `a(?=b)`, true},
		{`\mx`, areOptions{}, `\b(?=[\p{L}\p{Nd}_])x`, true},
		{`a.c`, areOptions{quote: true}, `a\.c`, false},
		{`***=a.c`, areOptions{}, `a\.c`, false},
		{`(?i)ab`, areOptions{}, `(?i)ab`, false},
		{"a b # c\n", areOptions{expanded: true}, `ab`, false},
		{`[]a-c[:digit:]]`, areOptions{}, `[\]a-c0-9]`, false},
		{`a{2,3}?`, areOptions{}, `a{2,3}?`, false},
		{`a{x`, areOptions{}, `a\{x`, false},
	} {
		got, _, needBT, err := translateARE(c.pat, c.opts)
		if err != nil || got != c.want || needBT != c.needBT {
			t.Errorf("%q: %q needBT %v (%v), want %q needBT %v", c.pat, got, needBT, err, c.want, c.needBT)
		}
	}
	for _, pat := range []string{`a)`, `(a`, `[a`, `*a`, `a**`, `a{256}`, `\q`, `\2(a)`, `[[:nope:]]`, `(?z)a`, `a\`} {
		if _, _, _, err := translateARE(pat, areOptions{}); err == nil {
			t.Errorf("%q: accepted", pat)
		}
	}
}

// TestRegexFindAll: PostgreSQL's iteration (empty matches after a match
// count, a search from a position sees the text before it) on both
// engines.
func TestRegexFindAll(t *testing.T) {
	for _, c := range []struct {
		pat, s string
		from   int
		want   [][]int
	}{
		{`b*`, "abc", 0, [][]int{{0, 0}, {1, 2}, {2, 2}, {3, 3}}},
		{`(?:b*)(?=.|$)`, "abc", 0, [][]int{{0, 0}, {1, 2}, {2, 2}, {3, 3}}}, // regexp2
		{`^a`, "abcabc", 3, nil},
		{`^a`, "abcabc", 0, [][]int{{0, 1}}},
		{`(?<!^)a`, "abcabc", 0, [][]int{{3, 4}}},
		{`\yb`, "ab b", 1, [][]int{{3, 4}}},
		{`(.)\1`, "aabb", 1, [][]int{{2, 4, 2, 3}}},
		{`(é)\1`, "éaéé", 2, [][]int{{3, 7, 3, 5}}}, // byte offsets from rune ones
	} {
		re, err := compilePG(c.pat, areOptions{})
		if err != nil {
			t.Fatalf("%q: %v", c.pat, err)
		}
		got, err := re.findAll(c.s, c.from, -1)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q in %q from %d: %v (%v), want %v", c.pat, c.s, c.from, got, err, c.want)
		}
	}
}

func TestAppendReplacement(t *testing.T) {
	m := []int{1, 3, 1, 2}
	for repl, want := range map[string]string{
		`X\&Y`: "XbcY", `\\`: `\`, `X\Y\1Z\`: `X\YbZ\`, `\2\0`: `\0`,
	} {
		if got := string(appendReplacement(nil, repl, "abcd", m)); got != want {
			t.Errorf("%q: %q, want %q", repl, got, want)
		}
	}
}

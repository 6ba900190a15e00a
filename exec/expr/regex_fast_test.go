package expr

import (
	"math/rand"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/types"
)

// TestPivotRegexMatchesGo compares the pivot matcher with Go's
// FindStringSubmatchIndex on chosen patterns and on random patterns over
// a small alphabet (anchors, word boundaries, classes, groups, greedy and
// lazy repetitions, empty loops), on random strings.
func TestPivotRegexMatchesGo(t *testing.T) {
	fixed := []string{
		`(&|^)channel_id=([^&]*)`, `(?s)(&|^)channel_id=([^&]*)`, `ab`, `^ab`, `ab$`, `\bab\b`,
		`(a|b)?cd(e*)`, `x(a*)*ab`, `(a*?)ab(b+?)`, `.ab.`, `(?m)^ab$`, `[^a]{2,3}ab`, `(?i:a)ab`,
	}
	strs := []string{"", "ab", "xab", "aab&ab", "cd", "abcde", "a\nab\nb", "channel_id=3&x", "q&channel_id=&channel_id=5",
		"&channel_id=12", "bbabab", "éab", "ab é"}
	tried := 0
	check := func(re *regexp.Regexp, pv *pivotRegex, s string) {
		t.Helper()
		pat := re.String()
		tried++
		got, ok := pv.find(s, nil, nil)
		if !ok {
			if asciiOnly(s) && len(s) < 1000 {
				t.Errorf("%q on %q: the pivot matcher declined an ASCII string", pat, s)
			}
			return
		}
		if want := re.FindStringSubmatchIndex(s); !slices.Equal(got, want) {
			t.Errorf("%q on %q: pivot %v, Go %v", pat, s, got, want)
		}
	}
	for _, p := range fixed {
		re := regexp.MustCompile(p)
		pv := newPivotRegex(p, re.NumSubexp())
		if pv == nil {
			if p != `(a*?)ab(b+?)` { // unbounded before the literal
				t.Errorf("%q: no pivot", p)
			}
			continue
		}
		for _, s := range strs {
			check(re, pv, s)
		}
	}
	r := rand.New(rand.NewSource(1))
	atoms := []string{"a", "b", "ab", "ba", "[ab]", "[^a]", ".", "^", "$", `\b`, `\B`, "(a|b)", "(a|)", "(ab|a)", "()", "(?:b|ba)"}
	ops := []string{"", "", "*", "+", "?", "*?", "+?", "??", "{1,2}", "{0,2}?"}
	for n := 0; n < 3000; n++ {
		var sb strings.Builder
		for k := r.Intn(4); k > 0; k-- {
			sb.WriteString(atoms[r.Intn(len(atoms))] + ops[r.Intn(len(ops))])
		}
		sb.WriteString([]string{"ab", "b", "aab", "ba"}[r.Intn(4)])
		for k := r.Intn(3); k > 0; k-- {
			a := atoms[r.Intn(len(atoms))] + ops[r.Intn(len(ops))]
			if r.Intn(4) == 0 {
				a = "(" + a + ")" + ops[r.Intn(len(ops))]
			}
			sb.WriteString(a)
		}
		re, err := regexp.Compile(sb.String())
		if err != nil {
			continue
		}
		pv := newPivotRegex(re.String(), re.NumSubexp())
		if pv == nil {
			continue
		}
		for k := 0; k < 20; k++ {
			b := make([]byte, r.Intn(12))
			for i := range b {
				b[i] = "ab\nx"[r.Intn(4)]
			}
			check(re, pv, string(b))
		}
	}
	if tried < 10000 {
		t.Errorf("only %d pattern and string pairs had a pivot", tried)
	}
}

// TestRegexpMatchKernels: regexp_match over a column, and
// regexp_match(...)[k] through the Element kernel, against the row
// function (Go's matcher, the array built, then subscripted), with NULL
// strings, non-ASCII strings and patterns changing between rows.
func TestRegexpMatchKernels(t *testing.T) {
	strs := []types.Value{"q=1&channel_id=42", nil, "channel_id=7&a=1", "x", "é&channel_id=9", "ab12cd", "&channel_id=", "zz"}
	pats := []types.Value{`(&|^)channel_id=([^&]*)`, `(&|^)channel_id=([^&]*)`, `(&|^)channel_id=([^&]*)`, `(&|^)channel_id=([^&]*)`,
		`(&|^)channel_id=([^&]*)`, `[0-9]+`, `(&|^)channel_id=([^&]*)`, nil}
	b := batch(t, col{types.TText, strs}, col{types.TText, pats})
	s, p := ref(0, types.TText), ref(1, types.TText)
	m := call(t, "regexp_match", s, p)
	want := make([]types.Value, len(strs))
	for i := range strs {
		if strs[i] == nil || pats[i] == nil {
			continue
		}
		re := regexp.MustCompile(pats[i].(string))
		str := strs[i].(string)
		x := re.FindStringSubmatchIndex(str)
		if x == nil {
			continue
		}
		if len(x) == 2 {
			want[i] = []types.Value{str[x[0]:x[1]]}
			continue
		}
		var row []types.Value
		for g := 2; g < len(x); g += 2 {
			if x[g] < 0 {
				row = append(row, nil)
			} else {
				row = append(row, str[x[g]:x[g+1]])
			}
		}
		want[i] = row
	}
	expectValues(t, m, b, want...)
	for k := int64(0); k <= 3; k++ {
		sub, err := NewSubscript(m, &Const{V: k, T: types.TInt4})
		if err != nil {
			t.Fatal(err)
		}
		var el []types.Value
		for _, w := range want {
			var v types.Value
			if row, ok := w.([]types.Value); ok && k >= 1 && int(k) <= len(row) {
				v = row[k-1]
			}
			el = append(el, v)
		}
		expectValues(t, sub, b, el...)
		// and through the array, without the Element kernel
		plain := *m.(*Call)
		fn := *plain.Fn
		fn.Element = nil
		plain.Fn = &fn
		sub2, _ := NewSubscript(&plain, &Const{V: k, T: types.TInt4})
		expectValues(t, sub2, b, el...)
	}
}

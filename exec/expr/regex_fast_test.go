package expr

import (
	"math/rand"
	"regexp"
	"slices"
	"strings"
	"testing"
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
		got, ok := pv.find(s, nil)
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

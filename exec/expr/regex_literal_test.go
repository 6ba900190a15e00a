package expr

import (
	"regexp"
	"testing"
)

// TestRequiredLiteral: the literal a pattern's matches must contain, and
// that regexp_match with the prefilter returns what the matcher alone does.
func TestRequiredLiteral(t *testing.T) {
	for pat, want := range map[string]string{
		"(&|^)channel_id=([^&]*)":     "channel_id=",
		"(?s)(&|^)channel_id=([^&]*)": "channel_id=",
		"ab(cd)ef":                    "ab",
		"ab|cd":                       "",
		"(?i)abc":                     "",
		"a*bc?":                       "b",
		"x(abc)?y":                    "x",
		"^$":                          "",
		"[0-9]+ items":                " items",
	} {
		re := regexp.MustCompile(pat)
		if got := requiredLiteral(re); got != want {
			t.Errorf("%q: required literal %q, want %q", pat, got, want)
		}
	}
	re, err := compileRegex("(&|^)channel_id=([^&]*)", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"", "channel_id=", "https://x/item.htm?query=1&channel_id=42", "https://x/item.htm?query=1", "channel_id=7&a=1", "a&channel_id", "xchannel_id=1"} {
		got, err := matchGroups(re, s)
		if err != nil {
			t.Fatal(err)
		}
		var want any
		if m := re.re2.FindStringSubmatch(s); m != nil {
			want = m[1:]
		}
		if (got == nil) != (want == nil) {
			t.Errorf("%q: got %v, matcher says %v", s, got, want)
		}
	}
}

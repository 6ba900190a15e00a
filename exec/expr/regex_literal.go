package expr

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
)

// A pattern often holds a literal that every match must contain
// ('(&|^)channel_id=([^&]*)' needs "channel_id="). Go's matcher only skips
// ahead for a literal prefix, so a string without the literal still costs
// a full backtracking search; testing strings.Contains first rejects it
// at memchr speed. requiredLits caches the literal of each compiled
// pattern (safe for concurrent use; patterns are few: regexCache's).
var requiredLits sync.Map // *regexp.Regexp -> string ("" : none)

// requiredLiteral returns the longest literal every match of re contains,
// or "" when there is none (or it is matched ignoring case).
func requiredLiteral(re *regexp.Regexp) string {
	if v, ok := requiredLits.Load(re); ok {
		return v.(string)
	}
	lit := ""
	if t, err := syntax.Parse(re.String(), syntax.Perl); err == nil {
		lit = mustContain(t.Simplify())
	}
	requiredLits.Store(re, lit)
	return lit
}

// mustContain finds the longest case-sensitive literal among the parts
// of re that every match goes through: re itself, the items of a
// concatenation, and the contents of a capture among them.
func mustContain(re *syntax.Regexp) string {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return ""
		}
		return string(re.Rune)
	case syntax.OpCapture:
		return mustContain(re.Sub[0])
	case syntax.OpConcat:
		best := ""
		var run strings.Builder // adjacent literals form a longer one
		for _, s := range re.Sub {
			l := mustContain(s)
			if s.Op == syntax.OpLiteral && l != "" {
				run.WriteString(l)
				l = run.String()
			} else {
				run.Reset()
			}
			if len(l) > len(best) {
				best = l
			}
		}
		return best
	}
	return ""
}

// cannotMatch reports whether s lacks a literal every match of re needs.
func cannotMatch(re *regexp.Regexp, s string) bool {
	lit := requiredLiteral(re)
	return lit != "" && !strings.Contains(s, lit)
}

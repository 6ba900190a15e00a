package expr

import (
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// PostgreSQL 15's regexp family with every overload: regexp_count,
// regexp_instr, regexp_substr, regexp_like, the start/N forms of
// regexp_replace and regexp_split_to_array with flags (the set-returning
// regexp_matches and regexp_split_to_table use the helpers here from the
// planner). Patterns are compiled by compilePG (pgregex.go); a start
// position makes the search begin at that character, the text before it
// visible to the pattern (^ does not match there), as in PostgreSQL. Pure
// functions, safe for concurrent use.

// compileFlags parses flags for fn, refusing g ("global") where fn does not
// take it, and compiles the pattern.
func compileFlags(fn, pat, flags string, globalOK bool) (*Regex, bool, error) {
	opts, global, err := regexOptions(flags)
	if err != nil {
		return nil, false, err
	}
	if global && !globalOK {
		return nil, false, pgerr.New(pgerr.InvalidParameterValue, "%s() does not support the \"global\" option", fn)
	}
	re, err := compilePG(pat, opts)
	return re, global, err
}

func badParam(name string, v int64) error {
	return pgerr.New(pgerr.InvalidParameterValue, "invalid value for parameter \"%s\": %d", name, v)
}

// runeOffset returns the byte offset of the start-th character (1-based)
// of s, or len(s) past its end.
func runeOffset(s string, start int64) int {
	n := int64(1)
	for i := range s {
		if n == start {
			return i
		}
		n++
	}
	return len(s)
}

// regexpArgs holds the optional arguments in PostgreSQL's order.
type regexpArgs struct {
	start, n, endopt, subexpr int64
	flags                     string
}

// matchesFrom returns the submatch indexes (into s) of the successive
// matches at or after character start.
func matchesFrom(re *Regex, s string, start int64) ([][]int, error) {
	return re.findAll(s, runeOffset(s, start), -1)
}

func regexpCount(s, pat string, a regexpArgs) (types.Value, error) {
	if a.start < 1 {
		return nil, badParam("start", a.start)
	}
	re, _, err := compileFlags("regexp_count", pat, a.flags, false)
	if err != nil {
		return nil, err
	}
	ms, err := matchesFrom(re, s, a.start)
	return int64(len(ms)), err
}

// nthMatch returns the bounds of subexpression sub of the n-th match, ok
// false when there is none.
func nthMatch(fn, s, pat string, a regexpArgs) (int, int, bool, error) {
	switch {
	case a.start < 1:
		return 0, 0, false, badParam("start", a.start)
	case a.n < 1:
		return 0, 0, false, badParam("n", a.n)
	case a.endopt != 0 && a.endopt != 1:
		return 0, 0, false, badParam("endoption", a.endopt)
	case a.subexpr < 0:
		return 0, 0, false, badParam("subexpr", a.subexpr)
	}
	re, _, err := compileFlags(fn, pat, a.flags, false)
	if err != nil {
		return 0, 0, false, err
	}
	ms, err := matchesFrom(re, s, a.start)
	if err != nil {
		return 0, 0, false, err
	}
	if int64(len(ms)) < a.n || a.subexpr > int64(re.NumSubexp()) {
		return 0, 0, false, nil
	}
	m := ms[a.n-1]
	if m[2*a.subexpr] < 0 {
		return 0, 0, false, nil
	}
	return m[2*a.subexpr], m[2*a.subexpr+1], true, nil
}

func regexpInstr(s, pat string, a regexpArgs) (types.Value, error) {
	b, e, ok, err := nthMatch("regexp_instr", s, pat, a)
	if err != nil || !ok {
		return int64(0), err
	}
	if a.endopt == 1 {
		return runeLen(s[:e]) + 1, nil
	}
	return runeLen(s[:b]) + 1, nil
}

func regexpSubstr(s, pat string, a regexpArgs) (types.Value, error) {
	b, e, ok, err := nthMatch("regexp_substr", s, pat, a)
	if err != nil || !ok {
		return nil, err
	}
	return s[b:e], nil
}

// regexpReplaceAt replaces, from character start, the n-th match (every
// match when n is 0).
func regexpReplaceAt(s, pat, repl string, start, n int64, flags string) (types.Value, error) {
	if start < 1 {
		return nil, badParam("start", start)
	}
	if n < 0 {
		return nil, badParam("n", n)
	}
	re, _, err := compileFlags("regexp_replace", pat, flags, true)
	if err != nil {
		return nil, err
	}
	ms, err := matchesFrom(re, s, start)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		if int64(len(ms)) < n {
			return s, nil
		}
		ms = ms[n-1 : n]
	}
	var dst []byte
	last := 0
	for _, m := range ms {
		dst = append(dst, s[last:m[0]]...)
		dst = appendReplacement(dst, repl, s, m)
		last = m[1]
	}
	return string(append(dst, s[last:]...)), nil
}

// RegexpSplit splits s around the matches of pat (regexp_split_to_array
// and regexp_split_to_table): as in PostgreSQL, a match splits when it
// starts before the end of the text and ends after the previous match
// (so empty matches at the start, at the end, or right after a match do
// not).
func RegexpSplit(fn, s, pat, flags string) ([]string, error) {
	re, _, err := compileFlags(fn, pat, flags, false)
	if err != nil {
		return nil, err
	}
	ms, err := re.findAll(s, 0, -1)
	if err != nil {
		return nil, err
	}
	var out []string
	last, prevEnd := 0, 0
	for _, m := range ms {
		if m[0] < len(s) && m[1] > prevEnd {
			out = append(out, s[last:m[0]])
			last = m[1]
		}
		prevEnd = m[1]
	}
	return append(out, s[last:]), nil
}

// RegexpMatches returns the capture groups (or the whole match) of the
// first match, or of every match with the g flag (regexp_matches).
func RegexpMatches(s, pat, flags string) ([]types.Value, error) {
	re, global, err := compileFlags("regexp_matches", pat, flags, true)
	if err != nil {
		return nil, err
	}
	n := 1
	if global {
		n = -1
	}
	ms, err := re.findAll(s, 0, n)
	if err != nil {
		return nil, err
	}
	var out []types.Value
	for _, m := range ms {
		var row []types.Value
		if len(m) == 2 {
			row = []types.Value{s[m[0]:m[1]]}
		} else {
			for i := 2; i < len(m); i += 2 {
				if m[i] < 0 {
					row = append(row, nil)
				} else {
					row = append(row, s[m[i]:m[i+1]])
				}
			}
		}
		out = append(out, row)
	}
	return out, nil
}

func init() {
	TX, I4, B := types.TText, types.TInt4, types.TBool
	s := func(a []types.Value, i int) string { return a[i].(string) }
	i := func(a []types.Value, k int) int64 { return a[k].(int64) }
	// optional fills a regexpArgs from the arguments after the first two;
	// kinds names each one: s start, n N, e endoption, f flags, x subexpr.
	optional := func(a []types.Value, kinds string) regexpArgs {
		r := regexpArgs{start: 1, n: 1}
		for k, c := range kinds {
			switch c {
			case 's':
				r.start = i(a, k+2)
			case 'n':
				r.n = i(a, k+2)
			case 'e':
				r.endopt = i(a, k+2)
			case 'f':
				r.flags = s(a, k+2)
			case 'x':
				r.subexpr = i(a, k+2)
			}
		}
		return r
	}
	argTypes := func(kinds string) []types.T {
		ts := []types.T{TX, TX}
		for _, c := range kinds {
			if c == 'f' {
				ts = append(ts, TX)
			} else {
				ts = append(ts, I4)
			}
		}
		return ts
	}
	for _, kinds := range []string{"", "s", "sf"} {
		kinds := kinds
		define(rowFn("regexp_count", I4, argTypes(kinds), func(_ *Context, a []types.Value) (types.Value, error) {
			return regexpCount(s(a, 0), s(a, 1), optional(a, kinds))
		}))
	}
	for _, kinds := range []string{"", "s", "sn", "sne", "snef", "snefx"} {
		kinds := kinds
		define(rowFn("regexp_instr", I4, argTypes(kinds), func(_ *Context, a []types.Value) (types.Value, error) {
			return regexpInstr(s(a, 0), s(a, 1), optional(a, kinds))
		}))
	}
	for _, kinds := range []string{"", "s", "sn", "snf", "snfx"} {
		kinds := kinds
		define(rowFn("regexp_substr", TX, argTypes(kinds), func(_ *Context, a []types.Value) (types.Value, error) {
			return regexpSubstr(s(a, 0), s(a, 1), optional(a, kinds))
		}))
	}
	for _, kinds := range []string{"", "f"} {
		kinds := kinds
		define(rowFn("regexp_like", B, argTypes(kinds), func(_ *Context, a []types.Value) (types.Value, error) {
			re, _, err := compileFlags("regexp_like", s(a, 1), optional(a, kinds).flags, false)
			if err != nil {
				return nil, err
			}
			return re.MatchString(s(a, 0))
		}))
	}
	for _, kinds := range []string{"", "f"} {
		kinds := kinds
		define(rowFn("regexp_split_to_array", types.ArrayOf(TX), argTypes(kinds), func(_ *Context, a []types.Value) (types.Value, error) {
			parts, err := RegexpSplit("regexp_split_to_array", s(a, 0), s(a, 1), optional(a, kinds).flags)
			if err != nil {
				return nil, err
			}
			out := make([]types.Value, len(parts))
			for k, p := range parts {
				out[k] = p
			}
			return out, nil
		}))
	}
	define(
		rowFn("regexp_replace", TX, []types.T{TX, TX, TX, I4}, func(_ *Context, a []types.Value) (types.Value, error) {
			return regexpReplaceAt(s(a, 0), s(a, 1), s(a, 2), i(a, 3), 1, "")
		}),
		rowFn("regexp_replace", TX, []types.T{TX, TX, TX, I4, I4}, func(_ *Context, a []types.Value) (types.Value, error) {
			return regexpReplaceAt(s(a, 0), s(a, 1), s(a, 2), i(a, 3), i(a, 4), "")
		}),
		rowFn("regexp_replace", TX, []types.T{TX, TX, TX, I4, I4, TX}, func(_ *Context, a []types.Value) (types.Value, error) {
			return regexpReplaceAt(s(a, 0), s(a, 1), s(a, 2), i(a, 3), i(a, 4), s(a, 5))
		}),
	)
}

// numericFlagsHint refuses regexp_replace flags that look like a start
// position (the text fourth argument of the pre-15 form), with
// PostgreSQL's hint.
func numericFlagsHint(flags string) error {
	if flags != "" && flags[0] >= '0' && flags[0] <= '9' {
		return pgerr.New(pgerr.InvalidParameterValue, "invalid regular expression option: \"%s\"", flags).
			WithHint("If you meant to use regexp_replace() with a start parameter, cast the fourth argument to integer explicitly.")
	}
	return nil
}

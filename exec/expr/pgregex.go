package expr

import (
	"errors"
	"regexp"
	"regexp/syntax"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"

	"github.com/streamsql/streamsql/pgerr"
)

// Regex is a compiled PostgreSQL regular expression (~, ~*, SIMILAR TO,
// substring(... FROM ...) and the regexp_* functions). The pattern is
// translated by translateARE and run by Go's RE2 when it can be, by
// regexp2 (backtracking) when it needs back-references, look-around or
// \m \M. Matches are leftmost-first (Perl's preference, not the POSIX
// longest-match rules PostgreSQL applies between alternatives). A Regex
// is immutable once built (its context variant is built once, lazily)
// and safe for concurrent use; compiled ones are cached in regexCache.
type Regex struct {
	src  string // translated pattern
	nsub int
	re2  *regexp.Regexp // nil when only the backtracking engine can run it
	bt   *regexp2.Regexp
	// lookBack: re2 has assertions reading the character before a
	// position (^, \A, \b, \B), so a search from the middle of a string
	// needs that character (ctx).
	lookBack bool
	ctxOnce  sync.Once
	ctx      *regexp.Regexp
	ctxErr   error
}

// btTimeout bounds one backtracking match; PostgreSQL's engine never
// backtracks exponentially, regexp2's can.
const btTimeout = 10 * time.Second

// regexKey caches compiled patterns by options and text.
func regexKey(pat string, o areOptions) string {
	var b [5]byte
	for i, f := range []bool{o.ci, o.nlstop, o.nlanch, o.expanded, o.quote} {
		b[i] = '0'
		if f {
			b[i] = '1'
		}
	}
	return "P" + string(b[:]) + pat
}

// compilePG compiles PostgreSQL pattern pat under opts, cached.
func compilePG(pat string, opts areOptions) (*Regex, error) {
	key := regexKey(pat, opts)
	if re, ok := regexCache.Load(key); ok {
		return re.(*Regex), nil
	}
	src, nsub, needBT, err := translateARE(pat, opts)
	if err != nil {
		return nil, err
	}
	re := &Regex{src: src, nsub: nsub}
	if !needBT {
		re.re2, err = regexp.Compile(src)
		var se *syntax.Error
		if err != nil && !(errors.As(err, &se) && (se.Code == syntax.ErrLarge || se.Code == syntax.ErrNestingDepth)) {
			return nil, pgerr.New(pgerr.InvalidRegularExpression, "invalid regular expression: %s", regexErrText(err))
		}
	}
	if re.re2 == nil {
		if re.bt, err = regexp2.Compile(src); err != nil {
			return nil, pgerr.New(pgerr.InvalidRegularExpression, "invalid regular expression: %v", err)
		}
		re.bt.MatchTimeout = btTimeout
	} else {
		re.lookBack = hasLookBack(src)
	}
	regexCache.Store(key, re)
	return re, nil
}

// compileGo wraps a pattern already in Go's syntax (SIMILAR's substring
// form assembles one), cached.
func compileGo(src string) (*Regex, error) {
	key := "G" + src
	if re, ok := regexCache.Load(key); ok {
		return re.(*Regex), nil
	}
	r2, err := regexp.Compile(src)
	if err != nil {
		return nil, pgerr.New(pgerr.InvalidRegularExpression, "invalid regular expression: %s", regexErrText(err))
	}
	re := &Regex{src: src, nsub: r2.NumSubexp(), re2: r2, lookBack: hasLookBack(src)}
	regexCache.Store(key, re)
	return re, nil
}

// hasLookBack reports whether Go pattern src holds an assertion that
// reads the character before its position.
func hasLookBack(src string) bool {
	t, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return true
	}
	var walk func(*syntax.Regexp) bool
	walk = func(r *syntax.Regexp) bool {
		switch r.Op {
		case syntax.OpBeginLine, syntax.OpBeginText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
			return true
		}
		for _, s := range r.Sub {
			if walk(s) {
				return true
			}
		}
		return false
	}
	return walk(t)
}

// NumSubexp is the number of capture groups.
func (r *Regex) NumSubexp() int { return r.nsub }

// String is the translated pattern.
func (r *Regex) String() string { return r.src }

func btError(err error) error {
	return pgerr.New(pgerr.ProgramLimitExceeded, "regular expression match is too complex: %v", err)
}

// MatchString reports whether s holds a match.
func (r *Regex) MatchString(s string) (bool, error) {
	if r.re2 != nil {
		return r.re2.MatchString(s), nil
	}
	ok, err := r.bt.MatchString(s)
	if err != nil {
		return false, btError(err)
	}
	return ok, nil
}

// FindSubmatchIndex is the first match's submatch indexes (nil: none).
func (r *Regex) FindSubmatchIndex(s string) ([]int, error) {
	var t btText
	return r.findAt(s, 0, &t)
}

// btText is a string decoded for regexp2 (once per string searched).
type btText struct {
	runes []rune
	bytes []int // byte offset of each rune, and len(s) last
}

func (t *btText) load(s string) {
	if t.bytes != nil {
		return
	}
	t.runes = make([]rune, 0, len(s))
	t.bytes = make([]int, 0, len(s)+1)
	for i, c := range s {
		t.runes = append(t.runes, c)
		t.bytes = append(t.bytes, i)
	}
	t.bytes = append(t.bytes, len(s))
}

// runeAt is the index of the rune at byte offset off.
func (t *btText) runeAt(off int) int {
	lo, hi := 0, len(t.bytes)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if t.bytes[mid] < off {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// findAt returns the submatch indexes of the leftmost match at or after
// byte offset pos, the text before pos visible to the pattern (^ does not
// match at pos > 0).
func (r *Regex) findAt(s string, pos int, t *btText) ([]int, error) {
	if r.re2 == nil {
		t.load(s)
		m, err := r.bt.FindRunesMatchStartingAt(t.runes, t.runeAt(pos))
		if err != nil {
			return nil, btError(err)
		}
		if m == nil {
			return nil, nil
		}
		out := make([]int, 2*(r.nsub+1))
		for g := 0; g <= r.nsub; g++ {
			grp := m.GroupByNumber(g)
			if grp == nil || len(grp.Captures) == 0 {
				out[2*g], out[2*g+1] = -1, -1
				continue
			}
			out[2*g] = t.bytes[grp.RuneIndex]
			out[2*g+1] = t.bytes[grp.RuneIndex+grp.RuneLength]
		}
		return out, nil
	}
	if pos == 0 {
		return r.re2.FindStringSubmatchIndex(s), nil
	}
	if pos > len(s) {
		return nil, nil
	}
	from, drop := pos, 0
	re := r.re2
	if r.lookBack {
		// \A(?s:.)(?s:.*?)(pattern) over the text from the character
		// before pos: the pattern sees that character as its context.
		r.ctxOnce.Do(func() {
			r.ctx, r.ctxErr = regexp.Compile(`\A(?s:.)(?s:.*?)(` + r.src + `)`)
		})
		if r.ctxErr != nil {
			return nil, pgerr.New(pgerr.InvalidRegularExpression, "invalid regular expression: %s", regexErrText(r.ctxErr))
		}
		_, w := utf8.DecodeLastRuneInString(s[:pos])
		from, drop, re = pos-w, 2, r.ctx
	}
	m := re.FindStringSubmatchIndex(s[from:])
	if m == nil {
		return nil, nil
	}
	m = m[drop:]
	for i := range m {
		if m[i] >= 0 {
			m[i] += from
		}
	}
	return m, nil
}

// findAll returns the successive matches at or after byte offset from,
// at most n (n < 0: all), found as PostgreSQL finds them: each search
// starts where the previous match ended, one character further after an
// empty match, and an empty match right after a match counts.
func (r *Regex) findAll(s string, from, n int) ([][]int, error) {
	var t btText
	var out [][]int
	for pos := from; pos <= len(s) && (n < 0 || len(out) < n); {
		m, err := r.findAt(s, pos, &t)
		if err != nil || m == nil {
			return out, err
		}
		out = append(out, m)
		pos = m[1]
		if m[0] == m[1] {
			if pos >= len(s) {
				break
			}
			_, w := utf8.DecodeRuneInString(s[pos:])
			pos += w
		}
	}
	return out, nil
}

// appendReplacement appends regexp_replace's replacement text for match
// m of s: \1 to \9 are the groups (nothing for a group that did not take
// part or does not exist), \& the whole match, \\ a backslash; any other
// backslash is kept.
func appendReplacement(dst []byte, repl, s string, m []int) []byte {
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		if c != '\\' || i+1 >= len(repl) {
			dst = append(dst, c)
			continue
		}
		g := -1
		switch n := repl[i+1]; {
		case n >= '1' && n <= '9':
			g = int(n - '0')
		case n == '&':
			g = 0
		case n == '\\':
			dst = append(dst, '\\')
			i++
			continue
		default:
			dst = append(dst, c)
			continue
		}
		i++
		if 2*g+1 < len(m) && m[2*g] >= 0 {
			dst = append(dst, s[m[2*g]:m[2*g+1]]...)
		}
	}
	return dst
}

// regexOptions parses PostgreSQL's flags argument, later letters
// overriding earlier ones; global is g.
func regexOptions(flags string) (opts areOptions, global bool, err error) {
	for _, f := range flags {
		if f == 'g' {
			global = true
			continue
		}
		ok, err := opts.flag(f)
		if err != nil {
			return opts, false, err
		}
		if !ok {
			return opts, false, pgerr.New(pgerr.InvalidParameterValue, "invalid regular expression option: \"%c\"", f)
		}
	}
	return opts, global, nil
}

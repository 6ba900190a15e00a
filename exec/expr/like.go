package expr

import (
	"errors"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// LIKE / ILIKE and the POSIX regular expression operators (~ ~* !~ !~*).
//
// LIKE patterns are translated to Go regular expressions (% is .*, _ is .,
// the escape character quotes the next one). POSIX patterns are
// PostgreSQL's advanced regular expressions, compiled by compilePG
// (pgregex.go).

var regexCache sync.Map // key string -> *regexp.Regexp (LIKE) or *Regex

// likeRegexp compiles a LIKE pattern with escape character esc (-1: none).
func likeRegexp(pat string, esc rune, ci bool) (*regexp.Regexp, error) {
	var sb strings.Builder
	sb.WriteString("(?s)")
	if ci {
		sb.WriteString("(?i)")
	}
	sb.WriteString("^")
	for i := 0; i < len(pat); {
		r, size := utf8.DecodeRuneInString(pat[i:])
		i += size
		switch {
		case r == esc:
			if i >= len(pat) {
				return nil, pgerr.New(pgerr.InvalidEscapeSequence, "LIKE pattern must not end with escape character")
			}
			r2, size2 := utf8.DecodeRuneInString(pat[i:])
			i += size2
			sb.WriteString(regexp.QuoteMeta(string(r2)))
		case r == '%':
			sb.WriteString(".*")
		case r == '_':
			sb.WriteString(".")
		default:
			sb.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	sb.WriteString("$")
	return regexp.Compile(sb.String())
}

// likeMatcher returns a plain string test for LIKE patterns made of one
// literal with % only at its ends ('abc', 'abc%', '%abc', '%abc%'); ok is
// false for anything else.
func likeMatcher(pat string, esc rune) (match func(string) bool, ok bool) {
	if strings.ContainsRune(pat, '_') || (esc >= 0 && strings.ContainsRune(pat, esc)) {
		return nil, false
	}
	lead := strings.HasPrefix(pat, "%")
	trail := len(pat) > 1 && strings.HasSuffix(pat, "%") || pat == "%" && !lead
	lit := strings.TrimSuffix(strings.TrimPrefix(pat, "%"), "%")
	if pat == "%" {
		return func(string) bool { return true }, true
	}
	if strings.ContainsRune(lit, '%') {
		return nil, false
	}
	switch {
	case lead && trail:
		return func(s string) bool { return strings.Contains(s, lit) }, true
	case lead:
		return func(s string) bool { return strings.HasSuffix(s, lit) }, true
	case trail:
		return func(s string) bool { return strings.HasPrefix(s, lit) }, true
	}
	return func(s string) bool { return s == lit }, true
}

// compileRegex compiles a POSIX pattern (~, ~*) with PostgreSQL's error
// code, cached.
func compileRegex(pat string, ci bool) (*Regex, error) {
	return compilePG(pat, areOptions{ci: ci})
}

func regexErrText(err error) string {
	var se *syntax.Error
	if errors.As(err, &se) {
		// PostgreSQL's wording for the common mistakes.
		switch se.Code {
		case syntax.ErrMissingParen, syntax.ErrUnexpectedParen:
			return "parentheses () not balanced"
		case syntax.ErrMissingBracket:
			return "brackets [] not balanced"
		case syntax.ErrMissingRepeatArgument, syntax.ErrInvalidRepeatOp:
			return "quantifier operand invalid"
		case syntax.ErrInvalidEscape:
			return "invalid escape \\ sequence"
		case syntax.ErrInvalidCharRange:
			return "invalid character range"
		case syntax.ErrInvalidRepeatSize:
			return "invalid repetition count(s)"
		}
		return string(se.Code)
	}
	return err.Error()
}

func cachedLike(pat string, esc rune, ci bool) (*regexp.Regexp, error) {
	key := string(rune(esc)) + "\x00" + pat
	if ci {
		key = "i" + key
	} else {
		key = "c" + key
	}
	if re, ok := regexCache.Load(key); ok {
		return re.(*regexp.Regexp), nil
	}
	re, err := likeRegexp(pat, esc, ci)
	if err != nil {
		return nil, err
	}
	regexCache.Store(key, re)
	return re, nil
}

// Type is boolean.
func (e *Like) Type() types.T { return types.TBool }

func (e *Like) String() string {
	var op string
	switch {
	case e.Regex && e.CaseInsens:
		op = "~*"
	case e.Regex:
		op = "~"
	case e.CaseInsens:
		op = "~~*"
	default:
		op = "~~"
	}
	if e.Not {
		op = "!" + op
	}
	s := "(" + e.E.String() + " " + op + " " + e.Pattern.String()
	if e.Escape != nil {
		s += " ESCAPE " + e.Escape.String()
	}
	return s + ")"
}

// Eval matches each row against its pattern.
func (e *Like) Eval(ctx *Context, b arrow.RecordBatch) (arrow.Array, error) {
	s, err := e.E.Eval(ctx, b)
	if err != nil {
		return nil, err
	}
	defer s.Release()
	p, err := e.Pattern.Eval(ctx, b)
	if err != nil {
		return nil, err
	}
	defer p.Release()
	var escArr arrow.Array
	if e.Escape != nil {
		if escArr, err = e.Escape.Eval(ctx, b); err != nil {
			return nil, err
		}
		defer escArr.Release()
	}
	n := s.Len()
	bm := andValidity(n, s, p)
	if escArr != nil {
		bm = andValidity(n, s, p, escArr)
	}
	bits := newBits(n)
	sv, ok1 := likeText(s)
	pv, ok2 := likeText(p)
	if !ok1 || !ok2 {
		return nil, pgerr.New(pgerr.UndefinedFunction, "operator does not exist: %s ~~ %s", e.E.Type(), e.Pattern.Type())
	}
	var re *regexp.Regexp // LIKE
	var pre *Regex        // ~
	var plain func(string) bool
	lastPat, lastEsc := "", ""
	for i := 0; i < n; i++ {
		if !isValid(bm, i) {
			continue
		}
		pat := pv(i)
		esc := "\\"
		if escArr != nil {
			ev, _ := likeText(escArr)
			esc = ev(i)
		}
		if (re == nil && pre == nil && plain == nil) || pat != lastPat || esc != lastEsc {
			re, pre, plain = nil, nil, nil
			if e.Regex {
				pre, err = compileRegex(pat, e.CaseInsens)
			} else {
				r := rune(-1)
				if esc != "" {
					if utf8.RuneCountInString(esc) != 1 {
						return nil, pgerr.New(pgerr.InvalidEscapeSequence, "invalid escape string").
							WithHint("Escape string must be empty or one character.")
					}
					r, _ = utf8.DecodeRuneInString(esc)
				}
				if m, ok := likeMatcher(pat, r); ok && !e.CaseInsens {
					plain = m
				} else {
					re, err = cachedLike(pat, r, e.CaseInsens)
				}
			}
			if err != nil {
				return nil, err
			}
			lastPat, lastEsc = pat, esc
		}
		var hit bool
		switch {
		case plain != nil:
			hit = plain(sv(i))
		case pre != nil:
			if hit, err = pre.MatchString(sv(i)); err != nil {
				return nil, err
			}
		default:
			hit = re.MatchString(sv(i))
		}
		if hit != e.Not {
			bitutil.SetBit(bits, i)
		}
	}
	return makeBool(n, bits, bm), nil
}

// NewLike builds a LIKE/ILIKE or regex match, coercing the operands to text.
func NewLike(e, pattern, escape Expr, caseInsens, not, regex bool) (*Like, error) {
	var err error
	out := &Like{CaseInsens: caseInsens, Not: not, Regex: regex}
	if e.Type().Kind == types.Bytea && !caseInsens && !regex {
		// bytea LIKE bytea: '_' is one byte (likeText)
		out.E = e
		if out.Pattern, err = toByteaArg(pattern, e); err != nil {
			return nil, err
		}
		if escape != nil {
			if out.Escape, err = toByteaArg(escape, e); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	if e.Type().Kind == types.Bpchar {
		// char(n) matches with its padding, as PostgreSQL's bpcharlike and
		// bpcharregexeq do: 'ab'::char(4) LIKE 'ab' is false
		out.E = e
	} else if out.E, err = toTextArg(e); err != nil {
		return nil, err
	}
	if out.Pattern, err = toTextArg(pattern); err != nil {
		return nil, err
	}
	if escape != nil {
		if out.Escape, err = toTextArg(escape); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// toTextArg converts a string-typed (or unknown) argument to text; other
// types fail like a missing operator would.
func toTextArg(e Expr) (Expr, error) {
	t := e.Type()
	if t.Kind == types.Text {
		return e, nil
	}
	if t.IsString() {
		return coerceImplicit(e, types.TText)
	}
	return nil, noOperator("~~", []types.T{t, types.TText})
}

// toByteaArg types the pattern or escape of bytea LIKE: bytea, or an
// unknown literal read as bytea.
func toByteaArg(a, e Expr) (Expr, error) {
	switch a.Type().Kind {
	case types.Bytea:
		return a, nil
	case types.Unknown:
		return coerceImplicit(a, types.TBytea)
	}
	return nil, noOperator("~~", []types.T{e.Type(), a.Type()})
}

// likeText reads a LIKE operand's rows as strings: text as it is, bytea
// with each byte as the character of that code (U+0000-U+00FF), so that
// '_' and '%' count bytes as PostgreSQL's bytea LIKE does.
func likeText(a arrow.Array) (func(int) string, bool) {
	switch v := a.(type) {
	case *array.String:
		return v.Value, true
	case *array.Binary:
		return func(i int) string {
			b := v.Value(i)
			r := make([]rune, len(b))
			for j, c := range b {
				r[j] = rune(c)
			}
			return string(r)
		}, true
	}
	return nil, false
}

package expr

import (
	"strings"
	"unicode/utf8"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// SQL regular expressions (SIMILAR TO and SUBSTRING(x SIMILAR p ESCAPE e)),
// as PostgreSQL 15 runs them: the pattern is translated to a POSIX regex
// (similar_to_escape: % is .*, _ is ., ( opens a non-capturing group, the
// POSIX-only metacharacters . ^ $ \ are quoted, bracket expressions pass
// through) anchored at both ends. SIMILAR TO is then the ~ operator on the
// translation; the binder rewrites it so. The substring form splits the
// pattern at the escape-double-quote separators into a shortest-match
// prefix, the returned middle and a suffix. Pure functions, safe for
// concurrent use.

// similarTranslate splits pat into at most three POSIX parts at the
// escape-double-quote separators. esc is the escape character, or -1 for
// none.
func similarTranslate(pat string, esc rune) ([]string, error) {
	parts := []string{""}
	var sb strings.Builder
	afterEscape, inClass := false, false
	classStart := 0 // 1 right after [, 2 after [^, 3 past the start
	for i := 0; i < len(pat); {
		r, size := utf8.DecodeRuneInString(pat[i:])
		i += size
		switch {
		case afterEscape:
			afterEscape = false
			if r == '"' && !inClass {
				if len(parts) == 3 {
					return nil, pgerr.New(pgerr.InvalidUseOfEscapeCharacter, "SQL regular expression may not contain more than two escape-double-quote separators")
				}
				parts[len(parts)-1] = sb.String()
				sb.Reset()
				parts = append(parts, "")
				continue
			}
			sb.WriteByte('\\')
			sb.WriteRune(r)
			if inClass {
				classStart = 3
			}
		case esc >= 0 && r == esc:
			afterEscape = true
		case inClass && r == '[' && i < len(pat) && strings.IndexByte(":.=", pat[i]) >= 0:
			// [:alpha:], [.x.] and [=x=] inside a bracket expression are
			// copied whole: their ] does not close it.
			end := strings.Index(pat[i+1:], string(pat[i])+"]")
			if end < 0 {
				sb.WriteRune(r)
				classStart = 3
				continue
			}
			end += i + 3
			sb.WriteString(pat[i-1 : end])
			i = end
			classStart = 3
		case inClass:
			if r == '\\' {
				sb.WriteByte('\\')
			}
			sb.WriteRune(r)
			switch {
			case r == ']' && classStart > 2:
				inClass = false
			case r == '^' && classStart == 1:
				classStart = 2
			default:
				classStart = 3
			}
		case r == '[':
			sb.WriteRune(r)
			inClass, classStart = true, 1
		case r == '%':
			sb.WriteString(".*")
		case r == '_':
			sb.WriteByte('.')
		case r == '(':
			sb.WriteString("(?:")
		case r == '\\' || r == '.' || r == '^' || r == '$':
			sb.WriteByte('\\')
			sb.WriteRune(r)
		default:
			sb.WriteRune(r)
		}
	}
	if afterEscape {
		// PostgreSQL copies a trailing escape as a lone backslash, which
		// the regex compiler then refuses.
		sb.WriteByte('\\')
	}
	parts[len(parts)-1] = sb.String()
	return parts, nil
}

// similarEscapeChar reads the ESCAPE argument: empty means none, more than
// one character is refused.
func similarEscapeChar(e string) (rune, error) {
	if e == "" {
		return -1, nil
	}
	r, size := utf8.DecodeRuneInString(e)
	if size != len(e) {
		return 0, pgerr.New(pgerr.InvalidEscapeSequence, "invalid escape string").
			WithHint("Escape string must be empty or one character.")
	}
	return r, nil
}

// SimilarToEscape is PostgreSQL's similar_to_escape(pattern, escape): the
// POSIX regex text SIMILAR TO matches with.
func SimilarToEscape(pat string, esc rune) (string, error) {
	parts, err := similarTranslate(pat, esc)
	if err != nil {
		return "", err
	}
	switch len(parts) {
	case 1:
		return "^(?:" + parts[0] + ")$", nil
	case 2:
		return "^(?:" + parts[0] + "){1,1}?(" + parts[1] + ")$", nil
	}
	return "^(?:" + parts[0] + "){1,1}?(" + parts[1] + "){1,1}(?:" + parts[2] + ")$", nil
}

// similarSubstring is substring(s SIMILAR pat ESCAPE esc): the part of s
// between the separators (all of it without them) when the whole of s
// matches, else NULL. The prefix matches as little as it can.
func similarSubstring(s, pat string, esc rune) (types.Value, error) {
	parts, err := similarTranslate(pat, esc)
	if err != nil {
		return nil, err
	}
	for k, p := range parts {
		if parts[k], err = similarFragment(p); err != nil {
			return nil, err
		}
	}
	var src string
	switch len(parts) {
	case 1:
		src = `\A(?:` + parts[0] + `)\z`
	case 2:
		src = `\A(?U:` + parts[0] + ")(" + parts[1] + `)\z`
	default:
		src = `\A(?U:` + parts[0] + ")(" + parts[1] + ")(?:" + parts[2] + `)\z`
	}
	re, err := compileGo(src)
	if err != nil {
		return nil, err
	}
	m, err := re.FindSubmatchIndex(s)
	switch {
	case err != nil:
		return nil, err
	case m == nil:
		return nil, nil
	case len(m) > 2:
		if m[2] < 0 {
			return nil, nil
		}
		return s[m[2]:m[3]], nil
	}
	return s[m[0]:m[1]], nil
}

// similarFragment translates one part of a SIMILAR pattern (POSIX
// syntax, no groups of its own) into Go's syntax.
func similarFragment(p string) (string, error) {
	src, nsub, needBT, err := translateARE(p, areOptions{})
	if err != nil {
		return "", err
	}
	if needBT || nsub > 0 {
		return "", reError("invalid backreference number")
	}
	return src, nil
}

func init() {
	TX := types.TText
	s := func(a []types.Value, i int) string { return a[i].(string) }
	define(
		rowFn("similar_to_escape", TX, []types.T{TX}, func(_ *Context, a []types.Value) (types.Value, error) {
			return SimilarToEscape(s(a, 0), '\\')
		}),
		rowFn("similar_to_escape", TX, []types.T{TX, TX}, func(_ *Context, a []types.Value) (types.Value, error) {
			esc, err := similarEscapeChar(s(a, 1))
			if err != nil {
				return nil, err
			}
			return SimilarToEscape(s(a, 0), esc)
		}),
		// an SQL function in PostgreSQL 15: its errors say so
		rowFn("substring", TX, []types.T{TX, TX, TX}, func(_ *Context, a []types.Value) (types.Value, error) {
			esc, err := similarEscapeChar(s(a, 2))
			if err != nil {
				return sqlFunction("substring")(nil, err)
			}
			return sqlFunction("substring")(similarSubstring(s(a, 0), s(a, 1), esc))
		}),
	)
}

package sql

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/streamsql/streamsql/pgerr"
)

// With standard_conforming_strings = off, PostgreSQL reads a backslash in
// an ordinary '...' (or N'...') literal as an escape, as in E'...'.
// pg_query's parser always reads them as standard, so ParseNonStandard
// rewrites each such literal that holds a backslash into the standard
// literal of the same value before parsing: the value re-quoted ('' for
// a quote), followed by spaces up to the literal's old length, so that
// every byte offset outside the literals (statement bounds, the parse
// tree's locations, error positions) stays what it was. The rewritten
// text becomes the statements' Source, so a view's stored text reads the
// same under any setting. U&'...' literals are refused as PostgreSQL
// refuses them in this mode, and with escape_string_warning on each
// rewritten literal gets PostgreSQL's WARNING at its position. Pure
// functions, safe for concurrent use.

// ParseNonStandard parses text as Parse does, with
// standard_conforming_strings = off; warn is escape_string_warning. The
// warnings are to be sent before the statements run.
func ParseNonStandard(text string, warn bool) ([]Statement, []*pgerr.Error, error) {
	if !utf8.ValidString(text) {
		return nil, nil, pgerr.New(pgerr.CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\"")
	}
	std, warnings, err := standardStrings(text, warn)
	if err != nil {
		return nil, nil, err
	}
	stmts, err := Parse(std)
	return stmts, warnings, err
}

// standardStrings rewrites text's escape-reading literals as standard
// ones of the same byte length.
func standardStrings(src string, warn bool) (string, []*pgerr.Error, error) {
	var out []byte // nil until a literal changes
	var warnings []*pgerr.Error
	var fail *pgerr.Error
	scanTokensMode(src, true, func(t token) {
		if fail != nil || t.kind != tokString {
			return
		}
		start, i := t.start, t.start // the literal's position; its opening quote
		switch c := src[start]; {
		case c == 'n' || c == 'N':
			i++
		case c != '\'':
			return // E'...', B'...', X'...', $$...$$
		case start >= 2 && src[start-1] == '&' && (src[start-2] == 'u' || src[start-2] == 'U') && !identBefore(src, start-2):
			fail = pgerr.New(pgerr.FeatureNotSupported, "unsafe use of string constant with Unicode escapes").
				WithDetail("String constants with Unicode escapes cannot be used when standard_conforming_strings is off.")
			fail.Position = CharPos(src, start-2)
			return
		}
		end := t.end
		body := src[i+1 : end-1]
		if strings.IndexByte(body, '\\') < 0 {
			return
		}
		val, kind, err := unescapeString(body)
		if err != nil {
			err.Position = CharPos(src, start)
			fail = err
			return
		}
		if warn {
			warnings = append(warnings, escapeWarning(kind, CharPos(src, start)))
		}
		if out == nil {
			out = []byte(src)
		}
		lit := "'" + strings.ReplaceAll(val, "'", "''") + "'"
		copy(out[i:end], lit)
		for k := i + len(lit); k < end; k++ {
			out[k] = ' '
		}
	})
	if fail != nil {
		return "", nil, fail
	}
	return textOf(src, out), warnings, nil
}

func textOf(src string, out []byte) string {
	if out == nil {
		return src
	}
	return string(out)
}

// identBefore reports whether the letter at i continues an identifier
// (so it is no string prefix).
func identBefore(src string, i int) bool {
	return i > 0 && isIdentCont(src[i-1])
}

// escapeWarning is PostgreSQL's WARNING for the first escape of a
// literal: kind is the character after its first backslash.
func escapeWarning(kind byte, pos int) *pgerr.Error {
	var w *pgerr.Error
	switch kind {
	case '\'':
		w = pgerr.New(pgerr.Code("22P06"), `nonstandard use of \' in a string literal`).
			WithHint(`Use '' to write quotes in strings, or use the escape string syntax (E'...').`)
	case '\\':
		w = pgerr.New(pgerr.Code("22P06"), `nonstandard use of \\ in a string literal`).
			WithHint(`Use the escape string syntax for backslashes, e.g., E'\\'.`)
	default:
		w = pgerr.New(pgerr.Code("22P06"), `nonstandard use of escape in a string literal`).
			WithHint(`Use the escape string syntax for escapes, e.g., E'\r\n'.`)
	}
	w.Severity = pgerr.SevWarning
	w.Position = pos
	return w
}

// unescapeString decodes the body of an escape-reading literal as
// PostgreSQL's E'...' does (\b \f \n \r \t, octal, \x hex, \u and \U,
// ” and \' for a quote, any other character after a backslash is
// itself); kind is the character after the first backslash.
func unescapeString(body string) (string, byte, *pgerr.Error) {
	var sb strings.Builder
	var kind byte
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c == '\'' { // a doubled quote
			sb.WriteByte('\'')
			i++
			continue
		}
		if c != '\\' || i+1 >= len(body) {
			sb.WriteByte(c)
			continue
		}
		i++
		c = body[i]
		if kind == 0 {
			kind = c
		}
		switch c {
		case 'b':
			sb.WriteByte('\b')
		case 'f':
			sb.WriteByte('\f')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 't':
			sb.WriteByte('\t')
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(body) && j < i+3 && body[j] >= '0' && body[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(body[i:j], 8, 16)
			sb.WriteByte(byte(v))
			i = j - 1
		case 'x':
			j := i + 1
			for j < len(body) && j < i+3 && strings.IndexByte("0123456789abcdefABCDEF", body[j]) >= 0 {
				j++
			}
			if j == i+1 {
				sb.WriteByte('x')
				continue
			}
			v, _ := strconv.ParseUint(body[i+1:j], 16, 16)
			sb.WriteByte(byte(v))
			i = j - 1
		case 'u', 'U':
			n := 4
			if c == 'U' {
				n = 8
			}
			if i+1+n > len(body) || strings.Trim(body[i+1:i+1+n], "0123456789abcdefABCDEF") != "" {
				return "", 0, pgerr.New(pgerr.InvalidEscapeSequence, "invalid Unicode escape").
					WithHint(`Unicode escapes must be \uXXXX or \UXXXXXXXX.`)
			}
			v, _ := strconv.ParseUint(body[i+1:i+1+n], 16, 32)
			if v == 0 || v > utf8.MaxRune || v >= 0xd800 && v < 0xe000 {
				return "", 0, pgerr.New(pgerr.InvalidEscapeSequence, "invalid Unicode escape value")
			}
			sb.WriteRune(rune(v))
			i += n
		default:
			sb.WriteByte(c)
		}
	}
	s := sb.String()
	if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
		return "", 0, pgerr.New(pgerr.CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\"")
	}
	return s, kind, nil
}

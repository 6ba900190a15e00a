package expr

import (
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// unistr(text): PostgreSQL 15's Unicode escapes in a string value: \\ for
// a backslash, \XXXX and \uXXXX (4 hex digits), \+XXXXXX (6) and
// \UXXXXXXXX (8), UTF-16 surrogate pairs written as two escapes. Pure.

func init() {
	define(rowFn("unistr", types.TText, []types.T{types.TText}, func(_ *Context, a []types.Value) (types.Value, error) {
		return unistr(a[0].(string))
	}))
}

func hexDigits(s string, n int) (rune, bool) {
	if len(s) < n {
		return 0, false
	}
	for i := 0; i < n; i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return 0, false
		}
	}
	v, err := strconv.ParseUint(s[:n], 16, 32)
	return rune(v), err == nil
}

func unistr(s string) (string, error) {
	badPair := func() error { return pgerr.New(pgerr.SyntaxError, "invalid Unicode surrogate pair") }
	var sb strings.Builder
	var first rune // a pending high surrogate
	for len(s) > 0 {
		if s[0] != '\\' {
			if first != 0 {
				return "", badPair()
			}
			sb.WriteByte(s[0])
			s = s[1:]
			continue
		}
		if len(s) >= 2 && s[1] == '\\' {
			if first != 0 {
				return "", badPair()
			}
			sb.WriteByte('\\')
			s = s[2:]
			continue
		}
		var c rune
		var n int
		var ok bool
		if c, ok = hexDigits(s[1:], 4); ok {
			n = 5
		} else if len(s) > 1 && s[1] == 'u' {
			c, ok = hexDigits(s[2:], 4)
			n = 6
		} else if len(s) > 1 && s[1] == '+' {
			c, ok = hexDigits(s[2:], 6)
			n = 8
		} else if len(s) > 1 && s[1] == 'U' {
			c, ok = hexDigits(s[2:], 8)
			n = 10
		}
		if !ok {
			return "", pgerr.New(pgerr.SyntaxError, "invalid Unicode escape").
				WithHint(`Unicode escapes must be \XXXX, \+XXXXXX, \uXXXX, or \UXXXXXXXX.`)
		}
		if c <= 0 || c > 0x10FFFF {
			return "", pgerr.New(pgerr.SyntaxError, "invalid Unicode code point: %04X", c)
		}
		low := c >= 0xDC00 && c <= 0xDFFF
		switch {
		case first != 0 && !low, first == 0 && low:
			return "", badPair()
		case first != 0:
			c = (first-0xD800)<<10 + (c - 0xDC00) + 0x10000
			first = 0
		case c >= 0xD800 && c <= 0xDBFF:
			first = c
			s = s[n:]
			continue
		}
		sb.WriteRune(c)
		s = s[n:]
	}
	if first != 0 {
		return "", badPair()
	}
	return sb.String(), nil
}

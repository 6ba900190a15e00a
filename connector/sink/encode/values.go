package encode

import (
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

// valueFunc appends the value of row i of a (not null) to dst.
type valueFunc func(dst []byte, a arrow.Array, i int) []byte

// jsonValue returns how a column of type t is written as a JSON value.
func jsonValue(t types.T) valueFunc {
	switch t.Kind {
	case types.Bool:
		return func(dst []byte, a arrow.Array, i int) []byte {
			return strconv.AppendBool(dst, a.(*array.Boolean).Value(i))
		}
	case types.Int2:
		return func(dst []byte, a arrow.Array, i int) []byte {
			return strconv.AppendInt(dst, int64(a.(*array.Int16).Value(i)), 10)
		}
	case types.Int4:
		return func(dst []byte, a arrow.Array, i int) []byte {
			return strconv.AppendInt(dst, int64(a.(*array.Int32).Value(i)), 10)
		}
	case types.Int8:
		return func(dst []byte, a arrow.Array, i int) []byte {
			return strconv.AppendInt(dst, a.(*array.Int64).Value(i), 10)
		}
	case types.Oid, types.RegClass, types.RegType, types.RegProc:
		return func(dst []byte, a arrow.Array, i int) []byte {
			return strconv.AppendUint(dst, uint64(a.(*array.Uint32).Value(i)), 10)
		}
	case types.Float4:
		return func(dst []byte, a arrow.Array, i int) []byte {
			return appendJSONFloat(dst, float64(a.(*array.Float32).Value(i)), 32)
		}
	case types.Float8:
		return func(dst []byte, a arrow.Array, i int) []byte {
			return appendJSONFloat(dst, a.(*array.Float64).Value(i), 64)
		}
	case types.Numeric:
		return func(dst []byte, a arrow.Array, i int) []byte {
			s := a.(*array.String).Value(i)
			if plainNumber(s) {
				return append(dst, s...)
			}
			return appendJSONString(dst, s) // NaN, Infinity
		}
	case types.JSON, types.JSONB:
		return func(dst []byte, a arrow.Array, i int) []byte {
			return append(dst, a.(*array.String).Value(i)...)
		}
	case types.Text, types.Varchar, types.Bpchar, types.Name, types.Char, types.Unknown, types.UUID:
		return func(dst []byte, a arrow.Array, i int) []byte {
			return appendJSONString(dst, a.(*array.String).Value(i))
		}
	}
	text := textValue(t)
	switch t.Kind {
	case types.Date, types.Time, types.Timestamp, types.TimestampTZ, types.Interval:
		// Their text output is digits, signs, spaces, colons, dots and
		// words: nothing JSON escapes.
		return func(dst []byte, a arrow.Array, i int) []byte {
			dst = append(dst, '"')
			dst = text(dst, a, i)
			return append(dst, '"')
		}
	}
	return func(dst []byte, a arrow.Array, i int) []byte {
		start := len(dst)
		dst = text(dst, a, i)
		// Quote the text form in place: text output never needs escaping
		// except in arrays and bytea's backslash, which are escaped here.
		s := string(dst[start:])
		return appendJSONString(dst[:start], s)
	}
}

// textValue returns how a column of type t is written as PostgreSQL text
// output (CSV fields, and the JSON strings of the other types).
func textValue(t types.T) valueFunc {
	switch t.Kind {
	case types.Int2, types.Int4, types.Int8, types.Oid:
		return jsonValue(t)
	case types.Numeric, types.Text, types.Varchar, types.Bpchar, types.Name, types.Char, types.Unknown, types.JSON, types.JSONB, types.UUID:
		return func(dst []byte, a arrow.Array, i int) []byte {
			return append(dst, a.(*array.String).Value(i)...)
		}
	case types.Bool:
		return func(dst []byte, a arrow.Array, i int) []byte {
			if a.(*array.Boolean).Value(i) {
				return append(dst, 't')
			}
			return append(dst, 'f')
		}
	}
	return func(dst []byte, a arrow.Array, i int) []byte {
		return types.AppendText(dst, types.ValueAt(a, i, t), t, nil)
	}
}

// appendJSONFloat writes a finite float as a JSON number (shortest form
// that reads back exactly), NaN and infinities as PostgreSQL's strings.
func appendJSONFloat(dst []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, bits)
}

// plainNumber reports whether s is a JSON number (numeric's finite text
// output is: digits, an optional sign and point).
func plainNumber(s string) bool {
	if s == "" {
		return false
	}
	i := 0
	if s[0] == '-' {
		i = 1
	}
	if i >= len(s) || s[i] < '0' || s[i] > '9' {
		return false
	}
	if s[i] == '0' && i+1 < len(s) && s[i+1] != '.' {
		return false // leading zero: not JSON
	}
	dot := false
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
		case c == '.' && !dot && i+1 < len(s):
			dot = true
		default:
			return false
		}
	}
	return true
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string. Invalid UTF-8 (which text
// values never hold) is replaced by U+FFFD.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

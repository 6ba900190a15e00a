package types

import (
	"strconv"

	"github.com/cockroachdb/apd/v3"
)

const hexDigits = "0123456789abcdef"

// AppendText appends v's PostgreSQL text output to dst (v non-nil). opts may be
// nil (DefaultFormat). A value not in t's Go form is printed as
// "<bad value T>" rather than panicking.
func AppendText(dst []byte, v Value, t T, opts *FormatOptions) []byte {
	if opts == nil {
		opts = &DefaultFormat
	}
	switch t.Kind {
	case Bool:
		if b, ok := v.(bool); ok {
			if b {
				return append(dst, 't')
			}
			return append(dst, 'f')
		}
	case Int2, Int4, Int8, Oid:
		if x, ok := asInt64(v); ok {
			return strconv.AppendInt(dst, x, 10)
		}
	case RegClass, RegType, RegProc:
		if x, ok := asInt64(v); ok {
			if opts.Names != nil && x != 0 {
				if name, found := opts.Names(t.Kind, uint32(x)); found {
					return append(dst, name...)
				}
			}
			if x == 0 {
				return append(dst, '-')
			}
			return strconv.AppendInt(dst, x, 10)
		}
	case Float4, Float8:
		bits := 64
		if t.Kind == Float4 {
			bits = 32
		}
		switch f := v.(type) {
		case float64:
			return appendFloat(dst, f, bits, opts.ExtraFloatDigits)
		case float32:
			return appendFloat(dst, float64(f), bits, opts.ExtraFloatDigits)
		}
	case Numeric:
		switch d := v.(type) {
		case *apd.Decimal:
			return appendNumeric(dst, d)
		case apd.Decimal:
			return appendNumeric(dst, &d)
		case int64:
			return strconv.AppendInt(dst, d, 10)
		}
	case Bytea:
		if b, ok := v.([]byte); ok {
			if opts.ByteaOutput == "escape" {
				return appendByteaEscape(dst, b)
			}
			return appendByteaHex(dst, b)
		}
	case Date:
		if d, ok := v.(DateValue); ok {
			if opts.DateStyle != "" && opts.DateStyle[0] != 'I' {
				style, dmy := parseDateStyle(opts.DateStyle)
				return appendDateStyled(dst, d, style, dmy)
			}
			return appendDate(dst, d)
		}
	case Time:
		if x, ok := v.(TimeValue); ok {
			return appendTime(dst, int64(x))
		}
	case Timestamp:
		if x, ok := v.(TimestampValue); ok {
			if opts.DateStyle != "" && opts.DateStyle[0] != 'I' {
				style, dmy := parseDateStyle(opts.DateStyle)
				return appendTimestampStyled(dst, x, nil, style, dmy)
			}
			return appendTimestamp(dst, x, nil)
		}
	case TimestampTZ:
		if x, ok := v.(TimestampValue); ok {
			loc := opts.Location
			if loc == nil {
				loc = utc
			}
			if opts.DateStyle != "" && opts.DateStyle[0] != 'I' {
				style, dmy := parseDateStyle(opts.DateStyle)
				return appendTimestampStyled(dst, x, loc, style, dmy)
			}
			return appendTimestamp(dst, x, loc)
		}
	case Interval:
		if x, ok := v.(IntervalValue); ok {
			return appendInterval(dst, x, opts.IntervalStyle)
		}
	case Array:
		if a, ok := v.([]Value); ok {
			return appendArrayText(dst, a, *t.Elem, opts)
		}
	case Record:
		if r, ok := v.(RowValue); ok {
			return appendRecordText(dst, r, t, opts)
		}
	case Enum:
		return appendEnumText(dst, v, t)
	case Void:
		return dst
	case Char:
		if s, ok := v.(string); ok {
			if len(s) == 1 && s[0] >= 0x80 { // charout: high-bit bytes in octal
				return append(dst, '\\', '0'+s[0]>>6, '0'+s[0]>>3&7, '0'+s[0]&7)
			}
			return append(dst, s...)
		}
	default: // text-likes, json, jsonb, unknown
		if s, ok := v.(string); ok {
			return append(dst, s...)
		}
	}
	return append(append(append(dst, "<bad value "...), t.String()...), '>')
}

func appendByteaHex(dst []byte, b []byte) []byte {
	dst = append(dst, '\\', 'x')
	for _, c := range b {
		dst = append(dst, hexDigits[c>>4], hexDigits[c&15])
	}
	return dst
}

// appendByteaEscape is bytea_output = escape: a backslash doubled, bytes
// outside printable ASCII as \ooo.
func appendByteaEscape(dst []byte, b []byte) []byte {
	for _, c := range b {
		switch {
		case c == '\\':
			dst = append(dst, '\\', '\\')
		case c < 0x20 || c > 0x7e:
			dst = append(dst, '\\', '0'+c>>6, '0'+c>>3&7, '0'+c&7)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// appendInt appends x zero-padded to at least width digits.
func appendPadded(dst []byte, x int64, width int) []byte {
	if x < 0 {
		dst = append(dst, '-')
		x = -x
	}
	var buf [20]byte
	i := len(buf)
	for x >= 10 {
		i--
		buf[i] = byte('0' + x%10)
		x /= 10
	}
	i--
	buf[i] = byte('0' + x)
	for n := len(buf) - i; n < width; n++ {
		dst = append(dst, '0')
	}
	return append(dst, buf[i:]...)
}

// appendFraction appends ".ffffff" for usec (0 < usec < 1e6), trailing zeros
// trimmed, or nothing when usec is 0.
func appendFraction(dst []byte, usec int64) []byte {
	if usec == 0 {
		return dst
	}
	var buf [7]byte
	buf[0] = '.'
	for i := 6; i >= 1; i-- {
		buf[i] = byte('0' + usec%10)
		usec /= 10
	}
	n := 7
	for buf[n-1] == '0' {
		n--
	}
	return append(dst, buf[:n]...)
}

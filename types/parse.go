package types

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/streamsql/streamsql/pgerr"
)

// ParseText parses PostgreSQL text input for t, applying t's typmod
// (varchar(n) length check 22001, char(n) padding, numeric(p,s) rounding and
// 22003, time/timestamp/interval precision), with PostgreSQL's error codes and
// messages (22P02 invalid input syntax ...). opts may be nil (DefaultFormat);
// its Location interprets timestamptz input without a zone.
//
// Note for comparisons: char(n) values are stored blank-padded; Compare
// ignores trailing spaces for Bpchar as PostgreSQL's bpchar operators do.
func ParseText(s string, t T, opts *FormatOptions) (Value, error) {
	if opts == nil {
		opts = &DefaultFormat
	}
	switch t.Kind {
	case Bool:
		return parseBool(s)
	case Int2:
		return parseInt(s, 16, "smallint")
	case Int4:
		return parseInt(s, 32, "integer")
	case Int8:
		return parseInt(s, 64, "bigint")
	case Float4:
		f, err := parseFloat(s, 32)
		if err != nil {
			return nil, err
		}
		return float64(float32(f)), nil
	case Float8:
		f, err := parseFloat(s, 64)
		if err != nil {
			return nil, err
		}
		return f, nil
	case Numeric:
		d, err := parseNumeric(s, t.Typmod)
		if err != nil {
			return nil, err
		}
		return d, nil
	case Text, Unknown, Varchar, Bpchar, Name, Char:
		if err := checkUTF8(s); err != nil {
			return nil, err
		}
		return parseString(s, t)
	case Bytea:
		b, err := parseBytea(s)
		if err != nil {
			return nil, err
		}
		return b, nil
	case Date:
		d, err := parseDate(s, opts)
		if err != nil {
			return nil, err
		}
		return d, nil
	case Time:
		v, err := parseTime(s, t.Typmod, opts)
		if err != nil {
			return nil, err
		}
		return v, nil
	case Timestamp, TimestampTZ:
		v, err := parseTimestamp(s, t.Kind == TimestampTZ, t.Typmod, opts)
		if err != nil {
			return nil, err
		}
		return v, nil
	case Interval:
		v, err := parseInterval(s, t.Typmod, opts.IntervalStyle == "sql_standard")
		if err != nil {
			return nil, err
		}
		return v, nil
	case JSON:
		if err := checkUTF8(s); err != nil {
			return nil, err
		}
		if err := validateJSON(s); err != nil {
			return nil, err
		}
		return s, nil
	case JSONB:
		if err := checkUTF8(s); err != nil {
			return nil, err
		}
		j, err := NormalizeJSONB(s)
		if err != nil {
			return nil, err
		}
		return j, nil
	case Oid:
		return parseOid(s)
	case RegClass, RegType, RegProc:
		return parseReg(s, t.Kind, opts)
	case Void:
		return nil, nil
	case Array:
		return parseArrayText(s, *t.Elem, opts)
	case Record:
		return parseRecordText(s, t, opts)
	case Enum:
		return parseEnum(s, t)
	case UUID:
		return ParseUUID(s)
	}
	return nil, pgerr.Internal("types: no input function for %s", t)
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// parseInt parses int2in/int4in/int8in's syntax: optional surrounding
// whitespace, optional sign, decimal digits.
func parseInt(s string, bits int, name string) (Value, error) {
	i, n := 0, len(s)
	for i < n && isSpace(s[i]) {
		i++
	}
	for n > i && isSpace(s[n-1]) {
		n--
	}
	body := s[i:n]
	neg := false
	if len(body) > 0 && (body[0] == '+' || body[0] == '-') {
		neg = body[0] == '-'
		body = body[1:]
	}
	if body == "" {
		return nil, pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type %s: \"%s\"", name, s)
	}
	var u uint64
	overflow := false
	for j := 0; j < len(body); j++ {
		c := body[j]
		if c < '0' || c > '9' {
			return nil, pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type %s: \"%s\"", name, s)
		}
		if u > (1<<63)/10 {
			overflow = true
		}
		u = u*10 + uint64(c-'0')
		if u > 1<<63 {
			overflow = true
		}
	}
	limit := uint64(1) << (bits - 1)
	if overflow || (!neg && u >= limit) || (neg && u > limit) {
		return nil, pgerr.New(pgerr.NumericValueOutOfRange, "value \"%s\" is out of range for type %s", s, name)
	}
	if neg {
		return -int64(u), nil
	}
	return int64(u), nil
}

// parseBool accepts what boolin accepts: t/true/y/yes/on/1 and f/false/n/no/
// off/0, any unique prefix of the words, case-insensitive, with surrounding
// whitespace.
func parseBool(s string) (Value, error) {
	w := strings.ToLower(strings.Trim(s, " \t\n\r\v\f"))
	if w != "" {
		switch {
		case strings.HasPrefix("true", w), strings.HasPrefix("yes", w), w == "1", w == "on":
			return true, nil
		case strings.HasPrefix("false", w), strings.HasPrefix("no", w), w == "0", w == "off", w == "of":
			return false, nil
		}
	}
	return nil, pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type boolean: \"%s\"", s)
}

// CheckUTF8 returns PostgreSQL's 22021 error for text that is not valid
// UTF-8 or holds a NUL byte ("invalid byte sequence for encoding "UTF8":
// 0x.."), naming the bytes of the first bad sequence as pg_verifymbstr does.
func CheckUTF8(s string) error { return checkUTF8(s) }

func checkUTF8(s string) error {
	if strings.IndexByte(s, 0) >= 0 {
		return pgerr.New(pgerr.CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\": 0x00")
	}
	if utf8.ValidString(s) {
		return nil
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			// PostgreSQL shows as many bytes as the first byte announces
			end := i + utf8SeqLen(s[i])
			if end > len(s) {
				end = len(s)
			}
			var b strings.Builder
			for j := i; j < end; j++ {
				if j > i {
					b.WriteByte(' ')
				}
				b.WriteString("0x")
				b.WriteByte(hexDigits[s[j]>>4])
				b.WriteByte(hexDigits[s[j]&15])
			}
			return pgerr.New(pgerr.CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\": %s", b.String())
		}
		i += size
	}
	return nil
}

// utf8SeqLen is pg_utf_mblen: the length a UTF-8 sequence's first byte announces.
func utf8SeqLen(c byte) int {
	switch {
	case c&0x80 == 0:
		return 1
	case c&0xe0 == 0xc0:
		return 2
	case c&0xf0 == 0xe0:
		return 3
	case c&0xf8 == 0xf0:
		return 4
	}
	return 1
}

// parseString applies the text-like types' input rules: varchar(n) and
// char(n) length checks (trailing spaces beyond n are dropped, anything else
// is 22001), char(n) blank padding, name truncation to 63 bytes, "char"
// keeping one byte.
func parseString(s string, t T) (Value, error) {
	switch t.Kind {
	case Varchar, Bpchar:
		if t.Typmod < 5 {
			return s, nil
		}
		n := int(t.Typmod - 4)
		l := utf8.RuneCountInString(s)
		if l > n {
			cut := runeOffset(s, n)
			if strings.Trim(s[cut:], " ") != "" {
				return nil, pgerr.New(pgerr.StringDataRightTruncation, "value too long for type %s", t)
			}
			s = s[:cut]
			l = n
		}
		if t.Kind == Bpchar && l < n {
			s += strings.Repeat(" ", n-l)
		}
		return s, nil
	case Name:
		if len(s) > 63 {
			cut := 63
			for cut > 0 && !utf8.RuneStart(s[cut]) {
				cut--
			}
			s = s[:cut]
		}
		return s, nil
	case Char:
		if len(s) == 4 && s[0] == '\\' && isOctal(s[1]) && isOctal(s[2]) && isOctal(s[3]) {
			return string([]byte{(s[1]-'0')<<6 | (s[2]-'0')<<3 | (s[3] - '0')}), nil
		}
		if len(s) > 1 {
			return s[:1], nil
		}
		return s, nil
	}
	return s, nil
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// runeOffset returns the byte offset of the n-th rune of s.
func runeOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// parseBytea reads bytea's hex format (\x0102, whitespace allowed between
// digit pairs) and escape format (\\ and \ooo escapes).
func parseBytea(s string) ([]byte, error) {
	if len(s) >= 2 && s[0] == '\\' && s[1] == 'x' {
		out := make([]byte, 0, (len(s)-2)/2)
		for i := 2; i < len(s); {
			c := s[i]
			if isSpace(c) {
				i++
				continue
			}
			hi, ok := unhex(c)
			if !ok {
				return nil, pgerr.New(pgerr.InvalidParameterValue, "invalid hexadecimal digit: \"%s\"", s[i:i+utf8RuneLen(s[i:])])
			}
			if i+1 >= len(s) {
				return nil, pgerr.New(pgerr.InvalidParameterValue, "invalid hexadecimal data: odd number of digits")
			}
			lo, ok := unhex(s[i+1])
			if !ok {
				return nil, pgerr.New(pgerr.InvalidParameterValue, "invalid hexadecimal digit: \"%s\"", s[i+1:i+1+utf8RuneLen(s[i+1:])])
			}
			out = append(out, hi<<4|lo)
			i += 2
		}
		return out, nil
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		if s[i] != '\\' {
			out = append(out, s[i])
			i++
			continue
		}
		if i+1 < len(s) && s[i+1] == '\\' {
			out = append(out, '\\')
			i += 2
			continue
		}
		if i+3 < len(s)+0 && s[i+1] >= '0' && s[i+1] <= '3' && isOctal(s[i+2]) && isOctal(s[i+3]) {
			out = append(out, (s[i+1]-'0')<<6|(s[i+2]-'0')<<3|(s[i+3]-'0'))
			i += 4
			continue
		}
		return nil, pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type bytea")
	}
	return out, nil
}

func utf8RuneLen(s string) int {
	_, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return 1
	}
	return n
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// parseOid parses oidin's syntax: an unsigned 32-bit number, where negative
// numbers down to -2147483648 wrap around as in C.
func parseOid(s string) (Value, error) {
	t := strings.Trim(s, " \t\n\r\v\f")
	if t == "" {
		return nil, pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type oid: \"%s\"", s)
	}
	neg := t[0] == '-'
	body := t
	if neg || t[0] == '+' {
		body = t[1:]
	}
	for i := 0; i < len(body); i++ {
		if !isDigit(body[i]) {
			return nil, pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type oid: \"%s\"", s)
		}
	}
	if body == "" {
		return nil, pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type oid: \"%s\"", s)
	}
	u, err := strconv.ParseUint(body, 10, 64)
	if err != nil || (!neg && u > 0xFFFFFFFF) || (neg && u > 0x80000000) {
		return nil, pgerr.New(pgerr.NumericValueOutOfRange, "value \"%s\" is out of range for type oid", s)
	}
	if neg {
		return int64(uint32(-int64(u))), nil
	}
	return int64(u), nil
}

// parseReg reads regclass/regtype/regproc input: a number, "-" (0), or a
// name resolved through opts.OIDs.
func parseReg(s string, k Kind, opts *FormatOptions) (Value, error) {
	t := strings.TrimSpace(s)
	if t == "-" {
		return int64(0), nil
	}
	if t != "" && isDigit(t[0]) {
		return parseOid(t)
	}
	if opts.OIDs != nil {
		oid, err := opts.OIDs(k, t)
		if err != nil {
			return nil, err
		}
		return int64(oid), nil
	}
	switch k {
	case RegClass:
		return nil, pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", t)
	case RegType:
		return nil, pgerr.New(pgerr.UndefinedObject, "type \"%s\" does not exist", t)
	}
	return nil, pgerr.New(pgerr.UndefinedFunction, "function \"%s\" does not exist", t)
}

// ParseTimestampText is ParseText for timestamp (tz false) and timestamp
// with time zone (tz true) under DefaultFormat, returning the value
// unboxed: the connectors' decoders' fast path.
func ParseTimestampText(s string, tz bool, typmod int32) (TimestampValue, error) {
	return parseTimestamp(s, tz, typmod, &DefaultFormat)
}

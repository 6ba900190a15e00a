package types

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/streamsql/streamsql/pgerr"
)

// JSON input follows PostgreSQL's json lexer and parser (the same grammar and
// error details); jsonb text is the normalized form jsonb_out prints.

// jsonValue is a parsed JSON value.
type jsonValue struct {
	kind byte   // 'o' object, 'a' array, 's' string, 'n' number, 't', 'f', 'z' null
	str  string // decoded string, or the number's numeric text
	keys []string
	vals []*jsonValue // object values or array elements
}

type jsonParser struct {
	s    string
	pos  int
	b    bool // jsonb: decode strings and numbers, reject \u0000
	tokS int  // start of the current token (for messages)
}

func jsonSyntax(detail string, args ...any) error {
	return pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type json").WithDetail(detail, args...)
}

// validateJSON checks json input.
func validateJSON(s string) error {
	p := &jsonParser{s: s}
	_, err := p.parseTop()
	return err
}

// NormalizeJSONB parses JSON text and returns jsonb's canonical text: keys
// ordered by length then bytes, duplicate keys resolved last-wins, numbers in
// numeric form, ", " and ": " separators. Errors are PostgreSQL's (22P02 with
// its detail; 22P05 for \u0000).
func NormalizeJSONB(s string) (string, error) {
	p := &jsonParser{s: s, b: true}
	v, err := p.parseTop()
	if err != nil {
		return "", err
	}
	return string(appendJSONValue(nil, v)), nil
}

func (p *jsonParser) skipSpace() {
	for p.pos < len(p.s) {
		switch p.s[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jsonParser) parseTop() (*jsonValue, error) {
	v, err := p.parseValue()
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos < len(p.s) {
		return nil, jsonSyntax("Expected end of input, but found \"%s\".", p.tokenText())
	}
	return v, nil
}

// tokenText returns the token at pos as PostgreSQL quotes it in messages.
func (p *jsonParser) tokenText() string {
	if p.pos >= len(p.s) {
		return ""
	}
	c := p.s[p.pos]
	if strings.IndexByte("{}[],:", c) >= 0 {
		return string(c)
	}
	if c == '"' {
		end := p.pos + 1
		for end < len(p.s) && p.s[end] != '"' {
			if p.s[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(p.s) {
			end = len(p.s) - 1
		}
		return p.s[p.pos : end+1]
	}
	end := p.pos
	for end < len(p.s) && strings.IndexByte(" \t\n\r{}[],:\"", p.s[end]) < 0 {
		end++
	}
	if end == p.pos {
		_, n := utf8.DecodeRuneInString(p.s[p.pos:])
		end += n
	}
	return p.s[p.pos:end]
}

func (p *jsonParser) eof() error { return jsonSyntax("The input string ended unexpectedly.") }

func (p *jsonParser) parseValue() (*jsonValue, error) {
	p.skipSpace()
	if p.pos >= len(p.s) {
		return nil, p.eof()
	}
	switch c := p.s[p.pos]; c {
	case '{':
		return p.parseObject()
	case '[':
		return p.parseArray()
	case '"':
		s, err := p.parseString()
		if err != nil {
			return nil, err
		}
		return &jsonValue{kind: 's', str: s}, nil
	case '}', ']', ',', ':':
		return nil, jsonSyntax("Expected JSON value, but found \"%s\".", string(c))
	}
	tok := p.tokenText()
	switch tok {
	case "true":
		p.pos += 4
		return &jsonValue{kind: 't'}, nil
	case "false":
		p.pos += 5
		return &jsonValue{kind: 'f'}, nil
	case "null":
		p.pos += 4
		return &jsonValue{kind: 'z'}, nil
	}
	if !validJSONNumber(tok) {
		return nil, jsonSyntax("Token \"%s\" is invalid.", tok)
	}
	p.pos += len(tok)
	v := &jsonValue{kind: 'n', str: tok}
	if p.b {
		d, ok := scanNumeric(tok)
		if !ok {
			return nil, jsonSyntax("Token \"%s\" is invalid.", tok)
		}
		if err := checkNumericLimits(d); err != nil {
			return nil, err
		}
		v.str = string(appendNumeric(nil, d))
	}
	return v, nil
}

func validJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i >= len(s) || !isDigit(s[i]) {
		return false
	}
	if s[i] == '0' {
		i++
	} else {
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || !isDigit(s[i]) {
			return false
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || !isDigit(s[i]) {
			return false
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	return i == len(s)
}

func (p *jsonParser) parseObject() (*jsonValue, error) {
	p.pos++ // {
	v := &jsonValue{kind: 'o'}
	p.skipSpace()
	if p.pos >= len(p.s) {
		return nil, p.eof()
	}
	if p.s[p.pos] == '}' {
		p.pos++
		return v, nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.s) {
			return nil, p.eof()
		}
		if p.s[p.pos] != '"' {
			if len(v.keys) == 0 {
				return nil, jsonSyntax("Expected string or \"}\", but found \"%s\".", p.tokenText())
			}
			return nil, jsonSyntax("Expected string, but found \"%s\".", p.tokenText())
		}
		k, err := p.parseString()
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.pos >= len(p.s) {
			return nil, p.eof()
		}
		if p.s[p.pos] != ':' {
			return nil, jsonSyntax("Expected \":\", but found \"%s\".", p.tokenText())
		}
		p.pos++
		val, err := p.parseValue()
		if err != nil {
			return nil, err
		}
		v.keys = append(v.keys, k)
		v.vals = append(v.vals, val)
		p.skipSpace()
		if p.pos >= len(p.s) {
			return nil, p.eof()
		}
		switch p.s[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			if p.b {
				v.uniqueKeys()
			}
			return v, nil
		default:
			return nil, jsonSyntax("Expected \",\" or \"}\", but found \"%s\".", p.tokenText())
		}
	}
}

// uniqueKeys orders an object's keys as jsonb does (length, then bytes) and
// keeps the last value of a duplicated key.
func (v *jsonValue) uniqueKeys() {
	idx := make([]int, len(v.keys))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ka, kb := v.keys[idx[a]], v.keys[idx[b]]
		if len(ka) != len(kb) {
			return len(ka) < len(kb)
		}
		return ka < kb
	})
	keys := make([]string, 0, len(idx))
	vals := make([]*jsonValue, 0, len(idx))
	for i, j := range idx {
		if i+1 < len(idx) && v.keys[idx[i+1]] == v.keys[j] {
			continue // a later duplicate wins
		}
		keys = append(keys, v.keys[j])
		vals = append(vals, v.vals[j])
	}
	v.keys, v.vals = keys, vals
}

func (p *jsonParser) parseArray() (*jsonValue, error) {
	p.pos++ // [
	v := &jsonValue{kind: 'a'}
	p.skipSpace()
	if p.pos >= len(p.s) {
		return nil, p.eof()
	}
	if p.s[p.pos] == ']' {
		p.pos++
		return v, nil
	}
	for {
		p.skipSpace()
		if p.pos < len(p.s) && p.s[p.pos] == ']' && len(v.vals) == 0 {
			return nil, jsonSyntax("Expected array element or \"]\", but found \"%s\".", p.tokenText())
		}
		e, err := p.parseValue()
		if err != nil {
			return nil, err
		}
		v.vals = append(v.vals, e)
		p.skipSpace()
		if p.pos >= len(p.s) {
			return nil, p.eof()
		}
		switch p.s[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return v, nil
		default:
			return nil, jsonSyntax("Expected \",\" or \"]\", but found \"%s\".", p.tokenText())
		}
	}
}

// parseString reads a JSON string at pos (which is '"'), returning its
// decoded text (for json, decoding still validates escapes).
func (p *jsonParser) parseString() (string, error) {
	p.pos++
	var sb strings.Builder
	escaped := false
	start := p.pos
	for {
		if p.pos >= len(p.s) {
			return "", p.eof()
		}
		c := p.s[p.pos]
		switch {
		case c == '"':
			s := p.s[start:p.pos]
			p.pos++
			if !escaped {
				return s, nil
			}
			sb.WriteString(s)
			return sb.String(), nil
		case c < 0x20:
			return "", jsonSyntax("Character with value 0x%02x must be escaped.", c)
		case c == '\\':
			sb.WriteString(p.s[start:p.pos])
			escaped = true
			if err := p.escape(&sb); err != nil {
				return "", err
			}
			start = p.pos
		default:
			p.pos++
		}
	}
}

func (p *jsonParser) escape(sb *strings.Builder) error {
	p.pos++ // backslash
	if p.pos >= len(p.s) {
		return p.eof()
	}
	c := p.s[p.pos]
	p.pos++
	switch c {
	case '"', '\\', '/':
		sb.WriteByte(c)
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
	case 'u':
		r, err := p.hex4()
		if err != nil {
			return err
		}
		if !p.b {
			if r == 0 {
				sb.WriteString("\\u0000")
			} else {
				sb.WriteRune(r)
			}
			return nil
		}
		if r >= 0xD800 && r <= 0xDBFF {
			if p.pos+1 < len(p.s) && p.s[p.pos] == '\\' && p.s[p.pos+1] == 'u' {
				p.pos += 2
				lo, err := p.hex4()
				if err != nil {
					return err
				}
				if lo < 0xDC00 || lo > 0xDFFF {
					return jsonSyntax("Unicode low surrogate must follow a high surrogate.")
				}
				r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
			} else {
				return jsonSyntax("Unicode low surrogate must follow a high surrogate.")
			}
		} else if r >= 0xDC00 && r <= 0xDFFF {
			return jsonSyntax("Unicode low surrogate must follow a high surrogate.")
		}
		if r == 0 {
			if p.b {
				return pgerr.New(pgerr.UntranslatableCharacter, "unsupported Unicode escape sequence").
					WithDetail("\\u0000 cannot be converted to text.")
			}
			sb.WriteString("\\u0000")
			return nil
		}
		sb.WriteRune(r)
	default:
		_, n := utf8.DecodeRuneInString(p.s[p.pos-1:])
		return jsonSyntax("Escape sequence \"\\%s\" is invalid.", p.s[p.pos-1:p.pos-1+n])
	}
	return nil
}

func (p *jsonParser) hex4() (rune, error) {
	if p.pos+4 > len(p.s) {
		return 0, jsonSyntax("\"\\u\" must be followed by four hexadecimal digits.")
	}
	v, err := strconv.ParseUint(p.s[p.pos:p.pos+4], 16, 32)
	if err != nil || strings.ContainsAny(p.s[p.pos:p.pos+4], "+-") {
		return 0, jsonSyntax("\"\\u\" must be followed by four hexadecimal digits.")
	}
	p.pos += 4
	return rune(v), nil
}

// appendJSONValue appends jsonb_out's text.
func appendJSONValue(dst []byte, v *jsonValue) []byte {
	switch v.kind {
	case 'o':
		dst = append(dst, '{')
		for i, k := range v.keys {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendJSONString(dst, k)
			dst = append(dst, ": "...)
			dst = appendJSONValue(dst, v.vals[i])
		}
		return append(dst, '}')
	case 'a':
		dst = append(dst, '[')
		for i, e := range v.vals {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendJSONValue(dst, e)
		}
		return append(dst, ']')
	case 's':
		return appendJSONString(dst, v.str)
	case 'n':
		return append(dst, v.str...)
	case 't':
		return append(dst, "true"...)
	case 'f':
		return append(dst, "false"...)
	}
	return append(dst, "null"...)
}

// appendJSONString quotes s as PostgreSQL's escape_json does.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			if c < 0x20 {
				dst = append(dst, fmt.Sprintf("\\u%04x", c)...)
			} else {
				dst = append(dst, c)
			}
		}
	}
	return append(dst, '"')
}

// compareJSONB orders two jsonb texts as PostgreSQL's jsonb btree opclass:
// object > array > boolean > number > string > null; containers with more
// members sort higher; then members in storage order.
func compareJSONB(a, b string) int {
	pa := &jsonParser{s: a, b: true}
	pb := &jsonParser{s: b, b: true}
	va, err1 := pa.parseTop()
	vb, err2 := pb.parseTop()
	if err1 != nil || err2 != nil {
		return strings.Compare(a, b)
	}
	// A top-level scalar is stored as a one-element "raw scalar" array: it
	// sorts with arrays by element count, before a real array of one element.
	wrap := func(v *jsonValue) (*jsonValue, bool) {
		if v.kind == 'o' || v.kind == 'a' {
			return v, false
		}
		return &jsonValue{kind: 'a', vals: []*jsonValue{v}}, true
	}
	wa, rawA := wrap(va)
	wb, rawB := wrap(vb)
	if wa.kind == 'a' && wb.kind == 'a' && rawA != rawB && len(wa.vals) == len(wb.vals) {
		if rawA {
			return -1
		}
		return 1
	}
	return compareJSONValue(wa, wb)
}

func jsonRank(k byte) int {
	switch k {
	case 'z':
		return 0
	case 's':
		return 1
	case 'n':
		return 2
	case 't', 'f':
		return 3
	case 'a':
		return 4
	}
	return 5
}

func compareJSONValue(a, b *jsonValue) int {
	ra, rb := jsonRank(a.kind), jsonRank(b.kind)
	if ra != rb {
		return cmpInt(int64(ra), int64(rb))
	}
	switch a.kind {
	case 's':
		return strings.Compare(a.str, b.str)
	case 'n':
		da, _ := scanNumeric(a.str)
		db, _ := scanNumeric(b.str)
		return compareNumeric(da, db)
	case 't', 'f':
		return cmpInt(int64(jsonBool(a.kind)), int64(jsonBool(b.kind)))
	case 'a':
		if c := cmpInt(int64(len(a.vals)), int64(len(b.vals))); c != 0 {
			return c
		}
		for i := range a.vals {
			if c := compareJSONValue(a.vals[i], b.vals[i]); c != 0 {
				return c
			}
		}
	case 'o':
		if c := cmpInt(int64(len(a.keys)), int64(len(b.keys))); c != 0 {
			return c
		}
		for i := range a.keys {
			ka, kb := a.keys[i], b.keys[i]
			if len(ka) != len(kb) {
				return cmpInt(int64(len(ka)), int64(len(kb)))
			}
			if c := strings.Compare(ka, kb); c != 0 {
				return c
			}
			if c := compareJSONValue(a.vals[i], b.vals[i]); c != 0 {
				return c
			}
		}
	}
	return 0
}

func jsonBool(k byte) int {
	if k == 't' {
		return 1
	}
	return 0
}

package types

import (
	"strings"

	"github.com/streamsql/streamsql/pgerr"
)

// Array text I/O (array_in / array_out) for any element type. A
// one-dimensional array is []Value; a multidimensional one nests []Value
// (text I/O only: Arrow storage holds one dimension). Lower bounds other than
// 1 are not kept.

// appendArrayText appends array_out's text: {1,2,NULL}, {"a b","x\"y"}.
func appendArrayText(dst []byte, a []Value, elem T, opts *FormatOptions) []byte {
	dst = append(dst, '{')
	var scratch []byte
	for i, v := range a {
		if i > 0 {
			dst = append(dst, ',')
		}
		switch x := v.(type) {
		case nil:
			dst = append(dst, "NULL"...)
		case []Value:
			dst = appendArrayText(dst, x, elem, opts)
		default:
			scratch = AppendText(scratch[:0], x, elem, opts)
			dst = appendArrayElem(dst, scratch)
		}
	}
	return append(dst, '}')
}

func appendArrayElem(dst, s []byte) []byte {
	quote := len(s) == 0 || (len(s) == 4 && strings.EqualFold(string(s), "NULL"))
	if !quote {
		for _, c := range s {
			if c == '{' || c == '}' || c == ',' || c == '"' || c == '\\' || isSpace(c) {
				quote = true
				break
			}
		}
	}
	return appendQuoted(dst, s, quote, '\\')
}

// appendQuoted appends s, in double quotes when quote is set, a quote or
// backslash inside escaped by esc before it (array_out: a backslash;
// record_out: the character itself, doubled).
func appendQuoted(dst, s []byte, quote bool, esc byte) []byte {
	if !quote {
		return append(dst, s...)
	}
	dst = append(dst, '"')
	for _, c := range s {
		if c == '"' || c == '\\' {
			if esc == 0 {
				dst = append(dst, c)
			} else {
				dst = append(dst, esc)
			}
		}
		dst = append(dst, c)
	}
	return append(dst, '"')
}

type arrayParser struct {
	s    string
	pos  int
	elem T
	opts *FormatOptions
	// dims[d] is the length seen at depth d (-1 until the first sub-array
	// of that depth closes).
	dims []int
}

func malformedArray(s, detail string) error {
	return pgerr.New(pgerr.InvalidTextRepresentation, "malformed array literal: \"%s\"", s).WithDetail("%s", detail)
}

// parseArrayText reads array_in's syntax for elements of type elem.
func parseArrayText(s string, elem T, opts *FormatOptions) (Value, error) {
	p := &arrayParser{s: s, elem: elem, opts: opts}
	p.skipSpace()
	if p.pos < len(s) && s[p.pos] == '[' {
		// dimension decoration [lo:hi][lo:hi]= ; only lower bound 1 is kept
		for p.pos < len(s) && s[p.pos] == '[' {
			end := strings.IndexByte(s[p.pos:], ']')
			if end < 0 {
				return nil, malformedArray(s, "Missing \"]\" in array dimensions.")
			}
			p.pos += end + 1
			p.skipSpace()
		}
		if p.pos >= len(s) || s[p.pos] != '=' {
			return nil, malformedArray(s, "Missing \"=\" after array dimensions.")
		}
		p.pos++
		p.skipSpace()
	}
	if p.pos >= len(s) || s[p.pos] != '{' {
		return nil, malformedArray(s, "Array value must start with \"{\" or dimension information.")
	}
	v, err := p.parseLevel(0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(s) {
		return nil, malformedArray(s, "Junk after closing right brace.")
	}
	return v, nil
}

func (p *arrayParser) skipSpace() {
	for p.pos < len(p.s) && isSpace(p.s[p.pos]) {
		p.pos++
	}
}

// parseLevel parses one {...} at depth d; pos is at '{'.
func (p *arrayParser) parseLevel(d int) ([]Value, error) {
	p.pos++
	if len(p.dims) <= d {
		p.dims = append(p.dims, -1)
	}
	out := []Value{}
	subArrays := false
	expectElem := true
	for {
		p.skipSpace()
		if p.pos >= len(p.s) {
			return nil, malformedArray(p.s, "Unexpected end of input.")
		}
		c := p.s[p.pos]
		switch {
		case c == '}':
			if expectElem && len(out) > 0 {
				return nil, malformedArray(p.s, "Unexpected \"}\" character.")
			}
			p.pos++
			if p.dims[d] == -1 {
				p.dims[d] = len(out)
			} else if p.dims[d] != len(out) {
				return nil, malformedArray(p.s, "Multidimensional arrays must have sub-arrays with matching dimensions.")
			}
			if !subArrays && len(p.dims) > d+1 && len(out) > 0 {
				return nil, malformedArray(p.s, "Multidimensional arrays must have sub-arrays with matching dimensions.")
			}
			return out, nil
		case c == ',':
			if expectElem {
				return nil, malformedArray(p.s, "Unexpected \",\" character.")
			}
			p.pos++
			expectElem = true
		case c == '{':
			if !expectElem || (len(out) > 0 && !subArrays) {
				return nil, malformedArray(p.s, "Unexpected \"{\" character.")
			}
			sub, err := p.parseLevel(d + 1)
			if err != nil {
				return nil, err
			}
			subArrays = true
			out = append(out, sub)
			expectElem = false
		default:
			if !expectElem || subArrays {
				return nil, malformedArray(p.s, "Unexpected array element.")
			}
			if len(p.dims) > d+1 {
				return nil, malformedArray(p.s, "Multidimensional arrays must have sub-arrays with matching dimensions.")
			}
			v, err := p.element()
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			expectElem = false
		}
	}
}

// element reads one quoted or unquoted element and converts it.
func (p *arrayParser) element() (Value, error) {
	var sb strings.Builder
	quoted := false
	hadQuote := false
	// trailing whitespace of an unquoted element is dropped
	lastNonSpace := 0
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		if quoted {
			switch c {
			case '\\':
				p.pos++
				if p.pos >= len(p.s) {
					return nil, malformedArray(p.s, "Unexpected end of input.")
				}
				sb.WriteByte(p.s[p.pos])
			case '"':
				quoted = false
			default:
				sb.WriteByte(c)
			}
			p.pos++
			lastNonSpace = sb.Len()
			continue
		}
		switch {
		case c == '"':
			if sb.Len() > 0 && !hadQuote {
				return nil, malformedArray(p.s, "Unexpected array element.")
			}
			quoted, hadQuote = true, true
			p.pos++
			continue
		case c == '\\':
			p.pos++
			if p.pos >= len(p.s) {
				return nil, malformedArray(p.s, "Unexpected end of input.")
			}
			sb.WriteByte(p.s[p.pos])
			p.pos++
			lastNonSpace = sb.Len()
			continue
		case c == ',' || c == '}':
			text := sb.String()[:lastNonSpace]
			if !hadQuote && strings.EqualFold(text, "NULL") {
				return nil, nil
			}
			return ParseText(text, p.elem, p.opts)
		case c == '{':
			return nil, malformedArray(p.s, "Unexpected \"{\" character.")
		case isSpace(c):
			sb.WriteByte(c)
		default:
			if hadQuote {
				return nil, malformedArray(p.s, "Unexpected array element.")
			}
			sb.WriteByte(c)
			lastNonSpace = sb.Len()
		}
		p.pos++
	}
	return nil, malformedArray(p.s, "Unexpected end of input.")
}

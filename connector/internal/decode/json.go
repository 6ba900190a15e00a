package decode

import (
	"unicode/utf16"
	"unicode/utf8"

	"github.com/streamsql/streamsql/pgerr"
)

// JSON reads one JSON object (a line, a message) into the row's decoded
// columns: keys name columns (exactly, else ASCII case-folded), other keys
// are ignored, missing keys and nulls are NULL. On error it returns the
// column at fault, or -1 for the object's syntax. The row may alias line
// until the next call.
func (r *Row) JSON(line []byte) (int, error) {
	for i := range r.s.decoded {
		r.slots[i].null = true
	}
	r.scratch = r.scratch[:0]
	p := jsonScanner{b: line}
	p.space()
	if !p.eat('{') {
		return -1, p.syntax("expected a JSON object")
	}
	p.space()
	if !p.eat('}') {
		for k := 0; ; k++ {
			p.space()
			if p.peek() != '"' {
				return -1, p.syntax("expected a string key")
			}
			key, err := p.str(&r.scratch)
			if err != nil {
				return -1, err
			}
			col := r.columnAt(k, key)
			p.space()
			if !p.eat(':') {
				return -1, p.syntax(`expected ":"`)
			}
			p.space()
			start := p.i
			kind, val, err := p.value(&r.scratch)
			if err != nil {
				return -1, err
			}
			if col >= 0 {
				c, s := &r.s.convs[col], &r.slots[col]
				switch {
				case kind == jsonNull:
					s.null = true
				case c.json:
					err = c.set(s, line[start:p.i])
				case kind == jsonNested:
					what := "object"
					if line[start] == '[' {
						what = "array"
					}
					err = pgerr.New(pgerr.InvalidTextRepresentation, "a JSON %s cannot be read as type %s", what, c.t)
				default:
					err = c.set(s, val)
				}
				if err != nil {
					return col, err
				}
			}
			p.space()
			if p.eat(',') {
				continue
			}
			if p.eat('}') {
				break
			}
			return -1, p.syntax(`expected "," or "}"`)
		}
	}
	p.space()
	if p.i != len(p.b) {
		return -1, p.syntax("unexpected data after the object")
	}
	return -1, nil
}

// columnAt is column for the k-th key of an object, first trying the
// column the k-th key named in the last object (messages of one producer
// have their keys in one order), which costs a comparison instead of a
// hash lookup.
func (r *Row) columnAt(k int, key []byte) int {
	if k < len(r.order) {
		if c := r.order[k]; c >= 0 && string(key) == r.s.cols[c].Name {
			return c
		}
	}
	c := r.column(key)
	if k < maxOrder {
		for len(r.order) <= k {
			r.order = append(r.order, -1)
		}
		r.order[k] = c
	}
	return c
}

// maxOrder bounds Row.order.
const maxOrder = 64

// column finds the decoded column a key names: exactly, else ASCII
// case-folded; -1 if none.
func (r *Row) column(key []byte) int {
	if i, ok := r.s.byName[string(key)]; ok {
		return i
	}
	var small [64]byte
	folded := small[:0]
	for _, c := range key {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		folded = append(folded, c)
	}
	if i, ok := r.s.byFold[string(folded)]; ok {
		return i
	}
	return -1
}

// jsonKind is what value a jsonScanner read.
type jsonKind uint8

const (
	jsonScalar jsonKind = iota // string, number, true, false
	jsonNull
	jsonNested // object or array
)

// jsonScanner reads JSON (RFC 8259) from b; values nested in objects and
// arrays are skipped over, not checked in depth (a json column checks its
// value with PostgreSQL's json input).
type jsonScanner struct {
	b []byte
	i int
}

func (p *jsonScanner) peek() byte {
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

func (p *jsonScanner) eat(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *jsonScanner) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\r', '\n':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonScanner) syntax(what string) error {
	if p.i >= len(p.b) {
		return pgerr.New(pgerr.InvalidTextRepresentation, "invalid JSON: %s, found the end of the line", what)
	}
	return pgerr.New(pgerr.InvalidTextRepresentation, "invalid JSON: %s at byte %d", what, p.i+1)
}

// value reads one value: val is a string's content or a scalar's text.
func (p *jsonScanner) value(scratch *[]byte) (jsonKind, []byte, error) {
	start := p.i
	switch c := p.peek(); {
	case c == '"':
		s, err := p.str(scratch)
		return jsonScalar, s, err
	case c == '{' || c == '[':
		return jsonNested, nil, p.skipNested()
	case c == '-' || c >= '0' && c <= '9':
		if !p.number() {
			return 0, nil, p.syntax("bad number")
		}
		return jsonScalar, p.b[start:p.i], nil
	}
	for _, w := range [...]string{"true", "false", "null"} {
		if len(p.b)-p.i >= len(w) && string(p.b[p.i:p.i+len(w)]) == w {
			p.i += len(w)
			if w == "null" {
				return jsonNull, nil, nil
			}
			return jsonScalar, p.b[start:p.i], nil
		}
	}
	return 0, nil, p.syntax("expected a value")
}

// number reads -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *jsonScanner) number() bool {
	p.eat('-')
	digits := func() int {
		n := 0
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.eat('0') {
		if c := p.peek(); c >= '0' && c <= '9' {
			return false
		}
	} else if digits() == 0 {
		return false
	}
	if p.eat('.') && digits() == 0 {
		return false
	}
	if c := p.peek(); c == 'e' || c == 'E' {
		p.i++
		if !p.eat('+') {
			p.eat('-')
		}
		if digits() == 0 {
			return false
		}
	}
	return true
}

// str reads a string at p.i (a '"'): its content, the input itself when
// it has no escapes, else unescaped at the end of scratch.
func (p *jsonScanner) str(scratch *[]byte) ([]byte, error) {
	p.i++
	start := p.i
	for j, c := range p.b[start:] { // a table lookup a byte: most strings are plain
		if !strSpecial[c] {
			continue
		}
		p.i = start + j
		switch {
		case c == '"':
			p.i++
			return p.b[start : p.i-1], nil
		case c == '\\':
			return p.strEscaped(start, scratch)
		default:
			return nil, p.syntax("control character in a string")
		}
	}
	p.i = len(p.b)
	return nil, p.syntax("unterminated string")
}

// strSpecial marks the bytes that end a string's plain run: the quote, the
// backslash and the control characters JSON does not allow unescaped.
var strSpecial = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

func (p *jsonScanner) strEscaped(start int, scratch *[]byte) ([]byte, error) {
	s0 := len(*scratch)
	out := append(*scratch, p.b[start:p.i]...)
	defer func() { *scratch = out }()
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return out[s0:], nil
		case c < 0x20:
			return nil, p.syntax("control character in a string")
		case c != '\\':
			out = append(out, c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.b) {
			break
		}
		e := p.b[p.i+1]
		p.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return nil, p.syntax(`"\u" must be followed by four hex digits`)
			}
			if utf16.IsSurrogate(r) {
				var r2 rune = -1
				if r < 0xdc00 && p.i+1 < len(p.b) && p.b[p.i] == '\\' && p.b[p.i+1] == 'u' {
					p.i += 2
					if r2, ok = p.hex4(); !ok {
						return nil, p.syntax(`"\u" must be followed by four hex digits`)
					}
				}
				if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
					return nil, p.syntax("invalid Unicode surrogate pair")
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			p.i -= 2
			return nil, p.syntax("invalid escape")
		}
	}
	return nil, p.syntax("unterminated string")
}

func (p *jsonScanner) hex4() (rune, bool) {
	if len(p.b)-p.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range p.b[p.i : p.i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	p.i += 4
	return r, true
}

// skipNested skips an object or array, minding strings, and checks that
// its brackets balance.
func (p *jsonScanner) skipNested() error {
	var stack []byte
	for p.i < len(p.b) {
		switch c := p.b[p.i]; c {
		case '{', '[':
			stack = append(stack, c)
		case '}', ']':
			open := byte('{')
			if c == ']' {
				open = '['
			}
			if len(stack) == 0 || stack[len(stack)-1] != open {
				return p.syntax("unbalanced brackets")
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				p.i++
				return nil
			}
		case '"':
			var dummy []byte
			if _, err := p.str(&dummy); err != nil {
				return err
			}
			continue
		}
		p.i++
	}
	return p.syntax("unterminated object or array")
}

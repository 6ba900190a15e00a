package decode

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/types"
)

// Schema is how records become rows of cols: the first `decoded` columns
// come from the record (JSON keys, CSV fields in order), the others are
// set by the caller (a connector's metadata columns). It is immutable and
// safe for concurrent use.
type Schema struct {
	cols    []types.Column
	decoded int
	arrow   *arrow.Schema
	convs   []conv
	byName  map[string]int // JSON key -> column
	byFold  map[string]int // ASCII-lower-cased JSON key -> column
}

// NewSchema returns the Schema of cols whose first decoded columns are
// read from records (decoded <= len(cols)).
func NewSchema(cols []types.Column, decoded int) *Schema {
	s := &Schema{cols: cols, decoded: decoded, arrow: types.ArrowSchema(cols),
		convs: make([]conv, len(cols)), byName: make(map[string]int, decoded), byFold: make(map[string]int, decoded)}
	for i, c := range cols {
		s.convs[i] = newConv(c.Type)
		if i >= decoded {
			continue
		}
		if _, dup := s.byName[c.Name]; !dup {
			s.byName[c.Name] = i
		}
		if _, dup := s.byFold[foldASCII(c.Name)]; !dup {
			s.byFold[foldASCII(c.Name)] = i
		}
	}
	return s
}

// Arrow is the record batches' schema.
func (s *Schema) Arrow() *arrow.Schema { return s.arrow }

// Columns are the columns (the caller must not modify them).
func (s *Schema) Columns() []types.Column { return s.cols }

// Row is one record's converted fields, not yet appended to a Batch. It is
// owned by one goroutine.
type Row struct {
	s       *Schema
	slots   []slot
	scratch []byte // unescaped fields of the current record
	order   []int  // JSON: the column the k-th key of the last object named (-1: none)
}

// NewRow returns a row of s, all NULL.
func (s *Schema) NewRow() *Row {
	r := &Row{s: s, slots: make([]slot, len(s.cols))}
	for i := range r.slots {
		r.slots[i].null = true
	}
	return r
}

// SetNull makes column i NULL.
func (r *Row) SetNull(i int) { r.slots[i].null = true }

// SetInt sets column i, which must be int2, int4 or int8 (a value out of
// the column's range is truncated: the caller checks).
func (r *Row) SetInt(i int, v int64) {
	if r.s.convs[i].kind != convInt {
		r.SetValue(i, v)
		return
	}
	r.slots[i] = slot{i: v}
}

// SetValue sets column i to v, a types.Value of the column's type (Batch.Add
// reports one the column cannot take). For text columns v may be a string.
func (r *Row) SetValue(i int, v types.Value) {
	c := &r.s.convs[i]
	switch c.kind {
	case convInt:
		if x, ok := v.(int64); ok {
			r.slots[i] = slot{i: x}
			return
		}
	case convFloat:
		if x, ok := v.(float64); ok {
			r.slots[i] = slot{f: x}
			return
		}
	case convTimestamp:
		if x, ok := v.(types.TimestampValue); ok {
			r.slots[i] = slot{i: int64(x)}
			return
		}
	case convText:
		if x, ok := v.(string); ok {
			r.slots[i] = slot{b: []byte(x)}
			return
		}
	}
	r.slots[i] = slot{v: v, generic: true}
}

// foldASCII lower-cases ASCII letters.
func foldASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// Decoded is the number of columns read from records (a prefix).
func (s *Schema) Decoded() int { return s.decoded }

// Lookup returns the decoded column a record field named name fills
// (exactly, else ASCII case-folded, as JSON keys), or -1.
func (s *Schema) Lookup(name string) int {
	if i, ok := s.byName[name]; ok {
		return i
	}
	if i, ok := s.byFold[foldASCII(name)]; ok {
		return i
	}
	return -1
}

// Clear makes every decoded column NULL: the start of a record read field
// by field (Avro).
func (r *Row) Clear() {
	for i := range r.s.decoded {
		r.slots[i].null = true
	}
}

// SetFloat sets column i to f: a float column directly, another column
// as the value float64(f) (SetValue).
func (r *Row) SetFloat(i int, f float64) {
	if r.s.convs[i].kind != convFloat {
		r.SetValue(i, f)
		return
	}
	r.slots[i] = slot{f: f}
}

// SetMicros sets column i, a timestamp or timestamptz, to v microseconds
// since 1970 (SetValue for another column).
func (r *Row) SetMicros(i int, v int64) {
	if r.s.convs[i].kind != convTimestamp {
		r.SetValue(i, types.TimestampValue(v))
		return
	}
	r.slots[i] = slot{i: v}
}

// SetText sets column i from text input f, as a JSON string or CSV field
// would (PostgreSQL's text input of the column's type; a json or jsonb
// column takes f as JSON text). The row may alias f until it is added to
// a batch.
func (r *Row) SetText(i int, f []byte) error {
	return r.s.convs[i].set(&r.slots[i], f)
}

package decode

import (
	"bytes"
	"math"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// convKind is how a column's text becomes a value: fast paths for integers
// and unbounded text, PostgreSQL's text input (types.ParseText) otherwise.
type convKind uint8

const (
	convGeneric convKind = iota
	convInt
	convFloat
	convText
	convTimestamp // timestamp, timestamptz: s.i holds the µs
)

// conv is one column's conversion (part of the immutable Schema).
type conv struct {
	kind convKind
	t    types.T
	bits int // convInt: 16, 32 or 64; convFloat: 32 or 64
	// json: the column takes a JSON value's text as is (json, jsonb).
	json bool
}

func newConv(t types.T) conv {
	c := conv{t: t, json: t.Kind == types.JSON || t.Kind == types.JSONB}
	switch t.Kind {
	case types.Int2:
		c.kind, c.bits = convInt, 16
	case types.Int4:
		c.kind, c.bits = convInt, 32
	case types.Int8:
		c.kind, c.bits = convInt, 64
	case types.Float4:
		c.kind, c.bits = convFloat, 32
	case types.Float8:
		c.kind, c.bits = convFloat, 64
	case types.Text:
		c.kind = convText
	case types.Timestamp, types.TimestampTZ:
		c.kind = convTimestamp
	case types.Varchar, types.Bpchar:
		if t.Typmod < 5 { // no length limit, no padding
			c.kind = convText
		}
	}
	return c
}

// slot holds one field of the row being read, converted but not yet
// appended, so that a row failing in a later column leaves no trace.
type slot struct {
	null bool
	i    int64       // convInt
	f    float64     // convFloat
	b    []byte      // convText: aliases the input or the row's scratch
	v    types.Value // convGeneric, or generic
	// generic: v holds the value whatever the column's kind (Row.SetValue).
	generic bool
}

// set converts field f (text input; for a json column, JSON text) into s.
func (c *conv) set(s *slot, f []byte) error {
	s.null, s.generic = false, false
	switch c.kind {
	case convInt:
		if v, err := strconv.ParseInt(unsafeString(f), 10, c.bits); err == nil {
			s.i = v
			return nil
		}
		v, err := types.ParseText(string(f), c.t, nil) // PostgreSQL's error, or blanks around the number
		if err != nil {
			return err
		}
		s.i = v.(int64)
		return nil
	case convFloat:
		// Plain decimal syntax that parses to a finite non-zero number reads
		// the same in Go and in PostgreSQL (both round correctly); anything
		// else (blanks, NaN, Infinity, hex, underflow) takes float8in's path.
		if plainDecimal(f) {
			if v, err := strconv.ParseFloat(unsafeString(f), c.bits); err == nil && v != 0 && !math.IsInf(v, 0) {
				s.f = v
				return nil
			}
		}
		v, err := types.ParseText(string(f), c.t, nil)
		if err != nil {
			return err
		}
		s.f = v.(float64)
		return nil
	case convTimestamp:
		v, err := types.ParseTimestampText(unsafeString(f), c.t.Kind == types.TimestampTZ, c.t.Typmod)
		if err != nil {
			x, err := types.ParseText(string(f), c.t, nil) // the error, made from a copy
			if err != nil {
				return err
			}
			v = x.(types.TimestampValue)
		}
		s.i = int64(v)
		return nil
	case convText:
		if bytes.IndexByte(f, 0) < 0 && utf8.Valid(f) {
			s.b = f
			return nil
		}
		_, err := types.ParseText(string(f), c.t, nil)
		if err == nil { // cannot happen: ParseText refuses what we refused
			err = pgerr.Internal("decode: text input accepted invalid UTF-8")
		}
		return err
	}
	v, err := types.ParseText(string(f), c.t, nil)
	if err != nil {
		return err
	}
	if a, ok := v.([]types.Value); ok { // storage keeps one dimension (AppendValue)
		for _, e := range a {
			if _, nested := e.([]types.Value); nested {
				return pgerr.Unsupported("multidimensional arrays are not supported")
			}
		}
	}
	s.v = v
	return nil
}

// unsafeString views f as a string without copying, for parsers that do
// not keep their input (a strconv error does, so it is dropped; errors are
// made again from a copy).
func unsafeString(f []byte) string {
	if len(f) == 0 {
		return ""
	}
	return unsafe.String(&f[0], len(f))
}

// plainDecimal reports whether f is made of digits, signs, '.', 'e' and 'E'.
func plainDecimal(f []byte) bool {
	for _, c := range f {
		if !(c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E') {
			return false
		}
	}
	return len(f) > 0
}

// Batch accumulates rows into Arrow builders. It is owned by one
// goroutine.
type Batch struct {
	schema   *arrow.Schema
	convs    []conv
	builders []array.Builder
	rows     int
}

// NewBatch returns an empty batch of s's columns.
func (s *Schema) NewBatch() *Batch {
	b := &Batch{schema: s.arrow, convs: s.convs, builders: make([]array.Builder, len(s.cols))}
	for i, c := range s.cols {
		b.builders[i] = types.NewBuilder(memory.DefaultAllocator, c.Type)
	}
	return b
}

// Len is the number of rows added since the last Take.
func (b *Batch) Len() int { return b.rows }

// Add appends r's converted row (r must be of the batch's Schema). It
// fails only for a generic value the column's builder refuses.
func (b *Batch) Add(r *Row) error {
	row := r.slots
	for i := range row {
		s, bl := &row[i], b.builders[i]
		if s.null {
			bl.AppendNull()
			continue
		}
		kind := b.convs[i].kind
		if s.generic {
			kind = convGeneric
		}
		switch kind {
		case convInt:
			switch x := bl.(type) {
			case *array.Int16Builder:
				x.Append(int16(s.i))
			case *array.Int32Builder:
				x.Append(int32(s.i))
			case *array.Int64Builder:
				x.Append(s.i)
			}
		case convFloat:
			if x, ok := bl.(*array.Float32Builder); ok {
				x.Append(float32(s.f))
			} else {
				bl.(*array.Float64Builder).Append(s.f)
			}
		case convText:
			bl.(*array.StringBuilder).BinaryBuilder.Append(s.b)
		case convTimestamp:
			bl.(*array.TimestampBuilder).Append(arrow.Timestamp(s.i))
		default:
			if err := types.AppendValue(bl, s.v, b.convs[i].t); err != nil {
				return err
			}
		}
	}
	b.rows++
	return nil
}

// Take returns the rows so far as a record batch (nil if none), owned by
// the caller, and starts a new one.
func (b *Batch) Take() arrow.RecordBatch {
	if b.rows == 0 {
		return nil
	}
	cols := make([]arrow.Array, len(b.builders))
	for i, bl := range b.builders {
		cols[i] = bl.NewArray()
		// Size the next batch like this one: no regrowth when reading
		// fast, little waste when following a trickle.
		bl.Reserve(b.rows)
		if sb, ok := bl.(*array.StringBuilder); ok {
			sb.ReserveData(len(cols[i].(*array.String).ValueBytes()))
		}
	}
	rec := array.NewRecordBatch(b.schema, cols, int64(b.rows))
	for _, c := range cols {
		c.Release()
	}
	b.rows = 0
	return rec
}

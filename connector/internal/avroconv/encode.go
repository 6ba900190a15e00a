package avroconv

import (
	"math/big"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/cockroachdb/apd/v3"
	"github.com/hamba/avro/v2"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Writer writes rows of a fixed set of columns as Avro records of the
// schema RecordSchema derives from them. It is immutable; Append may be
// called from several goroutines with their own dst.
type Writer struct {
	schema *avro.RecordSchema
	cols   []int // indexes into the batch's columns, in field order
	vals   []valueWriter
}

// valueWriter appends the (non-NULL) value at row i of a.
type valueWriter func(dst []byte, a arrow.Array, i int) []byte

// RecordName makes an Avro name of s: letters, digits and _, not starting
// with a digit.
func RecordName(s string) string {
	var b strings.Builder
	for i, c := range s {
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= '0' && c <= '9' && i > 0:
			b.WriteRune(c)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}

// NewWriter derives the record schema (name, namespace "streamsql") of
// cols[idx...] (idx nil: every column): every field a union [null, T]
// with default null, T by the column's type (docs/connectors.md). Field
// names that are not Avro names are a 42602 error.
func NewWriter(name string, cols []types.Column, idx []int) (*Writer, error) {
	if idx == nil {
		for i := range cols {
			idx = append(idx, i)
		}
	}
	w := &Writer{cols: idx}
	var fields []*avro.Field
	for _, i := range idx {
		c := cols[i]
		t, vw := fieldType(c.Type)
		u, err := avro.NewUnionSchema([]avro.Schema{avro.NewNullSchema(), t})
		if err != nil {
			return nil, pgerr.Internal("avro: %v", err)
		}
		f, err := avro.NewField(c.Name, u, avro.WithDefault(nil))
		if err != nil {
			return nil, pgerr.New(pgerr.InvalidObjectDefinition, "column %q cannot be an Avro field: %v", c.Name, err).
				WithHint("Avro field names are letters, digits and _, not starting with a digit: rename the column with AS.")
		}
		fields = append(fields, f)
		w.vals = append(w.vals, vw)
	}
	rec, err := avro.NewRecordSchema(RecordName(name), "streamsql", fields)
	if err != nil {
		return nil, pgerr.New(pgerr.InvalidObjectDefinition, "the Avro record schema of %q: %v", name, err)
	}
	w.schema = rec
	return w, nil
}

// Schema is the record schema written.
func (w *Writer) Schema() *avro.RecordSchema { return w.schema }

// Append appends row i of cols (a batch's columns) as an Avro record body.
func (w *Writer) Append(dst []byte, cols []arrow.Array, i int) []byte {
	for k, c := range w.cols {
		a := cols[c]
		if a.IsNull(i) {
			dst = append(dst, 0) // union branch 0: null
			continue
		}
		dst = append(dst, 2) // union branch 1 (zig-zag)
		dst = w.vals[k](dst, a, i)
	}
	return dst
}

func logicalPrim(t avro.Type, l avro.LogicalType) avro.Schema {
	return avro.NewPrimitiveSchema(t, avro.NewPrimitiveLogicalSchema(l))
}

// fieldType is the Avro type of a column type and its value writer.
func fieldType(t types.T) (avro.Schema, valueWriter) {
	switch t.Kind {
	case types.Bool:
		return avro.NewPrimitiveSchema(avro.Boolean, nil), func(dst []byte, a arrow.Array, i int) []byte {
			if a.(*array.Boolean).Value(i) {
				return append(dst, 1)
			}
			return append(dst, 0)
		}
	case types.Int2:
		return avro.NewPrimitiveSchema(avro.Int, nil), func(dst []byte, a arrow.Array, i int) []byte {
			return appendLong(dst, int64(a.(*array.Int16).Value(i)))
		}
	case types.Int4:
		return avro.NewPrimitiveSchema(avro.Int, nil), func(dst []byte, a arrow.Array, i int) []byte {
			return appendLong(dst, int64(a.(*array.Int32).Value(i)))
		}
	case types.Int8:
		return avro.NewPrimitiveSchema(avro.Long, nil), func(dst []byte, a arrow.Array, i int) []byte {
			return appendLong(dst, a.(*array.Int64).Value(i))
		}
	case types.Oid, types.RegClass, types.RegType, types.RegProc:
		return avro.NewPrimitiveSchema(avro.Long, nil), func(dst []byte, a arrow.Array, i int) []byte {
			return appendLong(dst, int64(a.(*array.Uint32).Value(i)))
		}
	case types.Float4:
		return avro.NewPrimitiveSchema(avro.Float, nil), func(dst []byte, a arrow.Array, i int) []byte {
			return appendFloat(dst, a.(*array.Float32).Value(i))
		}
	case types.Float8:
		return avro.NewPrimitiveSchema(avro.Double, nil), func(dst []byte, a arrow.Array, i int) []byte {
			return appendDouble(dst, a.(*array.Float64).Value(i))
		}
	case types.Numeric:
		if t.Typmod >= 4 {
			prec, scale := int((t.Typmod-4)>>16), int((t.Typmod-4)&0xffff)
			return avro.NewPrimitiveSchema(avro.Bytes, avro.NewDecimalLogicalSchema(prec, scale)), decimalWriter(scale)
		}
		// Unconstrained numeric has no fixed scale (and may be NaN): its
		// text, which reads back exactly.
		return avro.NewPrimitiveSchema(avro.String, nil), stringWriter
	case types.Bytea:
		return avro.NewPrimitiveSchema(avro.Bytes, nil), func(dst []byte, a arrow.Array, i int) []byte {
			return appendBytes(dst, a.(*array.Binary).Value(i))
		}
	case types.Date:
		return logicalPrim(avro.Int, avro.Date), func(dst []byte, a arrow.Array, i int) []byte {
			return appendLong(dst, int64(a.(*array.Date32).Value(i)))
		}
	case types.Time:
		return logicalPrim(avro.Long, avro.TimeMicros), func(dst []byte, a arrow.Array, i int) []byte {
			return appendLong(dst, int64(a.(*array.Time64).Value(i)))
		}
	case types.Timestamp, types.TimestampTZ:
		l := avro.TimestampMicros
		if t.Kind == types.Timestamp {
			l = avro.LocalTimestampMicros
		}
		return logicalPrim(avro.Long, l), func(dst []byte, a arrow.Array, i int) []byte {
			return appendLong(dst, int64(a.(*array.Timestamp).Value(i)))
		}
	case types.Text, types.Varchar, types.Bpchar, types.Name, types.Char, types.JSON, types.JSONB:
		return avro.NewPrimitiveSchema(avro.String, nil), stringWriter
	case types.UUID: // Avro's uuid: a string of the canonical text
		return logicalPrim(avro.String, avro.UUID), stringWriter
	}
	// interval, arrays, anything else: PostgreSQL's text output, which
	// the column's text input reads back.
	return avro.NewPrimitiveSchema(avro.String, nil), func(dst []byte, a arrow.Array, i int) []byte {
		start := len(dst)
		dst = append(dst, make([]byte, 10)...) // room for the length
		body := types.AppendText(dst, types.ValueAt(a, i, t), t, nil)
		n := len(body) - start - 10
		lenBytes := appendLong(nil, int64(n))
		copy(body[start:], lenBytes)
		return append(body[:start+len(lenBytes)], body[start+10:]...)
	}
}

func stringWriter(dst []byte, a arrow.Array, i int) []byte {
	s := a.(*array.String).Value(i)
	dst = appendLong(dst, int64(len(s)))
	return append(dst, s...)
}

// decimalWriter writes a numeric(p, s) (stored as its text) as Avro's
// decimal: the unscaled value in big-endian two's complement, shortest.
func decimalWriter(scale int) valueWriter {
	return func(dst []byte, a arrow.Array, i int) []byte {
		d, _, err := apd.NewFromString(a.(*array.String).Value(i))
		if err != nil || d.Form != apd.Finite {
			// NaN (numeric(p,s) holds no infinity): no decimal can say it;
			// the typmod check makes this unreachable for stored values
			// other than NaN, written as zero bytes (reads back as 0).
			return appendBytes(dst, nil)
		}
		var q apd.Decimal
		if _, err := apd.BaseContext.WithPrecision(1000).Quantize(&q, d, int32(-scale)); err != nil {
			return appendBytes(dst, nil)
		}
		u := q.Coeff.MathBigInt()
		if q.Negative {
			u.Neg(u)
		}
		return appendBytes(dst, twosComplement(u))
	}
}

// twosComplement is v in big-endian two's complement, shortest.
func twosComplement(v *big.Int) []byte {
	if v.Sign() >= 0 {
		b := v.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// -v - 1 in n bytes, inverted.
	n := (v.BitLen() + 8) / 8
	m := new(big.Int).Lsh(big.NewInt(1), uint(8*n))
	m.Add(m, v)
	b := m.Bytes()
	for len(b) < n {
		b = append([]byte{0}, b...)
	}
	// Drop redundant leading 0xff.
	for len(b) > 1 && b[0] == 0xff && b[1]&0x80 != 0 {
		b = b[1:]
	}
	return b
}

package avroconv

import (
	"math"
	"math/big"
	"strconv"

	"github.com/cockroachdb/apd/v3"
	"github.com/hamba/avro/v2"
	"github.com/streamsql/streamsql/connector/internal/decode"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Plan is a writer's record schema resolved against a decode.Schema's
// columns: each writer field is read into the column of its name (exactly,
// else case-folded) or skipped. Immutable and safe for concurrent use.
type Plan struct {
	fields []fieldOp
}

// op reads one value of the writer's type into column col of row.
type op func(d *in, row *decode.Row, col int) error

type fieldOp struct {
	col  int // -1: skipped
	read op
}

// Compile resolves writer, a record schema, against s's decoded columns.
// A field whose Avro type no column type can take is a 42804 error naming
// the field and the column.
func Compile(writer avro.Schema, s *decode.Schema) (*Plan, error) {
	rec, ok := deref(writer).(*avro.RecordSchema)
	if !ok {
		return nil, pgerr.New(pgerr.DatatypeMismatch, "the Avro writer schema is a %s, not a record", writer.Type()).
			WithHint("ENCODE AVRO reads records whose fields name the columns.")
	}
	cols := s.Columns()
	p := &Plan{}
	for _, f := range rec.Fields() {
		col := s.Lookup(f.Name())
		if col < 0 {
			p.fields = append(p.fields, fieldOp{col: -1, read: skipper(f.Type())})
			continue
		}
		read, err := reader(f.Type(), cols[col].Type)
		if err != nil {
			return nil, pgerr.New(pgerr.DatatypeMismatch, "Avro field %q (%s) cannot be read into column %q of type %s", f.Name(), typeName(f.Type()), cols[col].Name, cols[col].Type).
				WithDetail("%v", err)
		}
		p.fields = append(p.fields, fieldOp{col: col, read: read})
	}
	return p, nil
}

// Cursor is Decode's reading position, kept by the caller so that
// decoding allocates nothing; owned by one goroutine.
type Cursor struct{ d in }

// Decode reads body, an Avro binary record of the plan's writer schema,
// into row's decoded columns (others NULL), with cur (nil: a new one). On
// error col is the column at fault, or -1. row may alias body until it is
// added to a batch.
func (p *Plan) Decode(body []byte, row *decode.Row, cur *Cursor) (col int, err error) {
	row.Clear()
	if cur == nil {
		cur = &Cursor{}
	}
	cur.d = in{b: body}
	d := &cur.d
	for _, f := range p.fields {
		if err := f.read(d, row, f.col); err != nil {
			return f.col, err
		}
	}
	if d.i != len(d.b) {
		return -1, pgerr.New(pgerr.InvalidTextRepresentation, "%d bytes after the Avro record", len(d.b)-d.i)
	}
	return -1, nil
}

func deref(s avro.Schema) avro.Schema {
	if r, ok := s.(*avro.RefSchema); ok {
		return r.Schema()
	}
	return s
}

func typeName(s avro.Schema) string {
	s = deref(s)
	if l := logical(s); l != "" {
		return string(s.Type()) + " " + l
	}
	return string(s.Type())
}

func logical(s avro.Schema) string {
	if ls, ok := s.(avro.LogicalTypeSchema); ok && ls.Logical() != nil {
		return string(ls.Logical().Type())
	}
	return ""
}

// isText reports whether a column takes text as is (text, varchar, char,
// json, jsonb): any Avro value can be written there as text.
func isText(t types.T) bool {
	switch t.Kind {
	case types.Text, types.Varchar, types.Bpchar, types.Name:
		return true
	}
	return false
}

type mismatch string

func (m mismatch) Error() string { return string(m) }

// reader compiles the reading of writer type ws into a column of type t.
func reader(ws avro.Schema, t types.T) (op, error) {
	ws = deref(ws)
	switch s := ws.(type) {
	case *avro.NullSchema:
		return func(*in, *decode.Row, int) error { return nil }, nil // Clear made it NULL
	case *avro.UnionSchema:
		branches := make([]op, len(s.Types()))
		for i, b := range s.Types() {
			r, err := reader(b, t)
			if err != nil {
				return nil, err
			}
			branches[i] = r
		}
		return func(d *in, row *decode.Row, col int) error {
			k, err := d.long()
			if err != nil {
				return err
			}
			if k < 0 || k >= int64(len(branches)) {
				return pgerr.New(pgerr.InvalidTextRepresentation, "Avro union branch %d out of range", k)
			}
			return branches[k](d, row, col)
		}, nil
	case *avro.EnumSchema:
		syms := s.Symbols()
		if !isText(t) {
			return nil, mismatch("an enum reads into text columns")
		}
		return func(d *in, row *decode.Row, col int) error {
			k, err := d.long()
			if err != nil {
				return err
			}
			if k < 0 || k >= int64(len(syms)) {
				return pgerr.New(pgerr.InvalidTextRepresentation, "Avro enum index %d out of range", k)
			}
			return row.SetText(col, []byte(syms[k]))
		}, nil
	case *avro.FixedSchema:
		n := s.Size()
		if dl, ok := s.Logical().(*avro.DecimalLogicalSchema); ok {
			return decimalReader(func(d *in) ([]byte, error) { return d.fixed(n) }, dl.Scale(), t)
		}
		if t.Kind != types.Bytea {
			return nil, mismatch("a fixed reads into bytea columns")
		}
		return func(d *in, row *decode.Row, col int) error {
			b, err := d.fixed(n)
			if err != nil {
				return err
			}
			row.SetValue(col, b)
			return nil
		}, nil
	case *avro.PrimitiveSchema:
		return primitiveReader(s, t)
	}
	return nil, mismatch("nested " + string(ws.Type()) + " fields are not supported")
}

func primitiveReader(s *avro.PrimitiveSchema, t types.T) (op, error) {
	lt := ""
	if s.Logical() != nil {
		lt = string(s.Logical().Type())
	}
	switch s.Type() {
	case avro.Boolean:
		if t.Kind != types.Bool && !isText(t) {
			return nil, mismatch("a boolean reads into boolean or text columns")
		}
		return func(d *in, row *decode.Row, col int) error {
			b, err := d.fixed(1)
			if err != nil {
				return err
			}
			if b[0] > 1 {
				return pgerr.New(pgerr.InvalidTextRepresentation, "Avro boolean byte 0x%02x is neither 0 nor 1", b[0])
			}
			if t.Kind == types.Bool {
				row.SetValue(col, b[0] == 1)
				return nil
			}
			return row.SetText(col, []byte(strconv.FormatBool(b[0] == 1)))
		}, nil
	case avro.Int, avro.Long:
		return integerReader(lt, t)
	case avro.Float, avro.Double:
		single := s.Type() == avro.Float
		switch t.Kind {
		case types.Float4, types.Float8, types.Numeric:
		default:
			if !isText(t) {
				return nil, mismatch("a float or double reads into real, double precision, numeric or text columns")
			}
		}
		return func(d *in, row *decode.Row, col int) error {
			var f float64
			if single {
				x, err := d.float()
				if err != nil {
					return err
				}
				f = float64(x)
			} else {
				x, err := d.double()
				if err != nil {
					return err
				}
				f = x
			}
			switch t.Kind {
			case types.Float4, types.Float8:
				row.SetFloat(col, f)
				return nil
			}
			bits := 64
			if single {
				bits = 32
			}
			return row.SetText(col, strconv.AppendFloat(nil, f, 'g', -1, bits))
		}, nil
	case avro.Bytes:
		if dl, ok := s.Logical().(*avro.DecimalLogicalSchema); ok {
			return decimalReader((*in).bytes, dl.Scale(), t)
		}
		if t.Kind != types.Bytea {
			return nil, mismatch("bytes read into bytea columns")
		}
		return func(d *in, row *decode.Row, col int) error {
			b, err := d.bytes()
			if err != nil {
				return err
			}
			row.SetValue(col, b)
			return nil
		}, nil
	case avro.String:
		// Text input of the column's type: text as is, uuid into text, a
		// numeric, interval or jsonb written as a string.
		if t.Kind == types.Bytea {
			return nil, mismatch("a string reads into text-input columns, not bytea")
		}
		return func(d *in, row *decode.Row, col int) error {
			b, err := d.bytes()
			if err != nil {
				return err
			}
			return row.SetText(col, b)
		}, nil
	}
	return nil, mismatch("unsupported Avro type " + string(s.Type()))
}

// integerReader reads an int or long with logical type lt.
func integerReader(lt string, t types.T) (op, error) {
	var conv func(v int64, row *decode.Row, col int) error
	switch lt {
	case "":
		switch t.Kind {
		case types.Int2, types.Int4, types.Int8:
			lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
			switch t.Kind {
			case types.Int2:
				lo, hi = math.MinInt16, math.MaxInt16
			case types.Int4:
				lo, hi = math.MinInt32, math.MaxInt32
			}
			conv = func(v int64, row *decode.Row, col int) error {
				if v < lo || v > hi {
					return pgerr.New(pgerr.NumericValueOutOfRange, "value %d is out of range for type %s", v, t)
				}
				row.SetInt(col, v)
				return nil
			}
		case types.Float4, types.Float8:
			conv = func(v int64, row *decode.Row, col int) error { row.SetFloat(col, float64(v)); return nil }
		case types.Numeric:
			conv = func(v int64, row *decode.Row, col int) error { return row.SetText(col, strconv.AppendInt(nil, v, 10)) }
		default:
			if !isText(t) {
				return nil, mismatch("an int or long reads into integer, floating point, numeric or text columns")
			}
			conv = func(v int64, row *decode.Row, col int) error { return row.SetText(col, strconv.AppendInt(nil, v, 10)) }
		}
	case string(avro.Date):
		conv = valueConv(t, types.TDate, func(v int64) types.Value { return types.DateValue(v) })
	case string(avro.TimeMillis), string(avro.TimeMicros):
		scale := int64(1)
		if lt == string(avro.TimeMillis) {
			scale = 1000
		}
		conv = valueConv(t, types.TTime, func(v int64) types.Value { return types.TimeValue(v * scale) })
	case string(avro.TimestampMillis), string(avro.TimestampMicros), string(avro.LocalTimestampMillis), string(avro.LocalTimestampMicros), "timestamp-nanos", "local-timestamp-nanos":
		var mul, div int64 = 1, 1
		switch lt {
		case string(avro.TimestampMillis), string(avro.LocalTimestampMillis):
			mul = 1000
		case "timestamp-nanos", "local-timestamp-nanos":
			div = 1000
		}
		nat := types.TTimestampTZ
		if lt[0] == 'l' {
			nat = types.TTimestamp
		}
		if t.Kind == types.Timestamp || t.Kind == types.TimestampTZ {
			conv = func(v int64, row *decode.Row, col int) error {
				us := v / div
				if v%div < 0 {
					us-- // floor
				}
				if mul > 1 && (us > math.MaxInt64/mul || us < math.MinInt64/mul) {
					return pgerr.New(pgerr.DatetimeFieldOverflow, "timestamp out of range")
				}
				row.SetMicros(col, us*mul)
				return nil
			}
		} else {
			conv = valueConv(t, nat, func(v int64) types.Value { return types.TimestampValue(v / div * mul) })
		}
	default:
		return integerReader("", t) // unknown logical types read as their underlying type
	}
	if conv == nil {
		return nil, mismatch("no conversion")
	}
	return func(d *in, row *decode.Row, col int) error {
		v, err := d.long()
		if err != nil {
			return err
		}
		return conv(v, row, col)
	}, nil
}

// valueConv sets a value of type nat into a column of nat's kind, or its
// text output into a text column; nil for another column.
func valueConv(t, nat types.T, mk func(int64) types.Value) func(int64, *decode.Row, int) error {
	switch {
	case t.Kind == nat.Kind:
		return func(v int64, row *decode.Row, col int) error { row.SetValue(col, mk(v)); return nil }
	case isText(t) || (nat.Kind == types.Timestamp || nat.Kind == types.TimestampTZ) && (t.Kind == types.Timestamp || t.Kind == types.TimestampTZ):
		return func(v int64, row *decode.Row, col int) error {
			return row.SetText(col, types.AppendText(nil, mk(v), nat, nil))
		}
	}
	return nil
}

// decimalReader reads a decimal (big-endian two's-complement unscaled
// value) into a numeric, floating point or text column.
func decimalReader(raw func(*in) ([]byte, error), scale int, t types.T) (op, error) {
	switch t.Kind {
	case types.Numeric, types.Float4, types.Float8:
	default:
		if !isText(t) {
			return nil, mismatch("a decimal reads into numeric, floating point or text columns")
		}
	}
	return func(d *in, row *decode.Row, col int) error {
		b, err := raw(d)
		if err != nil {
			return err
		}
		var u big.Int
		u.SetBytes(b)
		if len(b) > 0 && b[0]&0x80 != 0 { // negative: subtract 2^(8n)
			var m big.Int
			m.Lsh(big.NewInt(1), uint(8*len(b)))
			u.Sub(&u, &m)
		}
		var x apd.Decimal
		x.Coeff.SetMathBigInt(&u)
		if x.Coeff.Sign() < 0 {
			x.Coeff.Neg(&x.Coeff)
			x.Negative = true
		}
		x.Exponent = int32(-scale)
		return row.SetText(col, []byte(x.Text('f')))
	}, nil
}

// skipper compiles skipping a value of writer type ws.
func skipper(ws avro.Schema) op {
	ws = deref(ws)
	switch s := ws.(type) {
	case *avro.NullSchema:
		return func(*in, *decode.Row, int) error { return nil }
	case *avro.UnionSchema:
		branches := make([]op, len(s.Types()))
		for i, b := range s.Types() {
			branches[i] = skipper(b)
		}
		return func(d *in, row *decode.Row, col int) error {
			k, err := d.long()
			if err != nil {
				return err
			}
			if k < 0 || k >= int64(len(branches)) {
				return pgerr.New(pgerr.InvalidTextRepresentation, "Avro union branch %d out of range", k)
			}
			return branches[k](d, row, col)
		}
	case *avro.RecordSchema:
		fs := make([]op, len(s.Fields()))
		for i, f := range s.Fields() {
			fs[i] = skipper(f.Type())
		}
		return func(d *in, row *decode.Row, col int) error {
			for _, f := range fs {
				if err := f(d, row, col); err != nil {
					return err
				}
			}
			return nil
		}
	case *avro.ArraySchema:
		return blocks(skipper(s.Items()), nil)
	case *avro.MapSchema:
		return blocks(skipper(s.Values()), skipBytes)
	case *avro.FixedSchema:
		n := s.Size()
		return func(d *in, _ *decode.Row, _ int) error { _, err := d.fixed(n); return err }
	case *avro.EnumSchema:
		return skipLong
	case *avro.PrimitiveSchema:
		switch s.Type() {
		case avro.Boolean:
			return func(d *in, _ *decode.Row, _ int) error { _, err := d.fixed(1); return err }
		case avro.Int, avro.Long:
			return skipLong
		case avro.Float:
			return func(d *in, _ *decode.Row, _ int) error { _, err := d.fixed(4); return err }
		case avro.Double:
			return func(d *in, _ *decode.Row, _ int) error { _, err := d.fixed(8); return err }
		case avro.Bytes, avro.String:
			return skipBytes
		}
	}
	return func(*in, *decode.Row, int) error {
		return pgerr.New(pgerr.InvalidTextRepresentation, "cannot skip Avro type %s", ws.Type())
	}
}

func skipLong(d *in, _ *decode.Row, _ int) error  { _, err := d.long(); return err }
func skipBytes(d *in, _ *decode.Row, _ int) error { _, err := d.bytes(); return err }

// blocks skips an array or map: blocks of count items (a negative count
// is followed by the block's size in bytes), ending with count 0.
func blocks(item, key op) op {
	return func(d *in, row *decode.Row, col int) error {
		for {
			n, err := d.long()
			if err != nil {
				return err
			}
			if n == 0 {
				return nil
			}
			if n < 0 {
				size, err := d.long()
				if err != nil {
					return err
				}
				if _, err := d.fixed(int(size)); err != nil {
					return err
				}
				continue
			}
			for ; n > 0; n-- {
				if key != nil {
					if err := key(d, row, col); err != nil {
						return err
					}
				}
				if err := item(d, row, col); err != nil {
					return err
				}
			}
		}
	}
}

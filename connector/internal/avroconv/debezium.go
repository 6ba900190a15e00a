package avroconv

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/hamba/avro/v2"
	"github.com/streamsql/streamsql/connector/internal/decode"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Debezium's Avro envelope (FORMAT DEBEZIUM ENCODE AVRO): a record with
// fields "before" and "after" (each a union of null and the row record),
// "op" (a string: c, r, u, d, t) and others (source, ts_ms, transaction),
// which are skipped.

// EnvelopePlan is a Debezium envelope schema compiled against a
// relation's columns. Immutable.
type EnvelopePlan struct {
	fields []envField
}

type envField struct {
	kind     byte // 's' skip, 'b' before, 'a' after, 'o' op
	skip     op
	branches []*Plan // before/after: per union branch, nil for null
	rowSkip  []op    // before/after: per union branch, skipping it
}

// CompileDebezium compiles writer, a Debezium envelope record schema.
// An envelope without "op" or without "before" and "after" is a 42804
// error.
func CompileDebezium(writer avro.Schema, s *decode.Schema) (*EnvelopePlan, error) {
	rec, ok := deref(writer).(*avro.RecordSchema)
	if !ok {
		return nil, pgerr.New(pgerr.DatatypeMismatch, "the Avro writer schema is a %s, not a Debezium envelope record", writer.Type())
	}
	p := &EnvelopePlan{}
	seen := map[byte]bool{}
	for _, f := range rec.Fields() {
		ef := envField{kind: 's', skip: skipper(f.Type())}
		switch f.Name() {
		case "before", "after":
			ef.kind = f.Name()[0]
			branches := []avro.Schema{f.Type()}
			if u, ok := deref(f.Type()).(*avro.UnionSchema); ok {
				branches = u.Types()
			}
			for _, b := range branches {
				ef.rowSkip = append(ef.rowSkip, skipper(b))
				if _, null := deref(b).(*avro.NullSchema); null {
					ef.branches = append(ef.branches, nil)
					continue
				}
				rp, err := Compile(b, s)
				if err != nil {
					return nil, err
				}
				ef.branches = append(ef.branches, rp)
			}
			if _, union := deref(f.Type()).(*avro.UnionSchema); !union {
				ef.rowSkip = nil // not a union: no branch index
			}
		case "op":
			if ps, ok := deref(f.Type()).(*avro.PrimitiveSchema); !ok || ps.Type() != avro.String {
				return nil, pgerr.New(pgerr.DatatypeMismatch, "the Debezium envelope's \"op\" is a %s, not a string", f.Type().Type())
			}
			ef.kind = 'o'
		}
		seen[ef.kind] = true
		p.fields = append(p.fields, ef)
	}
	if !seen['o'] || !seen['a'] || !seen['b'] {
		return nil, pgerr.New(pgerr.DatatypeMismatch, "the Avro writer schema %q is not a Debezium envelope (before, after, op)", rec.FullName())
	}
	return p, nil
}

// Decode reads a Debezium envelope: a create, snapshot read or update
// puts "after" into row; a delete puts "before" (whose key columns name
// the row) and returns delete = true. An event without the row it needs,
// or a truncate, is an error (a bad message).
func (p *EnvelopePlan) Decode(body []byte, row *decode.Row, cur *Cursor) (del bool, col int, err error) {
	if cur == nil {
		cur = &Cursor{}
	}
	cur.d = in{b: body}
	d := &cur.d
	type at struct {
		plan *Plan
		pos  int
	}
	var before, after at
	var opText []byte
	for _, f := range p.fields {
		switch f.kind {
		case 's':
			if err := f.skip(d, nil, -1); err != nil {
				return false, -1, err
			}
		case 'o':
			if opText, err = d.bytes(); err != nil {
				return false, -1, err
			}
		default:
			k := int64(0)
			if f.rowSkip != nil {
				if k, err = d.long(); err != nil {
					return false, -1, err
				}
				if k < 0 || k >= int64(len(f.branches)) {
					return false, -1, pgerr.New(pgerr.InvalidTextRepresentation, "Avro union branch %d out of range", k)
				}
			}
			a := at{plan: f.branches[k], pos: d.i}
			skip := f.skip
			if f.rowSkip != nil {
				skip = f.rowSkip[k]
			}
			if err := skip(d, nil, -1); err != nil {
				return false, -1, err
			}
			if f.kind == 'a' {
				after = a
			} else {
				before = a
			}
		}
	}
	if d.i != len(d.b) {
		return false, -1, pgerr.New(pgerr.InvalidTextRepresentation, "%d bytes after the Avro record", len(d.b)-d.i)
	}
	bad := func(format string, args ...any) error {
		return pgerr.New(pgerr.InvalidTextRepresentation, "not a Debezium change event: "+format, args...)
	}
	var use at
	switch string(opText) {
	case "c", "r", "u":
		if after.plan == nil {
			return false, -1, bad("an %q event without \"after\"", opText)
		}
		use = after
	case "d":
		if before.plan == nil {
			return false, -1, bad("a delete without \"before\" (is the upstream table's replica identity NOTHING?)")
		}
		use, del = before, true
	case "t":
		return false, -1, pgerr.Unsupported("a Debezium truncate event cannot be applied to the table")
	default:
		return false, -1, bad("unknown op %q", opText)
	}
	row.Clear()
	cur.d = in{b: body, i: use.pos}
	for _, f := range use.plan.fields {
		if err := f.read(d, row, f.col); err != nil {
			return false, f.col, err
		}
	}
	return del, -1, nil
}

// NewDebeziumWriter derives Debezium's envelope of cols: a record
// "<name>_envelope" with before and after (["null", row]), op (string)
// and ts_ms (long), row being NewWriter's record.
func NewDebeziumWriter(name string, cols []types.Column) (*Writer, *avro.RecordSchema, error) {
	w, err := NewWriter(name, cols, nil)
	if err != nil {
		return nil, nil, err
	}
	row := w.Schema()
	mk := func(n string, t avro.Schema, def bool) (*avro.Field, error) {
		if def {
			return avro.NewField(n, t, avro.WithDefault(nil))
		}
		return avro.NewField(n, t)
	}
	ub, err := avro.NewUnionSchema([]avro.Schema{avro.NewNullSchema(), row})
	if err != nil {
		return nil, nil, pgerr.Internal("avro: %v", err)
	}
	ua, err := avro.NewUnionSchema([]avro.Schema{avro.NewNullSchema(), avro.NewRefSchema(row)})
	if err != nil {
		return nil, nil, pgerr.Internal("avro: %v", err)
	}
	var fields []*avro.Field
	for _, f := range []struct {
		n   string
		t   avro.Schema
		def bool
	}{{"before", ub, true}, {"after", ua, true}, {"op", avro.NewPrimitiveSchema(avro.String, nil), false},
		{"ts_ms", avro.NewPrimitiveSchema(avro.Long, nil), false}} {
		fl, err := mk(f.n, f.t, f.def)
		if err != nil {
			return nil, nil, pgerr.Internal("avro: %v", err)
		}
		fields = append(fields, fl)
	}
	env, err := avro.NewRecordSchema(RecordName(name)+"_envelope", "streamsql", fields)
	if err != nil {
		return nil, nil, pgerr.Internal("avro: %v", err)
	}
	return w, env, nil
}

// AppendEnvelope appends a Debezium envelope body: before and after are
// rows of cols (-1: null), op one of c, u, d.
func (w *Writer) AppendEnvelope(dst []byte, cols []arrow.Array, before, after int, op byte, tsMs int64) []byte {
	for _, i := range []int{before, after} {
		if i < 0 {
			dst = append(dst, 0)
			continue
		}
		dst = append(dst, 2)
		dst = w.Append(dst, cols, i)
	}
	dst = append(dst, 2, op) // a one-byte string
	return appendLong(dst, tsMs)
}

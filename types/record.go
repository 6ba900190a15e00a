package types

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/pgerr"
)

// Records are PostgreSQL's anonymous row values: ROW(1, 'a'), a whole-row
// reference to a table (SELECT t FROM t), the row-typed path and sequence
// columns of WITH RECURSIVE ... SEARCH/CYCLE. A record's field types ride in
// its T (Rec); the value in Go form is a RowValue with one Value per field
// (nil for NULL), and in Arrow a Struct with one child per field.
//
// Records print as record_out does ((1,abc), a NULL field as nothing, a
// field quoted when it is empty or holds a quote, backslash, parenthesis,
// comma or space), compare field by field with NULL above every value and
// equal to NULL (record_cmp, the btree ordering of composite values), and
// cannot be read from text (PostgreSQL: input of anonymous composite types
// is not implemented). They are values of queries only: no table column is
// of type record.

// RecordType is the field list of a record type. It is immutable once
// built and shared by the Ts that point to it.
type RecordType struct {
	// Names are the field names (f1, f2, ... for ROW(...)); Types their types.
	Names []string
	Types []T
	// OID, ArrayOID, Schema and Name name a composite type of the catalog
	// (CREATE TYPE t AS (...)); zero for an anonymous record.
	OID, ArrayOID uint32
	Schema, Name  string
}

// RowValue is a record's value in Go form: one Value per field.
type RowValue []Value

// RecordOf returns the record type with the given fields; names may be nil
// (f1, f2, ...).
func RecordOf(names []string, ts []T) T {
	if names == nil {
		names = make([]string, len(ts))
		for i := range ts {
			names[i] = "f" + strconv.Itoa(i+1)
		}
	}
	return T{Kind: Record, Typmod: -1, Rec: &RecordType{Names: names, Types: ts}}
}

// Fields returns the record's field types (none for a record of unknown shape).
func (t T) Fields() []T {
	if t.Rec == nil {
		return nil
	}
	return t.Rec.Types
}

func (r *RecordType) equal(o *RecordType, same func(T, T) bool) bool {
	if r == nil || o == nil {
		return r == o
	}
	if r.OID != o.OID {
		return false
	}
	if len(r.Types) != len(o.Types) {
		return false
	}
	for i := range r.Types {
		if !same(r.Types[i], o.Types[i]) {
			return false
		}
	}
	return true
}

func recordArrowType(t T) arrow.DataType {
	fs := make([]arrow.Field, len(t.Fields()))
	for i, ft := range t.Fields() {
		fs[i] = arrow.Field{Name: "f" + strconv.Itoa(i+1), Type: ft.ArrowType(), Nullable: true}
	}
	return arrow.StructOf(fs...)
}

func recordValueAt(a arrow.Array, i int, t T) Value {
	s := a.(*array.Struct)
	out := make(RowValue, len(t.Fields()))
	for j, ft := range t.Fields() {
		out[j] = ValueAt(s.Field(j), i, ft)
	}
	return out
}

func appendRecord(b array.Builder, v Value, t T) error {
	x, ok := v.(RowValue)
	if !ok || len(x) != len(t.Fields()) {
		return fmt.Errorf("types: cannot append %T as %s", v, t)
	}
	sb := b.(*array.StructBuilder)
	sb.Append(true)
	for j, ft := range t.Fields() {
		if err := AppendValue(sb.FieldBuilder(j), x[j], ft); err != nil {
			return err
		}
	}
	return nil
}

// appendRecordText writes record_out's text.
func appendRecordText(dst []byte, v RowValue, t T, opts *FormatOptions) []byte {
	dst = append(dst, '(')
	var scratch []byte
	fs := t.Fields()
	for i, f := range v {
		if i > 0 {
			dst = append(dst, ',')
		}
		if f == nil || i >= len(fs) {
			continue
		}
		scratch = AppendText(scratch[:0], f, fs[i], opts)
		dst = appendRecordField(dst, scratch)
	}
	return append(dst, ')')
}

func appendRecordField(dst, s []byte) []byte {
	quote := len(s) == 0
	for _, c := range s {
		if c == '"' || c == '\\' || c == '(' || c == ')' || c == ',' || isSpace(c) {
			quote = true
			break
		}
	}
	return appendQuoted(dst, s, quote, 0)
}

// CompareRecords orders two records field by field: NULL fields are equal
// to each other and above every value (record_cmp); a shorter record that
// is a prefix sorts first.
func CompareRecords(x, y RowValue, t T, cmpField func(a, b Value, t T) int) int {
	fs := t.Fields()
	return CompareSeq(x, y, func(i int, a, b Value) int {
		if i >= len(fs) {
			return 0
		}
		return cmpField(a, b, fs[i])
	})
}

// CompareSeq orders two sequences of values (array elements, record
// fields) element by element, NULLs equal to each other and above every
// value, then by length; cmp compares the non-NULL elements at i.
func CompareSeq(x, y []Value, cmp func(i int, a, b Value) int) int {
	for i := 0; i < len(x) && i < len(y); i++ {
		switch {
		case x[i] == nil && y[i] == nil:
			continue
		case x[i] == nil:
			return 1
		case y[i] == nil:
			return -1
		}
		if c := cmp(i, x[i], y[i]); c != 0 {
			return c
		}
	}
	return cmpInt(int64(len(x)), int64(len(y)))
}

// appendRecordBinary writes record_send's format: the field count, then
// per field its type OID, its length (-1 for NULL) and its binary value.
func appendRecordBinary(dst []byte, v RowValue, t T) ([]byte, error) {
	be := binary.BigEndian
	fs := t.Fields()
	dst = be.AppendUint32(dst, uint32(len(v)))
	for i, f := range v {
		dst = be.AppendUint32(dst, fs[i].OID())
		if f == nil {
			dst = be.AppendUint32(dst, 0xffffffff)
			continue
		}
		at := len(dst)
		dst = append(dst, 0, 0, 0, 0)
		var err error
		if dst, err = AppendBinary(dst, f, fs[i]); err != nil {
			return dst, err
		}
		be.PutUint32(dst[at:], uint32(len(dst)-at-4))
	}
	return dst, nil
}

func errRecordInput() error {
	return pgerr.New(pgerr.FeatureNotSupported, "input of anonymous composite types is not implemented")
}

package types

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Value input/output and Arrow access. The signatures are the contract with
// the rest of the engine.
// STUBS: bodies are placeholders until the types I/O work lands.

// AppendText appends v's PostgreSQL text output to dst (v non-nil).
func AppendText(dst []byte, v Value, t T, opts *FormatOptions) []byte { return dst }

// FormatText returns v's PostgreSQL text output; NULL is the caller's business.
func FormatText(v Value, t T, opts *FormatOptions) string {
	return string(AppendText(nil, v, t, opts))
}

// ParseText parses PostgreSQL text input for t, applying t's typmod
// (varchar(n) length check 22001, numeric(p,s) rounding and 22003), with
// PostgreSQL's error codes and messages (22P02 invalid input syntax ...).
func ParseText(s string, t T, opts *FormatOptions) (Value, error) { return nil, nil }

// AppendBinary appends v's binary send format to dst.
func AppendBinary(dst []byte, v Value, t T) ([]byte, error) { return dst, nil }

// ParseBinary decodes the binary receive format for t.
func ParseBinary(b []byte, t T) (Value, error) { return nil, nil }

// ValueAt reads row i of a (storage type of t) as a Value; nil when NULL.
func ValueAt(a arrow.Array, i int, t T) Value { return nil }

// NewBuilder returns a builder for t's Arrow storage type.
func NewBuilder(mem memory.Allocator, t T) array.Builder {
	return array.NewBuilder(mem, t.ArrowType())
}

// AppendValue appends v (nil = NULL) to a builder made by NewBuilder(t).
func AppendValue(b array.Builder, v Value, t T) error { return nil }

// Compare orders two non-NULL values of type t as PostgreSQL does (text in
// byte order, i.e. the C collation); returns -1, 0 or +1.
func Compare(a, b Value, t T) int { return 0 }

// FromName resolves a type name as written in SQL or pg_query's TypeName
// ("int4", "integer", "pg_catalog.int8", "varchar", "double precision",
// "timestamptz", "_int4"), with typmods from varchar(10) or numeric(10,2) and
// array bounds from int[] (arrayDims > 0). Unknown names give 42704
// `type "x" does not exist`.
func FromName(name string, typmods []int32, arrayDims int) (T, error) { return TUnknown, nil }

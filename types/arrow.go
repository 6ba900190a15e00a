package types

import (
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// This file is the one place where SQL types meet Arrow types.
//
//	SQL type                         Arrow storage                 Go Value
//	boolean                          Boolean                       bool
//	smallint / integer / bigint      Int16 / Int32 / Int64         int64
//	real / double precision          Float32 / Float64             float64
//	numeric                          String (canonical decimal)    *apd.Decimal
//	text, varchar, char(n), name,
//	  "char", unknown                String                        string
//	json, jsonb                      String (jsonb: normalized)    string
//	bytea                            Binary                        []byte
//	date                             Date32 (days since 1970-01-01) DateValue
//	time                             Time64 (microseconds)         TimeValue
//	timestamp                        Timestamp(µs, no zone)        TimestampValue
//	timestamptz                      Timestamp(µs, "UTC")          TimestampValue (UTC instant)
//	interval                         MonthDayNanoInterval          IntervalValue (the nanos field holds µs)
//	oid, regclass, regtype, regproc  Uint32                        int64
//	void                             Null                          nil
//	T[]                              List<T's storage>             []Value
//	record                           Struct<fields' storage>       RowValue
//
// numeric is stored as its canonical text so that any precision round-trips
// exactly; arithmetic on it goes through apd. Several SQL types share one Arrow
// storage type, so the SQL type of a column always travels beside its data (in
// plan schemas), never recovered from the Arrow type.
//
// interval's Nanoseconds field holds microseconds, not nanoseconds: PostgreSQL's
// time part is an int64 of microseconds (±2562047788 hours), which nanoseconds
// could not hold. Intervals never leave the engine as Arrow (the Parquet sink
// refuses them), so only IntervalToArrow and IntervalFromArrow convert.

// ArrowType returns the Arrow storage type of t.
func (t T) ArrowType() arrow.DataType {
	switch t.Kind {
	case Bool:
		return arrow.FixedWidthTypes.Boolean
	case Int2:
		return arrow.PrimitiveTypes.Int16
	case Int4:
		return arrow.PrimitiveTypes.Int32
	case Int8:
		return arrow.PrimitiveTypes.Int64
	case Float4:
		return arrow.PrimitiveTypes.Float32
	case Float8:
		return arrow.PrimitiveTypes.Float64
	case Bytea:
		return arrow.BinaryTypes.Binary
	case Date:
		return arrow.FixedWidthTypes.Date32
	case Time:
		return arrow.FixedWidthTypes.Time64us
	case Timestamp:
		return &arrow.TimestampType{Unit: arrow.Microsecond}
	case TimestampTZ:
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	case Interval:
		return arrow.FixedWidthTypes.MonthDayNanoInterval
	case Oid, RegClass, RegType, RegProc:
		return arrow.PrimitiveTypes.Uint32
	case Void:
		return arrow.Null
	case Array:
		return arrow.ListOf(t.Elem.ArrowType())
	case Record:
		return recordArrowType(t)
	case Enum:
		return enumArrowType()
	default: // Numeric, Text, Varchar, Bpchar, Name, Char, JSON, JSONB, UUID, Unknown
		return arrow.BinaryTypes.String
	}
}

// ArrowSchema builds the Arrow schema for a list of columns. Field names are
// the column names (which need not be unique); every field is nullable.
func ArrowSchema(cols []Column) *arrow.Schema {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.Name, Type: c.Type.ArrowType(), Nullable: true}
	}
	return arrow.NewSchema(fields, nil)
}

// Value is one SQL value in Go form (see the table above); nil is NULL.
// Values are used for constants, parameters and row-at-a-time paths
// (wire formatting, catalog rows); the engine's hot paths work on Arrow arrays.
type Value = any

// DateValue is days since 1970-01-01.
type DateValue int32

// TimeValue is microseconds since midnight.
type TimeValue int64

// TimestampValue is microseconds since 1970-01-01 00:00:00 UTC. For timestamp
// without time zone it is the wall-clock reading taken as if in UTC.
type TimestampValue int64

// IntervalValue is PostgreSQL's interval: months, days and microseconds are kept
// apart, as PostgreSQL does ('1 month' is not '30 days').
type IntervalValue struct {
	Months int32
	Days   int32
	Micros int64
}

// IntervalToArrow is v as stored in an Arrow MonthDayNanoInterval (whose
// Nanoseconds field holds microseconds).
func IntervalToArrow(v IntervalValue) arrow.MonthDayNanoInterval {
	return arrow.MonthDayNanoInterval{Months: v.Months, Days: v.Days, Nanoseconds: v.Micros}
}

// IntervalFromArrow is the interval stored in a MonthDayNanoInterval.
func IntervalFromArrow(v arrow.MonthDayNanoInterval) IntervalValue {
	return IntervalValue{Months: v.Months, Days: v.Days, Micros: v.Nanoseconds}
}

// FormatOptions are the session settings that change how values print as text.
type FormatOptions struct {
	// Location is the TimeZone setting; nil means UTC.
	Location *time.Location
	// ExtraFloatDigits is extra_float_digits (default 1: shortest exact output;
	// 0 or less: %.15g/%.6g minus that many digits, as PostgreSQL 12+ does).
	ExtraFloatDigits int
	// DateStyle is "ISO, MDY" by default; Postgres, SQL and German output
	// as PostgreSQL prints them; input takes its field order (MDY, DMY or
	// YMD) for ambiguous dates like 01/02/03.
	DateStyle string
	// ByteaOutput is bytea_output: "hex" (the default, also when empty) or
	// "escape" (printable ASCII as is, other bytes as \ooo octal).
	ByteaOutput string
	// IntervalStyle is "postgres" by default; "sql_standard", "iso_8601" and
	// "postgres_verbose" print as PostgreSQL does (sql_standard also changes
	// how a leading minus sign is read on input).
	IntervalStyle string
	// Names, when set, names an object for regclass, regtype and regproc
	// output (the catalog provides it); ok=false prints the number, as
	// PostgreSQL does for a dangling OID. It must be safe for concurrent use.
	Names func(k Kind, oid uint32) (name string, ok bool)
	// OIDs, when set, resolves regclass, regtype and regproc input that is
	// not a number (the catalog provides it); it returns PostgreSQL's error
	// (42P01, 42704, 42883) itself when the name is unknown.
	OIDs func(k Kind, name string) (uint32, error)
	// Now is what the input 'now' (and 'today', 'tomorrow', 'yesterday')
	// reads: the transaction's start, as now() (zero: the wall clock).
	Now time.Time
}

// DefaultFormat is PostgreSQL's default session formatting in UTC.
var DefaultFormat = FormatOptions{Location: time.UTC, ExtraFloatDigits: 1, DateStyle: "ISO, MDY", IntervalStyle: "postgres"}

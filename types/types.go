package types

import (
	"fmt"
)

// Kind is a SQL type without modifiers.
type Kind uint8

// Kinds. Several kinds share one storage class (see Arrow).
const (
	Unknown     Kind = iota // an untyped literal ('abc' before resolution) or NULL
	Bool                    // boolean
	Int2                    // smallint
	Int4                    // integer
	Int8                    // bigint
	Float4                  // real
	Float8                  // double precision
	Numeric                 // numeric / decimal
	Text                    // text
	Varchar                 // character varying
	Bpchar                  // character (blank padded)
	Name                    // name (pg_catalog identifiers)
	Char                    // "char" (one byte, pg_catalog)
	Bytea                   // bytea
	Date                    // date
	Time                    // time without time zone
	Timestamp               // timestamp without time zone
	TimestampTZ             // timestamp with time zone
	Interval                // interval
	JSON                    // json
	JSONB                   // jsonb
	Oid                     // oid
	RegClass                // regclass
	RegType                 // regtype
	RegProc                 // regproc
	Void                    // void (functions returning nothing)
	Array                   // an array of Elem
	Record                  // record: a row value whose fields are Rec (record.go)
	Enum                    // a user-defined enum (enum.go): Enum names it
	UUID                    // uuid (uuid.go), stored as its canonical text
	// The polymorphic pseudo-types, only in the signatures of SQL
	// functions (planner/bind_udf_poly.go): a call resolves them to the
	// arguments' types before anything is bound or run.
	AnyElement         // anyelement
	AnyArray           // anyarray
	AnyNonArray        // anynonarray
	AnyCompatible      // anycompatible
	AnyCompatibleArray // anycompatiblearray
	numKinds
)

// T is a SQL type: a kind plus its modifier and, for arrays, the element type.
// T is a small value type; compare with Equal (Elem is a pointer).
type T struct {
	Kind Kind
	// Typmod is PostgreSQL's type modifier: -1 when absent; varchar(n) and
	// char(n): n+4; numeric(p,s): ((p<<16)|s)+4; timestamp(p)/time(p)/interval: p.
	Typmod int32
	// Elem is the element type of an Array.
	Elem *T
	// Rec is the field list of a Record (nil: a record of unknown shape).
	Rec *RecordType
	// Enum is the enum type of an Enum (enum.go).
	Enum *EnumType
}

// Ready-made types without modifiers.
var (
	TUnknown     = T{Kind: Unknown, Typmod: -1}
	TBool        = T{Kind: Bool, Typmod: -1}
	TInt2        = T{Kind: Int2, Typmod: -1}
	TInt4        = T{Kind: Int4, Typmod: -1}
	TInt8        = T{Kind: Int8, Typmod: -1}
	TFloat4      = T{Kind: Float4, Typmod: -1}
	TFloat8      = T{Kind: Float8, Typmod: -1}
	TNumeric     = T{Kind: Numeric, Typmod: -1}
	TText        = T{Kind: Text, Typmod: -1}
	TVarchar     = T{Kind: Varchar, Typmod: -1}
	TBpchar      = T{Kind: Bpchar, Typmod: -1}
	TName        = T{Kind: Name, Typmod: -1}
	TChar        = T{Kind: Char, Typmod: -1}
	TBytea       = T{Kind: Bytea, Typmod: -1}
	TDate        = T{Kind: Date, Typmod: -1}
	TTime        = T{Kind: Time, Typmod: -1}
	TTimestamp   = T{Kind: Timestamp, Typmod: -1}
	TTimestampTZ = T{Kind: TimestampTZ, Typmod: -1}
	TInterval    = T{Kind: Interval, Typmod: -1}
	TJSON        = T{Kind: JSON, Typmod: -1}
	TJSONB       = T{Kind: JSONB, Typmod: -1}
	TOid         = T{Kind: Oid, Typmod: -1}
	TRegClass    = T{Kind: RegClass, Typmod: -1}
	TRegType     = T{Kind: RegType, Typmod: -1}
	TRegProc     = T{Kind: RegProc, Typmod: -1}
	TVoid        = T{Kind: Void, Typmod: -1}
	TUUID        = T{Kind: UUID, Typmod: -1}
)

// ArrayOf returns the array type whose elements are elem.
func ArrayOf(elem T) T {
	e := elem
	return T{Kind: Array, Typmod: -1, Elem: &e}
}

// WithTypmod returns t with a type modifier.
func (t T) WithTypmod(m int32) T { t.Typmod = m; return t }

// Equal reports whether two types are the same, modifiers included.
func (t T) Equal(o T) bool {
	if t.Kind != o.Kind || t.Typmod != o.Typmod {
		return false
	}
	if t.Kind == Array {
		return t.Elem.Equal(*o.Elem)
	}
	if t.Kind == Record {
		return t.Rec.equal(o.Rec, T.Equal)
	}
	if t.Kind == Enum {
		return t.enumOID() == o.enumOID()
	}
	return true
}

// SameKind reports whether two types are the same ignoring modifiers.
func (t T) SameKind(o T) bool {
	if t.Kind != o.Kind {
		return false
	}
	if t.Kind == Array {
		return t.Elem.SameKind(*o.Elem)
	}
	if t.Kind == Record {
		return t.Rec.equal(o.Rec, T.SameKind)
	}
	if t.Kind == Enum {
		return t.enumOID() == o.enumOID()
	}
	return true
}

type kindInfo struct {
	name     string // as format_type prints it, without modifiers
	oid      uint32
	arrayOID uint32
	size     int16 // typlen
	category byte  // typcategory
}

var kinds = [numKinds]kindInfo{
	Unknown:     {"unknown", 705, 0, -2, 'X'},
	Bool:        {"boolean", 16, 1000, 1, 'B'},
	Int2:        {"smallint", 21, 1005, 2, 'N'},
	Int4:        {"integer", 23, 1007, 4, 'N'},
	Int8:        {"bigint", 20, 1016, 8, 'N'},
	Float4:      {"real", 700, 1021, 4, 'N'},
	Float8:      {"double precision", 701, 1022, 8, 'N'},
	Numeric:     {"numeric", 1700, 1231, -1, 'N'},
	Text:        {"text", 25, 1009, -1, 'S'},
	Varchar:     {"character varying", 1043, 1015, -1, 'S'},
	Bpchar:      {"character", 1042, 1014, -1, 'S'},
	Name:        {"name", 19, 1003, 64, 'S'},
	Char:        {"\"char\"", 18, 1002, 1, 'Z'},
	Bytea:       {"bytea", 17, 1001, -1, 'U'},
	Date:        {"date", 1082, 1182, 4, 'D'},
	Time:        {"time without time zone", 1083, 1183, 8, 'D'},
	Timestamp:   {"timestamp without time zone", 1114, 1115, 8, 'D'},
	TimestampTZ: {"timestamp with time zone", 1184, 1185, 8, 'D'},
	Interval:    {"interval", 1186, 1187, 16, 'T'},
	JSON:        {"json", 114, 199, -1, 'U'},
	JSONB:       {"jsonb", 3802, 3807, -1, 'U'},
	Oid:         {"oid", 26, 1028, 4, 'N'},
	RegClass:    {"regclass", 2205, 2210, 4, 'N'},
	RegType:     {"regtype", 2206, 2211, 4, 'N'},
	RegProc:     {"regproc", 24, 1008, 4, 'N'},
	Void:        {"void", 2278, 0, 4, 'P'},
	Array:       {"", 0, 0, -1, 'A'},
	Record:      {"record", 2249, 2287, -1, 'P'},
	Enum:        {"anyenum", 3500, 0, 4, 'E'},
	UUID:        {"uuid", 2950, 2951, 16, 'U'},

	AnyElement:         {"anyelement", 2283, 0, 4, 'P'},
	AnyArray:           {"anyarray", 2277, 0, -1, 'P'},
	AnyNonArray:        {"anynonarray", 2776, 0, 4, 'P'},
	AnyCompatible:      {"anycompatible", 5077, 0, 4, 'P'},
	AnyCompatibleArray: {"anycompatiblearray", 5078, 0, -1, 'P'},
}

// Polymorphic reports the polymorphic pseudo-types (anyelement, anyarray,
// anynonarray, anycompatible, anycompatiblearray).
func (t T) Polymorphic() bool { return t.Kind >= AnyElement && t.Kind <= AnyCompatibleArray }

// OID returns the type's PostgreSQL OID (pg_type.oid).
func (t T) OID() uint32 {
	if t.Kind == Array {
		if t.Elem.Kind == Enum && t.Elem.Enum != nil {
			return t.Elem.Enum.ArrayOID
		}
		if t.Elem.Kind == Record && t.Elem.Rec != nil && t.Elem.Rec.ArrayOID != 0 {
			return t.Elem.Rec.ArrayOID
		}
		return kinds[t.Elem.Kind].arrayOID
	}
	if t.Kind == Enum && t.Enum != nil {
		return t.Enum.OID
	}
	if t.Kind == Record && t.Rec != nil && t.Rec.OID != 0 {
		return t.Rec.OID
	}
	return kinds[t.Kind].oid
}

// Len returns pg_type.typlen.
func (t T) Len() int16 { return kinds[t.Kind].size }

// Category returns pg_type.typcategory.
func (t T) Category() byte { return kinds[t.Kind].category }

// String returns the type as PostgreSQL's format_type prints it, modifiers
// included: "integer", "character varying(10)", "numeric(10,2)", "text[]".
func (t T) String() string {
	if t.Kind == Array {
		return t.Elem.String() + "[]"
	}
	if n := t.userTypeName(); n != "" {
		return n
	}
	name := kinds[t.Kind].name
	if t.Typmod < 0 {
		if t.Kind == Bpchar {
			return "bpchar" // as format_type: not character(1)
		}
		return name
	}
	switch t.Kind {
	case Varchar:
		return fmt.Sprintf("character varying(%d)", t.Typmod-4)
	case Bpchar:
		return fmt.Sprintf("character(%d)", t.Typmod-4)
	case Numeric:
		p, s := numericTypmod(t.Typmod)
		return fmt.Sprintf("numeric(%d,%d)", p, s)
	case Interval:
		return "interval" + intervalTypmodString(t.Typmod)
	case Timestamp:
		return fmt.Sprintf("timestamp(%d) without time zone", t.Typmod)
	case TimestampTZ:
		return fmt.Sprintf("timestamp(%d) with time zone", t.Typmod)
	case Time:
		return fmt.Sprintf("time(%d) without time zone", t.Typmod)
	}
	return name
}

// TypName returns pg_type.typname: "int4", "varchar", "_int4" for arrays.
func (t T) TypName() string {
	if t.Kind == Array {
		return "_" + t.Elem.TypName()
	}
	if n := t.userTypeName(); n != "" {
		return n
	}
	return kindTypNames[t.Kind]
}

var kindTypNames = [numKinds]string{
	Unknown: "unknown", Bool: "bool", Int2: "int2", Int4: "int4", Int8: "int8", Float4: "float4",
	Float8: "float8", Numeric: "numeric", Text: "text", Varchar: "varchar", Bpchar: "bpchar",
	Name: "name", Char: "char", Bytea: "bytea", Date: "date", Time: "time", Timestamp: "timestamp",
	TimestampTZ: "timestamptz", Interval: "interval", JSON: "json", JSONB: "jsonb", Oid: "oid",
	RegClass: "regclass", RegType: "regtype", RegProc: "regproc", Void: "void",
	Record: "record", Enum: "anyenum", UUID: "uuid",
	AnyElement: "anyelement", AnyArray: "anyarray", AnyNonArray: "anynonarray",
	AnyCompatible: "anycompatible", AnyCompatibleArray: "anycompatiblearray",
}

// FromOID returns the type with the given OID (typmod -1).
func FromOID(oid uint32) (T, bool) {
	for k := Kind(0); k < numKinds; k++ {
		info := kinds[k]
		if k == Array || k == Enum {
			continue
		}
		if info.oid == oid {
			return T{Kind: k, Typmod: -1}, true
		}
		if info.arrayOID == oid && oid != 0 {
			return ArrayOf(T{Kind: k, Typmod: -1}), true
		}
	}
	return T{}, false
}

// IsInteger reports smallint, integer and bigint.
func (t T) IsInteger() bool { return t.Kind == Int2 || t.Kind == Int4 || t.Kind == Int8 }

// IsNumeric reports every type of category N that does arithmetic
// (integers, floats, numeric).
func (t T) IsNumeric() bool { return t.IsInteger() || t.IsFloat() || t.Kind == Numeric }

// IsFloat reports real and double precision.
func (t T) IsFloat() bool { return t.Kind == Float4 || t.Kind == Float8 }

// IsString reports the text-like kinds stored as Arrow strings and compared as text.
func (t T) IsString() bool {
	switch t.Kind {
	case Text, Varchar, Bpchar, Name, Char, Unknown:
		return true
	}
	return false
}

// IsTimestamp reports timestamp and timestamptz.
func (t T) IsTimestamp() bool { return t.Kind == Timestamp || t.Kind == TimestampTZ }

// Column is a named, typed column of a relation or a result.
type Column struct {
	Name string
	Type T
	// TableOID and AttNum name the table (or view) column a query's result
	// column reads as is, as PostgreSQL's RowDescription does; zero
	// otherwise. Only the planner's result columns (planner.Query) set them.
	TableOID uint32 `json:",omitempty"`
	AttNum   int16  `json:",omitempty"`
}

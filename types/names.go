package types

import (
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/pgerr"
)

// typeNames maps every accepted spelling (lower case, without a pg_catalog.
// prefix) to its kind.
var typeNames = map[string]Kind{
	"bool": Bool, "boolean": Bool,
	"int2": Int2, "smallint": Int2,
	"int4": Int4, "int": Int4, "integer": Int4,
	"int8": Int8, "bigint": Int8,
	"float4": Float4, "real": Float4,
	"float8": Float8, "double precision": Float8, "float": Float8,
	"numeric": Numeric, "decimal": Numeric,
	"text": Text, "string": Text,
	"varchar": Varchar, "character varying": Varchar, "char varying": Varchar,
	"bpchar": Bpchar, "character": Bpchar,
	"name": Name, "char": Char, "\"char\"": Char,
	"bytea": Bytea,
	"date":  Date,
	"time":  Time, "time without time zone": Time,
	"timestamp": Timestamp, "timestamp without time zone": Timestamp,
	"timestamptz": TimestampTZ, "timestamp with time zone": TimestampTZ,
	"interval": Interval,
	"json":     JSON, "jsonb": JSONB,
	"uuid": UUID,
	"oid":  Oid, "regclass": RegClass, "regtype": RegType, "regproc": RegProc,
	// regnamespace has no kind of its own yet: it reads as oid (numbers in
	// and out), enough for psql's \d, which casts an empty column to it.
	"regnamespace": Oid,
	"void":         Void, "unknown": Unknown,
}

// FromName resolves a type name as written in SQL or pg_query's TypeName
// ("int4", "integer", "pg_catalog.int8", "varchar", "double precision",
// "timestamptz", "_int4"), with typmods as written (varchar(10) gives [10],
// numeric(10,2) gives [10 2]; interval ranges as pg_query gives them: the
// range mask, then the precision) converted as PostgreSQL's typmodin
// functions do, and array bounds from int[] (arrayDims > 0). "char" is the
// one-byte "char" type, as PostgreSQL resolves that unqualified name;
// "character" is char(1). float(p) is real for p <= 24, else double.
// Unknown names give 42704 `type "x" does not exist`.
func FromName(name string, typmods []int32, arrayDims int) (T, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	n = strings.TrimPrefix(n, "pg_catalog.")
	n = strings.Join(strings.Fields(n), " ")
	if strings.HasSuffix(n, "[]") {
		for strings.HasSuffix(n, "[]") {
			n = strings.TrimSpace(n[:len(n)-2])
		}
		arrayDims = max(arrayDims, 1)
	}
	if strings.HasPrefix(n, "_") && len(n) > 1 {
		if _, ok := typeNames[n[1:]]; ok {
			n = n[1:]
			arrayDims = max(arrayDims, 1)
		}
	}
	k, ok := typeNames[n]
	if !ok {
		return TUnknown, pgerr.New(pgerr.UndefinedObject, "type \"%s\" does not exist", name)
	}
	t := T{Kind: k, Typmod: -1}
	switch {
	case n == "float" && len(typmods) == 1:
		p := typmods[0]
		if p < 1 {
			return TUnknown, pgerr.New(pgerr.InvalidParameterValue, "precision for type float must be at least 1 bit")
		}
		if p > 53 {
			return TUnknown, pgerr.New(pgerr.InvalidParameterValue, "precision for type float must be less than 54 bits")
		}
		if p <= 24 {
			t.Kind = Float4
		}
		typmods = nil
	case n == "character" && len(typmods) == 0:
		t.Typmod = 5 // char means char(1)
	}
	if len(typmods) > 0 {
		m, err := TypmodIn(t.Kind, typmods)
		if err != nil {
			return TUnknown, err
		}
		t.Typmod = m
	}
	if arrayDims > 0 {
		if k == Void || k == Unknown {
			return TUnknown, pgerr.New(pgerr.UndefinedObject, "type \"%s[]\" does not exist", name)
		}
		t = ArrayOf(t)
	}
	return t, nil
}

// TypmodIn computes a type modifier from the integers written after a type
// name, as PostgreSQL's typmodin functions do: varchar(10) -> 14,
// numeric(10,2) -> ((10<<16)|2)+4, timestamp(3) -> 3, interval with a range
// mask (and optional precision) -> (range<<16)|precision.
func TypmodIn(k Kind, mods []int32) (int32, error) {
	switch k {
	case Varchar, Bpchar:
		name := "varchar"
		if k == Bpchar {
			name = "char"
		}
		if len(mods) != 1 {
			return -1, pgerr.New(pgerr.InvalidParameterValue, "invalid type modifier")
		}
		if mods[0] < 1 {
			return -1, pgerr.New(pgerr.InvalidParameterValue, "length for type %s must be at least 1", name)
		}
		if mods[0] > 10485760 {
			return -1, pgerr.New(pgerr.InvalidParameterValue, "length for type %s cannot exceed %d", name, 10485760)
		}
		return mods[0] + 4, nil
	case Numeric:
		if len(mods) < 1 || len(mods) > 2 {
			return -1, pgerr.New(pgerr.InvalidParameterValue, "invalid NUMERIC type modifier")
		}
		p := mods[0]
		if p < 1 || p > 1000 {
			return -1, pgerr.New(pgerr.InvalidParameterValue, "NUMERIC precision %d must be between 1 and %d", p, 1000)
		}
		s := int32(0)
		if len(mods) == 2 {
			s = mods[1]
			if s < -1000 || s > 1000 {
				return -1, pgerr.New(pgerr.InvalidParameterValue, "NUMERIC scale %d must be between %d and %d", s, -1000, 1000)
			}
		}
		return ((p << 16) | (s & 0x7ff)) + 4, nil
	case Time, Timestamp, TimestampTZ:
		if len(mods) != 1 {
			return -1, pgerr.New(pgerr.InvalidParameterValue, "invalid type modifier")
		}
		p := mods[0]
		if p < 0 {
			what := map[Kind]string{Time: "TIME(%d)", Timestamp: "TIMESTAMP(%d)", TimestampTZ: "TIMESTAMP(%d) WITH TIME ZONE"}[k]
			return -1, pgerr.New(pgerr.InvalidParameterValue, what+" precision must not be negative", p)
		}
		if p > 6 {
			p = 6 // PostgreSQL warns and reduces to the maximum
		}
		return p, nil
	case Interval:
		rng := mods[0]
		prec := int32(intervalFullPrecision)
		if len(mods) == 2 {
			prec = mods[1]
			if prec < 0 {
				return -1, pgerr.New(pgerr.InvalidParameterValue, "INTERVAL(%d) precision must not be negative", prec)
			}
			if prec > 6 {
				prec = 6
			}
		} else if len(mods) != 1 {
			return -1, pgerr.New(pgerr.InvalidParameterValue, "invalid INTERVAL type modifier")
		}
		switch rng {
		case IntervalYear, IntervalMonth, IntervalDay, IntervalHour, IntervalMinute, IntervalSecond,
			IntervalYear | IntervalMonth, IntervalDay | IntervalHour, IntervalDay | IntervalHour | IntervalMinute,
			IntervalDay | IntervalHour | IntervalMinute | IntervalSecond, IntervalHour | IntervalMinute,
			IntervalHour | IntervalMinute | IntervalSecond, IntervalMinute | IntervalSecond, intervalFullRange:
		default:
			return -1, pgerr.New(pgerr.InvalidParameterValue, "invalid INTERVAL type modifier")
		}
		if rng == intervalFullRange && prec == intervalFullPrecision {
			return -1, nil
		}
		return IntervalTypmod(int(rng), int(prec)), nil
	}
	return -1, pgerr.New(pgerr.SyntaxError, "type modifier is not allowed for type \"%s\"", T{Kind: k}.TypName())
}

// intervalFieldMasks maps the SQL interval field qualifiers to range masks.
var intervalFieldMasks = map[string]int32{
	"year": IntervalYear, "month": IntervalMonth, "day": IntervalDay, "hour": IntervalHour,
	"minute": IntervalMinute, "second": IntervalSecond, "year to month": IntervalYear | IntervalMonth,
	"day to hour": IntervalDay | IntervalHour, "day to minute": IntervalDay | IntervalHour | IntervalMinute,
	"day to second":  IntervalDay | IntervalHour | IntervalMinute | IntervalSecond,
	"hour to minute": IntervalHour | IntervalMinute, "hour to second": IntervalHour | IntervalMinute | IntervalSecond,
	"minute to second": IntervalMinute | IntervalSecond,
}

// ParseTypeString resolves a type written as SQL text, the way regtype input
// and format_type output spell it: "character varying(10)", "numeric(10,2)",
// "timestamp(3) with time zone", "interval day to second(2)", "int[]",
// "char" (= character(1)) and "\"char\"". Errors are FromName's.
func ParseTypeString(s string) (T, error) {
	n := strings.TrimSpace(s)
	dims := 0
	for strings.HasSuffix(n, "]") {
		i := strings.LastIndexByte(n, '[')
		if i < 0 {
			return TUnknown, pgerr.New(pgerr.SyntaxError, "invalid type name \"%s\"", s)
		}
		n = strings.TrimSpace(n[:i])
		dims++
	}
	var mods []int32
	if i := strings.IndexByte(n, '('); i >= 0 {
		j := strings.IndexByte(n[i:], ')')
		if j < 0 {
			return TUnknown, pgerr.New(pgerr.SyntaxError, "invalid type name \"%s\"", s)
		}
		for _, p := range strings.Split(n[i+1:i+j], ",") {
			v, err := strconv.ParseInt(strings.TrimSpace(p), 10, 32)
			if err != nil {
				return TUnknown, pgerr.New(pgerr.SyntaxError, "invalid type name \"%s\"", s)
			}
			mods = append(mods, int32(v))
		}
		n = strings.TrimSpace(n[:i] + " " + n[i+j+1:])
	}
	if n == "\"char\"" {
		return FromName(n, mods, dims)
	}
	lower := strings.Join(strings.Fields(strings.ToLower(n)), " ")
	switch {
	case lower == "char" || lower == "pg_catalog.char":
		lower = "character" // SQL's char is character(1); "char" is quoted
	case strings.HasPrefix(lower, "interval "):
		mask, ok := intervalFieldMasks[strings.TrimPrefix(lower, "interval ")]
		if !ok {
			return TUnknown, pgerr.New(pgerr.SyntaxError, "invalid type name \"%s\"", s)
		}
		mods = append([]int32{mask}, mods...)
		lower = "interval"
	case lower == "interval" && len(mods) == 1:
		mods = []int32{intervalFullRange, mods[0]}
	case strings.HasPrefix(lower, "char varying") || strings.HasPrefix(lower, "character varying"):
		lower = "varchar"
	}
	t, err := FromName(lower, mods, dims)
	if err != nil && pgerr.As(err) != nil && pgerr.As(err).Code == pgerr.UndefinedObject {
		return TUnknown, pgerr.New(pgerr.UndefinedObject, "type \"%s\" does not exist", n)
	}
	return t, err
}

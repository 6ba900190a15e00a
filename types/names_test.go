package types

import (
	"testing"

	"github.com/streamsql/streamsql/pgerr"
)

// TestFromNamePgQuery checks the names pg_query puts in a TypeName (joined
// with "."), with its typmods, against format_type's answers.
func TestFromNamePgQuery(t *testing.T) {
	cases := []struct {
		name string
		mods []int32
		dims int
		want string // format_type
	}{
		{"pg_catalog.int4", nil, 0, "integer"},
		{"pg_catalog.int2", nil, 0, "smallint"},
		{"pg_catalog.int8", nil, 0, "bigint"},
		{"pg_catalog.float4", nil, 0, "real"},
		{"pg_catalog.float8", nil, 0, "double precision"},
		{"pg_catalog.numeric", []int32{10, 2}, 0, "numeric(10,2)"},
		{"pg_catalog.numeric", nil, 0, "numeric"},
		{"pg_catalog.varchar", []int32{10}, 0, "character varying(10)"},
		{"pg_catalog.varchar", nil, 0, "character varying"},
		{"pg_catalog.bpchar", []int32{1}, 0, "character(1)"},
		{"pg_catalog.bpchar", []int32{5}, 0, "character(5)"},
		{"bpchar", nil, 0, "bpchar"},
		{"char", nil, 0, "\"char\""},
		{"pg_catalog.bool", nil, 0, "boolean"},
		{"pg_catalog.timestamptz", nil, 0, "timestamp with time zone"},
		{"pg_catalog.timestamptz", []int32{3}, 0, "timestamp(3) with time zone"},
		{"pg_catalog.timestamp", nil, 0, "timestamp without time zone"},
		{"pg_catalog.time", []int32{2}, 0, "time(2) without time zone"},
		{"pg_catalog.interval", nil, 0, "interval"},
		{"pg_catalog.interval", []int32{IntervalSecond}, 0, "interval second"},
		{"pg_catalog.interval", []int32{intervalFullRange, 3}, 0, "interval(3)"},
		{"pg_catalog.interval", []int32{IntervalDay | IntervalHour | IntervalMinute | IntervalSecond, 2}, 0, "interval day to second(2)"},
		{"text", nil, 0, "text"},
		{"string", nil, 0, "text"},
		{"json", nil, 0, "json"},
		{"jsonb", nil, 0, "jsonb"},
		{"bytea", nil, 0, "bytea"},
		{"date", nil, 0, "date"},
		{"name", nil, 0, "name"},
		{"oid", nil, 0, "oid"},
		{"regclass", nil, 0, "regclass"},
		{"regtype", nil, 0, "regtype"},
		{"regproc", nil, 0, "regproc"},
		{"pg_catalog.int4", nil, 1, "integer[]"},
		{"text", nil, 2, "text[]"},
		{"_int4", nil, 0, "integer[]"},
		{"INTEGER", nil, 0, "integer"},
		{"Double  Precision", nil, 0, "double precision"},
		{"character varying", []int32{3}, 0, "character varying(3)"},
		{"character", nil, 0, "character(1)"},
		{"float", []int32{24}, 0, "real"},
		{"float", []int32{25}, 0, "double precision"},
		{"float", nil, 0, "double precision"},
		{"decimal", []int32{5}, 0, "numeric(5,0)"},
		{"timestamp with time zone", nil, 0, "timestamp with time zone"},
		{"timestamp without time zone", nil, 0, "timestamp without time zone"},
		{"int[]", nil, 0, "integer[]"},
	}
	for _, c := range cases {
		typ, err := FromName(c.name, c.mods, c.dims)
		if err != nil {
			t.Errorf("%s %v: %v", c.name, c.mods, err)
			continue
		}
		if got := typ.String(); got != c.want {
			t.Errorf("%s %v %d: %s, want %s", c.name, c.mods, c.dims, got, c.want)
		}
	}
}

func TestFromNameErrors(t *testing.T) {
	cases := []struct {
		name string
		mods []int32
		code pgerr.Code
		msg  string
	}{
		{"nosuch", nil, pgerr.UndefinedObject, `type "nosuch" does not exist`},
		{"public.foo", nil, pgerr.UndefinedObject, `type "public.foo" does not exist`},
		{"pg_catalog.varchar", []int32{0}, pgerr.InvalidParameterValue, "length for type varchar must be at least 1"},
		{"pg_catalog.bpchar", []int32{0}, pgerr.InvalidParameterValue, "length for type char must be at least 1"},
		{"pg_catalog.numeric", []int32{0}, pgerr.InvalidParameterValue, "NUMERIC precision 0 must be between 1 and 1000"},
		{"pg_catalog.numeric", []int32{5, 1001}, pgerr.InvalidParameterValue, "NUMERIC scale 1001 must be between -1000 and 1000"},
		{"text", []int32{3}, pgerr.SyntaxError, `type modifier is not allowed for type "text"`},
		{"pg_catalog.interval", []int32{IntervalSecond, -1}, pgerr.InvalidParameterValue, "INTERVAL(-1) precision must not be negative"},
	}
	for _, c := range cases {
		_, err := FromName(c.name, c.mods, 0)
		pe := pgerr.As(err)
		if pe == nil || pe.Code != c.code || pe.Message != c.msg {
			t.Errorf("%s %v: got %v, want %s %s", c.name, c.mods, err, c.code, c.msg)
		}
	}
}

// TestIntervalTypmodInput checks SQL-standard interval literals the planner
// produces: INTERVAL '5' SECOND arrives as '5' with a SECOND typmod.
func TestIntervalTypmodInput(t *testing.T) {
	cases := []struct {
		in   string
		mods []int32
		want string // PostgreSQL 15's output for INTERVAL 'in' <fields>
	}{
		{"5", []int32{IntervalSecond}, "00:00:05"},
		{"1", []int32{IntervalDay}, "1 day"},
		{"2", []int32{IntervalHour}, "02:00:00"},
		{"2", []int32{IntervalMinute}, "00:02:00"},
		{"3", []int32{IntervalYear}, "3 years"},
		{"14", []int32{IntervalMonth}, "1 year 2 mons"},
		{"1-2", []int32{IntervalYear | IntervalMonth}, "1 year 2 mons"},
		{"1 day 2 hours", []int32{IntervalDay}, "1 day"},
		{"3.5", []int32{IntervalSecond, 0}, "00:00:04"},
	}
	for _, c := range cases {
		typ, err := FromName("pg_catalog.interval", c.mods, 0)
		if err != nil {
			t.Fatal(err)
		}
		v, err := ParseText(c.in, typ, nil)
		if err != nil {
			t.Errorf("%q %v: %v", c.in, c.mods, err)
			continue
		}
		if got := FormatText(v, typ, nil); got != c.want {
			t.Errorf("%q %v: %s, want %s", c.in, c.mods, got, c.want)
		}
	}
}

// TestInvalidUTF8 checks text input rejects bytes that are not UTF-8 with
// PostgreSQL's message (which shows the bytes of the bad sequence).
func TestInvalidUTF8(t *testing.T) {
	cases := []struct{ in, msg string }{
		{"a\xffb", `invalid byte sequence for encoding "UTF8": 0xff`},
		{"a\xc3(", `invalid byte sequence for encoding "UTF8": 0xc3 0x28`},
		{"\xe2\x82", `invalid byte sequence for encoding "UTF8": 0xe2 0x82`},
		{"a\x00", `invalid byte sequence for encoding "UTF8": 0x00`},
	}
	for _, c := range cases {
		for _, typ := range []T{TText, TVarchar, TJSONB} {
			_, err := ParseText(c.in, typ, nil)
			pe := pgerr.As(err)
			if pe == nil || pe.Code != pgerr.CharacterNotInRepertoire || pe.Message != c.msg {
				t.Errorf("%s %q: got %v, want %s", typ, c.in, err, c.msg)
			}
		}
	}
}

// TestRegHooks checks regclass/regtype/regproc output and input through the
// catalog's hooks, and the numeric forms without them.
func TestRegHooks(t *testing.T) {
	opts := DefaultFormat
	opts.Names = func(k Kind, oid uint32) (string, bool) {
		if k == RegClass && oid == 1259 {
			return "pg_class", true
		}
		if k == RegType && oid == 23 {
			return "integer", true
		}
		return "", false
	}
	opts.OIDs = func(k Kind, name string) (uint32, error) {
		if k == RegClass && name == "pg_class" {
			return 1259, nil
		}
		return 0, pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", name)
	}
	cases := []struct {
		v    int64
		t    T
		want string
		o    *FormatOptions
	}{
		{1259, TRegClass, "pg_class", &opts},
		{23, TRegType, "integer", &opts},
		{99999, TRegClass, "99999", &opts}, // dangling OID prints as a number
		{0, TRegClass, "-", &opts},
		{1259, TRegClass, "1259", nil},
		{1259, TOid, "1259", &opts},
	}
	for _, c := range cases {
		if got := FormatText(c.v, c.t, c.o); got != c.want {
			t.Errorf("%d as %s: %q, want %q", c.v, c.t, got, c.want)
		}
	}
	v, err := ParseText("pg_class", TRegClass, &opts)
	if err != nil || v != int64(1259) {
		t.Errorf("regclass input: %v %v", v, err)
	}
	_, err = ParseText("nosuch", TRegClass, &opts)
	if pe := pgerr.As(err); pe == nil || pe.Code != pgerr.UndefinedTable {
		t.Errorf("unknown regclass: %v", err)
	}
	v, err = ParseText("1259", TRegClass, nil)
	if err != nil || v != int64(1259) {
		t.Errorf("numeric regclass input: %v %v", v, err)
	}
	_, err = ParseText("pg_class", TRegClass, nil)
	if pe := pgerr.As(err); pe == nil || pe.Code != pgerr.UndefinedTable || pe.Message != `relation "pg_class" does not exist` {
		t.Errorf("regclass without hook: %v", err)
	}
}

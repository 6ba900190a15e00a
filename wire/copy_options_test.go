package wire

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// copySetup is the table both the engine and the PostgreSQL oracle copy.
const copySetup = `create table ct (a int4, b text, c float8);
insert into ct values (1, 'x', 1.5), (2, null, null), (3, 'a,b"c', 2)`

// copyTypesSetup holds one column of each type binary COPY must send.
const copyTypesSetup = `create table cty (i2 int2, i4 int4, i8 int8, f4 float4, f8 float8, n numeric(12,3),
  t text, v varchar(5), bp char(3), b bool, by bytea, d date, tm time, ts timestamp, tz timestamptz,
  iv interval, j json, jb jsonb, ai int4[], at text[], o oid);
insert into cty values (-2, 40000, 9000000000, 1.25, -0.5, 123.456, 'héllo', 'ab', 'x', true, '\x00ff10',
  '2024-02-29', '13:14:15.5', '2024-01-02 03:04:05.678', '2024-01-02 03:04:05+00', '1 year 2 mons 3 days 04:05:06',
  '{"a": 1}', '{"b": [1, 2]}', '{1,NULL,3}', '{"x y",z}', 77),
  (null, null, null, 'NaN', '-Infinity', -0.001, '', null, null, false, '', '-infinity', null, 'infinity', null, '-1 day', null, null, '{}', null, null)`

// copyToCases are COPY TO statements whose output must equal PostgreSQL
// 15's byte for byte (expected texts recorded from it).
var copyToCases = []struct{ sql, want string }{
	{"copy ct to stdout (format csv, force_quote *)", "\"1\",\"x\",\"1.5\"\n\"2\",,\n\"3\",\"a,b\"\"c\",\"2\"\n"},
	{"copy ct to stdout (format csv, force_quote (a, b))", "\"1\",\"x\",1.5\n\"2\",,\n\"3\",\"a,b\"\"c\",2\n"},
	{"copy ct to stdout (format csv, force_quote (b), null 'NULL')", "1,\"x\",1.5\n2,NULL,NULL\n3,\"a,b\"\"c\",2\n"},
	{"copy (select a as x, b from ct) to stdout (format csv, force_quote (x))", "\"1\",x\n\"2\",\n\"3\",\"a,b\"\"c\"\n"},
	{"copy ct to stdout (format csv, header, quote '''', force_quote *)", "a,b,c\n'1','x','1.5'\n'2',,\n'3','a,b\"c','2'\n"},
	{"copy ct to stdout (format csv, header, delimiter '|', null 'N/A', force_quote (c))", "a|b|c\n1|x|\"1.5\"\n2|N/A|N/A\n3|\"a,b\"\"c\"|\"2\"\n"},
	{"copy ct to stdout csv header force quote *", "a,b,c\n\"1\",\"x\",\"1.5\"\n\"2\",,\n\"3\",\"a,b\"\"c\",\"2\"\n"},
	{"copy ct to stdout (format text, header)", "a\tb\tc\n1\tx\t1.5\n2\t\\N\t\\N\n3\ta,b\"c\t2\n"},
	{"copy ct to stdout (format csv, header 1, freeze, encoding 'UTF-8')", "a,b,c\n1,x,1.5\n2,,\n3,\"a,b\"\"c\",2\n"},
}

// copyErrorCases are COPY statements PostgreSQL 15 refuses, with its
// SQLSTATE and message.
var copyErrorCases = []struct{ sql, code, msg string }{
	{"copy ct to stdout (format text, header match)", "0A000", `cannot use "match" with HEADER in COPY TO`},
	{"copy ct to stdout (format binary, header)", "0A000", "cannot specify HEADER in BINARY mode"},
	{"copy ct to stdout (format binary, delimiter ',')", "42601", "cannot specify DELIMITER in BINARY mode"},
	{"copy ct to stdout (format binary, null 'x')", "42601", "cannot specify NULL in BINARY mode"},
	{"copy ct to stdout (format text, force_quote *)", "0A000", "COPY force quote available only in CSV mode"},
	{"copy ct to stdout (format csv, force_not_null (a))", "0A000", "COPY force not null only available using COPY FROM"},
	{"copy ct to stdout (format csv, force_null (a))", "0A000", "COPY force null only available using COPY FROM"},
	{"copy ct to stdout (format csv, force_quote (zz))", "42703", `column "zz" of relation "ct" does not exist`},
	{"copy ct (a) to stdout (format csv, force_quote (b))", "42P10", `FORCE_QUOTE column "b" not referenced by COPY`},
	{"copy (select a as x from ct) to stdout (format csv, force_quote (a))", "42703", `column "a" does not exist`},
	{"copy ct to stdout (format csv, force_quote (a, a))", "42701", `column "a" specified more than once`},
	{"copy ct to stdout (format csv, force_quote b)", "22023", `argument to option "force_quote" must be a list of column names`},
	{"copy ct to stdout (format csv, encoding 'bogus')", "22023", `argument to option "encoding" must be a valid encoding name`},
	{"copy ct to stdout (format csv, bogus)", "42601", `option "bogus" not recognized`},
	{"copy ct to stdout (default 'x')", "42601", `option "default" not recognized`},
	{"copy ct to stdout (format csv, format csv)", "42601", "conflicting or redundant options"},
	{"copy ct to stdout (format csv, quote 'ab')", "0A000", "COPY quote must be a single one-byte character"},
	{"copy ct to stdout (format text, quote '\"')", "0A000", "COPY quote available only in CSV mode"},
	{"copy ct to stdout (format text, escape '\"')", "0A000", "COPY escape available only in CSV mode"},
	{"copy ct to stdout (format csv, escape 'ab')", "0A000", "COPY escape must be a single one-byte character"},
	{"copy ct to stdout (format csv, delimiter '\"')", "22023", "COPY delimiter and quote must be different"},
	{"copy ct to stdout (format csv, null ',')", "0A000", "COPY delimiter must not appear in the NULL specification"},
	{"copy ct to stdout (format csv, null '\"')", "0A000", "CSV quote character must not appear in the NULL specification"},
	{"copy ct to stdout (format text, delimiter 'a')", "22023", `COPY delimiter cannot be "a"`},
	{"copy ct to stdout (delimiter E'\\n')", "22023", "COPY delimiter cannot be newline or carriage return"},
	{"copy ct to stdout (null E'\\n')", "22023", "COPY null representation cannot use newline or carriage return"},
	{"copy ct to stdout (header 'foo')", "42601", `header requires a Boolean value or "match"`},
	{"copy ct to stdout (header 'yes')", "42601", `header requires a Boolean value or "match"`},
	{"copy ct to stdout (freeze 'x')", "42601", "freeze requires a Boolean value"},
	{"copy ct from stdin (format csv, force_not_null *)", "22023", `argument to option "force_not_null" must be a list of column names`},
	{"copy ct (a) from stdin (format csv, force_null (b))", "42P10", `FORCE_NULL column "b" not referenced by COPY`},
	{"copy ct from stdin (format csv, force_quote *)", "0A000", "COPY force quote only available using COPY TO"},
}

// copyFromErrorCases are COPY FROM data PostgreSQL 15 refuses.
var copyFromErrorCases = []struct{ sql, data, code, msg string }{
	{"copy ct from stdin (format csv, header match)", "a,bb,c\n1,x,2\n", "22P04", `column name mismatch in header line field 2: got "bb", expected "b"`},
	{"copy ct from stdin (format csv, header match)", "a,b\n1,x,2\n", "22P04", "wrong number of fields in header line: got 2, expected 3"},
	{"copy ct from stdin (format csv, header match)", "a,b,c,d\n", "22P04", "wrong number of fields in header line: got 4, expected 3"},
	{"copy ct from stdin (format text, header match)", "a\tb\t\\N\n", "22P04", `column name mismatch in header line field 3: got null value ("\N"), expected "c"`},
	{"copy ct from stdin (format text, header match)", "A\tb\tc\n", "22P04", `column name mismatch in header line field 1: got "A", expected "a"`},
}

func copyTo(t *testing.T, pc *pgconn.PgConn, sql string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	_, err := pc.CopyTo(context.Background(), &out, sql)
	return out.String(), err
}

func checkPgErr(t *testing.T, what string, err error, code, msg string) {
	t.Helper()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != code || pe.Message != msg {
		t.Errorf("%s: got %v, want %s %s", what, err, code, msg)
	}
}

// TestCopyOptions: FORCE_QUOTE, HEADER in text, HEADER MATCH, FORCE_NULL,
// FORCE_NOT_NULL, FREEZE and ENCODING are honoured, every other option is
// refused as PostgreSQL 15 refuses it. FORCE_QUOTE and HEADER MATCH used to
// be accepted and ignored.
func TestCopyOptions(t *testing.T) {
	ctx := context.Background()
	pc, err := pgconn.Connect(ctx, fakeURL(startEngine(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close(ctx)
	if _, err := pc.Exec(ctx, copySetup).ReadAll(); err != nil {
		t.Fatal(err)
	}
	for _, cs := range copyToCases {
		if got, err := copyTo(t, pc, cs.sql); err != nil || got != cs.want {
			t.Errorf("%s: got %q %v, want %q", cs.sql, got, err, cs.want)
		}
	}
	for _, cs := range copyErrorCases {
		var err error
		if strings.Contains(cs.sql, " from stdin") {
			_, err = pc.CopyFrom(ctx, strings.NewReader(""), cs.sql)
		} else {
			_, err = copyTo(t, pc, cs.sql)
		}
		checkPgErr(t, cs.sql, err, cs.code, cs.msg)
	}
	for _, cs := range copyFromErrorCases {
		_, err := pc.CopyFrom(ctx, strings.NewReader(cs.data), cs.sql)
		checkPgErr(t, cs.sql+" "+cs.data, err, cs.code, cs.msg)
	}
	// HEADER MATCH with a column list, quoted names; FORCE_NOT_NULL and
	// FORCE_NULL.
	if _, err := pc.Exec(ctx, "create table cf (a int4, b text, c text)").ReadAll(); err != nil {
		t.Fatal(err)
	}
	for _, cs := range []struct{ sql, data string }{
		{"copy cf from stdin (format csv, header match)", "a,b,c\n1,x,y\n"},
		{"copy cf (c, a) from stdin (format csv, header match)", "c,a\nz,5\n"},
		{"copy cf from stdin (format csv, header match)", "\"a\",b,\"c\"\n7,x,y\n"},
		{"copy cf from stdin (format csv, force_not_null (b), force_null (c))", "8,,\"\"\n9,\"\",\n"},
	} {
		if _, err := pc.CopyFrom(ctx, strings.NewReader(cs.data), cs.sql); err != nil {
			t.Errorf("%s: %v", cs.sql, err)
		}
	}
	got, err := copyTo(t, pc, "copy (select a, b is null, c is null, b, c from cf order by a) to stdout")
	if want := "1\tf\tf\tx\ty\n5\tt\tf\t\\N\tz\n7\tf\tf\tx\ty\n8\tf\tt\t\t\\N\n9\tf\tt\t\t\\N\n"; err != nil || got != want {
		t.Errorf("force null rows: %q %v, want %q", got, err, want)
	}
}

// TestCopyBinaryTo: COPY TO STDOUT (FORMAT binary) sends PostgreSQL's
// binary COPY format (it used to send text), which COPY FROM (FORMAT
// binary) reads back; where the oracle runs, the bytes equal PostgreSQL's.
func TestCopyBinaryTo(t *testing.T) {
	ctx := context.Background()
	addr := startEngine(t)
	pc, err := pgconn.Connect(ctx, fakeURL(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close(ctx)
	if _, err := pc.Exec(ctx, "set timezone = 'UTC'; "+copyTypesSetup+"; "+strings.Split(strings.ReplaceAll(copyTypesSetup, "cty (", "cty2 ("), ";")[0]).ReadAll(); err != nil {
		t.Fatal(err)
	}
	bin, err := copyTo(t, pc, "copy cty to stdout (format binary)")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(bin, "PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x15") || !strings.HasSuffix(bin, "\xff\xff") {
		t.Fatalf("not binary COPY: %q", bin)
	}
	if tag, err := pc.CopyFrom(ctx, strings.NewReader(bin), "copy cty2 from stdin (format binary)"); err != nil || tag.String() != "COPY 2" {
		t.Fatalf("binary round trip: %v %v", tag, err)
	}
	a, err1 := copyTo(t, pc, "copy cty to stdout")
	b, err2 := copyTo(t, pc, "copy cty2 to stdout")
	if err1 != nil || err2 != nil || a != b {
		t.Errorf("round trip changed rows:\n%q\n%q %v %v", a, b, err1, err2)
	}
	// pgx's CopyFrom sends "COPY ... FROM STDIN BINARY" (the old syntax).
	conn, err := pgx.Connect(ctx, fakeURL(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if n, err := conn.CopyFrom(ctx, pgx.Identifier{"cty2"}, []string{"i4", "t"}, pgx.CopyFromRows([][]any{{int32(5), "five"}})); err != nil || n != 1 {
		t.Fatalf("pgx CopyFrom: %d %v", n, err)
	}
	empty, err := copyTo(t, pc, "copy (select 1 where false) to stdout with binary")
	if want := "PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff"; err != nil || empty != want {
		t.Errorf("empty binary COPY: %q %v", empty, err)
	}

	octx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	oc, err := pgconn.Connect(octx, oracleURL)
	if err != nil {
		t.Skipf("PostgreSQL oracle not reachable: %v", err)
	}
	defer oc.Close(ctx)
	setup := strings.ReplaceAll(copyTypesSetup, "create table cty", "create temp table cty")
	if _, err := oc.Exec(ctx, "set timezone = 'UTC'; "+setup).ReadAll(); err != nil {
		t.Fatal(err)
	}
	want, err := copyTo(t, oc, "copy cty to stdout (format binary)")
	if err != nil {
		t.Fatal(err)
	}
	if bin != want {
		t.Errorf("binary COPY differs from PostgreSQL's:\n got %q\nwant %q", bin, want)
	}
	for _, cs := range copyToCases {
		if _, err := oc.Exec(ctx, "drop table if exists ct; "+strings.ReplaceAll(copySetup, "create table", "create temp table")).ReadAll(); err != nil {
			t.Fatal(err)
		}
		if got, err := copyTo(t, oc, cs.sql); err != nil || got != cs.want {
			t.Errorf("oracle %s: %q %v", cs.sql, got, err)
		}
	}
}

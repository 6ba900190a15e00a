package slt

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseClassic(t *testing.T) {
	text := `hash-threshold 8

statement ok
CREATE TABLE t1(a INTEGER, b INTEGER)

# a comment between records
skipif mysql # trailing words are ignored
onlyif postgresql
query II rowsort label-1
SELECT a,
# a comment inside the SQL is dropped
  b FROM t1
----
1
2

statement error
SELECT nope

query T valuesort
SELECT 'x'
----
4 values hashing to 0123456789abcdef0123456789abcdef

query I nosort
SELECT 1 WHERE false

halt
`
	s, err := Parse("x.test", text)
	if err != nil {
		t.Fatal(err)
	}
	if s.Dialect != Classic {
		t.Errorf("dialect of .test = %v, want Classic", s.Dialect)
	}
	if len(s.Records) != 7 {
		t.Fatalf("got %d records, want 7", len(s.Records))
	}
	r := s.Records
	if r[0].Kind != HashThreshold || r[0].N != 8 || r[0].Line != 1 {
		t.Errorf("record 0 = %+v", r[0])
	}
	if r[1].Kind != Statement || r[1].ExpectError || r[1].SQL != "CREATE TABLE t1(a INTEGER, b INTEGER)" || r[1].Line != 3 {
		t.Errorf("record 1 = %+v", r[1])
	}
	q := r[2]
	wantConds := []Condition{{OnlyIf: false, Engine: "mysql"}, {OnlyIf: true, Engine: "postgresql"}}
	if q.Kind != Query || q.Types != "II" || q.Sort != RowSort || q.Label != "label-1" || q.Line != 9 ||
		q.SQL != "SELECT a,\n  b FROM t1" || !reflect.DeepEqual(q.Results, []string{"1", "2"}) ||
		!reflect.DeepEqual(q.Conditions, wantConds) {
		t.Errorf("record 2 = %+v", q)
	}
	if r[3].Kind != Statement || !r[3].ExpectError || r[3].ErrorRegex != "" {
		t.Errorf("record 3 = %+v", r[3])
	}
	if r[4].Sort != ValueSort || len(r[4].Results) != 1 || !hashRE.MatchString(r[4].Results[0]) {
		t.Errorf("record 4 = %+v", r[4])
	}
	if r[5].Kind != Query || r[5].Results != nil {
		t.Errorf("record 5 (no ----) = %+v", r[5])
	}
	if r[6].Kind != Halt {
		t.Errorf("record 6 = %+v, want halt", r[6])
	}
}

func TestParseRS(t *testing.T) {
	text := `control substitution on

statement error division by zero
SELECT 1/0;

query error .*out of range
SELECT 2147483647 + 1;

statement count 3
INSERT INTO t VALUES (1), (2), (3);

query IT rowsort retry 3 backoff 1s
SELECT a, b FROM t;
----
1 one
2 two  words

system ok
./some-command
----
ignored output

let tid, tname
SELECT 7, 'seven'

restart

include other/*.slt
`
	s, err := Parse("x.slt", text)
	if err != nil {
		t.Fatal(err)
	}
	if s.Dialect != RS {
		t.Errorf("dialect of .slt = %v, want RS", s.Dialect)
	}
	kinds := []Kind{Control, Statement, Query, Statement, Query, System, Let, Restart, Include}
	if len(s.Records) != len(kinds) {
		t.Fatalf("got %d records, want %d", len(s.Records), len(kinds))
	}
	for i, k := range kinds {
		if s.Records[i].Kind != k {
			t.Errorf("record %d kind = %v, want %v", i, s.Records[i].Kind, k)
		}
	}
	r := s.Records
	if r[0].Arg != "substitution on" {
		t.Errorf("control arg = %q", r[0].Arg)
	}
	if !r[1].ExpectError || r[1].ErrorRegex != "division by zero" {
		t.Errorf("statement error regex = %+v", r[1])
	}
	if !r[2].ExpectError || r[2].ErrorRegex != ".*out of range" || r[2].Kind != Query {
		t.Errorf("query error = %+v", r[2])
	}
	if r[3].Count != 3 {
		t.Errorf("statement count = %d", r[3].Count)
	}
	if r[4].Sort != RowSort || r[4].Label != "" || !reflect.DeepEqual(r[4].Results, []string{"1 one", "2 two  words"}) {
		t.Errorf("query with retry = %+v", r[4])
	}
	if r[6].Arg != "tid,tname" || r[6].SQL != "SELECT 7, 'seven'" {
		t.Errorf("let = %+v", r[6])
	}
	if r[8].Arg != "other/*.slt" {
		t.Errorf("include = %+v", r[8])
	}
}

func TestParseErrors(t *testing.T) {
	for _, text := range []string{
		"frobnicate\n",
		"statement maybe\nSELECT 1\n",
		"statement ok\n\n",
		"hash-threshold x\n",
		"skipif\nstatement ok\nSELECT 1\n",
	} {
		if _, err := Parse("bad.test", text); err == nil {
			t.Errorf("Parse(%q) succeeded, want an error", text)
		} else if !strings.HasPrefix(err.Error(), "bad.test:") {
			t.Errorf("error %q does not name the file", err)
		}
	}
}

func TestRewrite(t *testing.T) {
	text := "statement ok\nCREATE TABLE t(a int)\n\n# keep me\nquery I\nSELECT a FROM t\n----\n9\n\nquery I\nSELECT 1\n"
	s, err := Parse("r.slt", text)
	if err != nil {
		t.Fatal(err)
	}
	got := rewrite(s, map[int]edit{1: {results: []string{"1", "2"}}, 2: {results: []string{"1"}}})
	want := "statement ok\nCREATE TABLE t(a int)\n\n# keep me\nquery I\nSELECT a FROM t\n----\n1\n2\n\nquery I\nSELECT 1\n----\n1\n"
	if got != want {
		t.Errorf("rewrite:\n%s\nwant:\n%s", got, want)
	}
}

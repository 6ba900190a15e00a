package pgregress

import (
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	src := "-- a comment\nSELECT 1;\nSELECT 'a;b',\n  $$x;y$$ /* ; */;\n\\pset null '(null)'\nCOPY t FROM stdin;\n1\n2\n\\.\nSELECT 2; -- trailing\nSELECT (1\n;\n)\n;\n\\set filename :abs_srcdir '/data/x'\nCOPY onek FROM :'filename';\n"
	units := Split(src)
	var got []string
	for _, u := range units {
		got = append(got, u.SQL())
	}
	want := []string{"SELECT 1;", "SELECT 'a;b',\n  $$x;y$$ /* ; */;", `\pset null '(null)'`, "COPY t FROM stdin;\n1\n2\n\\.",
		"SELECT 2; -- trailing", "SELECT (1\n;\n)\n;", `\set filename :abs_srcdir '/data/x'`, "COPY onek FROM :'filename';"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("units:\n%q\nwant\n%q", got, want)
	}
	if units[1].Line != 3 || units[3].Line != 6 {
		t.Errorf("lines %d %d, want 3 6", units[1].Line, units[3].Line)
	}
	script := Instrument(units)
	if !strings.Contains(script, "\\copy onek FROM :'filename'\n") || strings.Count(script, "\\echo @@pgregress") != len(units) {
		t.Errorf("instrumented:\n%s", script)
	}
}

func TestChunks(t *testing.T) {
	out := "SELECT 1;\n 1\n\\echo @@pgregress 0@@\n@@pgregress 0@@\nSELECT x;\nERROR:  boom\n\\echo @@pgregress 1@@\n@@pgregress 1@@\n"
	c := Chunks(out, 3)
	if c[0] != "SELECT 1;\n 1" || c[1] != "SELECT x;\nERROR:  boom" || c[2] != "" {
		t.Fatalf("chunks %q", c)
	}
}

func TestExclusions(t *testing.T) {
	prelude := Split("CREATE TABLE person (name text);\nCREATE TABLE emp (salary int) INHERITS (person);\n")
	src := `-- x
EXPLAIN SELECT 1;
SELECT 1;
SELECT max(p.name) FROM person p;
SELECT rank() OVER (PARTITION BY a) FROM t;
CREATE TABLE t1 (a int);
INSERT INTO t1 VALUES (1);
SELECT t1.a FROM tenk1 t1;
CREATE TABLE t1c () INHERITS (t1);
INSERT INTO t1 VALUES (2);
SELECT t1.a FROM tenk1 t1;
CREATE VIEW v AS SELECT * FROM t1;
SELECT * FROM v;
DROP TABLE t1 CASCADE;
INSERT INTO t1c VALUES (3);
CREATE TABLE t1 (a int);
SELECT * FROM t1;
CREATE TABLE p (a int) PARTITION BY LIST (a);
CREATE TABLE p1 (a int);
INSERT INTO p1 VALUES (1);
ALTER TABLE p ATTACH PARTITION p1 FOR VALUES IN (1);
SELECT 'p1'::regclass;
\set show 'select * from p'
:show;
SELECT * FROM pg_partition_tree('x');
SELECT tableoid FROM t1;
\d+ p1
\d+ t1
`
	want := []bool{true, false, true, false, false, false, false, true, true, false, true, true, true, false, false, false, true, false, false, true, true, true, true, true, false, true, false}
	got := Exclusions(prelude, Split(src))
	units := Split(src)
	if len(got) != len(want) {
		t.Fatalf("%d units, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%q: excluded %v, want %v", units[i].SQL(), got[i], want[i])
		}
	}
}

func TestSame(t *testing.T) {
	a := "SELECT x FROM t;\n x \n---\n 1\n 2\n(2 rows)\n"
	b := "SELECT x FROM t;\n x \n---\n 2\n 1\n(2 rows)\n"
	c := "SELECT x FROM t;\n x \n---\n 2\n 2\n(2 rows)\n"
	if !Same(Unit{Text: "SELECT x FROM t;"}, a, b) {
		t.Error("row order of an unordered query compared")
	}
	if Same(Unit{Text: "SELECT x FROM t ORDER BY x;"}, a, b) {
		t.Error("row order under ORDER BY ignored")
	}
	if Same(Unit{Text: "SELECT x FROM t;"}, a, c) {
		t.Error("different rows compared equal")
	}
	if Same(Unit{Text: "-- order by\nSELECT x FROM t;"}, a, a+"NOTICE: x\n") {
		t.Error("a notice ignored")
	}
	if !Same(Unit{Text: "-- order by in a comment\nSELECT x FROM t;"}, a, b) {
		t.Error("a comment's ORDER BY made the comparison strict")
	}
	for sql, want := range map[string]bool{
		"SELECT rank() OVER (PARTITION BY a ORDER BY b) FROM t":          false,
		"SELECT string_agg(x, ',' ORDER BY x) FROM t GROUP BY y":         false,
		"SELECT 'order by' FROM t":                                       false,
		"SELECT x FROM t ORDER BY x":                                     true,
		"SELECT * FROM (SELECT x FROM t ORDER BY x) s":                   true,
		"SELECT sum(x) OVER w FROM t WINDOW w AS (ORDER BY x)":           true,
		"SELECT f(x) FROM t UNION SELECT 1 ORDER BY 1":                   true,
		"WITH q AS (SELECT x FROM t ORDER BY x LIMIT 2) SELECT * FROM q": true,
		"SELECT min(x) OVER (ORDER BY y), (SELECT 1 ORDER BY 1) FROM t":  true,
	} {
		if got := ordered(sql); got != want {
			t.Errorf("ordered(%q) = %v, want %v", sql, got, want)
		}
	}
}

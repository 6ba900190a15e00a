package slt

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

func writeScript(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func divByZero() *pgproto3.ErrorResponse {
	return &pgproto3.ErrorResponse{Severity: "ERROR", Code: "22012", Message: "division by zero"}
}

var answers = map[string]fakeResult{
	"CREATE TABLE t(a int, b text)":                 {tag: "CREATE TABLE"},
	"INSERT INTO t VALUES (1,'x'),(2,NULL),(10,'')": {tag: "INSERT 0 3"},
	"SELECT a, b FROM t": {cols: []string{"a", "b"}, rows: rowsOf(
		[]string{"10", ""}, []string{"1", "x"}, []string{"2", "NULL"})},
	"SELECT 1/0":           {err: divByZero()},
	"SELECT 2.5::float8":   {cols: []string{"float8"}, rows: rowsOf([]string{"2.5"})},
	"SELECT 'only pg'":     {cols: []string{"t"}, rows: rowsOf([]string{"only pg"})},
	"SELECT 'skip-listed'": {cols: []string{"t"}, rows: rowsOf([]string{"wrong"})},
	"SELECT 'crash'":       {drop: true},
}

// TestRunnerClassic runs a classic script whose every kind of record passes,
// plus one that must fail, and checks the counts and the failure report.
func TestRunnerClassic(t *testing.T) {
	srv := newFakeServer(t, answers)
	path := writeScript(t, "c/x.test", `statement ok
CREATE TABLE t(a int, b text)

statement ok
INSERT INTO t VALUES (1,'x'),(2,NULL),(10,'')

query IT rowsort
SELECT a, b FROM t
----
1
x
10
(empty)
2
NULL

query IT nosort
SELECT a, b FROM t
----
6 values hashing to 0bd6e9b5e9b9a1da6ebc4b50ebe57bf4

statement error
SELECT 1/0

query R nosort
SELECT 2.5::float8
----
2.500

onlyif postgresql
query T nosort
SELECT 'only pg'
----
only pg

skipif postgresql
query T nosort
SELECT 'never sent'
----
x

query T nosort
SELECT 'skip-listed'
----
right

query R nosort
SELECT 2.5::float8
----
2.499

query IT rowsort
SELECT a, b FROM t
----
6 values hashing to 52a23c51a9761ad28957f5bae91a6ad3

halt

statement ok
SELECT 'after halt'
`)
	skip := writeScript(t, "skip.txt", "# comment\nc/x.test:42  listed on purpose\n")
	list, err := LoadSkipList(skip)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	r := NewRunner(Options{Engines: []string{"postgresql"}, Skip: list, Out: &out, Base: filepath.Dir(filepath.Dir(path))})
	res := r.RunFile(context.Background(), srv, path)
	if res.Passed != 7 || res.Failed != 2 || res.Skipped != 2 {
		t.Errorf("got %d passed, %d failed, %d skipped; want 7, 2, 2\n%s", res.Passed, res.Failed, res.Skipped, out.String())
	}
	// The hash in the script above is wrong on purpose (it is not the MD5
	// of the six values), and the last query expects 2.499.
	if len(res.Failures) != 2 || res.Failures[0].Line != 17 || res.Failures[1].Line != 47 {
		t.Fatalf("failures = %+v", res.Failures)
	}
	if !reflect.DeepEqual(res.Failures[1].Actual, []string{"2.500"}) {
		t.Errorf("failure actual = %q", res.Failures[1].Actual)
	}
	report := out.String()
	if !strings.HasPrefix(report, "c/x.test: 7 passed, 2 failed, 2 skipped\n") ||
		!strings.Contains(report, "FAIL c/x.test:47: results differ") ||
		!strings.Contains(report, "SELECT 2.5::float8") {
		t.Errorf("report lacks the expected lines:\n%s", report)
	}
	for _, sql := range srv.sql() {
		if sql == "SELECT 'never sent'" || sql == "SELECT 'after halt'" || sql == "SELECT 'skip-listed'" {
			t.Errorf("skipped record was sent: %q", sql)
		}
	}
}

// TestRunnerRS checks the sqllogictest-rs records: error regexes, rows
// compared after whitespace folding, restart, a lost connection, let and
// substitution.
func TestRunnerRS(t *testing.T) {
	srv := newFakeServer(t, answers)
	path := writeScript(t, "x.slt", `statement ok
CREATE TABLE t(a int, b text)

statement count 3
INSERT INTO t VALUES (1,'x'),(2,NULL),(10,'')

statement error division by zero
SELECT 1/0

query error SQLSTATE 22012
SELECT 1/0

statement error out of range
SELECT 1/0

query IT rowsort
SELECT a, b FROM t
----
1    x
10 (empty)
2 NULL

restart

query R
SELECT 2.5::float8
----
2.5

onlyif streamsql
query T
SELECT 'only pg'
----
only pg

query T
SELECT 'crash'
----
x

query R
SELECT 2.5::float8
----
2.5

let v
SELECT 2.5::float8

control substitution on

query R
SELECT ${v}::float8
----
2.5
`)
	var out strings.Builder
	r := NewRunner(Options{Engines: []string{"postgresql"}, Out: &out})
	res := r.RunFile(context.Background(), srv, path)
	if res.Passed != 8 || res.Failed != 2 || res.Skipped != 1 {
		t.Errorf("got %d passed, %d failed, %d skipped; want 8, 2, 1\n%s", res.Passed, res.Failed, res.Skipped, out.String())
	}
	if len(res.Failures) != 2 || res.Failures[0].Line != 13 || !strings.HasPrefix(res.Failures[1].Message, "connection lost") {
		t.Errorf("failures = %+v", res.Failures)
	}
	if srv.restarts != 1 {
		t.Errorf("restarts = %d, want 1", srv.restarts)
	}
}

// TestRunnerNoServer counts every record that would run as failed.
func TestRunnerNoServer(t *testing.T) {
	srv := newFakeServer(t, nil)
	srv.l.Close()
	path := writeScript(t, "x.test", "statement ok\nSELECT 1\n\nskipif postgresql\nstatement ok\nSELECT 2\n\nquery I\nSELECT 3\n----\n3\n")
	res := NewRunner(Options{Engines: []string{"postgresql"}}).RunFile(context.Background(), srv, path)
	if res.Passed != 0 || res.Failed != 2 || res.Skipped != 1 || len(res.Failures) != 1 {
		t.Errorf("got %+v; want 0 passed, 2 failed, 1 skipped with one failure reported", res)
	}
}

// TestRunnerRewrite fills in results, type letters (the fake server's columns
// are all text) and error regexes from the server.
func TestRunnerRewrite(t *testing.T) {
	srv := newFakeServer(t, answers)
	path := writeScript(t, "x.slt", "statement ok\nCREATE TABLE t(a int, b text)\n\nquery IT rowsort\nSELECT a, b FROM t\n----\nstale\n\nstatement error\nSELECT 1/0\n\nquery R\nSELECT 2.5::float8\n")
	res := NewRunner(Options{Engines: []string{"postgresql"}, Rewrite: true}).RunFile(context.Background(), srv, path)
	want := "statement ok\nCREATE TABLE t(a int, b text)\n\nquery TT rowsort\nSELECT a, b FROM t\n----\n1 x\n10 (empty)\n2 NULL\n\nstatement error ERROR: division by zero \\(SQLSTATE 22012\\)\nSELECT 1/0\n\nquery T\nSELECT 2.5::float8\n----\n2.5\n"
	if res.Rewritten != want {
		t.Errorf("rewritten:\n%s\nwant:\n%s", res.Rewritten, want)
	}
}

// TestRunnerDeadline counts the records left when ctx ends as failed.
func TestRunnerDeadline(t *testing.T) {
	srv := newFakeServer(t, answers)
	path := writeScript(t, "x.slt", "statement ok\nCREATE TABLE t(a int, b text)\n\nquery R\nSELECT 2.5::float8\n----\n2.5\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := NewRunner(Options{}).RunFile(ctx, srv, path)
	if res.Passed != 0 || res.Failed != 2 || len(res.Failures) != 1 || !strings.Contains(res.Failures[0].Message, "cancel") {
		t.Errorf("got %+v; want 2 failed, reported once", res)
	}
}

// TestRunnerLabels fails a query whose result differs from an earlier one
// with the same label, even when it matches its own expected result.
func TestRunnerLabels(t *testing.T) {
	srv := newFakeServer(t, answers)
	path := writeScript(t, "x.test", `query R nosort label-a
SELECT 2.5::float8
----
2.500

query T nosort label-a
SELECT 2.5::float8
----
2.5

query T nosort label-b
SELECT 'only pg'
----
only pg
`)
	res := NewRunner(Options{}).RunFile(context.Background(), srv, path)
	if res.Passed != 2 || res.Failed != 1 || len(res.Failures) != 1 || res.Failures[0].Line != 6 {
		t.Errorf("got %+v; want the second query (line 6) to fail its label check", res)
	}
}

// TestRunnerSkipLetExpect skips a listed let record (counted as skipped, not
// failed) and compares a query through Options.Expect.
func TestRunnerSkipLetExpect(t *testing.T) {
	srv := newFakeServer(t, answers)
	path := writeScript(t, "x.slt", `let v
SELECT 1/0

query T
SELECT 'only pg'
----
ONLY PG
`)
	skip := writeScript(t, "skip.txt", "x.slt:1  let over a relation we lack\n")
	list, err := LoadSkipList(skip)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	res := NewRunner(Options{Skip: list, Out: &out, Expect: strings.ToLower}).RunFile(context.Background(), srv, path)
	if res.Passed != 1 || res.Failed != 0 || res.Skipped != 1 {
		t.Errorf("got %d passed, %d failed, %d skipped; want 1, 0, 1\n%s", res.Passed, res.Failed, res.Skipped, out.String())
	}
}

// TestRunnerInclude runs the records of included files in the same
// database, counting them in the including file's result.
func TestRunnerInclude(t *testing.T) {
	srv := newFakeServer(t, answers)
	dir := t.TempDir()
	for name, text := range map[string]string{
		"main.slt":     "statement ok\nCREATE TABLE t(a int, b text)\n\ninclude inc/*.slt\n\nquery R\nSELECT 2.5::float8\n----\n2.5\n",
		"inc/a.slt":    "query R\nSELECT 2.5::float8\n----\n2.5\n",
		"inc/b.slt":    "query T\nSELECT 'only pg'\n----\nwrong\n",
		"inc/skip.txt": "not a script\n",
	} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res := NewRunner(Options{Base: dir}).RunFile(context.Background(), srv, filepath.Join(dir, "main.slt"))
	if res.Passed != 3 || res.Failed != 1 || len(res.Failures) != 1 || res.Failures[0].File != "inc/b.slt" || res.Failures[0].Line != 1 {
		t.Errorf("got %+v; want 3 passed and inc/b.slt:1 failed", res)
	}
}

// TestRunnerExtended runs records through the extended query protocol.
func TestRunnerExtended(t *testing.T) {
	srv := newFakeServer(t, answers)
	path := writeScript(t, "x.slt", `statement ok
CREATE TABLE t(a int, b text)

statement count 3
INSERT INTO t VALUES (1,'x'),(2,NULL),(10,'')

statement error division by zero
SELECT 1/0

query IT rowsort
SELECT a, b FROM t
----
1 x
10 (empty)
2 NULL

query R
SELECT 2.5::float8
----
2.5

query R
SELECT 2.5::float8
----
3
`)
	res := NewRunner(Options{Extended: true}).RunFile(context.Background(), srv, path)
	if res.Passed != 5 || res.Failed != 1 || len(res.Failures) != 1 || res.Failures[0].Line != 22 {
		t.Errorf("got %+v; want 5 passed and line 22 failed", res)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.protocols) != 6 {
		t.Errorf("server saw %d statements, want 6", len(srv.protocols))
	}
	for i, p := range srv.protocols {
		if p != "extended" {
			t.Errorf("statement %q came by the %s protocol", srv.seen[i], p)
		}
	}
}

package engine

import (
	"strings"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
)

// A temporary table hides a same-named permanent table in its session
// only, is visible as pg_temp.name, and goes away with its session (and
// its dependent temporary view); DISCARD TEMP drops it too.
func TestTempTables(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	other, err := e.NewSession("tester", "db", nil)
	if err != nil {
		t.Fatal(err)
	}
	mustRun := func(s *Session, q string) []string {
		t.Helper()
		rows, _, err := run(t, s, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return rows
	}
	mustRun(s, "CREATE TABLE t (a int)")
	mustRun(s, "INSERT INTO t VALUES (1)")
	mustRun(s, "CREATE TEMP TABLE t (b text)")
	mustRun(s, "INSERT INTO t VALUES ('temp')")
	if got := mustRun(s, "SELECT * FROM t"); strings.Join(got, ",") != "temp" {
		t.Fatalf("the session reads its temporary t: got %v", got)
	}
	if got := mustRun(s, "SELECT * FROM pg_temp.t"); strings.Join(got, ",") != "temp" {
		t.Fatalf("pg_temp.t: got %v", got)
	}
	if got := mustRun(s, "SELECT * FROM public.t"); strings.Join(got, ",") != "1" {
		t.Fatalf("public.t: got %v", got)
	}
	if got := mustRun(other, "SELECT * FROM t"); strings.Join(got, ",") != "1" {
		t.Fatalf("another session reads the permanent t: got %v", got)
	}
	if got := mustRun(s, "SELECT relpersistence FROM pg_class WHERE relname = 't' ORDER BY 1"); strings.Join(got, ",") != "p,t" {
		t.Fatalf("relpersistence: got %v", got)
	}
	// a view over a temporary table is temporary, with a notice
	stmtsRes := func(q string) *Result {
		t.Helper()
		res, err := execOne(t, s, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return res
	}
	res := stmtsRes("CREATE VIEW v AS SELECT b FROM t")
	if len(res.Notices) != 1 || res.Notices[0].Message != `view "v" will be a temporary view` {
		t.Fatalf("notices: %v", res.Notices)
	}
	if _, _, err := run(t, other, "SELECT * FROM v"); pgerr.CodeOf(err) != pgerr.UndefinedTable {
		t.Fatalf("another session sees the temporary view: %v", err)
	}
	if _, _, err := run(t, s, "CREATE VIEW public.w AS SELECT b FROM t"); pgerr.CodeOf(err) != pgerr.InvalidTableDefinition {
		t.Fatalf("a permanent view over a temporary table: %v", err)
	}
	if _, _, err := run(t, s, "CREATE TEMP TABLE public.x (a int)"); pgerr.CodeOf(err) != pgerr.InvalidTableDefinition {
		t.Fatalf("a temporary table in a permanent schema: %v", err)
	}
	if _, _, err := run(t, s, "CREATE TABLE y (a int) ON COMMIT PRESERVE ROWS"); pgerr.CodeOf(err) != pgerr.InvalidTableDefinition {
		t.Fatalf("ON COMMIT on a permanent table: %v", err)
	}
	mustRun(s, "CREATE TEMP SEQUENCE sq")
	mustRun(s, "CREATE TEMP TABLE c AS SELECT 1 AS one")
	if got := mustRun(s, "SELECT nextval('sq'), one FROM c"); strings.Join(got, ",") != "1|1" {
		t.Fatalf("temporary sequence and CREATE TEMP TABLE AS: %v", got)
	}
	s.Close()
	if got := mustRun(other, "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'pg_temp%'"); strings.Join(got, ",") != "0" {
		t.Fatalf("temporary schema left after the session: %v", got)
	}
	if got := mustRun(other, "SELECT count(*) FROM pg_class WHERE relname IN ('v', 'c', 'sq')"); strings.Join(got, ",") != "0" {
		t.Fatalf("temporary relations left after the session: %v", got)
	}
	// DISCARD TEMP
	mustRun(other, "CREATE TEMP TABLE d (a int)")
	mustRun(other, "DISCARD TEMP")
	if _, _, err := run(t, other, "SELECT * FROM d"); pgerr.CodeOf(err) != pgerr.UndefinedTable {
		t.Fatalf("after DISCARD TEMP: %v", err)
	}
}

// A transaction block's rollback drops the temporary relations it created
// (as PostgreSQL's transactional DDL); a commit keeps them.
func TestTempRollback(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	for _, q := range []string{
		"BEGIN", "CREATE TEMP TABLE a (i int)", "CREATE TEMP VIEW av AS SELECT i FROM a", "INSERT INTO a VALUES (1)", "ROLLBACK",
		"CREATE TEMP TABLE a (code char)", // free again
		"BEGIN", "CREATE TEMP TABLE b (i int)", "COMMIT",
		"BEGIN", "CREATE TEMP TABLE c (i int)",
	} {
		if _, _, err := run(t, s, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, _, err := run(t, s, "SELECT nope"); err == nil {
		t.Fatal("want an error to fail the block")
	}
	if _, _, err := run(t, s, "COMMIT"); err != nil { // a failed block rolls back
		t.Fatal(err)
	}
	for q, want := range map[string]pgerr.Code{"SELECT * FROM av": pgerr.UndefinedTable, "SELECT * FROM c": pgerr.UndefinedTable, "SELECT * FROM b": "", "SELECT code FROM a": ""} {
		if _, _, err := run(t, s, q); want == "" && err != nil || want != "" && pgerr.CodeOf(err) != want {
			t.Errorf("%s: want %q, got %v", q, want, err)
		}
	}
}

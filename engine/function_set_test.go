package engine

import (
	"strings"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
)

// TestSetFunctionViewRestart: set-returning SQL functions (RETURNS SETOF,
// RETURNS TABLE) keep their result columns across a restart, and a
// materialized view reading one follows its table before and after it;
// DROP FUNCTION stays refused while the view depends on it; a call in a
// select list runs after the restart too.
func TestSetFunctionViewRestart(t *testing.T) {
	dir := t.TempDir()
	e, s := open(t, dir)
	mustRun(t, s, "CREATE TABLE emp (name text, dept int, salary int)")
	mustRun(t, s, "INSERT INTO emp VALUES ('a', 1, 10), ('b', 1, 20), ('c', 2, 5)")
	mustRun(t, s, "CREATE FUNCTION names_in(d int) RETURNS SETOF text LANGUAGE sql STABLE AS $$ SELECT name FROM emp WHERE dept = d $$")
	mustRun(t, s, "CREATE FUNCTION dept_stats(d int) RETURNS TABLE (n bigint, total bigint) LANGUAGE sql AS $$ SELECT count(*), sum(salary) FROM emp WHERE dept = $1 $$")
	mustRun(t, s, "CREATE MATERIALIZED VIEW st AS SELECT n, total FROM dept_stats(1)")
	mustRun(t, s, "FLUSH")
	if got := strings.Join(mustRun(t, s, "SELECT n, total FROM st"), ","); got != "2|30" {
		t.Fatalf("view before restart: %q", got)
	}
	e.Close()

	e, s = open(t, dir)
	defer e.Close()
	if got := strings.Join(mustRun(t, s, "SELECT * FROM names_in(1) ORDER BY 1"), ","); got != "a,b" {
		t.Fatalf("SETOF function after restart: %q", got)
	}
	if got := strings.Join(mustRun(t, s, "SELECT total, n FROM dept_stats(2)"), ","); got != "5|1" {
		t.Fatalf("RETURNS TABLE function after restart: %q", got)
	}
	mustRun(t, s, "INSERT INTO emp VALUES ('d', 1, 7)")
	mustRun(t, s, "FLUSH")
	if got := strings.Join(mustRun(t, s, "SELECT n, total FROM st"), ","); got != "3|37" {
		t.Fatalf("view after restart and an insert: %q", got)
	}
	if _, _, err := run(t, s, "DROP FUNCTION dept_stats(int)"); pgerr.CodeOf(err) != pgerr.DependentObjectsStillExist {
		t.Fatalf("DROP FUNCTION under a view: %v", err)
	}
	// in a select list: a row per returned row, as in PostgreSQL; one of
	// several columns there is refused
	if got := strings.Join(mustRun(t, s, "SELECT names_in(1) ORDER BY 1"), ","); got != "a,b,d" {
		t.Fatalf("a set-returning SQL function in a select list: %q", got)
	}
	if _, _, err := run(t, s, "SELECT dept_stats(1)"); pgerr.CodeOf(err) != pgerr.FeatureNotSupported {
		t.Fatalf("a set-returning SQL function of several columns in a select list: %v", err)
	}
}

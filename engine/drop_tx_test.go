package engine

import (
	"strings"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
)

// DROP TABLE of a table an open transaction block has written must fail
// with 55006 and leave the table (and the block's writes) alone, from
// another session and from the block's own; the block then commits its row.
func TestDropTableWrittenByOpenTransaction(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	other, err := e.NewSession("other", "db", nil)
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, s, "CREATE TABLE t (a int)")
	mustRun(t, s, "CREATE TABLE u (a int)")
	mustRun(t, s, "BEGIN")
	mustRun(t, s, "INSERT INTO t VALUES (1)")
	for _, q := range []string{"DROP TABLE t", "DROP TABLE IF EXISTS t", "DROP TABLE t CASCADE"} {
		_, _, err := run(t, other, q)
		if pgerr.CodeOf(err) != "55006" || !strings.Contains(err.Error(), `table "t"`) {
			// before: the DROP succeeded and the block's COMMIT lost its row
			t.Fatalf("%s from another session: %v, want 55006", q, err)
		}
	}
	// A view over t does not make DROP ... CASCADE drop anything either.
	mustRun(t, other, "CREATE VIEW tv AS SELECT a FROM t")
	if _, _, err := run(t, other, "DROP TABLE t CASCADE"); pgerr.CodeOf(err) != "55006" {
		t.Fatalf("DROP TABLE t CASCADE: %v", err)
	}
	mustRun(t, other, "SELECT * FROM tv")
	if _, _, err := run(t, other, "DROP SCHEMA public CASCADE"); pgerr.CodeOf(err) != "55006" {
		t.Fatalf("DROP SCHEMA public CASCADE: %v", err)
	}
	mustRun(t, other, "SELECT * FROM u")
	if _, _, err := run(t, s, "DROP TABLE t CASCADE"); pgerr.CodeOf(err) != "55006" {
		t.Fatalf("DROP TABLE t CASCADE in the writing block: %v, want 55006", err)
	}
	if _, tag, err := run(t, s, "COMMIT"); err != nil || tag != "ROLLBACK" {
		// the block's own DROP failed it, as in PostgreSQL any error does
		t.Fatalf("commit: %q %v", tag, err)
	}
	mustRun(t, s, "BEGIN")
	mustRun(t, s, "INSERT INTO t VALUES (2)")
	if _, _, err := run(t, other, "DROP TABLE t CASCADE"); pgerr.CodeOf(err) != "55006" {
		t.Fatalf("DROP: %v", err)
	}
	if _, tag, err := run(t, s, "COMMIT"); err != nil || tag != "COMMIT" {
		t.Fatalf("commit: %q %v", tag, err)
	}
	if rows := mustRun(t, other, "SELECT a FROM t"); strings.Join(rows, ",") != "2" {
		t.Fatalf("rows after commit: %v", rows)
	}
	// Once the block ended, DROP works.
	mustRun(t, other, "DROP TABLE t CASCADE")
}

package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
)

// TestConstraintsCopyAndRestart: COPY FROM checks CHECK constraints and
// foreign keys (all or nothing); both survive a restart, where a cascade
// still runs and a referenced table still cannot be dropped.
func TestConstraintsCopyAndRestart(t *testing.T) {
	dir := t.TempDir()
	e, s := open(t, dir)
	mustRun(t, s, "CREATE TABLE p (id int PRIMARY KEY)")
	mustRun(t, s, "INSERT INTO p VALUES (1), (2)")
	mustRun(t, s, "CREATE TABLE c (a int REFERENCES p ON DELETE CASCADE, b int CHECK (b > 0))")
	copyIn := func(q, data string) error { t.Helper(); return copyFromStdin(t, s, q, data) }
	if err := copyIn("COPY c FROM STDIN", "1\t5\n2\t6\n"); err != nil {
		t.Fatal(err)
	}
	if err := copyIn("COPY c FROM STDIN", "1\t5\n2\t-6\n"); pgerr.CodeOf(err) != pgerr.CheckViolation || !strings.Contains(err.Error(), `"c_b_check"`) {
		t.Fatalf("a row failing the CHECK: %v", err)
	}
	if err := copyIn("COPY c FROM STDIN", "1\t5\n3\t6\n"); pgerr.CodeOf(err) != pgerr.ForeignKeyViolation || !strings.Contains(err.Error(), `"c_a_fkey"`) {
		t.Fatalf("a row without its referenced key: %v", err)
	}
	if got := strings.Join(mustRun(t, s, "SELECT a, b FROM c ORDER BY a"), ","); got != "1|5,2|6" {
		t.Fatalf("rows %q", got)
	}
	e.Close()

	e, s = open(t, dir)
	defer e.Close()
	if _, _, err := run(t, s, "INSERT INTO c VALUES (1, 0)"); pgerr.CodeOf(err) != pgerr.CheckViolation {
		t.Fatalf("after restart, the CHECK: %v", err)
	}
	if _, _, err := run(t, s, "INSERT INTO c VALUES (9, 1)"); pgerr.CodeOf(err) != pgerr.ForeignKeyViolation {
		t.Fatalf("after restart, the foreign key: %v", err)
	}
	if _, _, err := run(t, s, "DROP TABLE p"); pgerr.CodeOf(err) != pgerr.DependentObjectsStillExist {
		t.Fatalf("after restart, DROP TABLE of a referenced table: %v", err)
	}
	mustRun(t, s, "DELETE FROM p WHERE id = 1")
	if got := strings.Join(mustRun(t, s, "SELECT a, b FROM c ORDER BY a"), ","); got != "2|6" {
		t.Fatalf("after restart, the cascade: %q", got)
	}
}

// TestForeignKeyBlockRollback: a refused statement undoes the cascade it
// had applied before the check failed; in a transaction block it
// leaves the block failed, and ROLLBACK TO SAVEPOINT undoes it.
func TestForeignKeyBlockRollback(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE TABLE p (id int PRIMARY KEY)")
	mustRun(t, s, "CREATE TABLE c1 (a int REFERENCES p ON DELETE CASCADE)")
	mustRun(t, s, "CREATE TABLE c2 (a int REFERENCES p)")
	mustRun(t, s, "INSERT INTO p VALUES (1), (2)")
	mustRun(t, s, "INSERT INTO c1 VALUES (1), (2)")
	mustRun(t, s, "INSERT INTO c2 VALUES (2)")
	if _, _, err := run(t, s, "DELETE FROM p"); pgerr.CodeOf(err) != pgerr.ForeignKeyViolation {
		t.Fatalf("DELETE of a key c2 references: %v", err)
	}
	if got := strings.Join(mustRun(t, s, "SELECT a FROM c1 ORDER BY a"), ","); got != "1,2" {
		t.Fatalf("c1 after a refused DELETE: %q", got)
	}
	mustRun(t, s, "BEGIN")
	mustRun(t, s, "SAVEPOINT a")
	if _, _, err := run(t, s, "DELETE FROM p"); pgerr.CodeOf(err) != pgerr.ForeignKeyViolation {
		t.Fatalf("DELETE of a key c2 references: %v", err)
	}
	mustRun(t, s, "ROLLBACK TO SAVEPOINT a")
	if got := strings.Join(mustRun(t, s, "SELECT a FROM c1 ORDER BY a"), ","); got != "1,2" {
		t.Fatalf("c1 after ROLLBACK TO: %q", got)
	}
	mustRun(t, s, "DELETE FROM p WHERE id = 1")
	mustRun(t, s, "COMMIT")
	if got := strings.Join(mustRun(t, s, "SELECT a FROM c1 ORDER BY a"), ","); got != "2" {
		t.Fatalf("c1 after COMMIT: %q", got)
	}
}

// TestForeignKeyConcurrent: one session inserts referencing rows while
// another deletes the referenced keys; whatever interleaving, no row is
// left referencing a missing key (the insert's lookup and the delete's
// scan serialize on the referenced table's lock).
func TestForeignKeyConcurrent(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE TABLE p (id int PRIMARY KEY)")
	mustRun(t, s, "CREATE TABLE c (a int REFERENCES p)")
	mustRun(t, s, "INSERT INTO p SELECT g FROM generate_series(1, 40) g")
	s2, err := e.NewSession("tester", "db", nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		for i := 1; i <= 40; i++ {
			if _, _, err := run(t, s2, fmt.Sprintf("INSERT INTO c VALUES (%d)", i)); err != nil && pgerr.CodeOf(err) != pgerr.ForeignKeyViolation {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for i := 40; i >= 1; i-- {
		if _, _, err := run(t, s, fmt.Sprintf("DELETE FROM p WHERE id = %d", i)); err != nil && pgerr.CodeOf(err) != pgerr.ForeignKeyViolation {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(mustRun(t, s, "SELECT count(*) FROM c WHERE a NOT IN (SELECT id FROM p)"), ","); got != "0" {
		t.Fatalf("rows referencing a deleted key: %s", got)
	}
}

// TestForeignKeyRefusals: what is not supported is refused by name.
func TestForeignKeyRefusals(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE TABLE p (id int PRIMARY KEY)")
	mustRun(t, s, "CREATE TABLE c (a int REFERENCES p)")
	for _, q := range []string{
		"ALTER TABLE c ALTER COLUMN a TYPE bigint",
		"ALTER TABLE p ALTER COLUMN id TYPE bigint",
		"CREATE TABLE d (a bigint REFERENCES p)",
		"CREATE TABLE d (a int REFERENCES p INITIALLY DEFERRED)",
		"CREATE TABLE d (a int CHECK (a > 0) NO INHERIT)",
		"CREATE TABLE d (a int, b int, FOREIGN KEY (a, b) REFERENCES p ON DELETE SET NULL (a))",
		"ALTER TABLE c ADD COLUMN x int DEFAULT 1 REFERENCES p",
	} {
		if _, _, err := run(t, s, q); pgerr.CodeOf(err) != pgerr.FeatureNotSupported {
			t.Errorf("%s: %v, want 0A000", q, err)
		}
	}
}

// TestTruncateCascade: TRUNCATE ... CASCADE empties the tables whose
// foreign keys reference the named ones, transitively, with PostgreSQL's
// notice for each.
func TestTruncateCascade(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE TABLE p (id int PRIMARY KEY)")
	mustRun(t, s, "CREATE TABLE c (id int PRIMARY KEY, a int REFERENCES p)")
	mustRun(t, s, "CREATE TABLE g (b int REFERENCES c)")
	mustRun(t, s, "INSERT INTO p VALUES (1); INSERT INTO c VALUES (1, 1); INSERT INTO g VALUES (1)")
	if _, _, err := run(t, s, "TRUNCATE p"); pgerr.CodeOf(err) != pgerr.FeatureNotSupported {
		t.Fatalf("TRUNCATE p alone: %v", err)
	}
	res, err := exec1(context.Background(), s, "TRUNCATE p CASCADE")
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	for _, n := range res.Notices {
		notes = append(notes, n.Message)
	}
	if strings.Join(notes, "; ") != `truncate cascades to table "c"; truncate cascades to table "g"` {
		t.Errorf("notices %q", notes)
	}
	for _, tbl := range []string{"p", "c", "g"} {
		if rows, _, err := run(t, s, "SELECT count(*) FROM "+tbl); err != nil || rows[0] != "0" {
			t.Errorf("%s after TRUNCATE p CASCADE: %v %v", tbl, rows, err)
		}
	}
}

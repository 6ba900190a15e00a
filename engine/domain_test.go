package engine

import (
	"strings"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
)

// TestDomainCopyAndRestart: COPY FROM checks a domain column's values and
// fills an omitted one with the domain's default (or refuses its NULL);
// domains, and the columns of them, keep their constraints across a
// restart; DROP DOMAIN then still refuses while a column uses one.
func TestDomainCopyAndRestart(t *testing.T) {
	dir := t.TempDir()
	e, s := open(t, dir)
	mustRun(t, s, "CREATE DOMAIN pos AS int NOT NULL CHECK (VALUE > 0)")
	mustRun(t, s, "CREATE DOMAIN tag AS text DEFAULT 'none' CONSTRAINT tag_short CHECK (length(VALUE) < 5)")
	mustRun(t, s, "CREATE TABLE cd (id int, p pos, g tag)")
	copyIn := func(q, data string) error { t.Helper(); return copyFromStdin(t, s, q, data) }
	if err := copyIn("COPY cd FROM STDIN", "1\t5\tab\n"); err != nil {
		t.Fatal(err)
	}
	if err := copyIn("COPY cd (id, p) FROM STDIN", "2\t6\n"); err != nil {
		t.Fatal(err)
	}
	if err := copyIn("COPY cd FROM STDIN", "3\t0\tab\n"); pgerr.CodeOf(err) != pgerr.CheckViolation || !strings.Contains(err.Error(), `domain pos violates check constraint "pos_check"`) {
		t.Fatalf("a value failing the CHECK: %v", err)
	}
	if err := copyIn("COPY cd FROM STDIN", "3\t\\N\tab\n"); pgerr.CodeOf(err) != pgerr.NotNullViolation {
		t.Fatalf("NULL in a NOT NULL domain: %v", err)
	}
	if err := copyIn("COPY cd (id, g) FROM STDIN", "3\tab\n"); pgerr.CodeOf(err) != pgerr.NotNullViolation {
		t.Fatalf("an omitted NOT NULL domain column without a default: %v", err)
	}
	if err := copyIn("COPY cd FROM STDIN", "3\t1\ttoolong\n"); pgerr.CodeOf(err) != pgerr.CheckViolation {
		t.Fatalf("a named check: %v", err)
	}
	if got := strings.Join(mustRun(t, s, "SELECT id, p, g FROM cd ORDER BY id"), ","); got != "1|5|ab,2|6|none" {
		t.Fatalf("rows %q", got)
	}
	e.Close()

	e, s = open(t, dir)
	defer e.Close()
	if _, _, err := run(t, s, "INSERT INTO cd VALUES (4, -1, 'x')"); pgerr.CodeOf(err) != pgerr.CheckViolation {
		t.Fatalf("after restart, a column's domain: %v", err)
	}
	if _, _, err := run(t, s, "SELECT 'abcdef'::tag"); pgerr.CodeOf(err) != pgerr.CheckViolation || !strings.Contains(err.Error(), "tag_short") {
		t.Fatalf("after restart, a cast: %v", err)
	}
	mustRun(t, s, "INSERT INTO cd (id, p) VALUES (4, 7)")
	if got := strings.Join(mustRun(t, s, "SELECT g FROM cd WHERE id = 4"), ","); got != "none" {
		t.Fatalf("after restart, the domain's default: %q", got)
	}
	if _, _, err := run(t, s, "DROP DOMAIN pos"); pgerr.CodeOf(err) != pgerr.DependentObjectsStillExist {
		t.Fatalf("after restart, DROP DOMAIN of a used domain: %v", err)
	}
}

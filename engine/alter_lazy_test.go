package engine

import (
	"context"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
)

// A cursor open across an ALTER fails cleanly (40001) rather than opening a
// scan (here an uncorrelated subquery's, opened at the first fetch) with
// the plan of the table's old layout; without an ALTER it reads on.
func TestAlterDuringOpenCursor(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE TABLE t (a int, b text, c int, d int)")
	mustRun(t, s, "INSERT INTO t VALUES (1, 'x', 10, 100)")
	p := prepare(t, s, "SELECT g, (SELECT max(c) FROM t) FROM generate_series(1, 3) g")
	s2, err := e.NewSession("tester", "db", nil)
	if err != nil {
		t.Fatal(err)
	}

	res, err := s.Execute(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, s2, "CREATE TABLE unrelated (x int)") // other DDL does not matter
	if b, err := res.Rows.Next(); err != nil || b == nil || b.NumRows() != 3 {
		t.Fatalf("cursor without ALTER: %v, %v", b, err)
	}
	res.Rows.Close()

	res, err = s.Execute(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, s2, "ALTER TABLE t DROP COLUMN b")
	b, err := res.Rows.Next()
	res.Rows.Close()
	if pgerr.CodeOf(err) != pgerr.Code("40001") {
		t.Fatalf("cursor across ALTER: got %v, %v; want 40001", b, err)
	}
	if got := mustRun(t, s, "SELECT g, (SELECT max(c) FROM t) FROM generate_series(1, 2) g"); len(got) != 2 || got[0] != "1|10" {
		t.Fatalf("after ALTER: %v", got)
	}
}

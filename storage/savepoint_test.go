package storage

import (
	"strings"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
)

// TestSavepointRollbackTo: writes after a savepoint are undone (their keys
// free again), writes before it stay, and a table first written after it
// goes back to its committed rows.
func TestSavepointRollbackTo(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	a, _ := s.CreateTable(kvDef(1, true))
	b, _ := s.CreateTable(kvDef(2, true))
	a.Insert(ctx, seq(1, 2)) // id 0: key 1

	tx := s.Begin()
	if _, err := tx.Insert(ctx, a, seq(2, 3)); err != nil {
		t.Fatal(err)
	}
	sp := tx.Savepoint()
	if _, err := tx.Insert(ctx, a, seq(3, 5)); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Delete(ctx, a, []int64{0}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Insert(ctx, b, seq(7, 8)); err != nil {
		t.Fatal(err)
	}
	tx.RollbackTo(sp)
	if got := strings.Join(dump(tx.Snapshot(a)), " "); got != "0:1,v1 1:2,v2" {
		t.Fatalf("a after ROLLBACK TO: %s", got)
	}
	if got := dump(tx.Snapshot(b)); len(got) != 0 {
		t.Fatalf("b after ROLLBACK TO: %v", got)
	}
	// Keys written after the savepoint are free; key 2 (before it) is not.
	if _, err := tx.Insert(ctx, a, seq(3, 4)); err != nil {
		t.Fatalf("key 3 after ROLLBACK TO: %v", err)
	}
	if _, err := tx.Insert(ctx, a, seq(2, 3)); pgerr.CodeOf(err) != pgerr.UniqueViolation {
		t.Fatalf("key 2 kept: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	checkRows(t, a, []string{"0:1,v1", "1:2,v2", "2:3,v3"})
	checkRows(t, b, nil)
}

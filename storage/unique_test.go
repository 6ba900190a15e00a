package storage

import (
	"fmt"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// uniqDef is kvDef with a primary key on id and UNIQUE (s) named "t_s_key".
func uniqDef(oid uint32) TableDef {
	def := kvDef(oid, true)
	def.Unique = []UniqueKey{{Name: "t_s_key", Columns: []int{1}}}
	return def
}

func dupS(t *testing.T, err error, key string) {
	t.Helper()
	wantErr(t, err, pgerr.UniqueViolation, `duplicate key value violates unique constraint "t_s_key"`,
		"Key (s)=("+key+") already exists.")
}

func TestUniqueInsert(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	tb, err := s.CreateTable(uniqDef(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Insert(ctx, kvBatch(row(1, "a"), row(2, "b"))); err != nil {
		t.Fatal(err)
	}
	_, err = tb.Insert(ctx, kvBatch(row(3, "c"), row(4, "a")))
	dupS(t, err, "a")
	// Within one batch; nothing of it is kept.
	_, err = tb.Insert(ctx, kvBatch(row(5, "x"), row(6, "x")))
	dupS(t, err, "x")
	// The primary key is checked before the unique key (PostgreSQL: t_pkey first).
	_, err = tb.Insert(ctx, kvBatch(row(1, "a")))
	wantErr(t, err, pgerr.UniqueViolation, `duplicate key value violates unique constraint "t_pkey"`,
		"Key (id)=(1) already exists.")
	// NULLs are distinct.
	if _, err := tb.Insert(ctx, kvBatch(kv{id: ptr(int64(7))}, kv{id: ptr(int64(8))})); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Insert(ctx, kvBatch(row(5, "x"))); err != nil {
		t.Fatalf("x after the failed batch: %v", err)
	}
	checkRows(t, tb, []string{"0:1,a", "1:2,b", "2:7,(null)", "3:8,(null)", "4:5,x"})
}

func TestUniqueUpdateDelete(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	tb, _ := s.CreateTable(uniqDef(1))
	tb.Insert(ctx, kvBatch(row(1, "a"), row(2, "b")))
	// Swapping the keys of two rows in one update succeeds.
	if _, err := tb.Update(ctx, []int64{0, 1}, kvBatch(row(1, "b"), row(2, "a"))); err != nil {
		t.Fatal(err)
	}
	_, err := tb.Update(ctx, []int64{2}, kvBatch(row(1, "a")))
	dupS(t, err, "a")
	checkRows(t, tb, []string{"2:1,b", "3:2,a"})
	// Deleting frees the key.
	if _, err := tb.Delete(ctx, []int64{3}); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Insert(ctx, kvBatch(row(9, "a"))); err != nil {
		t.Fatal(err)
	}
	if err := tb.Truncate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Insert(ctx, kvBatch(row(1, "a"), row(2, "b"))); err != nil {
		t.Fatal(err)
	}
}

func TestUniqueTxRollbackAndRestart(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	tb, _ := s.CreateTable(uniqDef(1))
	tb.Insert(ctx, kvBatch(row(1, "a")))
	tx := s.Begin()
	if _, err := tx.Insert(ctx, tb, kvBatch(row(2, "b"))); err != nil {
		t.Fatal(err)
	}
	_, err := tx.Insert(ctx, tb, kvBatch(row(3, "b")))
	dupS(t, err, "b")
	tx.Rollback()
	if _, err := tb.Insert(ctx, kvBatch(row(3, "b"))); err != nil {
		t.Fatalf("b after rollback: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, dir)
	defer s.Close()
	tb = s.Table(1)
	if got := tb.Def().Unique; len(got) != 1 || got[0].Name != "t_s_key" || got[0].Columns[0] != 1 {
		t.Fatalf("recovered unique keys %+v", got)
	}
	_, err = tb.Insert(ctx, kvBatch(row(4, "a")))
	dupS(t, err, "a")
	if id, ok := tb.LookupUnique("t_s_key", []types.Value{"b"}); !ok || id != 1 { // row ids of a rolled back write are reused
		t.Fatalf("LookupUnique(b) = %d, %v", id, ok)
	}
	if _, ok := tb.LookupUnique("t_s_key", []types.Value{nil}); ok {
		t.Fatal("LookupUnique(NULL) found a row")
	}
}

func TestUniqueAlterDuplicate(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	tb, _ := s.CreateTable(kvDef(1, true))
	tb.Insert(ctx, kvBatch(row(1, "a"), row(2, "a")))
	err := tb.Alter(ctx, uniqDef(1), nil)
	wantErr(t, err, pgerr.UniqueViolation, `could not create unique index "t_s_key"`, "Key (s)=(a) is duplicated.")
}

func TestFindConflicts(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	tb, _ := s.CreateTable(uniqDef(1))
	tb.Insert(ctx, kvBatch(row(1, "a"), row(2, "b")))
	props := kvBatch(row(3, "a"), row(4, "z"), row(5, "z"), kv{id: ptr(int64(6))}, kv{id: ptr(int64(7))}, row(2, "q"))
	c, err := tb.FindConflicts(ctx, props, []string{"t_s_key"})
	if err != nil {
		t.Fatal(err)
	}
	wantIDs, wantEarlier := []int64{0, -1, -1, -1, -1, -1}, []int{-1, -1, 1, -1, -1, -1}
	for i := range wantIDs {
		if c.Existing[i] != wantIDs[i] || c.Earlier[i] != wantEarlier[i] {
			t.Fatalf("row %d: existing %d earlier %d, want %d %d", i, c.Existing[i], c.Earlier[i], wantIDs[i], wantEarlier[i])
		}
	}
	if c.Rows.NumRows() != 1 || c.Rows.Column(0).ValueStr(0) != "1" {
		t.Fatalf("conflicting rows %v", c.Rows)
	}
	// All arbiters: the last row conflicts on the primary key.
	c, err = tb.FindConflicts(ctx, props, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Existing[5] != 1 || c.Rows.NumRows() != 2 {
		t.Fatalf("existing %v, %d rows", c.Existing, c.Rows.NumRows())
	}
	// A row that conflicts itself is not inserted, so a later row with its
	// other key is no duplicate of it.
	c, err = tb.FindConflicts(ctx, kvBatch(row(1, "n"), row(9, "n"), row(10, "n")), nil)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(c.Existing, c.Earlier) != "[0 -1 -1] [-1 -1 1]" {
		t.Fatalf("existing %v, earlier %v", c.Existing, c.Earlier)
	}
	// In a transaction: sees its own rows, and unlocks the table at the end.
	tx := s.Begin()
	tctx := WithTx(ctx, tx)
	if _, err := tx.Insert(ctx, tb, kvBatch(row(4, "z"))); err != nil {
		t.Fatal(err)
	}
	c, err = tb.FindConflicts(tctx, props, []string{"t_s_key"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Existing[1] != 2 {
		t.Fatalf("tx view: existing %v", c.Existing)
	}
	tx.Rollback()
	tx = s.Begin()
	if _, err := tb.FindConflicts(WithTx(ctx, tx), props, nil); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Insert(ctx, kvBatch(row(4, "z"))); err != nil { // would wait forever if still locked
		t.Fatal(err)
	}
}

package storage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

func TestTxCommitAndRollback(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	tb, _ := s.CreateTable(kvDef(1, true))
	tb.Insert(ctx, seq(1, 4)) // ids 0..2

	tx := s.Begin()
	if _, err := tx.Insert(ctx, tb, seq(10, 11)); err != nil {
		t.Fatal(err)
	}
	if n, err := tx.Delete(ctx, tb, []int64{0}); err != nil || n != 1 {
		t.Fatalf("delete: %d %v", n, err)
	}
	if n, err := tx.Update(ctx, tb, []int64{1}, seq(20, 21)); err != nil || n != 1 {
		t.Fatalf("update: %d %v", n, err)
	}
	// The transaction's keys are checked against its own writes.
	if _, err := tx.Insert(ctx, tb, seq(10, 11)); pgerr.CodeOf(err) != pgerr.UniqueViolation {
		t.Fatalf("duplicate inside the transaction: %v", err)
	}
	inside := []string{"2:3,v3", "3:10,v10", "4:20,v20"}
	if got := dump(tx.Snapshot(tb)); strings.Join(got, " ") != strings.Join(inside, " ") {
		t.Fatalf("tx sees %v", got)
	}
	checkRows(t, tb, []string{"0:1,v1", "1:2,v2", "2:3,v3"}) // others do not
	tx.Rollback()
	checkRows(t, tb, []string{"0:1,v1", "1:2,v2", "2:3,v3"})
	// Keys are as before: 10 and 20 are free, 1 and 2 taken.
	if _, err := tb.Insert(ctx, kvBatch(row(1, "x"))); pgerr.CodeOf(err) != pgerr.UniqueViolation {
		t.Fatalf("key 1 after rollback: %v", err)
	}
	if _, err := tb.Insert(ctx, seq(10, 11)); err != nil {
		t.Fatal(err)
	}

	tx = s.Begin()
	tx.Delete(ctx, tb, []int64{0})
	tx.Insert(ctx, tb, kvBatch(row(1, "again")))
	tx.Truncate(ctx, tb)
	tx.Insert(ctx, tb, seq(30, 32))
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Insert(ctx, tb, seq(40, 41)); err == nil {
		t.Fatal("insert through an ended transaction succeeded")
	}
	want := dump(tb.Snapshot())
	if strings.Join(want, " ") != "5:30,v30 6:31,v31" {
		t.Fatalf("after commit: %v", want)
	}
	s.Close()
	s = mustOpen(t, dir)
	defer s.Close()
	checkRows(t, s.Table(1), want)
}

func TestTxLocks(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	a, _ := s.CreateTable(kvDef(1, true))
	b, _ := s.CreateTable(kvDef(2, true))
	tx1 := s.Begin()
	tx1.Insert(ctx, a, seq(1, 2))
	if err := s.DropTable(1); pgerr.CodeOf(err) != "55006" {
		t.Fatalf("drop of a locked table: %v", err)
	}
	if err := a.Alter(ctx, kvDef(1, true), nil); pgerr.CodeOf(err) != "55006" {
		t.Fatalf("alter of a locked table: %v", err)
	}
	// A writer outside the transaction waits for it, then goes on.
	done := make(chan error)
	go func() { _, err := a.Insert(ctx, seq(2, 3)); done <- err }()
	if err := tx1.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	checkRows(t, a, []string{"0:1,v1", "1:2,v2"})

	// tx1 holds a and wants b; tx2 holds b and wants a: one of them fails.
	tx1, tx2 := s.Begin(), s.Begin()
	tx1.Insert(ctx, a, seq(10, 11))
	tx2.Insert(ctx, b, seq(20, 21))
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, step := range []func() error{
		func() error { _, err := tx1.Insert(ctx, b, seq(11, 12)); return err },
		func() error { _, err := tx2.Insert(ctx, a, seq(21, 22)); return err },
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = step()
			if errs[i] != nil { // the victim gives up its locks
				[]*Tx{tx1, tx2}[i].Rollback()
			}
		}()
	}
	wg.Wait()
	failed := 0
	for _, err := range errs {
		if err != nil {
			if pgerr.CodeOf(err) != "40P01" || err.Error() != "deadlock detected" {
				t.Fatalf("error %v", err)
			}
			failed++
		}
	}
	if failed == 0 {
		t.Fatal("no deadlock detected")
	}
	tx1.Commit(ctx)
	tx2.Commit(ctx)
	has := func(tb *Table, k int64) bool { _, ok := tb.LookupKey([]types.Value{k}); return ok }
	if (errs[0] == nil) != (has(a, 10) && has(b, 11)) || (errs[1] == nil) != (has(b, 20) && has(a, 21)) {
		t.Fatalf("errors %v; a has 10: %v, 21: %v; b has 11: %v, 20: %v", errs, has(a, 10), has(a, 21), has(b, 11), has(b, 20))
	}
}

// TestTxCrash cuts the log inside a committed transaction's chained frames:
// recovery keeps all of it or none.
func TestTxCrash(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	tb, _ := s.CreateTable(kvDef(7, true))
	tb.Insert(ctx, seq(0, 3))
	before := dump(tb.Snapshot())
	start := tb.LogBytes()
	tx := s.Begin()
	tx.Insert(ctx, tb, seq(10, 12))
	tx.Delete(ctx, tb, []int64{1})
	tx.Update(ctx, tb, []int64{2}, seq(20, 21))
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	after := dump(tb.Snapshot())
	s.Close()
	log, _ := os.ReadFile(filepath.Join(dir, "7.log"))
	for cut := start; cut <= int64(len(log)); cut++ {
		rows, ok, _ := reopenWith(t, log[:cut])
		want := before
		if cut == int64(len(log)) {
			want = after
		}
		if !ok || strings.Join(rows, " ") != strings.Join(want, " ") {
			t.Fatalf("cut %d: %v, want %v", cut, rows, want)
		}
	}
}

func TestTxInContext(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	tb, _ := s.CreateTable(kvDef(1, true))
	tx := s.Begin()
	tctx := WithTx(ctx, tx)
	if _, err := tb.Insert(tctx, seq(1, 3)); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Delete(tctx, []int64{0}); err != nil {
		t.Fatal(err)
	}
	if got := dump(tb.SnapshotIn(tctx)); strings.Join(got, " ") != "1:2,v2" {
		t.Fatalf("inside: %v", got)
	}
	if got := dump(tb.SnapshotIn(ctx)); len(got) != 0 {
		t.Fatalf("outside: %v", got)
	}
	tx.Rollback()
	if _, err := tb.Insert(tctx, seq(5, 6)); err == nil {
		t.Fatal("write through an ended transaction's context succeeded")
	}
	checkRows(t, tb, nil)
}

func TestLockWaitCanceled(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	tb, _ := s.CreateTable(kvDef(1, false))
	tx := s.Begin()
	tx.Insert(ctx, tb, seq(0, 1))
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() { _, err := tb.Insert(cctx, seq(1, 2)); done <- err }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled wait returned %v", err)
	}
	tx.Commit(ctx)
	checkRows(t, tb, []string{"0:0,v0"})
}

// ReserveDrop refuses a table an open transaction wrote, and holds off
// writers (transactions included) until the drop is done or canceled.
func TestReserveDrop(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	a, _ := s.CreateTable(kvDef(1, true))
	tx := s.Begin()
	if _, err := tx.Insert(ctx, a, seq(1, 2)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReserveDrop(1); pgerr.CodeOf(err) != "55006" {
		t.Fatalf("reserve of a table an open transaction wrote: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	cancel, err := s.ReserveDrop(1)
	if err != nil {
		t.Fatal(err)
	}
	tx = s.Begin()
	if _, err := tx.Insert(ctx, a, seq(2, 3)); err == nil {
		t.Fatal("a transaction wrote a table reserved for DROP")
	}
	tx.Rollback()
	if _, err := a.Insert(ctx, seq(2, 3)); err == nil {
		t.Fatal("a write to a table reserved for DROP succeeded")
	}
	cancel()
	if _, err := a.Insert(ctx, seq(3, 4)); err != nil {
		t.Fatalf("write after a canceled reservation: %v", err)
	}
	if _, err := s.ReserveDrop(1); err != nil {
		t.Fatal(err)
	}
	if err := s.DropTable(1); err != nil {
		t.Fatal(err)
	}
}

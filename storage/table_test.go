package storage

import (
	"context"
	"fmt"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/pgerr"
	"testing"
)

var ctx = context.Background()

func TestInsertDeleteUpdateReopen(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	tb, err := s.CreateTable(kvDef(16384, false))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := tb.Insert(ctx, kvBatch(row(1, "a"), row(2, "b"), kv{s: nil, id: nil})); err != nil || n != 3 {
		t.Fatalf("insert: %d %v", n, err)
	}
	if n, err := tb.Insert(ctx, kvBatch(row(4, "d"))); err != nil || n != 1 {
		t.Fatalf("insert: %d %v", n, err)
	}
	want := []string{"0:1,a", "1:2,b", "2:(null),(null)", "3:4,d"}
	checkRows(t, tb, want)

	// Delete skips unknown, repeated and already deleted ids.
	if n, err := tb.Delete(ctx, []int64{1, 1, 99, -5}); err != nil || n != 1 {
		t.Fatalf("delete: %d %v", n, err)
	}
	if n, err := tb.Delete(ctx, []int64{1}); err != nil || n != 0 {
		t.Fatalf("delete again: %d %v", n, err)
	}
	// Update gives new row ids; a deleted target is skipped with its row.
	if n, err := tb.Update(ctx, []int64{0, 1, 3}, kvBatch(row(10, "A"), row(20, "B"), row(40, "D"))); err != nil || n != 2 {
		t.Fatalf("update: %d %v", n, err)
	}
	want = []string{"2:(null),(null)", "4:10,A", "5:40,D"}
	checkRows(t, tb, want)

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, dir)
	tb = s.Table(16384)
	if tb == nil {
		t.Fatal("table not recovered")
	}
	checkRows(t, tb, want)
	// Row ids continue after recovery.
	if _, err := tb.Insert(ctx, kvBatch(row(7, "g"))); err != nil {
		t.Fatal(err)
	}
	checkRows(t, tb, append(want, "6:7,g"))

	if err := tb.Truncate(ctx); err != nil {
		t.Fatal(err)
	}
	checkRows(t, tb, nil)
	if _, err := tb.Insert(ctx, kvBatch(row(8, "h"))); err != nil {
		t.Fatal(err)
	}
	checkRows(t, tb, []string{"7:8,h"})
	s.Close()
	s = mustOpen(t, dir)
	defer s.Close()
	checkRows(t, s.Table(16384), []string{"7:8,h"})
}

func TestSnapshotIsImmutable(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	tb, _ := s.CreateTable(kvDef(1, false))
	tb.Insert(ctx, seq(0, 3))
	before := tb.Snapshot()
	want := dump(before)
	tb.Delete(ctx, []int64{0, 2})
	tb.Insert(ctx, seq(3, 5))
	tb.Update(ctx, []int64{1}, seq(9, 10))
	if got := dump(before); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("old snapshot changed: %v, was %v", got, want)
	}
	tb.Truncate(ctx)
	if got := dump(before); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("old snapshot changed after truncate: %v, was %v", got, want)
	}
}

func TestSmallInsertsCoalesce(t *testing.T) {
	st := &state{}
	const n = 1000
	for i := int64(0); i < n; i++ {
		st = st.withInsert(i, seq(i, i+1))
	}
	// 1000 = 512+256+128+64+32+8: one chunk per set bit.
	var sizes []int64
	for _, c := range st.chunks {
		sizes = append(sizes, c.Rec.NumRows())
	}
	if fmt.Sprint(sizes) != "[512 256 128 64 32 8]" {
		t.Fatalf("chunk sizes after %d single-row inserts: %v", n, sizes)
	}
	rows := dump(Snapshot{Chunks: st.chunks})
	if len(rows) != n || rows[0] != "0:0,v0" || rows[n-1] != fmt.Sprintf("%d:%d,v%d", n-1, n-1, n-1) {
		t.Fatalf("rows: %d, first %q, last %q", len(rows), rows[0], rows[len(rows)-1])
	}
	// A big batch is kept as given; merging stops at maxMergeRows.
	big := seq(n, n+maxMergeRows)
	st = st.withInsert(n, big)
	if last := st.chunks[len(st.chunks)-1]; last.Rec != big {
		t.Fatalf("big batch copied or merged: %d rows", last.Rec.NumRows())
	}
	// Deleting a row marks it in a new bitmap; deleting a whole chunk drops it.
	before := st
	st, _ = st.withDelete([]int64{0, 992, 993, 994, 995, 996, 997, 998, 999})
	if st.live != n-9+maxMergeRows || len(st.chunks) != 6 || st.chunks[0].Deleted == nil {
		t.Fatalf("after delete: %d live, %d chunks", st.live, len(st.chunks))
	}
	if before.chunks[0].Deleted != nil || len(before.chunks) != 7 {
		t.Fatal("delete changed the previous state")
	}
}

func TestSmallInsertsThroughStore(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	tb, _ := s.CreateTable(kvDef(1, true))
	for i := int64(0); i < 100; i++ {
		if _, err := tb.Insert(ctx, seq(i, i+1)); err != nil {
			t.Fatal(err)
		}
	}
	// 100 = 64+32+4
	if got := len(tb.Snapshot().Chunks); got != 3 {
		t.Fatalf("%d chunks, want 3", got)
	}
	want := dump(tb.Snapshot())
	s.Close()
	s = mustOpen(t, dir)
	defer s.Close()
	tb = s.Table(1)
	checkRows(t, tb, want)
	if got := len(tb.Snapshot().Chunks); got != 3 {
		t.Fatalf("%d chunks after recovery, want 3", got)
	}
}

func TestDropTable(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	tb, _ := s.CreateTable(kvDef(5, false))
	tb.Insert(ctx, seq(0, 3))
	s.CreateTable(kvDef(6, false))
	if _, err := s.CreateTable(kvDef(6, false)); err == nil {
		t.Fatal("creating an existing table succeeded")
	}
	if err := s.DropTable(5); err != nil {
		t.Fatal(err)
	}
	if s.Table(5) != nil {
		t.Fatal("dropped table still there")
	}
	if _, err := tb.Insert(ctx, seq(3, 4)); err == nil {
		t.Fatal("insert into dropped table succeeded")
	}
	s.Close()
	s = mustOpen(t, dir)
	if got := fmt.Sprint(s.Tables()); got != "[6]" {
		t.Fatalf("tables after reopen: %s", got)
	}
	// The OID can be used again.
	tb, err := s.CreateTable(kvDef(5, false))
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, tb, nil)
	s.Close()
}

func TestStoreLockAndBadBatches(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	if _, err := Open(dir); err == nil {
		t.Fatal("a second Open of the same directory succeeded")
	}
	tb, _ := s.CreateTable(kvDef(1, false))
	if _, err := tb.Insert(ctx, seq(0, 2).NewSlice(0, 1)); err != nil {
		t.Fatal(err)
	}
	short := seq(0, 2)
	if _, err := tb.Insert(ctx, int8Batch(0, 2)); err == nil {
		t.Fatal("batch of the wrong types accepted")
	}
	if _, err := tb.Update(ctx, []int64{0}, short); err == nil {
		t.Fatal("update with more rows than ids accepted")
	}
	s.Close()
	s = mustOpen(t, dir) // the lock is released by Close
	s.Close()
}

func TestInsertBatches(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	tb, _ := s.CreateTable(kvDef(1, true))
	tb.Insert(ctx, seq(0, 2))
	// A key of the third batch repeats one of the first: nothing is written.
	_, err := tb.InsertBatches(ctx, []arrow.RecordBatch{seq(10, 12), seq(12, 13), seq(11, 12)})
	if pgerr.CodeOf(err) != pgerr.UniqueViolation {
		t.Fatalf("err = %v", err)
	}
	big := seq(100, 100+maxMergeRows) // too big to merge with the tail
	n, err := tb.InsertBatches(ctx, []arrow.RecordBatch{seq(10, 12), seq(12, 12), seq(12, 13), big})
	if err != nil || n != 3+int64(big.NumRows()) {
		t.Fatalf("InsertBatches = %d, %v", n, err)
	}
	snap := tb.Snapshot()
	if last := snap.Chunks[len(snap.Chunks)-1]; last.Rec.Column(0) != big.Column(0) {
		t.Fatal("the big batch was copied")
	}
	want := dump(snap)
	if int64(len(want)) != 5+big.NumRows() || want[2] != "2:10,v10" || want[4] != "4:12,v12" {
		t.Fatalf("rows: %v ...", want[:5])
	}
	s.Close()
	s = mustOpen(t, dir)
	defer s.Close()
	checkRows(t, s.Table(1), want)
}

package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// TestMetaAtomicWithWrite cuts the log at every byte of a write that
// carries metadata: recovery keeps the rows and the metadata together, or
// neither.
func TestMetaAtomicWithWrite(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	tb, err := s.CreateTable(kvDef(7, false))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.InsertBatchesMeta(ctx, []arrow.RecordBatch{seq(0, 2)}, []byte("pos-1")); err != nil {
		t.Fatal(err)
	}
	before := tb.log.size.Load()
	rowsBefore := dump(tb.Snapshot())
	if _, err := tb.InsertBatchesMeta(ctx, []arrow.RecordBatch{seq(2, 4), seq(4, 5)}, []byte("pos-2")); err != nil {
		t.Fatal(err)
	}
	if got := string(tb.Meta()); got != "pos-2" {
		t.Fatalf("Meta = %q, want pos-2", got)
	}
	// A write without rows writes nothing and keeps the metadata.
	if _, err := tb.InsertBatchesMeta(ctx, []arrow.RecordBatch{seq(9, 9)}, []byte("pos-3")); err != nil {
		t.Fatal(err)
	}
	after := tb.log.size.Load()
	rowsAfter := dump(tb.Snapshot())
	lsn := tb.LSN()
	s.Close()
	log, err := os.ReadFile(filepath.Join(dir, "7.log"))
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(log)) != after {
		t.Fatalf("log is %d bytes, want %d", len(log), after)
	}
	for cut := before; cut <= after; cut++ {
		rows, meta, gotLSN := reopenMeta(t, log[:cut])
		want, wantMeta, wantLSN := rowsBefore, "pos-1", lsn-1
		if cut == after {
			want, wantMeta, wantLSN = rowsAfter, "pos-2", lsn
		}
		if strings.Join(rows, " ") != strings.Join(want, " ") || meta != wantMeta || gotLSN != wantLSN {
			t.Fatalf("cut %d: rows %v meta %q lsn %d, want %v %q %d", cut, rows, meta, gotLSN, want, wantMeta, wantLSN)
		}
	}
}

func reopenMeta(t *testing.T, log []byte) ([]string, string, uint64) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "7.log"), log, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	tb := s.Table(7)
	return dump(tb.Snapshot()), string(tb.Meta()), tb.LSN()
}

// TestMetaSurvivesCompaction: compaction folds the metadata frames into
// the header; the last metadata survives it, a restart, and later writes
// without metadata (user DML).
func TestMetaSurvivesCompaction(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	tb, err := s.CreateTable(kvDef(7, true))
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(0); i < 5; i++ {
		if _, err := tb.InsertBatchesMeta(ctx, []arrow.RecordBatch{seq(i*10, i*10+10)}, fmt.Appendf(nil, "p%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tb.Delete(ctx, []int64{0, 1}); err != nil { // DML between ingest writes
		t.Fatal(err)
	}
	if err := tb.Compact(); err != nil {
		t.Fatal(err)
	}
	want := dump(tb.Snapshot())
	s.Close()

	s = mustOpen(t, dir)
	tb = s.Table(7)
	if got := string(tb.Meta()); got != "p4" {
		t.Fatalf("after compaction and restart: Meta = %q, want p4", got)
	}
	checkRows(t, tb, want)
	if _, err := tb.Insert(ctx, seq(100, 101)); err != nil {
		t.Fatal(err)
	}
	if err := tb.Compact(); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.InsertBatchesMeta(ctx, []arrow.RecordBatch{seq(200, 201)}, []byte("p5")); err != nil {
		t.Fatal(err)
	}
	if err := tb.Truncate(ctx); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = mustOpen(t, dir)
	defer s.Close()
	tb = s.Table(7)
	if got := string(tb.Meta()); got != "p5" {
		t.Fatalf("after truncate and restart: Meta = %q, want p5", got)
	}
	if tb.RowCount() != 0 {
		t.Fatalf("rows = %d, want 0", tb.RowCount())
	}
}

// TestMetaRefusedInTx: the metadata write is its own write.
func TestMetaRefusedInTx(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	tb, err := s.CreateTable(kvDef(7, false))
	if err != nil {
		t.Fatal(err)
	}
	tx := s.Begin()
	defer tx.Rollback()
	if _, err := tb.InsertBatchesMeta(WithTx(ctx, tx), []arrow.RecordBatch{seq(0, 1)}, []byte("p")); err == nil {
		t.Fatal("InsertBatchesMeta in a transaction succeeded")
	}
}

// TestUpsertMeta: rows with a key already present replace it, deletes
// remove by key, all in one write with the metadata; a restart replays
// the same rows and Meta, and a feed sees the delete and the insert.
func TestUpsertMeta(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	tb, err := s.CreateTable(kvDef(7, true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.UpsertMeta(ctx, seq(0, 4), nil, []byte("p1")); err != nil {
		t.Fatal(err)
	}
	_, feed := tb.Subscribe()
	defer feed.Close()
	n, err := tb.UpsertMeta(ctx, kvBatch(row(1, "new1"), row(9, "v9")), kvBatch(kv{id: ptr(int64(2))}, kv{id: ptr(int64(77))}), []byte("p2"))
	if err != nil {
		t.Fatal(err)
	}
	if n != 4 { // 2 deleted (1 and 2), 2 inserted
		t.Fatalf("n = %d, want 4", n)
	}
	want := []string{"0:0,v0", "3:3,v3", "4:1,new1", "5:9,v9"}
	checkRows(t, tb, want)
	ds := feed.Poll()
	if len(ds) != 2 {
		t.Fatalf("feed: %d deltas, want 2 (delete, insert)", len(ds))
	}
	// Nothing to change: nothing written.
	size := tb.LogBytes()
	if _, err := tb.UpsertMeta(ctx, nil, kvBatch(kv{id: ptr(int64(77))}), []byte("p3")); err != nil {
		t.Fatal(err)
	}
	if tb.LogBytes() != size || string(tb.Meta()) != "p2" {
		t.Fatalf("a write without changes: log %d -> %d bytes, Meta %q", size, tb.LogBytes(), tb.Meta())
	}
	// A key repeated by the upserts fails the whole write.
	if _, err := tb.UpsertMeta(ctx, kvBatch(row(5, "a"), row(5, "b")), nil, []byte("p4")); err == nil {
		t.Fatal("duplicate keys in one upsert succeeded")
	}
	checkRows(t, tb, want)
	if _, err := tb.UpsertMeta(ctx, kvBatch(row(3, "x")), nil, []byte("p5")); err != nil {
		t.Fatal(err)
	}
	want = []string{"0:0,v0", "4:1,new1", "5:9,v9", "6:3,x"}
	s.Close()
	s = mustOpen(t, dir)
	defer s.Close()
	tb = s.Table(7)
	checkRows(t, tb, want)
	if string(tb.Meta()) != "p5" {
		t.Fatalf("Meta = %q, want p5", tb.Meta())
	}
}

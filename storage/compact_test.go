package storage

import (
	"os"
	"testing"
)

func TestCompactKeepsContents(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	tb, _ := s.CreateTable(kvDef(4, true))
	for i := int64(0); i < 100; i += 10 {
		tb.Insert(ctx, seq(i, i+10))
	}
	var ids []int64
	for i := int64(0); i < 100; i += 2 {
		ids = append(ids, i)
	}
	tb.Delete(ctx, ids)
	for i := int64(0); i < 20; i++ { // the same row, many times
		snap := tb.Snapshot()
		last := snap.Chunks[len(snap.Chunks)-1]
		tb.Update(ctx, []int64{last.FirstRowID + last.Rec.NumRows() - 1}, seq(1000+i, 1001+i))
	}
	// Delete the newest rows: only the header can carry the row id counter.
	tb.Insert(ctx, seq(3000, 3002))
	newest := tb.w.next
	if n, _ := tb.Delete(ctx, []int64{newest - 1, newest - 2}); n != 2 {
		t.Fatal("delete of the newest rows failed")
	}
	want := dump(tb.Snapshot())
	before := tb.log.size.Load()
	if err := tb.Compact(); err != nil {
		t.Fatal(err)
	}
	after := tb.log.size.Load()
	if after >= before {
		t.Fatalf("log grew from %d to %d bytes", before, after)
	}
	if fi, _ := os.Stat(tb.log.path); fi.Size() != after || tb.LogBytes() != after {
		t.Fatalf("file is %d bytes, size says %d", fi.Size(), after)
	}
	checkRows(t, tb, want)
	s.Close()
	s = mustOpen(t, dir)
	tb = s.Table(4)
	checkRows(t, tb, want)
	if tb.w.next != newest {
		t.Fatalf("row id counter %d after compaction and reopen, want %d", tb.w.next, newest)
	}
	// Writes continue on the new log; keys are still enforced.
	if _, err := tb.Insert(ctx, seq(1019, 1020)); err == nil {
		t.Fatal("duplicate key accepted after compaction")
	}
	if _, err := tb.Insert(ctx, seq(2000, 2001)); err != nil {
		t.Fatal(err)
	}
	next := tb.w.next
	want = dump(tb.Snapshot())
	s.Close()
	s = mustOpen(t, dir)
	defer s.Close()
	tb = s.Table(4)
	checkRows(t, tb, want)
	if tb.w.next != next {
		t.Fatalf("row id counter %d after reopen, want %d", tb.w.next, next)
	}
	if _, err := tb.Insert(ctx, seq(1019, 1020)); err == nil {
		t.Fatal("duplicate key accepted after reopen")
	}
}

func TestAutoCompaction(t *testing.T) {
	old := minCompactBytes
	minCompactBytes = 4 << 10
	defer func() { minCompactBytes = old }()
	dir := t.TempDir()
	s := mustOpen(t, dir)
	tb, _ := s.CreateTable(kvDef(4, true))
	tb.Insert(ctx, seq(0, 1))
	for i := int64(0); i < 400; i++ { // each update leaves a dead row in the log
		snap := tb.Snapshot()
		c := snap.Chunks[len(snap.Chunks)-1]
		if _, err := tb.Update(ctx, []int64{c.FirstRowID + c.Rec.NumRows() - 1}, seq(i+1, i+2)); err != nil {
			t.Fatal(err)
		}
	}
	want := dump(tb.Snapshot())
	if err := s.Close(); err != nil { // waits for a running compaction
		t.Fatal(err)
	}
	fi, err := os.Stat(tb.log.path)
	if err != nil {
		t.Fatal(err)
	}
	// 400 update records take ~70 bytes each; compaction keeps it far below.
	if fi.Size() > 3*minCompactBytes {
		t.Fatalf("log is %d bytes: never compacted", fi.Size())
	}
	s = mustOpen(t, dir)
	defer s.Close()
	checkRows(t, s.Table(4), want)
}

package storage

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/types"
)

// feedText reads everything FeedFrom(lsn) has now, as deltaText.
func feedText(t *testing.T, tb *Table, lsn uint64) (string, error) {
	t.Helper()
	f, err := tb.FeedFrom(lsn)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return deltaText(f.Poll()), nil
}

func wantGone(t *testing.T, tb *Table, lsn uint64) {
	t.Helper()
	if _, err := tb.FeedFrom(lsn); !errors.Is(err, ErrPositionGone) {
		t.Fatalf("FeedFrom(%d) at %d: %v, want ErrPositionGone", lsn, tb.LSN(), err)
	}
}

func TestLSNCountsWrites(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	tb, _ := s.CreateTable(kvDef(3, true))
	if tb.LSN() != 0 || tb.Position().LSN() != 0 || (Position{}).LSN() != 0 {
		t.Fatalf("a new table is at LSN %d", tb.LSN())
	}
	tb.Insert(ctx, seq(0, 2))
	tb.Delete(ctx, []int64{7}) // no such row: no write
	tx := s.Begin()
	tx.Insert(ctx, tb, seq(2, 3))
	tx.Delete(ctx, tb, []int64{0})
	tx.Commit(ctx) // one write
	if tb.LSN() != 2 || tb.Position().LSN() != 2 {
		t.Fatalf("LSN %d after two writes", tb.LSN())
	}
	tb.Compact()
	s.Close()
	s = mustOpen(t, dir)
	defer s.Close()
	tb = s.Table(3)
	if tb.LSN() != 2 {
		t.Fatalf("LSN %d after compaction and restart, want 2", tb.LSN())
	}
	tb.Truncate(ctx)
	if tb.LSN() != 3 {
		t.Fatalf("LSN %d after one more write", tb.LSN())
	}
	// Nothing retained: only the current position.
	if txt, err := feedText(t, tb, 3); err != nil || txt != "" {
		t.Fatalf("FeedFrom(current): %q, %v", txt, err)
	}
	wantGone(t, tb, 2)
	wantGone(t, tb, 4)
	if err := tb.Retain(4); err == nil {
		t.Fatal("Retain beyond the last write accepted")
	}
}

// TestRetainKeepsOlderMark: the writes after the older of the last two
// marks stay, across compaction and restart; a third mark lets go of the
// first's writes.
func TestRetainKeepsOlderMark(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	tb, _ := s.CreateTable(kvDef(3, true))
	for i := int64(0); i < 6; i++ {
		tb.Insert(ctx, seq(i, i+1))
	}
	tb.Retain(2)
	tb.Update(ctx, []int64{2}, kvBatch(row(2, "two")))
	tb.Retain(4)
	tb.Delete(ctx, []int64{0})
	// The first Retain keeps in memory from the current position on: the
	// writes between 2 and it are only in the log, which compaction keeps.
	wantGone(t, tb, 2)
	size := tb.LogBytes()
	if err := tb.Compact(); err != nil || tb.LogBytes() != size {
		t.Fatalf("compaction: %v, %d -> %d bytes", err, size, tb.LogBytes())
	}
	want := "+2,v2 | +3,v3 | +4,v4 | +5,v5 | U -2,v2 +2,two | -0,v0"
	for i := 0; i < 2; i++ { // from the log's writes, then from its history
		s.Close()
		s = mustOpen(t, dir)
		tb = s.Table(3)
		if txt, err := feedText(t, tb, 2); err != nil || txt != want {
			t.Fatalf("after restart %d FeedFrom(2) = %q, %v; want %q", i, txt, err, want)
		}
		if err := tb.Compact(); err != nil {
			t.Fatal(err)
		}
		if h := logHeader(t, tb.log.path); h.Hist != 2 || h.LSN != 8 {
			t.Fatalf("compacted log holds history from %d to %d, want 2 to 8", h.Hist, h.LSN)
		}
		if txt, err := feedText(t, tb, 2); err != nil || txt != want {
			t.Fatalf("after compaction FeedFrom(2) = %q, %v; want %q", txt, err, want)
		}
	}
	wantGone(t, tb, 1)
	tb.Retain(7)
	wantGone(t, tb, 2)
	if txt, err := feedText(t, tb, 4); err != nil || txt != "+4,v4 | +5,v5 | U -2,v2 +2,two | -0,v0" {
		t.Fatalf("FeedFrom(4) = %q, %v", txt, err)
	}
	// A torn write of the newest slot falls back to the previous marks.
	s.Close()
	path := filepath.Join(dir, "3.log")
	log, _ := os.ReadFile(path)
	markAt := markBlockAt(t, log)
	m := decodeMarkBlock(log[markAt : markAt+markBlockLen])
	if m.older != 4 || m.newer != 7 {
		t.Fatalf("marks on disk %+v, want 4 7", m)
	}
	log[markAt+int(slotOffset(m))+5] ^= 1
	os.WriteFile(path, log, 0o644)
	s = mustOpen(t, dir)
	defer s.Close()
	tb = s.Table(3)
	if txt, err := feedText(t, tb, 2); err != nil || txt != want {
		t.Fatalf("after a torn mark FeedFrom(2) = %q, %v; want %q", txt, err, want)
	}
}

// markBlockAt returns the offset of a log's mark block (after its header).
func markBlockAt(t *testing.T, log []byte) int {
	t.Helper()
	n := int(log[0]) | int(log[1])<<8 | int(log[2])<<16 | int(log[3])<<24
	return frameHeaderLen + n
}

// logHeader reads a log's header.
func logHeader(t *testing.T, path string) headerDef {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := decodeRecord(b[frameHeaderLen:markBlockAt(t, b)], nil)
	if err != nil {
		t.Fatal(err)
	}
	return r.hdr
}

func TestRetainAlterStartsNewSpace(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	tb, _ := s.CreateTable(kvDef(3, true))
	tb.Insert(ctx, seq(0, 2))
	tb.Retain(1)
	tb.Insert(ctx, seq(2, 3))
	def := kvDef(3, true)
	def.TableName = "renamed"
	if err := tb.Alter(ctx, def, nil); err != nil {
		t.Fatal(err)
	}
	if tb.LSN() != 3 {
		t.Fatalf("LSN %d after ALTER, want 3", tb.LSN())
	}
	tb.Insert(ctx, seq(3, 4))
	check := func() {
		t.Helper()
		wantGone(t, tb, 1)
		wantGone(t, tb, 2)
		if txt, err := feedText(t, tb, 3); err != nil || txt != "+3,v3" {
			t.Fatalf("FeedFrom(3) = %q, %v", txt, err)
		}
	}
	check()
	tb.Retain(3)
	tb.Compact()
	check()
	s.Close()
	s = mustOpen(t, dir)
	defer s.Close()
	tb = s.Table(3)
	check()
}

func TestReleaseRetained(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	tb, _ := s.CreateTable(kvDef(3, true))
	tb.Insert(ctx, seq(0, 1000))
	tb.Retain(1)
	for i := int64(0); i < 100; i++ {
		tb.Update(ctx, []int64{i}, seq(i, i+1))
	}
	tb.Compact()
	withHist := tb.LogBytes()
	if err := tb.ReleaseRetained(); err != nil {
		t.Fatal(err)
	}
	wantGone(t, tb, 1)
	tb.Compact()
	if tb.LogBytes() >= withHist {
		t.Fatalf("log of %d bytes after release, %d with the retained writes", tb.LogBytes(), withHist)
	}
	s.Close()
	s = mustOpen(t, dir)
	defer s.Close()
	tb = s.Table(3)
	wantGone(t, tb, 1)
	if _, err := feedText(t, tb, tb.LSN()); err != nil {
		t.Fatal(err)
	}
}

// TestRetainMemoryBound: past maxRetainBytes the in-memory chain is dropped
// and compaction keeps the log, so a restart still replays the writes.
func TestRetainMemoryBound(t *testing.T) {
	defer func(v int64) { maxRetainBytes = v }(maxRetainBytes)
	maxRetainBytes = 64 << 10
	dir := t.TempDir()
	s := mustOpen(t, dir)
	tb, _ := s.CreateTable(kvDef(3, true))
	tb.Insert(ctx, seq(0, 10))
	tb.Retain(1)
	tb.Retain(1) // again: no change
	var want []string
	for i := int64(10); i < 5000; i += 500 {
		tb.Insert(ctx, seq(i, i+500))
		want = append(want, deltaText([]Delta{{Inserted: []arrow.RecordBatch{seq(i, i+500)}}}))
	}
	wantGone(t, tb, 1)
	size := tb.LogBytes()
	if err := tb.Compact(); err != nil || tb.LogBytes() != size {
		t.Fatalf("compaction of a table whose retained writes are only in its log: %v, %d -> %d bytes", err, size, tb.LogBytes())
	}
	s.Close()
	s = mustOpen(t, dir)
	defer s.Close()
	tb = s.Table(3)
	if txt, err := feedText(t, tb, 1); err != nil || txt != strings.Join(want, " | ") {
		t.Fatalf("after restart FeedFrom(1): %v, %d bytes", err, len(txt))
	}
	// Retain moves on: a new root from the current position, compaction
	// once the marks passed it.
	lsn := tb.LSN()
	tb.Insert(ctx, seq(9000, 9001))
	tb.Retain(lsn)
	tb.Retain(lsn + 1)
	if err := tb.Compact(); err != nil || tb.LogBytes() >= size {
		t.Fatalf("no compaction after the marks moved on: %v, %d bytes", err, tb.LogBytes())
	}
}

// TestOldLogOpens: a log from before LSNs (no format, no mark block) opens,
// counts its writes as LSNs, retains nothing, and is rewritten in the
// current format.
func TestOldLogOpens(t *testing.T) {
	dir := t.TempDir()
	def := kvDef(5, true)
	log := encodeHeader(headerDef{Def: def}, 0)
	if strings.Contains(string(log), "format") {
		t.Fatal("an old header has no format")
	}
	ins, _ := encodeInsert(0, seq(0, 3), false)
	log = append(log, ins...)
	log = append(log, encodeDelete([]int64{1})...)
	path := filepath.Join(dir, "5.log")
	os.WriteFile(path, log, 0o644)
	s := mustOpen(t, dir)
	tb := s.Table(5)
	checkRows(t, tb, []string{"0:0,v0", "2:2,v2"})
	if tb.LSN() != 2 {
		t.Fatalf("LSN %d, want 2", tb.LSN())
	}
	wantGone(t, tb, 1)
	tb.Retain(2)
	tb.Insert(ctx, seq(5, 6))
	s.Close()
	if h := logHeader(t, path); h.Format != logFormat || h.Base != 2 || h.LSN != 2 {
		js, _ := json.Marshal(h)
		t.Fatalf("header after upgrade: %s", js)
	}
	s = mustOpen(t, dir)
	defer s.Close()
	tb = s.Table(5)
	if txt, err := feedText(t, tb, 2); err != nil || txt != "+5,v5" {
		t.Fatalf("FeedFrom(2) = %q, %v", txt, err)
	}
	wantGone(t, tb, 1)
}

// TestRetainConcurrent: writers, compactions, Retain and FeedFrom at once
// (run with -race); every feed taken at a retained position, read to the
// end, leads from the snapshot at its LSN to the final rows.
func TestRetainConcurrent(t *testing.T) {
	defer func(v int64) { minCompactBytes = v }(minCompactBytes)
	minCompactBytes = 32 << 10
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	tb, _ := s.CreateTable(kvDef(3, true))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := int64(0); w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int64(0); ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id := w*1_000_000 + i
				if _, err := tb.Insert(ctx, seq(id, id+1)); err != nil {
					t.Error(err)
					return
				}
				if i%3 == 2 {
					if rid, ok := tb.LookupKey([]types.Value{id - 1}); ok {
						tb.Update(ctx, []int64{rid}, kvBatch(row(id-1, "u")))
					}
				}
				if i%5 == 4 {
					if rid, ok := tb.LookupKey([]types.Value{id - 4}); ok {
						tb.Delete(ctx, []int64{rid})
					}
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := tb.Compact(); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	type taken struct {
		rows []string
		f    *Feed
		got  []Delta
	}
	var feeds []*taken
	var snaps [][]string
	var lsns []uint64
	for k := 0; k < 40; k++ {
		snap, f := tb.Subscribe()
		lsn := f.LSN()
		f.Close()
		snaps, lsns = append(snaps, sortedRows(snap)), append(lsns, lsn)
		if err := tb.Retain(lsn); err != nil {
			t.Fatal(err)
		}
		if k >= 2 { // the writes after the previous mark are retained in memory
			fd, err := tb.FeedFrom(lsns[k-1])
			if err != nil {
				t.Fatalf("FeedFrom(%d) after Retain(%d): %v", lsns[k-1], lsn, err)
			}
			feeds = append(feeds, &taken{rows: snaps[k-1], f: fd})
		}
		for _, x := range feeds {
			x.got = append(x.got, x.f.Poll()...)
		}
	}
	close(stop)
	wg.Wait()
	final := sortedRows(tb.Snapshot())
	for i, x := range feeds {
		x.got = append(x.got, x.f.Poll()...)
		x.f.Close()
		if got := applyDeltas(t, x.rows, x.got); strings.Join(got, " ") != strings.Join(final, " ") {
			t.Fatalf("feed %d: snapshot plus deltas has %d rows, the table %d", i, len(got), len(final))
		}
	}
}

func TestRetainTables(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	a, _ := s.CreateTable(kvDef(3, true))
	b, _ := s.CreateTable(kvDef(4, true))
	for i := int64(0); i < 4; i++ {
		a.Insert(ctx, seq(i, i+1))
		b.Insert(ctx, seq(i, i+1))
	}
	fsyncs := s.Stats().Fsyncs
	if err := s.RetainTables(map[uint32]uint64{3: 1, 4: 2, 99: 1}); err != nil {
		t.Fatal(err)
	}
	if n := s.Stats().Fsyncs - fsyncs; n != 2 {
		t.Fatalf("%d fsyncs for two marks, want 2", n)
	}
	if err := s.RetainTables(map[uint32]uint64{3: 9}); err == nil {
		t.Fatal("a mark beyond the table's last write accepted")
	}
	s.Close()
	s = mustOpen(t, dir)
	defer s.Close()
	if txt, err := feedText(t, s.Table(3), 1); err != nil || txt != "+1,v1 | +2,v2 | +3,v3" {
		t.Fatalf("table 3 FeedFrom(1) = %q, %v", txt, err)
	}
	if txt, err := feedText(t, s.Table(4), 2); err != nil || txt != "+2,v2 | +3,v3" {
		t.Fatalf("table 4 FeedFrom(2) = %q, %v", txt, err)
	}
	wantGone(t, s.Table(4), 1)
}

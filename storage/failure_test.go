package storage

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/streamsql/streamsql/pgerr"
)

// failWrites makes the committer's writes to the log at path write half
// their bytes and fail with ENOSPC while *on is true (nil: always).
func failWrites(s *Store, path string, on func() bool) {
	s.commit.writeFile = func(f *os.File, p []byte) (int, error) {
		if f.Name() != path || (on != nil && !on()) {
			return f.Write(p)
		}
		time.Sleep(time.Millisecond) // widens the window in which later writes queue behind the failing one
		n, _ := f.Write(p[:len(p)/2])
		return n, &os.PathError{Op: "write", Path: path, Err: syscall.ENOSPC}
	}
}

// feedIDs drains a feed and returns the ids it inserted, in order.
func feedIDs(t *testing.T, f *Feed) []int64 {
	t.Helper()
	var ids []int64
	for _, d := range f.Poll() {
		if len(d.Deleted) > 0 {
			t.Fatalf("unexpected delete in the feed")
		}
		for _, b := range d.Inserted {
			for i := 0; i < int(b.NumRows()); i++ {
				id, _ := strconv64(b.Column(0).ValueStr(i))
				ids = append(ids, id)
			}
		}
	}
	return ids
}

func strconv64(s string) (int64, error) {
	var n int64
	_, err := fmt.Sscan(s, &n)
	return n, err
}

// A failed write (a full disk) fails with 53100, leaves the table, its
// feed, its LSN and its log as they were, does not touch other tables,
// and once there is space the same rows can be written again.
func TestWriteFailureRollsBack(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := mustOpen(t, dir)
	tb, err := s.CreateTable(kvDef(1, true))
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.CreateTable(kvDef(2, true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Insert(ctx, seq(1, 11)); err != nil {
		t.Fatal(err)
	}
	_, feed := tb.Subscribe()
	defer feed.Close()
	lsn, size := tb.LSN(), tb.LogBytes()

	failWrites(s, tb.log.path, nil)
	_, err = tb.Insert(ctx, seq(11, 13))
	if e := pgerr.As(err); e == nil || e.Code != pgerr.DiskFull || !strings.Contains(e.Message, `table "t"`) {
		t.Fatalf("insert on a full disk: %v (%s)", err, pgerr.CodeOf(err))
	}
	tx := s.Begin()
	if _, err := tx.Insert(ctx, tb, seq(20, 22)); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); pgerr.CodeOf(err) != pgerr.DiskFull {
		t.Fatalf("commit on a full disk: %v", err)
	}
	if _, err := other.Insert(ctx, seq(1, 3)); err != nil {
		t.Fatalf("another table's write: %v", err)
	}
	if tb.RowCount() != 10 || tb.LSN() != lsn || tb.LogBytes() != size {
		t.Fatalf("after failed writes: %d rows, LSN %d (was %d), log %d bytes (was %d)", tb.RowCount(), tb.LSN(), lsn, tb.LogBytes(), size)
	}
	if ids := feedIDs(t, feed); len(ids) != 0 {
		t.Fatalf("the feed delivered failed writes: %v", ids)
	}

	s.commit.writeFile = nil // space returns
	if _, err := tb.Insert(ctx, seq(11, 13)); err != nil {
		t.Fatalf("insert of the same keys after space returned: %v", err)
	}
	tx = s.Begin()
	if _, err := tx.Insert(ctx, tb, seq(20, 22)); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := feedIDs(t, feed); !slices.Equal(got, []int64{11, 12, 20, 21}) {
		t.Fatalf("feed after space returned: %v", got)
	}
	want := dump(tb.Snapshot())
	if len(want) != 14 || tb.LSN() != lsn+2 {
		t.Fatalf("%d rows, LSN %d, want 14 rows, LSN %d", len(want), tb.LSN(), lsn+2)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, dir)
	defer s.Close()
	checkRows(t, s.Table(1), want)
	if got := s.Table(1).LSN(); got != lsn+2 {
		t.Fatalf("LSN after reopen %d, want %d", got, lsn+2)
	}
}

// A failed fsync fails the table for good (fsyncgate): it refuses writes
// until the store is reopened, reads and other tables go on, and the
// reopened table holds the acknowledged rows only.
func TestFsyncFailureFailsTable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := mustOpen(t, dir)
	tb, _ := s.CreateTable(kvDef(1, true))
	other, _ := s.CreateTable(kvDef(2, true))
	if _, err := tb.Insert(ctx, seq(1, 4)); err != nil {
		t.Fatal(err)
	}
	want := dump(tb.Snapshot())
	path := tb.log.path
	s.commit.syncFile = func(f *os.File) error {
		if f.Name() == path {
			return &os.PathError{Op: "sync", Path: path, Err: syscall.EIO}
		}
		return f.Sync()
	}
	_, err := tb.Insert(ctx, seq(4, 6))
	e := pgerr.As(err)
	if e == nil || e.Code != pgerr.IOError || !strings.Contains(e.Hint, "refuses writes until the server restarts") {
		t.Fatalf("insert with a failing fsync: %v (%s)", err, pgerr.CodeOf(err))
	}
	s.commit.syncFile = nil
	if _, err := tb.Insert(ctx, seq(6, 7)); pgerr.CodeOf(err) != pgerr.IOError {
		t.Fatalf("insert after a failed fsync: %v, want the table to refuse", err)
	}
	if err := tb.Compact(); pgerr.CodeOf(err) != pgerr.IOError {
		t.Fatalf("compaction after a failed fsync: %v, want the table to refuse", err)
	}
	checkRows(t, tb, want)
	if _, err := other.Insert(ctx, seq(1, 3)); err != nil {
		t.Fatalf("another table's write: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, dir)
	defer s.Close()
	checkRows(t, s.Table(1), want)
	if _, err := s.Table(1).Insert(ctx, seq(4, 6)); err != nil {
		t.Fatalf("insert after reopening: %v", err)
	}
}

// Writers pipeline while writes fail at random: every acknowledged row is
// in the table, the feed and the reopened log, and no failed one is.
func TestWriteFailuresConcurrent(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := mustOpen(t, dir)
	tb, _ := s.CreateTable(kvDef(1, true))
	_, feed := tb.Subscribe()
	defer feed.Close()
	var mu sync.Mutex
	rng := rand.New(rand.NewSource(1))
	failWrites(s, tb.log.path, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return rng.Intn(4) == 0
	})
	var acked sync.Map
	var wg sync.WaitGroup
	const writers, perWriter = 4, 150
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perWriter; i++ {
				id := int64(w*perWriter+i) * 2
				if i%5 == 0 { // a transaction of two rows
					tx := s.Begin()
					_, err := tx.Insert(ctx, tb, seq(id, id+2))
					if err == nil {
						err = tx.Commit(ctx)
					} else {
						tx.Rollback()
					}
					if err == nil {
						acked.Store(id, true)
						acked.Store(id+1, true)
					}
					continue
				}
				if _, err := tb.Insert(ctx, seq(id, id+1)); err == nil {
					acked.Store(id, true)
				} else if pgerr.CodeOf(err) != pgerr.DiskFull {
					t.Errorf("insert %d: %v", id, err)
				}
			}
		}()
	}
	wg.Wait()
	s.commit.writeFile = nil
	var want []int64
	acked.Range(func(k, _ any) bool { want = append(want, k.(int64)); return true })
	slices.Sort(want)
	ids := func(tb *Table) []int64 {
		var out []int64
		for _, r := range dump(tb.Snapshot()) {
			id, _ := strconv64(strings.SplitN(strings.SplitN(r, ":", 2)[1], ",", 2)[0])
			out = append(out, id)
		}
		slices.Sort(out)
		return out
	}
	if got := ids(tb); !slices.Equal(got, want) {
		t.Fatalf("table holds %d rows, %d acknowledged", len(got), len(want))
	}
	fed := feedIDs(t, feed)
	slices.Sort(fed)
	if !slices.Equal(fed, want) {
		t.Fatalf("feed delivered %d rows, %d acknowledged", len(fed), len(want))
	}
	if len(want) == 0 || len(want) == writers*perWriter*6/5 {
		t.Fatalf("%d of %d rows acknowledged: the faults did not mix", len(want), writers*perWriter*6/5)
	}
	// A write after the failures, then the log replays to the same rows.
	if _, err := tb.Insert(ctx, seq(-1, 0)); err != nil {
		t.Fatal(err)
	}
	want = append([]int64{-1}, want...)
	lsn := tb.LSN()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, dir)
	defer s.Close()
	if got := ids(s.Table(1)); !slices.Equal(got, want) || s.Table(1).LSN() != lsn {
		t.Fatalf("reopened: %d rows (want %d), LSN %d (want %d)", len(got), len(want), s.Table(1).LSN(), lsn)
	}
}

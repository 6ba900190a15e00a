package storage

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// TestConcurrentWritersAndReaders runs writers on two tables and readers
// taking snapshots at once (run it with -race), then checks every row, the
// snapshots' consistency, and that commits shared fsyncs.
func TestConcurrentWritersAndReaders(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	a, _ := s.CreateTable(kvDef(1, true))
	b, _ := s.CreateTable(kvDef(2, false))
	const writers, each = 8, 100
	var wg sync.WaitGroup
	var done atomic.Bool
	errs := make(chan error, 100)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				k := int64(w*each + i)
				tb := a
				if i%4 == 3 {
					tb = b
				}
				if _, err := tb.Insert(ctx, seq(k, k+1)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	// A writer that keeps updating and deleting in table b.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 50; {
			snap := b.Snapshot()
			if len(snap.Chunks) == 0 {
				runtime.Gosched()
				continue
			}
			c := snap.Chunks[0]
			r := 0
			for c.Deleted != nil && c.Deleted[r/8]&(1<<(r%8)) != 0 {
				r++
			}
			if n, err := b.Update(ctx, []int64{c.FirstRowID + int64(r)}, seq(int64(10000+i), int64(10001+i))); err != nil || n != 1 {
				errs <- fmt.Errorf("update: %d %v", n, err)
				return
			}
			i++
		}
	}()
	var readers sync.WaitGroup
	for r := 0; r < 2; r++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			last := int64(0)
			for !done.Load() {
				snap := a.Snapshot()
				rows := dump(snap)
				if int64(len(rows)) < last {
					errs <- fmt.Errorf("table a shrank from %d to %d rows", last, len(rows))
					return
				}
				last = int64(len(rows))
				prev := int64(-1)
				for _, c := range snap.Chunks {
					if c.FirstRowID <= prev {
						errs <- fmt.Errorf("chunks out of order")
						return
					}
					prev = c.FirstRowID + c.Rec.NumRows() - 1
				}
			}
		}()
	}
	wg.Wait()
	done.Store(true)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	st := s.Stats()
	t.Logf("%d commits, %d groups, %d fsyncs: %.2f fsyncs per commit", st.Commits, st.Groups, st.Fsyncs, float64(st.Fsyncs)/float64(st.Commits))
	if st.Commits != writers*each+50 {
		t.Fatalf("%d commits, want %d", st.Commits, writers*each+50)
	}
	if st.Fsyncs >= st.Commits {
		t.Fatalf("no fsync was shared: %+v", st)
	}
	wantA, wantB := dump(a.Snapshot()), dump(b.Snapshot())
	if len(wantA) != writers*each*3/4 || len(wantB) != writers*each/4 {
		t.Fatalf("%d and %d rows", len(wantA), len(wantB))
	}
	s.Close()
	s = mustOpen(t, dir)
	defer s.Close()
	checkRows(t, s.Table(1), wantA)
	checkRows(t, s.Table(2), wantB)
}

// TestConcurrentCompactAlterDrop runs compactions, an ALTER, a drop and
// writers at once (for -race), then checks the surviving table on reopen.
func TestConcurrentCompactAlterDrop(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	a, _ := s.CreateTable(kvDef(1, true))
	b, _ := s.CreateTable(kvDef(2, false))
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 60; i++ {
				k := int64(w*1000 + i)
				if _, err := a.Insert(ctx, seq(k, k+1)); err != nil {
					errs <- err
					return
				}
				if i%3 == 0 {
					if _, err := a.Delete(ctx, []int64{a.Snapshot().Chunks[0].FirstRowID}); err != nil {
						errs <- err
						return
					}
				}
				b.Insert(ctx, seq(k, k+1)) // fails once b is dropped
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 5; i++ {
			if err := a.Compact(); err != nil {
				errs <- err
				return
			}
		}
		if err := a.Alter(ctx, kvDef(1, true), nil); err != nil {
			errs <- err
			return
		}
		if err := s.DropTable(2); err != nil {
			errs <- err
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if _, err := b.Insert(ctx, seq(0, 1)); err == nil {
		t.Fatal("insert into a dropped table succeeded")
	}
	want := dump(a.Snapshot())
	s.Close()
	s = mustOpen(t, dir)
	defer s.Close()
	checkRows(t, s.Table(1), want)
	if s.Table(2) != nil {
		t.Fatal("dropped table came back")
	}
}

package storage

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

// feedRows renders batches' rows as "col,col" strings, in order.
func feedRows(recs []arrow.RecordBatch) []string {
	var out []string
	for _, rec := range recs {
		for i := 0; i < int(rec.NumRows()); i++ {
			cells := make([]string, rec.NumCols())
			for j, col := range rec.Columns() {
				cells[j] = col.ValueStr(i)
			}
			out = append(out, strings.Join(cells, ","))
		}
	}
	return out
}

// snapRows renders a snapshot's live rows like feedRows (no row ids).
func snapRows(s Snapshot) []string {
	var out []string
	for _, r := range dump(s) {
		_, v, _ := strings.Cut(r, ":")
		out = append(out, v)
	}
	return out
}

// deltaText renders deltas as "-row" / "+row" / "U" markers, for exact checks.
func deltaText(ds []Delta) string {
	var parts []string
	for _, d := range ds {
		var p []string
		if d.Update {
			p = append(p, "U")
		}
		for _, r := range feedRows(d.Deleted) {
			p = append(p, "-"+r)
		}
		for _, r := range feedRows(d.Inserted) {
			p = append(p, "+"+r)
		}
		parts = append(parts, strings.Join(p, " "))
	}
	return strings.Join(parts, " | ")
}

func mustNext(t *testing.T, f *Feed) []Delta {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ds, err := f.Next(c)
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	return ds
}

func TestFeedWrites(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	tb, _ := s.CreateTable(kvDef(1, true))
	tb.Insert(ctx, seq(1, 3))
	snap, f := tb.Subscribe()
	defer f.Close()
	if got := strings.Join(snapRows(snap), " "); got != "1,v1 2,v2" {
		t.Fatalf("snapshot %q", got)
	}
	if ds := f.Poll(); len(ds) != 0 {
		t.Fatalf("deltas before any write: %s", deltaText(ds))
	}
	tb.Insert(ctx, seq(3, 5))
	tb.Update(ctx, []int64{0, 99}, kvBatch(row(1, "one"), row(7, "none")))
	tb.Delete(ctx, []int64{1, 3})
	tb.InsertBatches(ctx, []arrow.RecordBatch{seq(10, 11), seq(11, 12)})
	tb.Truncate(ctx)
	tb.Truncate(ctx) // an empty table: a delta deleting nothing
	var all []Delta
	for len(all) < 6 {
		all = append(all, mustNext(t, f)...)
	}
	want := "+3,v3 +4,v4 | U -1,v1 +1,one | -2,v2 -4,v4 | +10,v10 +11,v11 | -3,v3 -1,one -10,v10 -11,v11 | "
	if got := deltaText(all); got != want {
		t.Fatalf("deltas:\n%s\nwant:\n%s", got, want)
	}
	if len(f.Poll()) != 0 || tb.FeedLag() != 0 {
		t.Fatalf("deltas left, lag %d", tb.FeedLag())
	}
}

func TestFeedTransactions(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	tb, _ := s.CreateTable(kvDef(1, true))
	other, _ := s.CreateTable(kvDef(2, false))
	tb.Insert(ctx, seq(1, 3))
	_, f := tb.Subscribe()
	defer f.Close()
	_, fo := other.Subscribe()
	defer fo.Close()

	tx := s.Begin()
	tx.Insert(ctx, tb, seq(5, 6))
	tx.Delete(ctx, tb, []int64{0})
	tx.Insert(ctx, other, seq(100, 101))
	if ds := f.Poll(); len(ds) != 0 {
		t.Fatalf("uncommitted deltas: %s", deltaText(ds))
	}
	tx.Rollback()
	if ds := f.Poll(); len(ds) != 0 {
		t.Fatalf("rolled back deltas: %s", deltaText(ds))
	}

	tx = s.Begin()
	tx.Insert(ctx, tb, seq(5, 6))
	tx.Update(ctx, tb, []int64{1}, kvBatch(row(2, "two")))
	tx.Truncate(ctx, tb)
	tx.Insert(ctx, tb, seq(7, 8))
	tx.Insert(ctx, other, seq(100, 101))
	if ds := f.Poll(); len(ds) != 0 {
		t.Fatalf("uncommitted deltas: %s", deltaText(ds))
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	// The whole transaction arrives at once, in statement order.
	want := "+5,v5 | U -2,v2 +2,two | -1,v1 -5,v5 -2,two | +7,v7"
	if got := deltaText(f.Poll()); got != want {
		t.Fatalf("deltas:\n%s\nwant:\n%s", got, want)
	}
	if got := deltaText(fo.Poll()); got != "+100,v100" {
		t.Fatalf("other table: %s", got)
	}
}

func TestFeedEnds(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	tb, _ := s.CreateTable(kvDef(1, false))
	_, f1 := tb.Subscribe()
	tb.Insert(ctx, seq(1, 2))
	_, f2 := tb.Subscribe()

	// ALTER TABLE ADD COLUMN: feeds end after what came before.
	def := kvDef(1, false)
	def.Columns = append(def.Columns, types.Column{Name: "z", Type: types.TInt8})
	if err := tb.Alter(ctx, def, func(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
		z := seq(0, rec.NumRows()).Column(0)
		return arrowRecord(def, append(slices.Clone(rec.Columns()), z), rec.NumRows()), nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := deltaText(mustNext(t, f1)); got != "+1,v1" {
		t.Fatalf("before alter: %s", got)
	}
	for _, f := range []*Feed{f1, f2} {
		select {
		case <-f.Ready():
		default:
			t.Fatal("an ended feed is not ready")
		}
		ds, err := f.Next(ctx)
		if !errors.Is(err, ErrFeedEnded) || !strings.Contains(err.Error(), `table "t" was altered`) || len(ds) != 0 {
			t.Fatalf("after alter: %s, %v", deltaText(ds), err)
		}
		if f.Poll() != nil || f.Err() == nil {
			t.Fatal("an ended feed goes on")
		}
	}
	if tb.FeedLag() != 0 || tb.feeds.n.Load() != 0 {
		t.Fatal("ended feeds still attached")
	}

	// A feed of the new layout works; DropTable ends it.
	snap, f3 := tb.Subscribe()
	if got := strings.Join(snapRows(snap), " "); got != "1,v1,0" {
		t.Fatalf("snapshot after alter: %q", got)
	}
	tb.Insert(ctx, arrowRecord(def, append(slices.Clone(seq(2, 3).Columns()), seq(5, 6).Column(0)), 1))
	if err := s.DropTable(1); err != nil {
		t.Fatal(err)
	}
	if got := deltaText(mustNext(t, f3)); got != "+2,v2,5" {
		t.Fatalf("before drop: %s", got)
	}
	if _, err := f3.Next(ctx); !errors.Is(err, ErrFeedEnded) || !strings.Contains(err.Error(), "dropped") {
		t.Fatalf("after drop: %v", err)
	}

	// Close ends feeds; a closed feed reports it.
	tb2, _ := s.CreateTable(kvDef(2, false))
	_, f4 := tb2.Subscribe()
	_, f5 := tb2.Subscribe()
	f5.Close()
	if _, err := f5.Next(ctx); !errors.Is(err, ErrFeedEnded) {
		t.Fatalf("closed feed: %v", err)
	}
	s.Close()
	if _, err := f4.Next(ctx); !errors.Is(err, ErrFeedEnded) || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("after store close: %v", err)
	}
}

func arrowRecord(def TableDef, cols []arrow.Array, n int64) arrow.RecordBatch {
	return array.NewRecordBatch(types.ArrowSchema(def.Columns), cols, n)
}

// TestFeedReadyNextCancel covers the select-loop use and Next's ctx.
func TestFeedReadyNextCancel(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	tb, _ := s.CreateTable(kvDef(1, false))
	_, f := tb.Subscribe()
	defer f.Close()
	ready := f.Ready()
	select {
	case <-ready:
		t.Fatal("ready with nothing written")
	default:
	}
	go tb.Insert(ctx, seq(1, 2))
	<-ready
	if got := deltaText(f.Poll()); got != "+1,v1" {
		t.Fatalf("got %s", got)
	}
	c, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := f.Next(c); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next with a canceled ctx: %v", err)
	}
}

// TestFeedPollAll: Poll returns every published write, however many.
func TestFeedPollAll(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	tb, _ := s.CreateTable(int8Def(1))
	_, f := tb.Subscribe()
	defer f.Close()
	const batches, size = 5, 50_000
	for i := int64(0); i < batches; i++ {
		tb.Insert(ctx, int8Batch(i*size, size))
	}
	var rows int64
	for _, d := range f.Poll() {
		for _, r := range d.Inserted {
			rows += r.NumRows()
		}
	}
	if rows != batches*size || len(f.Poll()) != 0 {
		t.Fatalf("%d rows", rows)
	}
}

// TestFeedBackpressure: a writer waits for a lagging feed after its write
// is durable, and goes on when the feed reads, closes, or ctx ends.
func TestFeedBackpressure(t *testing.T) {
	defer func(r int64) { maxFeedLagRows = r }(maxFeedLagRows)
	maxFeedLagRows = 10
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	tb, _ := s.CreateTable(kvDef(1, false))
	_, f := tb.Subscribe()

	tb.Insert(ctx, seq(0, 10)) // at the bound: no wait
	done := make(chan error)
	go func() {
		_, err := tb.Insert(ctx, seq(10, 11))
		done <- err
	}()
	for tb.RowCount() != 11 { // durable and published
		runtime.Gosched()
	}
	select {
	case err := <-done:
		t.Fatalf("writer did not wait for the lagging feed: %v", err)
	case <-time.After(30 * time.Millisecond): // only a missed wait can pass here
	}
	if tb.FeedLag() != 11 {
		t.Fatalf("lag %d", tb.FeedLag())
	}
	if n := len(f.Poll()); n != 2 {
		t.Fatalf("%d deltas", n)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// Closing the feed releases writers, as does their ctx ending.
	tb.Insert(ctx, seq(0, 10))
	go func() {
		_, err := tb.Insert(ctx, seq(10, 11))
		done <- err
	}()
	for tb.RowCount() != 22 {
		runtime.Gosched()
	}
	f.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	_, f = tb.Subscribe()
	defer f.Close()
	c, cancel := context.WithCancel(ctx)
	go func() {
		_, err := tb.Insert(c, seq(0, 20))
		done <- err
	}()
	for tb.RowCount() != 42 {
		runtime.Gosched()
	}
	cancel()
	if err := <-done; err != nil { // durable: success despite the cancel
		t.Fatal(err)
	}
}

// TestFeedProperty runs random writes (insert, update, delete, truncate,
// transactions committed or rolled back) from several goroutines while
// feeds are subscribed at random moments and read concurrently; each feed's
// snapshot plus its deltas must equal the final table, as a multiset of
// rows, and update deltas must pair their rows. A low lag bound makes
// writers wait for readers now and then.
func TestFeedProperty(t *testing.T) {
	defer func(r int64) { maxFeedLagRows = r }(maxFeedLagRows)
	maxFeedLagRows = 40
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { feedProperty(t, seed) })
	}
}

func feedProperty(t *testing.T, seed uint64) {
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	tb, _ := s.CreateTable(kvDef(1, seed%2 == 0)) // with and without a primary key
	const writers, ops, feeds = 4, 150, 6

	rctx, stop := context.WithCancel(ctx)
	defer stop()
	type result struct {
		rows map[string]int
		err  error
	}
	results := make(chan result, feeds)
	read := func(snap Snapshot, f *Feed) result {
		rows := map[string]int{}
		for _, r := range snapRows(snap) {
			rows[r]++
		}
		apply := func(ds []Delta) error {
			for _, d := range ds {
				del, ins := feedRows(d.Deleted), feedRows(d.Inserted)
				if d.Update && len(del) != len(ins) {
					return fmt.Errorf("update of %d rows into %d", len(del), len(ins))
				}
				for _, r := range del {
					if rows[r]--; rows[r] < 0 {
						return fmt.Errorf("delta deletes missing row %s", r)
					}
					if rows[r] == 0 {
						delete(rows, r)
					}
				}
				for _, r := range ins {
					rows[r]++
				}
			}
			return nil
		}
		for {
			ds, err := f.Next(rctx)
			if err != nil {
				break // writers are done: drain below
			}
			if err := apply(ds); err != nil {
				return result{err: err}
			}
		}
		for ds := f.Poll(); len(ds) > 0; ds = f.Poll() {
			if err := apply(ds); err != nil {
				return result{err: err}
			}
		}
		return result{rows: rows, err: f.Err()}
	}

	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			if err := randomWrites(tb, s, rng, w, ops); err != nil {
				errs <- err
			}
		}()
	}
	wg.Add(1)
	go func() { // subscribe at random moments
		defer wg.Done()
		rng := rand.New(rand.NewPCG(seed, 99))
		for range feeds {
			for range rng.IntN(3000) {
				runtime.Gosched()
			}
			snap, f := tb.Subscribe()
			go func() {
				r := read(snap, f)
				f.Close()
				results <- r
			}()
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	stop()
	want := map[string]int{}
	for _, r := range snapRows(tb.Snapshot()) {
		want[r]++
	}
	for range feeds {
		r := <-results
		if r.err != nil {
			t.Fatal(r.err)
		}
		if fmt.Sprint(r.rows) != fmt.Sprint(want) {
			t.Fatalf("snapshot + deltas:\n%v\nfinal table:\n%v", r.rows, want)
		}
	}
	if tb.feeds.n.Load() != 0 {
		t.Fatal("closed feeds still attached")
	}
}

// randomWrites does n random writes to tb (ids unique per writer w, so
// that primary keys rarely conflict; conflicts are fine).
func randomWrites(tb *Table, s *Store, rng *rand.Rand, w, n int) error {
	next := int64(w) * 1_000_000
	newRows := func(k int) arrow.RecordBatch {
		rows := make([]kv, k)
		for i := range rows {
			next++
			rows[i] = row(next, fmt.Sprintf("w%d.%d", w, rng.IntN(5)))
		}
		return kvBatch(rows...)
	}
	liveIDs := func(snap Snapshot, k int) []int64 {
		var ids []int64
		for _, c := range snap.Chunks {
			for i := 0; i < int(c.Rec.NumRows()); i++ {
				if (c.Deleted == nil || c.Deleted[i/8]&(1<<(i%8)) == 0) && rng.IntN(4) == 0 {
					ids = append(ids, c.FirstRowID+int64(i))
				}
			}
		}
		rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		return ids[:min(k, len(ids))]
	}
	// op runs one write, through tx when given.
	op := func(tx *Tx) error {
		snap := tb.Snapshot()
		if tx != nil {
			snap = tx.Snapshot(tb)
		}
		c := WithTx(ctx, tx)
		if tx == nil {
			c = ctx
		}
		var err error
		switch k := rng.IntN(20); {
		case k < 8:
			_, err = tb.InsertBatches(c, []arrow.RecordBatch{newRows(1 + rng.IntN(4)), newRows(rng.IntN(2))})
		case k < 13:
			ids := liveIDs(snap, 1+rng.IntN(5))
			_, err = tb.Update(c, ids, newRows(len(ids)))
		case k < 19:
			_, err = tb.Delete(c, liveIDs(snap, 1+rng.IntN(5)))
		default:
			err = tb.Truncate(c)
		}
		if err != nil && !strings.Contains(err.Error(), "duplicate key") {
			return err
		}
		return nil
	}
	for range n {
		if rng.IntN(4) > 0 {
			if err := op(nil); err != nil {
				return err
			}
			continue
		}
		tx := s.Begin()
		for range 1 + rng.IntN(4) {
			if err := op(tx); err != nil {
				tx.Rollback()
				return err
			}
		}
		if rng.IntN(3) == 0 {
			tx.Rollback()
		} else if err := tx.Commit(ctx); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkFeedInsert measures INSERT throughput with no feed and with one
// feed whose reader consumes every delta (materializing it), for single-row
// inserts from 8 writers and 1024-row batches from 1 writer:
//
//	go test ./storage -run '^$' -bench FeedInsert
func BenchmarkFeedInsert(b *testing.B) {
	for _, c := range []struct {
		name           string
		writers, batch int
	}{{"single-row/writers=8", 8, 1}, {"batch=1024/writers=1", 1, 1024}} {
		for _, readers := range []int{0, 1} {
			b.Run(fmt.Sprintf("%s/feeds=%d", c.name, readers), func(b *testing.B) {
				s := mustOpen(b, b.TempDir())
				defer s.Close()
				tb, _ := s.CreateTable(int8Def(1))
				rec := int8Batch(0, int64(c.batch))
				var read sync.WaitGroup
				rctx, stop := context.WithCancel(ctx)
				var got int64
				for range readers {
					_, f := tb.Subscribe()
					read.Add(1)
					go func() {
						defer read.Done()
						defer f.Close()
						for {
							ds, err := f.Next(rctx)
							if err != nil {
								return
							}
							for _, d := range ds {
								for _, r := range d.Inserted {
									got += r.NumRows()
								}
							}
						}
					}()
				}
				b.ResetTimer()
				var wg sync.WaitGroup
				for w := range c.writers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := w; i < b.N; i += c.writers {
							if _, err := tb.Insert(ctx, rec); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				b.StopTimer()
				stop()
				read.Wait()
				b.ReportMetric(float64(b.N*c.batch)/b.Elapsed().Seconds(), "rows/s")
			})
		}
	}
}

// PollTo reads up to a cut taken by Position: two feeds read to the same
// cut get the same writes, later writes stay for the next read, and a feed
// already past a cut gets nothing from it.
func TestFeedPollToCut(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	tb, _ := s.CreateTable(kvDef(1, true))
	_, f1 := tb.Subscribe()
	defer f1.Close()
	_, f2 := tb.Subscribe()
	defer f2.Close()
	tb.Insert(ctx, seq(1, 3))
	cut := tb.Position()
	tb.Insert(ctx, seq(3, 5))
	if a, b := deltaText(f1.PollTo(cut)), deltaText(f2.PollTo(cut)); a != "+1,v1 +2,v2" || b != a {
		t.Fatalf("to the cut: %q and %q", a, b)
	}
	if got := deltaText(f1.Poll()); got != "+3,v3 +4,v4" {
		t.Fatalf("after the cut: %q", got)
	}
	if got := f1.PollTo(cut); len(got) != 0 {
		t.Fatalf("a feed past the cut read %q", deltaText(got))
	}
	if got := deltaText(f2.PollTo(tb.Position())); got != "+3,v3 +4,v4" {
		t.Fatalf("second feed, to now: %q", got)
	}
}

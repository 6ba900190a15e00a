package storage

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// lsnModel records, per LSN, the table's rows after that write and the
// deltas a live feed delivered for it, to check FeedFrom against.
type lsnModel struct {
	rows   map[uint64][]string // LSN -> live rows (values, no row ids)
	deltas map[uint64][]string // LSN -> the write's deltas (deltaText of each)
	older  uint64              // the marks, as Retain was told
	newer  uint64
	nmarks int
}

func deltaTexts(ds []Delta) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = deltaText([]Delta{d})
	}
	return out
}

// keep is the LSN from which FeedFrom must work (ok false: only the
// current LSN).
func (m *lsnModel) keep() (uint64, bool) { return m.older, m.nmarks > 0 }

// applyDeltas applies deltas to a multiset of rows and returns it sorted.
func applyDeltas(t *testing.T, rows []string, ds []Delta) []string {
	t.Helper()
	count := map[string]int{}
	for _, r := range rows {
		count[r]++
	}
	for _, d := range ds {
		for _, r := range feedRows(d.Deleted) {
			if count[r] == 0 {
				t.Fatalf("delta deletes row %q the state does not hold", r)
			}
			count[r]--
		}
		for _, r := range feedRows(d.Inserted) {
			count[r]++
		}
	}
	var out []string
	for r, n := range count {
		for ; n > 0; n-- {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}

func sortedRows(s Snapshot) []string {
	r := snapRows(s)
	slices.Sort(r)
	return r
}

// checkFeedFrom checks FeedFrom(lsn) against the model: the deltas after
// lsn as the live feed delivered them, and the state they lead to. It
// returns the feed (open) when it succeeded.
func checkFeedFrom(t *testing.T, tb *Table, m *lsnModel, lsn uint64, must bool) *Feed {
	t.Helper()
	cur := tb.LSN()
	f, err := tb.FeedFrom(lsn)
	if err != nil {
		if !errors.Is(err, ErrPositionGone) {
			t.Fatalf("FeedFrom(%d) at %d: %v, want ErrPositionGone", lsn, cur, err)
		}
		if must {
			t.Fatalf("FeedFrom(%d) at %d (marks %d %d): %v", lsn, cur, m.older, m.newer, err)
		}
		return nil
	}
	ds := f.Poll()
	var want []string
	for l := lsn + 1; l <= cur; l++ {
		want = append(want, m.deltas[l]...)
	}
	if got := deltaTexts(ds); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("FeedFrom(%d) at %d delivered\n%s\nwant\n%s", lsn, cur, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	base, ok := m.rows[lsn]
	if !ok {
		t.Fatalf("model has no state at LSN %d", lsn)
	}
	if got, want := applyDeltas(t, base, ds), m.rows[cur]; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("state at %d plus FeedFrom's deltas:\n%v\nwant\n%v", lsn, got, want)
	}
	return f
}

// checkRecovered checks a table just recovered against the model: its LSN
// and rows, and FeedFrom for every LSN (exactly those from the keep mark on
// must work).
func checkRecovered(t *testing.T, tb *Table, m *lsnModel, lsn uint64) {
	t.Helper()
	if tb.LSN() != lsn {
		t.Fatalf("recovered LSN %d, want %d", tb.LSN(), lsn)
	}
	if got, want := sortedRows(tb.Snapshot()), m.rows[lsn]; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("recovered rows %v, want %v", got, want)
	}
	keep, ok := m.keep()
	lo := lsn
	if ok {
		lo = keep
	}
	lo -= min(lo, 3)
	ls := []uint64{0} // the first LSN, and those around the keep mark
	for l := max(lo, 1); l <= lsn; l++ {
		ls = append(ls, l)
	}
	for _, l := range ls {
		must := l == lsn || ok && l >= keep
		f := checkFeedFrom(t, tb, m, l, must)
		if f != nil {
			f.Close()
			if !must {
				t.Fatalf("FeedFrom(%d) worked after recovery below the keep mark %d (marks %d)", l, keep, m.nmarks)
			}
		}
	}
}

// retainRun drives one random run: writes of every kind, transactions,
// Retain, compactions, restarts and crash copies, checking FeedFrom all
// along.
func retainRun(t *testing.T, seed uint64, steps int) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e37))
	dir := t.TempDir()
	s := mustOpen(t, dir)
	tb, err := s.CreateTable(kvDef(7, true))
	if err != nil {
		t.Fatal(err)
	}
	m := &lsnModel{rows: map[uint64][]string{0: nil}, deltas: map[uint64][]string{}}
	live := tb.openFeed(tb.pub.Load().pos)
	nextID := int64(0)
	var hist, cuts, reopens int // what the run exercised
	fresh := func(n int) arrow.RecordBatch {
		b := seq(nextID, nextID+int64(n))
		nextID += int64(n)
		return b
	}
	liveIDs := func() []int64 {
		var ids []int64
		for _, c := range tb.Snapshot().Chunks {
			for i := 0; i < int(c.Rec.NumRows()); i++ {
				if c.Deleted == nil || c.Deleted[i/8]&(1<<(i%8)) == 0 {
					ids = append(ids, c.FirstRowID+int64(i))
				}
			}
		}
		return ids
	}
	pick := func(ids []int64, n int) []int64 {
		var out []int64
		for i := 0; i < n && len(ids) > 0; i++ {
			out = append(out, ids[rng.IntN(len(ids))])
		}
		return out
	}
	// write runs one random statement, in tx if not nil.
	write := func(tx *Tx) {
		ids := liveIDs()
		var err error
		switch k := rng.IntN(20); {
		case k < 7:
			_, err = tb.write(ctx, tx, func(b *state) (change, error) { return tb.prepInsert(b, []arrow.RecordBatch{fresh(1 + rng.IntN(3))}) })
		case k < 9: // COPY-sized: several batches in one write
			recs := []arrow.RecordBatch{fresh(1 + rng.IntN(400)), fresh(1 + rng.IntN(50)), fresh(1 + rng.IntN(300))}
			_, err = tb.write(ctx, tx, func(b *state) (change, error) { return tb.prepInsert(b, recs) })
		case k < 13:
			del := pick(ids, 1+rng.IntN(20))
			_, err = tb.write(ctx, tx, func(b *state) (change, error) { return tb.prepDelete(b, del), nil })
		case k < 19:
			up := pick(ids, 1+rng.IntN(5))
			slices.Sort(up)
			up = slices.Compact(up)
			rows := make([]kv, len(up))
			for i := range up {
				rows[i] = row(nextID, fmt.Sprintf("u%d", nextID))
				nextID++
			}
			_, err = tb.write(ctx, tx, func(b *state) (change, error) { return tb.prepUpdate(b, up, kvBatch(rows...)) })
		default:
			if rng.IntN(3) == 0 {
				_, err = tb.write(ctx, tx, func(b *state) (change, error) { return tb.prepTruncate(b), nil })
			}
		}
		if err != nil {
			t.Fatalf("write: %v", err)
		}
	}
	// record notes the write that just returned (if any) in the model.
	record := func() {
		lsn := tb.LSN()
		ds := live.Poll()
		if _, ok := m.rows[lsn]; ok {
			if len(ds) > 0 {
				t.Fatalf("deltas without a new LSN (%d)", lsn)
			}
			return
		}
		if _, ok := m.rows[lsn-1]; !ok {
			t.Fatalf("LSN jumped to %d", lsn)
		}
		m.rows[lsn] = sortedRows(tb.Snapshot())
		m.deltas[lsn] = deltaTexts(ds)
	}
	reopen := func() {
		live.Close()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = mustOpen(t, dir)
		tb = s.Table(7)
		live = tb.openFeed(tb.pub.Load().pos)
	}
	for step := 0; step < steps; step++ {
		switch k := rng.IntN(100); {
		case k < 55:
			write(nil)
			record()
		case k < 65: // a transaction
			tx := s.Begin()
			for n := 1 + rng.IntN(4); n > 0; n-- {
				write(tx)
			}
			if rng.IntN(5) == 0 {
				tx.Rollback()
			} else if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			record()
		case k < 78: // a checkpoint committed: retain a past position
			cur := tb.LSN()
			from := m.newer + 1
			if m.nmarks == 0 {
				from = 0
			}
			if from > cur {
				break
			}
			lsn := from + rng.Uint64N(cur-from+1)
			if err := tb.Retain(lsn); err != nil {
				t.Fatal(err)
			}
			if m.nmarks == 0 {
				m.older = lsn
			} else {
				m.older = m.newer
			}
			m.newer, m.nmarks = lsn, min(m.nmarks+1, 2)
			for l := range m.rows { // forget what can no longer be asked for
				if l+3 < m.older {
					delete(m.rows, l)
					delete(m.deltas, l)
				}
			}
		case k < 84:
			if err := tb.Compact(); err != nil {
				t.Fatal(err)
			}
			tb.mu.Lock()
			if k, ok := tb.ret.keep(); ok && k < tb.LSN() && tb.ret.root != nil && tb.ret.root.seq <= k {
				hist++
			}
			tb.mu.Unlock()
		case k < 90: // live FeedFrom at a random retained position
			keep, ok := m.keep()
			cur := tb.LSN()
			lsn := cur
			if ok && keep < cur {
				lsn = keep + rng.Uint64N(cur-keep+1)
			}
			if f := checkFeedFrom(t, tb, m, lsn, lsn == cur); f != nil {
				// It goes on with live writes.
				write(nil)
				record()
				checkFeedFrom(t, tb, m, tb.LSN(), true).Close()
				if got, want := deltaTexts(f.Poll()), m.deltas[tb.LSN()]; tb.LSN() > cur && strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Fatalf("FeedFrom(%d) then a write: %v, want %v", lsn, got, want)
				}
				f.Close()
			}
		case k < 95:
			reopen()
			reopens++
			checkRecovered(t, tb, m, tb.LSN())
		default: // a crash: copy the log as it is (perhaps cut inside its last write)
			lsn := tb.LSN()
			// Under the writer lock: no background compaction meanwhile.
			tb.mu.Lock()
			log, err := os.ReadFile(tb.log.path)
			before, f := tb.LogBytes(), tb.log.f
			tb.mu.Unlock()
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(log)) != before {
				t.Fatalf("log file is %d bytes, want %d", len(log), before)
			}
			write(nil)
			record()
			tb.mu.Lock()
			full, err := os.ReadFile(tb.log.path)
			same := tb.log.f == f && int64(len(full)) == tb.LogBytes()
			tb.mu.Unlock()
			if err != nil {
				t.Fatal(err)
			}
			if tb.LSN() > lsn && same && m.newer <= lsn {
				// Cut the new write short: recovery must land at lsn.
				log = full[:before+rng.Int64N(int64(len(full))-before)]
				cuts++
			}
			cdir := t.TempDir()
			if err := os.WriteFile(filepath.Join(cdir, "7.log"), log, 0o644); err != nil {
				t.Fatal(err)
			}
			cs := mustOpen(t, cdir)
			checkRecovered(t, cs.Table(7), m, lsn)
			cs.Close()
		}
	}
	live.Close()
	s.Close()
	t.Logf("LSN %d, marks %d %d, %d compactions with history, %d restarts, %d torn copies", tb.LSN(), m.older, m.newer, hist, reopens, cuts)
}

func TestRetainRandom(t *testing.T) {
	defer func(v, p int64) { minCompactBytes, packBytes = v, p }(minCompactBytes, packBytes)
	minCompactBytes = 64 << 10 // background compactions too
	runs, steps := 6, 300
	if testing.Short() {
		runs, steps = 3, 150
	}
	for seed := uint64(1); seed <= uint64(runs); seed++ {
		packBytes = 4 << 20
		if seed%2 == 1 { // big deltas in frames of their own too
			packBytes = 2 << 10
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) { retainRun(t, seed, steps) })
	}
}

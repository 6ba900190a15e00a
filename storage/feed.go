package storage

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
)

// Change feeds. A streaming view reads a table as a changelog: its snapshot
// at one moment, then every durable change after it (Table.Subscribe).
//
// Every state a writer submits to the committer gets a position (feedPos);
// the previous tail position links to it through a step that holds the
// write's deltas (t.advance, under the writer lock, so steps are in log
// order). The committer publishes states in that order, so the published
// state's position is always on the chain ahead of every feed. A Feed is just
// a pointer to the last position it delivered: reading walks the steps up to
// the published position. Nothing else refers to old steps, so memory is
// released as readers advance, and nothing is kept when nobody subscribes
// (the published state's position holds no deltas of its own).
//
// Deltas are kept in a cheap form (inserted batches as stored, references to
// deleted rows, the truncated chunks) and turned into Arrow batches of whole
// rows by the reader, so writers pay almost nothing for feeds.
//
// Ending: Alter (ALTER TABLE), DropTable and Store.Close append a terminal
// step carrying an error (after a barrier, so at the published position):
// a feed that reaches it ends with that error (wrapping ErrFeedEnded), rather
// than delivering rows in an old layout.
//
// Backpressure: after a write is durable, if some open feed of the table
// lags the published state by more than maxFeedLagRows rows or
// maxFeedLagBytes bytes of deltas, the writer waits until every feed is back
// within the bound (or closed or ended). If ctx ends meanwhile the writer
// stops waiting and still reports success: its write is already durable, as
// PostgreSQL's commit canceled while waiting for a synchronous standby. So a
// feed that nobody reads must be closed, and a goroutine must not write a
// table whose feed only it reads past the bound.

// maxFeedLagRows and maxFeedLagBytes bound how far a feed may fall behind
// its table before writers wait (variables so tests can lower them).
var (
	maxFeedLagRows  int64 = 1 << 20
	maxFeedLagBytes int64 = 64 << 20
)

// ErrFeedEnded is wrapped by the error a Feed reports when it can deliver no
// more changes: its table was altered or dropped, the store closed, or the
// feed was closed. A reader should rebuild from a new Subscribe.
var ErrFeedEnded = errors.New("storage: change feed ended")

// Delta is one committed write, in commit order.
type Delta struct {
	// Deleted holds the old rows removed (whole rows, table column order).
	Deleted []arrow.RecordBatch
	// Inserted holds the rows added.
	Inserted []arrow.RecordBatch
	// Update marks an UPDATE: Deleted holds the old rows and Inserted the
	// new ones, row i of one matching row i of the other (counting across
	// the batches), so a reader can emit update pairs.
	Update bool
}

// delta is a Delta as the writer records it, before materialization.
type delta struct {
	ins    []arrow.RecordBatch // inserted batches, as stored (shared, immutable)
	del    []rowRef            // deleted rows, in order
	trunc  []Chunk             // TRUNCATE: the live rows of these chunks
	update bool
	rows   int64 // rows inserted plus rows deleted
	bytes  int64 // estimated bytes of those rows

	// A retained write replayed from a packed history frame (retain.go):
	// its old and new rows are these row ranges of the frame's batches.
	packed     *packedRows
	pOld, pNew [2]int64
}

// feedPos is a position in a table's changelog: the point just after some
// state was produced. Its counters total the deltas since the table was
// opened, so the distance between two positions is a subtraction.
type feedPos struct {
	next  atomic.Pointer[feedStep] // set once, by the writer that builds the next state
	seq   uint64                   // positions along one chain count up by one
	rows  int64
	bytes int64
}

// Position is a point in a table's changelog, for reading several feeds of
// one table up to the same write (a consistent cut: every streaming job that
// reads the table puts an epoch's barrier at the same place).
type Position struct{ p *feedPos }

// Position returns the table's published position: the point after the
// last durable write.
func (t *Table) Position() Position { return Position{t.pub.Load().pos} }

// feedStep leads from one position to the next: the deltas of one submitted
// write (a transaction's writes to the table, for a commit), or an error
// that ends every feed reaching it.
type feedStep struct {
	deltas []delta
	to     *feedPos
	err    error
}

// broadcast wakes everyone waiting at once. Waiters take the channel, check
// their condition, then wait on it; notifiers change the condition, then
// notify. Notifying with no waiter costs one atomic swap.
type broadcast struct {
	p atomic.Pointer[chan struct{}]
}

func (b *broadcast) wait() <-chan struct{} {
	for {
		if p := b.p.Load(); p != nil {
			return *p
		}
		c := make(chan struct{})
		if b.p.CompareAndSwap(nil, &c) {
			return c
		}
	}
}

func (b *broadcast) notify() {
	if p := b.p.Swap(nil); p != nil {
		close(*p)
	}
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// feeds is a table's change feed bookkeeping.
type feeds struct {
	ready    broadcast // a state was published or the changelog ended
	advanced broadcast // a feed moved, closed or ended (for lagging writers)

	mu   sync.Mutex
	open map[*Feed]struct{}
	n    atomic.Int32 // len(open), read without mu by writers
}

// Feed reads a table's durable changes after the snapshot Subscribe
// returned with it. One goroutine reads it (Next, Poll, Ready); Close may be
// called from any goroutine, also concurrently.
type Feed struct {
	t  *Table
	at atomic.Pointer[feedPos] // the last position delivered (read by lagging writers)

	mu  sync.Mutex // guards err and serializes readers with Close
	err error      // non-nil once the feed ended
}

// Subscribe returns the table's current durable snapshot and a Feed of every
// durable change committed after it, atomically (no change is in both, none
// is missed). O(1). The caller must Close the feed when done with it: an open
// feed that is not read eventually makes the table's writers wait.
func (t *Table) Subscribe() (Snapshot, *Feed) {
	st := t.pub.Load()
	return Snapshot{Chunks: st.snapshotChunks()}, t.openFeed(st.pos)
}

// openFeed returns a new open feed at pos (published).
func (t *Table) openFeed(pos *feedPos) *Feed {
	f := &Feed{t: t}
	f.at.Store(pos)
	fs := &t.feeds
	fs.mu.Lock()
	if fs.open == nil {
		fs.open = make(map[*Feed]struct{})
	}
	fs.open[f] = struct{}{}
	fs.n.Store(int32(len(fs.open)))
	fs.mu.Unlock()
	return f
}

// Next returns the deltas committed since the last call (in order), waiting
// until there is at least one or ctx ends. Once the feed has ended it
// returns an error wrapping ErrFeedEnded (after every delta before the end).
func (f *Feed) Next(ctx context.Context) ([]Delta, error) {
	for {
		ready := f.Ready()
		if ds := f.Poll(); len(ds) > 0 {
			return ds, nil
		}
		if err := f.Err(); err != nil {
			return nil, err
		}
		select {
		case <-ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Err returns why the feed ended (wrapping ErrFeedEnded), or nil while it
// is open. A feed ends when a read reaches the end, after every delta before
// it was returned, or when it is closed.
func (f *Feed) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// Ready is closed when deltas may be available (or the feed ended), for
// select loops: take it, Poll, and wait on it if Poll returned nothing.
func (f *Feed) Ready() <-chan struct{} {
	c := f.t.feeds.ready.wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil || f.pendingLocked() {
		return closedChan
	}
	return c
}

// pendingLocked reports whether a step after f's position is readable: a
// published write or the end. Holds f.mu.
func (f *Feed) pendingLocked() bool {
	pos := f.at.Load()
	if pos != f.t.pub.Load().pos {
		return true
	}
	s := pos.next.Load()
	return s != nil && s.err != nil
}

// Poll returns the deltas available now without waiting (possibly none):
// every write published before the call, so a reader that polls after a
// write returned has it. The backlog is bounded by the writers' wait (see
// maxFeedLagRows).
func (f *Feed) Poll() []Delta {
	return f.poll(f.t.pub.Load().pos)
}

// PollTo is Poll up to position p (taken by Table.Position of f's table
// before): the deltas of the writes published up to p and no later ones.
// Nothing when the feed is already at or past p.
func (f *Feed) PollTo(p Position) []Delta {
	return f.poll(p.p)
}

func (f *Feed) poll(head *feedPos) []Delta {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil
	}
	start := f.at.Load()
	if head == nil || start.seq > head.seq {
		return nil
	}
	pos := start
	var out []Delta
	for {
		s := pos.next.Load()
		if s == nil || (pos == head && s.err == nil) {
			break // nothing published after pos
		}
		if s.err != nil {
			f.end(s.err)
			break
		}
		for i := range s.deltas {
			d, err := s.deltas[i].export()
			if err != nil {
				f.end(fmt.Errorf("%w: %w", ErrFeedEnded, err))
				return out // pos stays: the feed is over anyway
			}
			out = append(out, d)
		}
		pos = s.to
	}
	if pos != start {
		f.at.Store(pos)
		f.t.feeds.advanced.notify()
	}
	return out
}

var errFeedClosed = fmt.Errorf("%w: feed closed", ErrFeedEnded)

// Close detaches the feed; later reads report an error. Idempotent.
func (f *Feed) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.end(errFeedClosed)
}

// end records that the feed is over and detaches it from its table. Holds
// f.mu.
func (f *Feed) end(err error) {
	if f.err == nil {
		f.err = err
	}
	fs := &f.t.feeds
	fs.mu.Lock()
	delete(fs.open, f)
	fs.n.Store(int32(len(fs.open)))
	fs.mu.Unlock()
	fs.advanced.notify()
}

// advance makes st (built from t.w by the deltas ds) the table's latest
// accepted state and links it into the changelog. Holds t.mu, before the
// state is submitted to the committer.
func (t *Table) advance(st *state, ds []delta) {
	prev := t.w.pos
	pos := &feedPos{seq: prev.seq + 1, rows: prev.rows, bytes: prev.bytes}
	for i := range ds {
		pos.rows += ds[i].rows
		pos.bytes += ds[i].bytes
	}
	st.pos = pos
	prev.next.Store(&feedStep{deltas: ds, to: pos})
	t.w = st
	t.ret.checkRetained(pos)
}

// endFeeds ends every feed of the table with err, at the published state:
// after a barrier, the end of the changelog; after a store failure or Close,
// writes queued beyond it will never be published anyway. Holds t.mu.
func (t *Table) endFeeds(err error) {
	t.pub.Load().pos.next.Store(&feedStep{err: err})
	fs := &t.feeds
	fs.mu.Lock()
	clear(fs.open)
	fs.n.Store(0)
	fs.mu.Unlock()
	fs.ready.notify()
	fs.advanced.notify()
}

// published wakes the table's feeds after the committer published a state.
func (t *Table) published() { t.feeds.ready.notify() }

// waitFeeds applies backpressure after a durable write (see above): it
// returns once every open feed is within the lag bound or ctx ends.
func (t *Table) waitFeeds(ctx context.Context) {
	fs := &t.feeds
	if fs.n.Load() == 0 {
		return
	}
	for {
		moved := fs.advanced.wait()
		if !t.feedLagging() {
			return
		}
		select {
		case <-moved:
		case <-ctx.Done():
			return
		}
	}
}

// feedLagging reports whether some open feed lags past the bound.
func (t *Table) feedLagging() bool {
	head := t.pub.Load().pos
	fs := &t.feeds
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for f := range fs.open {
		p := f.at.Load()
		if head.rows-p.rows > maxFeedLagRows || head.bytes-p.bytes > maxFeedLagBytes {
			return true
		}
	}
	return false
}

// FeedLag reports how many rows of deltas the table's slowest open feed
// has yet to read (0 without feeds), for monitoring.
func (t *Table) FeedLag() int64 {
	head := t.pub.Load().pos
	fs := &t.feeds
	fs.mu.Lock()
	defer fs.mu.Unlock()
	var lag int64
	for f := range fs.open {
		lag = max(lag, head.rows-f.at.Load().rows)
	}
	return lag
}

// Constructors of deltas, called by the prep functions.

func insertDelta(recs []arrow.RecordBatch) delta {
	d := delta{ins: recs}
	for _, r := range recs {
		d.rows += r.NumRows()
		d.bytes += recordBytes(r)
	}
	return d
}

func deleteDelta(refs []rowRef) delta {
	return delta{del: refs, rows: int64(len(refs)), bytes: refsBytes(refs)}
}

func updateDelta(olds []rowRef, rec arrow.RecordBatch) delta {
	d := insertDelta([]arrow.RecordBatch{rec})
	d.del, d.update = olds, true
	d.rows += int64(len(olds))
	d.bytes += refsBytes(olds)
	return d
}

func truncateDelta(base *state) delta {
	d := delta{trunc: base.snapshotChunks(), rows: base.live}
	for _, c := range base.chunks {
		d.bytes += recordBytes(c.Rec)
	}
	return d
}

// refsBytes estimates the bytes of the referenced rows: each run of rows of
// one batch at that batch's average row size.
func refsBytes(refs []rowRef) int64 {
	var n int64
	for i := 0; i < len(refs); {
		j := i + 1
		for j < len(refs) && refs[j].rec == refs[i].rec {
			j++
		}
		rec := refs[i].rec
		if rows := rec.NumRows(); rows > 0 {
			n += recordBytes(rec) * int64(j-i) / rows
		}
		i = j
	}
	return n
}

// export materializes d's rows as Arrow batches (fresh for deleted rows,
// shared for inserted ones).
func (d *delta) export() (Delta, error) {
	if d.packed != nil {
		return d.exportPacked(), nil
	}
	out := Delta{Inserted: d.ins, Update: d.update}
	for i := 0; i < len(d.del); {
		rec := d.del[i].rec
		var rows []int
		for ; i < len(d.del) && d.del[i].rec == rec; i++ {
			rows = append(rows, d.del[i].row)
		}
		b, err := pickRows(rec, rows)
		if err != nil {
			return Delta{}, err
		}
		out.Deleted = append(out.Deleted, b)
	}
	for _, c := range d.trunc {
		if c.Deleted == nil {
			out.Deleted = append(out.Deleted, c.Rec)
			continue
		}
		var rows []int
		for r := 0; r < int(c.Rec.NumRows()); r++ {
			if c.Deleted[r/8]&(1<<(r%8)) == 0 {
				rows = append(rows, r)
			}
		}
		if len(rows) == 0 {
			continue
		}
		b, err := pickRows(c.Rec, rows)
		if err != nil {
			return Delta{}, err
		}
		out.Deleted = append(out.Deleted, b)
	}
	return out, nil
}

// pickRows is takeRows, without copying when rows is one run.
func pickRows(rec arrow.RecordBatch, rows []int) (arrow.RecordBatch, error) {
	first, n := rows[0], len(rows)
	if rows[n-1] == first+n-1 {
		contiguous := true
		for k, r := range rows {
			if r != first+k {
				contiguous = false
				break
			}
		}
		if contiguous {
			if n == int(rec.NumRows()) {
				return rec, nil
			}
			return rec.NewSlice(int64(first), int64(first+n)), nil
		}
	}
	return takeRows(rec, rows)
}

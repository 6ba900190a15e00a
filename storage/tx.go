package storage

import (
	"context"
	"encoding/binary"
	"errors"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/pgerr"
)

// Tx is a transaction over any tables of a Store: its writes are checked
// when made, seen by the transaction (Tx.Snapshot) but by no one else, and
// become durable and visible at Commit; Rollback forgets them.
//
// The first write to a table locks it for the transaction: other writers
// of the table (transactions or not) wait until it ends; readers are never
// blocked and keep seeing the committed rows. Two transactions waiting for
// each other's tables fail with 40P01 deadlock detected. DropTable,
// ReserveDrop and Alter of a locked table fail with 55006 instead of waiting.
//
// At Commit each table's writes go to its log as one chained write (all or
// nothing after a crash), and the tables are committed together in one
// group commit; a crash in the middle of a multi-table commit can keep some
// tables' parts and not others (tables have separate logs).
//
// A Tx is used by one goroutine at a time (a session); the Table methods
// without a Tx must not be used on a table the same Tx has locked, since
// they would wait for it.
type Tx struct {
	store   *Store
	tables  []*txTable
	waiting atomic.Pointer[Table] // the table this Tx waits for, if any
	done    bool
}

// txTable is a transaction's view of one table it wrote.
type txTable struct {
	t      *Table
	st     *state
	frames [][]byte
	undo   []func()
	deltas []delta
	gen    uint64 // t.gen when first staged; the writes are stale if it moved (failure.go)
}

// Begin starts a transaction.
func (s *Store) Begin() *Tx { return &Tx{store: s} }

type txKey struct{}

// WithTx returns ctx carrying tx: Table writes given that context go into
// tx (Table.Insert(ctx, ...) is then tx.Insert(ctx, t, ...)), and
// Table.SnapshotIn(ctx) shows tx's view. This lets a session run statements
// inside a transaction without the statement code knowing.
func WithTx(ctx context.Context, tx *Tx) context.Context {
	return context.WithValue(ctx, txKey{}, tx)
}

// TxFrom returns the transaction ctx carries, or nil.
func TxFrom(ctx context.Context) *Tx {
	if ctx == nil {
		return nil
	}
	tx, _ := ctx.Value(txKey{}).(*Tx)
	return tx
}

// SnapshotIn is Snapshot as seen from ctx: the view of the transaction ctx
// carries (WithTx), else the committed rows. ctx may be nil.
func (t *Table) SnapshotIn(ctx context.Context) Snapshot {
	if tx := TxFrom(ctx); tx != nil {
		return tx.Snapshot(t)
	}
	return t.Snapshot()
}

var errTxDone = errors.New("storage: transaction already ended")

func (tx *Tx) find(t *Table) *txTable {
	for _, tt := range tx.tables {
		if tt.t == t {
			return tt
		}
	}
	return nil
}

// Snapshot returns t's rows as tx sees them: its own writes included.
func (tx *Tx) Snapshot(t *Table) Snapshot {
	if tt := tx.find(t); tt != nil {
		return Snapshot{Chunks: tt.st.snapshotChunks()}
	}
	return t.Snapshot()
}

// Insert is Table.Insert within the transaction (not durable until Commit).
func (tx *Tx) Insert(ctx context.Context, t *Table, rec arrow.RecordBatch) (int64, error) {
	return tx.InsertBatches(ctx, t, []arrow.RecordBatch{rec})
}

// InsertBatches is Table.InsertBatches within the transaction.
func (tx *Tx) InsertBatches(ctx context.Context, t *Table, recs []arrow.RecordBatch) (int64, error) {
	return tx.write(ctx, t, func(base *state) (change, error) { return t.prepInsert(base, recs) })
}

// Delete is Table.Delete within the transaction.
func (tx *Tx) Delete(ctx context.Context, t *Table, rowIDs []int64) (int64, error) {
	return tx.write(ctx, t, func(base *state) (change, error) { return t.prepDelete(base, rowIDs), nil })
}

// Update is Table.Update within the transaction.
func (tx *Tx) Update(ctx context.Context, t *Table, rowIDs []int64, rec arrow.RecordBatch) (int64, error) {
	return tx.write(ctx, t, func(base *state) (change, error) { return t.prepUpdate(base, rowIDs, rec) })
}

// Truncate is Table.Truncate within the transaction.
func (tx *Tx) Truncate(ctx context.Context, t *Table) error {
	_, err := tx.write(ctx, t, func(base *state) (change, error) { return t.prepTruncate(base), nil })
	return err
}

func (tx *Tx) write(ctx context.Context, t *Table, prep func(*state) (change, error)) (int64, error) {
	if tx.done {
		return 0, errTxDone
	}
	return t.write(ctx, tx, prep)
}

// stage applies a change to tx's view of t. Holds t.mu, t locked by tx.
func (tx *Tx) stage(t *Table, prep func(*state) (change, error)) (int64, error) {
	tt := tx.find(t)
	if tt == nil {
		tt = &txTable{t: t, st: t.w, gen: t.gen}
		tx.tables = append(tx.tables, tt)
	}
	if err := t.staleTx(tt.gen); err != nil {
		return 0, err
	}
	c, err := prep(tt.st)
	if err != nil || len(c.frames) == 0 {
		return c.n, err
	}
	tt.st = c.st
	tt.frames = append(tt.frames, c.frames...)
	tt.undo = append(tt.undo, c.undo)
	tt.deltas = append(tt.deltas, c.delta)
	return c.n, nil
}

// Commit makes the transaction's writes durable and visible, and unlocks
// its tables. On error (the store failed) the transaction is over too.
func (tx *Tx) Commit(ctx context.Context) error {
	if tx.done {
		return errTxDone
	}
	tx.done = true
	var tickets []ticket
	var err error
	for _, tt := range tx.tables {
		t := tt.t
		t.mu.Lock()
		if len(tt.frames) > 0 && err != nil {
			tt.undoStaged()
		} else if len(tt.frames) > 0 && !t.dropped {
			if err = t.staleTx(tt.gen); err != nil {
				tt.undoStaged() // built on a write that failed
			} else {
				chainFrames(tt.frames)
				t.advance(tt.st, tt.deltas)
				var k ticket
				if k, err = t.store.commit.submit(commitReq{t: t, frames: tt.frames, st: tt.st, gen: tt.gen}); err == nil {
					tickets = append(tickets, k)
				}
			}
		}
		t.release()
		t.mu.Unlock()
	}
	for _, k := range tickets {
		if e := k.wait(); e != nil && err == nil {
			err = e
		}
	}
	for _, tt := range tx.tables {
		if err == nil {
			tt.t.maybeCompact()
		}
	}
	if err == nil {
		for _, tt := range tx.tables {
			tt.t.waitFeeds(ctx)
		}
	}
	tx.tables = nil
	return err
}

// Rollback forgets the transaction's writes and unlocks its tables.
func (tx *Tx) Rollback() {
	if tx.done {
		return
	}
	tx.done = true
	for _, tt := range tx.tables {
		t := tt.t
		t.mu.Lock()
		tt.undoStaged()
		t.release()
		t.mu.Unlock()
	}
	tx.tables = nil
}

// undoStaged takes the transaction's staged keys back out of the table's
// indexes, unless a settled write failure rebuilt them without (failure.go).
// Holds tt.t.mu.
func (tt *txTable) undoStaged() {
	if tt.gen != tt.t.gen {
		return
	}
	for i := len(tt.undo) - 1; i >= 0; i-- {
		tt.undo[i]()
	}
}

// chainFrames flags every frame but the last as continued, so that they
// replay as one write.
func chainFrames(frames [][]byte) {
	for _, f := range frames[:len(frames)-1] {
		if recKind(f[frameHeaderLen])&recMore == 0 {
			f[frameHeaderLen] |= byte(recMore)
			binary.LittleEndian.PutUint32(f[4:], frameCRC(f[0:4], f[frameHeaderLen:]))
		}
	}
}

// acquire waits until t may be written by tx (nil: a write outside any
// transaction) and locks t for tx. The wait ends early with ctx's error when
// ctx is canceled. Holds t.mu.
func (t *Table) acquire(ctx context.Context, tx *Tx) error {
	var stop func() bool
	defer func() {
		if stop != nil {
			stop()
		}
	}()
	for t.owner != nil && t.owner != tx {
		if err := ctx.Err(); err != nil {
			return err
		}
		if stop == nil { // wake the wait below on cancellation
			stop = context.AfterFunc(ctx, func() {
				t.mu.Lock()
				t.free.Broadcast()
				t.mu.Unlock()
			})
		}
		if tx != nil {
			tx.waiting.Store(t)
			if tx.deadlocked(t) {
				tx.waiting.Store(nil)
				return pgerr.New("40P01", "deadlock detected")
			}
		}
		t.free.Wait()
		if tx != nil {
			tx.waiting.Store(nil)
		}
	}
	if err := t.writable(); err != nil { // dropped (or reserved) while waiting
		return err
	}
	if tx != nil && t.owner == nil {
		t.owner = tx
		t.ownerA.Store(tx)
	}
	return nil
}

// deadlocked reports whether waiting for t closes a cycle of transactions
// each waiting for a table the next one holds.
func (tx *Tx) deadlocked(t *Table) bool {
	o := t.ownerA.Load()
	for i := 0; o != nil && i < 1000; i++ {
		if o == tx {
			return true
		}
		w := o.waiting.Load()
		if w == nil {
			return false
		}
		o = w.ownerA.Load()
	}
	return false
}

// release unlocks t from its transaction. Holds t.mu.
func (t *Table) release() {
	t.owner = nil
	t.ownerA.Store(nil)
	t.free.Broadcast()
}

// errLocked is the error of DDL on a table an open transaction has written.
func (t *Table) errLocked(what string) error {
	return pgerr.New(pgerr.Code("55006"), `cannot %s table "%s" because an open transaction is writing it`, what, t.def.TableName)
}

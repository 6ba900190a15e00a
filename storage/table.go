package storage

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

// Table is one table's rows. Safe for concurrent use: writers are
// serialized per table (mu), readers take snapshots without blocking writers.
//
// A write validates against the writer-side state w (every accepted write,
// durable or not), builds the next state, queues its log record and releases
// mu before waiting for the fsync; so writers to one table pipeline into the
// same commit group. The committer publishes a state (pub) only once its
// record is durable: a snapshot never shows a row that a crash could lose.
type Table struct {
	store *Store
	pub   atomic.Pointer[state] // the durable state, what Snapshot returns

	mu      sync.Mutex // serializes writers; guards the fields below
	def     TableDef
	schema  *arrow.Schema
	w       *state     // the latest accepted state
	pk      *pkIndex   // nil without a primary key
	keys    []*pkIndex // every key index: pk (if any) first, then UNIQUE ones
	dropped bool
	log     *logFile // see logFile for who may touch it
	gen     uint64   // write generation: moves past each settled failure (failure.go)

	failure failure // the last write failure (failure.go)

	// Transaction lock (tx.go): the Tx that has written the table and not
	// ended; writers of other transactions or none wait on free.
	owner  *Tx
	ownerA atomic.Pointer[Tx] // owner, readable without mu (deadlock detection)
	free   sync.Cond

	// Automatic log compaction (compact.go).
	compactAt  atomic.Int64 // log size at which to consider compacting
	compacting atomic.Bool

	feeds feeds // change feeds (feed.go)

	ret retention // LSN space and retained writes (lsn.go); guarded by mu
}

func newTable(s *Store, def TableDef, st *state, lf *logFile) *Table {
	for _, c := range def.PrimaryKey {
		def.NotNull[c] = true
	}
	if st.pos == nil {
		st.pos = &feedPos{}
	}
	t := &Table{store: s, def: def, schema: types.ArrowSchema(def.Columns), w: st, log: lf}
	t.pub.Store(st)
	t.free.L = &t.mu
	t.pk, t.keys = newIndexes(&t.def)
	t.indexState(st)
	return t
}

// Def returns the table's definition (shared; do not modify).
func (t *Table) Def() TableDef {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.def
}

// Snapshot returns the table's current rows: every write that has returned
// success, and possibly some whose fsync just finished. O(1); never blocks.
func (t *Table) Snapshot() Snapshot {
	return Snapshot{Chunks: t.pub.Load().snapshotChunks()}
}

// RowCount returns the number of live rows in the current snapshot.
func (t *Table) RowCount() int64 { return t.pub.Load().live }

// LogBytes returns the size of the table's log on disk (what
// pg_relation_size can report).
func (t *Table) LogBytes() int64 { return t.log.size.Load() }

// LookupKey finds the live row whose primary key equals key (values in
// primary key column order, Go forms as in types/arrow.go). It sees every
// accepted write, including one whose fsync is in flight. False when the
// table has no primary key or no row has the key.
func (t *Table) LookupKey(key []types.Value) (rowID int64, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pk == nil {
		return 0, false
	}
	return t.pk.lookupValues(key)
}

// conform checks rec's shape against the table and returns it with the
// table's schema. Holds t.mu.
func (t *Table) conform(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	if err := conformSchema(t.def.TableName, t.schema, rec); err != nil {
		return nil, err
	}
	if rec.Schema() == t.schema {
		return rec, nil
	}
	return array.NewRecordBatch(t.schema, rec.Columns(), rec.NumRows()), nil
}

// writable reports why t cannot be written, if so. Holds t.mu.
func (t *Table) writable() error {
	if t.dropped {
		return fmt.Errorf("storage: table %q (oid %d) was dropped", t.def.TableName, t.def.OID)
	}
	return nil
}

// commit queues a record whose state t.w already is and releases t.mu;
// it returns once the record is durable. Holds t.mu on entry.
func (t *Table) commit(frames ...[]byte) error {
	k, err := t.store.commit.submit(commitReq{t: t, frames: frames, st: t.w, gen: t.gen})
	t.mu.Unlock()
	if err == nil {
		err = k.wait()
	}
	if err == nil {
		t.maybeCompact()
	}
	return err
}

// barrier waits until every queued record of t is durable or failed, then
// settles a failure (failure.go): on success t.w is t.pub. Holds t.mu.
func (t *Table) barrier() error {
	if err := t.drain(); err != nil {
		return err
	}
	return t.settle()
}

// drain waits until every queued record of t is durable or failed. Holds
// t.mu.
func (t *Table) drain() error {
	k, err := t.store.commit.submit(commitReq{t: t})
	if err != nil {
		return err
	}
	return k.wait()
}

// Insert appends rows (columns in table order) and returns when they are
// durable (fsync, grouped with concurrent writers). It checks NOT NULL and
// primary keys first: nothing is written if any row fails. The rows get the
// next row ids in order; storage keeps rec's arrays (never modified).
func (t *Table) Insert(ctx context.Context, rec arrow.RecordBatch) (int64, error) {
	return t.InsertBatches(ctx, []arrow.RecordBatch{rec})
}

// InsertBatches inserts several batches as one all-or-nothing, durable write
// (a whole COPY, say): constraints are checked across all of them, each
// batch is kept as it is (no concatenation), and a crash leaves all or none
// of them. Returns the number of rows inserted.
func (t *Table) InsertBatches(ctx context.Context, recs []arrow.RecordBatch) (int64, error) {
	return t.write(ctx, nil, func(base *state) (change, error) { return t.prepInsert(base, recs) })
}

// Delete removes rows by row id; durable on return. Ids that are not live
// rows (never existed or already deleted) are skipped; a repeated id counts
// once. Returns the number deleted.
func (t *Table) Delete(ctx context.Context, rowIDs []int64) (int64, error) {
	return t.write(ctx, nil, func(base *state) (change, error) { return t.prepDelete(base, rowIDs), nil })
}

// Update replaces rows: row rowIDs[i] becomes row i of rec, atomically for
// the whole call (all or nothing, one log record), checking keys and NOT NULL.
//
// An updated row gets a new row id (the old id is deleted, the new row is
// appended), as a PostgreSQL row gets a new ctid. Ids that are not live rows,
// and repeats of an id, are skipped with their rows of rec (a row deleted
// since the caller's snapshot is not resurrected). Keys are checked for the
// statement as a whole: UPDATE t SET id = id + 1 succeeds, where PostgreSQL
// may fail on a transient duplicate depending on row order. Returns the
// number of rows updated.
func (t *Table) Update(ctx context.Context, rowIDs []int64, rec arrow.RecordBatch) (int64, error) {
	return t.write(ctx, nil, func(base *state) (change, error) { return t.prepUpdate(base, rowIDs, rec) })
}

// Truncate removes every row; durable on return. Row ids keep counting.
func (t *Table) Truncate(ctx context.Context) error {
	_, err := t.write(ctx, nil, func(base *state) (change, error) { return t.prepTruncate(base), nil })
	return err
}

// write runs prep on the table's latest state under the writer lock and
// makes the change durable, or stages it in tx (given, or carried by ctx).
func (t *Table) write(ctx context.Context, tx *Tx, prep func(base *state) (change, error)) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if tx == nil {
		if tx = TxFrom(ctx); tx != nil && tx.done {
			return 0, errTxDone
		}
	}
	t.mu.Lock()
	if err := t.writable(); err != nil {
		t.mu.Unlock()
		return 0, err
	}
	if err := t.acquire(ctx, tx); err != nil {
		t.mu.Unlock()
		return 0, err
	}
	if err := t.settle(); err != nil {
		t.mu.Unlock()
		return 0, err
	}
	if tx != nil {
		defer t.mu.Unlock()
		return tx.stage(t, prep)
	}
	c, err := prep(t.w)
	if err != nil || len(c.frames) == 0 {
		t.mu.Unlock()
		return c.n, err
	}
	ds := c.deltas
	if ds == nil {
		ds = []delta{c.delta}
	}
	t.advance(c.st, ds)
	if err := t.commit(c.frames...); err != nil {
		return 0, err
	}
	t.waitFeeds(ctx)
	return c.n, nil
}

// takeRows returns the rows of rec at the given ascending indexes, by
// concatenating slices of their consecutive runs.
func takeRows(rec arrow.RecordBatch, rows []int) (arrow.RecordBatch, error) {
	type run struct{ from, to int }
	var runs []run
	for _, i := range rows {
		if k := len(runs) - 1; k >= 0 && runs[k].to == i {
			runs[k].to++
		} else {
			runs = append(runs, run{i, i + 1})
		}
	}
	cols := make([]arrow.Array, rec.NumCols())
	parts := make([]arrow.Array, len(runs))
	for c, col := range rec.Columns() {
		for j, r := range runs {
			parts[j] = array.NewSlice(col, int64(r.from), int64(r.to))
		}
		out, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			return nil, fmt.Errorf("storage: select updated rows: %w", err)
		}
		cols[c] = out
	}
	return array.NewRecordBatch(rec.Schema(), cols, int64(len(rows))), nil
}

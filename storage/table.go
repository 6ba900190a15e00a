package storage

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
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
	w       *state   // the latest accepted state
	pk      *pkIndex // nil without a primary key
	dropped bool
	log     *logFile // see logFile for who may touch it

	// Automatic log compaction (compact.go).
	compactAt  atomic.Int64 // log size at which to consider compacting
	compacting atomic.Bool
}

func newTable(s *Store, def TableDef, st *state, lf *logFile) *Table {
	for _, c := range def.PrimaryKey {
		def.NotNull[c] = true
	}
	t := &Table{store: s, def: def, schema: types.ArrowSchema(def.Columns), w: st, log: lf}
	t.pub.Store(st)
	t.pk = newPKIndex(&t.def)
	if t.pk != nil {
		t.rebuildIndex()
	}
	return t
}

// rebuildIndex indexes every live row of t.w.
func (t *Table) rebuildIndex() {
	t.pk.reset()
	for _, c := range t.w.chunks {
		n := int(c.Rec.NumRows())
		for i := 0; i < n; i++ {
			if c.Deleted != nil && bitutil.BitIsSet(c.Deleted, i) {
				continue
			}
			t.pk.add(c.Rec, i, c.FirstRowID+int64(i))
		}
	}
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
	g, err := t.store.commit.submit(commitReq{t: t, frames: frames, st: t.w})
	t.mu.Unlock()
	if err == nil {
		err = g.wait()
	}
	if err == nil {
		t.maybeCompact()
	}
	return err
}

// barrier waits until every queued record of t is durable. Holds t.mu.
func (t *Table) barrier() error {
	g, err := t.store.commit.submit(commitReq{t: t})
	if err != nil {
		return err
	}
	return g.wait()
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
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	t.mu.Lock()
	if err := t.writable(); err != nil {
		t.mu.Unlock()
		return 0, err
	}
	batches := make([]arrow.RecordBatch, 0, len(recs))
	for _, rec := range recs {
		if rec.NumRows() == 0 {
			continue
		}
		rec, err := t.conform(rec)
		if err != nil {
			t.mu.Unlock()
			return 0, err
		}
		batches = append(batches, rec)
	}
	if len(batches) == 0 {
		t.mu.Unlock()
		return 0, nil
	}
	// Check (and index) batch by batch; on failure take back the keys of
	// the batches before.
	first := t.w.next
	undo := func(k int) {
		for id, j := first, 0; j < k; j++ {
			t.unindex(batches[j], id, int(batches[j].NumRows()))
			id += batches[j].NumRows()
		}
	}
	frames := make([][]byte, len(batches))
	id := first
	for k, rec := range batches {
		err := t.checkRows(rec, id, nil)
		if err == nil {
			frames[k], err = encodeInsert(id, rec, k < len(batches)-1)
			if err != nil {
				t.unindex(rec, id, int(rec.NumRows()))
			}
		}
		if err != nil {
			undo(k)
			t.mu.Unlock()
			return 0, err
		}
		id += rec.NumRows()
	}
	st := t.w
	for id, k := first, 0; k < len(batches); k++ {
		st = st.withInsert(id, batches[k])
		id += batches[k].NumRows()
	}
	t.w = st
	if err := t.commit(frames...); err != nil {
		return 0, err
	}
	return id - first, nil
}

// Delete removes rows by row id; durable on return. Ids that are not live
// rows (never existed or already deleted) are skipped; a repeated id counts
// once. Returns the number deleted.
func (t *Table) Delete(ctx context.Context, rowIDs []int64) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	t.mu.Lock()
	if err := t.writable(); err != nil {
		t.mu.Unlock()
		return 0, err
	}
	ns, refs := t.w.withDelete(rowIDs)
	if len(refs) == 0 {
		t.mu.Unlock()
		return 0, nil
	}
	ids := make([]int64, len(refs))
	for i, r := range refs {
		ids[i] = r.id
		if t.pk != nil {
			t.pk.remove(r.rec, r.row, r.id)
		}
	}
	t.w = ns
	if err := t.commit(encodeDelete(ids)); err != nil {
		return 0, err
	}
	return int64(len(refs)), nil
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
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if int64(len(rowIDs)) != rec.NumRows() {
		return 0, fmt.Errorf("storage: update of %d row ids with %d rows", len(rowIDs), rec.NumRows())
	}
	if len(rowIDs) == 0 {
		return 0, nil
	}
	t.mu.Lock()
	if err := t.writable(); err != nil {
		t.mu.Unlock()
		return 0, err
	}
	rec, err := t.conform(rec)
	if err != nil {
		t.mu.Unlock()
		return 0, err
	}
	// Resolve the targets against the latest state.
	keep := make([]int, 0, len(rowIDs))
	olds := make([]rowRef, 0, len(rowIDs))
	var seen map[int64]struct{}
	if len(rowIDs) > 1 {
		seen = make(map[int64]struct{}, len(rowIDs))
	}
	for i, id := range rowIDs {
		r, row, ok := t.w.isLive(id)
		if !ok {
			continue
		}
		if seen != nil {
			if _, dup := seen[id]; dup {
				continue
			}
			seen[id] = struct{}{}
		}
		keep = append(keep, i)
		olds = append(olds, rowRef{rec: r, row: row, id: id})
	}
	if len(keep) == 0 {
		t.mu.Unlock()
		return 0, nil
	}
	ids := rowIDs
	if len(keep) < len(rowIDs) {
		ids = make([]int64, len(keep))
		for j, i := range keep {
			ids[j] = rowIDs[i]
		}
		if rec, err = takeRows(rec, keep); err != nil {
			t.mu.Unlock()
			return 0, err
		}
	}
	first := t.w.next
	if err := t.checkRows(rec, first, olds); err != nil {
		t.mu.Unlock()
		return 0, err
	}
	frame, err := encodeUpdate(ids, first, rec)
	if err != nil {
		t.unindex(rec, first, int(rec.NumRows()))
		t.reindex(olds)
		t.mu.Unlock()
		return 0, err
	}
	ns, _ := t.w.withDelete(ids)
	t.w = ns.withInsert(first, rec)
	if err := t.commit(frame); err != nil {
		return 0, err
	}
	return int64(len(ids)), nil
}

// Truncate removes every row; durable on return. Row ids keep counting.
func (t *Table) Truncate(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t.mu.Lock()
	if err := t.writable(); err != nil {
		t.mu.Unlock()
		return err
	}
	t.w = t.w.truncated()
	if t.pk != nil {
		t.pk.reset()
	}
	return t.commit(encodeTruncate())
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

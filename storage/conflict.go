package storage

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

// Lookups by key, for INSERT ... ON CONFLICT.

// LookupUnique is LookupKey for any key index: the primary key or a UNIQUE
// constraint, by constraint name. False when no index has that name or no
// live row has the key (a key with a NULL never matches a UNIQUE one).
func (t *Table) LookupUnique(name string, key []types.Value) (rowID int64, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, x := range t.keys {
		if x.name == name {
			return x.lookupValues(key)
		}
	}
	return 0, false
}

// Conflicts is what ON CONFLICT needs to know about rows proposed for
// insertion (rec, in table layout): for row i, Existing[i] is the id of the
// live row it conflicts with in one of the arbiter indexes, or -1; for a
// row without such a conflict, Earlier[i] is the first earlier row of rec
// it conflicts with among those that would be inserted (no conflict of
// their own and no earlier one), or -1. As PostgreSQL checks rows one by
// one, the rows to insert for DO NOTHING are those with both -1.
// Rows holds the conflicting live rows, one per Existing[i] >= 0, in order.
type Conflicts struct {
	Existing []int64
	Earlier  []int
	Rows     arrow.RecordBatch
}

// FindConflicts checks rec against the key indexes named in arbiters (nil:
// all of them) as the caller's transaction (carried by ctx, see WithTx)
// sees the table. In a transaction it takes the table's write lock, as a
// write would; outside one it waits for other transactions' writes to end.
// The answer can be stale by the time the caller writes, if another session
// writes the table in between outside a transaction: the write then fails
// with 23505 as a plain INSERT would.
func (t *Table) FindConflicts(ctx context.Context, rec arrow.RecordBatch, arbiters []string) (*Conflicts, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tx := TxFrom(ctx)
	if tx != nil && tx.done {
		return nil, errTxDone
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.writable(); err != nil {
		return nil, err
	}
	if err := t.acquire(ctx, tx); err != nil {
		return nil, err
	}
	if err := t.settle(); err != nil {
		return nil, err
	}
	st := t.w
	if tx != nil {
		tt := tx.find(t)
		if tt == nil { // registered so that Commit or Rollback unlocks t
			tt = &txTable{t: t, st: t.w, gen: t.gen}
			tx.tables = append(tx.tables, tt)
		}
		st = tt.st
	}
	rec, err := t.conform(rec)
	if err != nil {
		return nil, err
	}
	var idx []*pkIndex
	for _, x := range t.keys {
		if arbiters == nil || slices.Contains(arbiters, x.name) {
			idx = append(idx, x)
		}
	}
	n := int(rec.NumRows())
	c := &Conflicts{Existing: make([]int64, n), Earlier: make([]int, n)}
	var found []rowRef
	for i := 0; i < n; i++ {
		c.Existing[i], c.Earlier[i] = -1, -1
		for _, x := range idx {
			if id, ok := x.lookup(rec, i); ok {
				if r, row, live := st.isLive(id); live {
					c.Existing[i] = id
					found = append(found, rowRef{rec: r, row: row, id: id})
					break
				}
			}
		}
	}
	// Duplicates within rec: scratch indexes, keyed by row number, of the
	// rows that would be inserted (no conflict of their own), in order.
	seen := make([]*pkIndex, len(idx))
	for j, x := range idx {
		seen[j] = newKeyIndex(&t.def, x.cols, x.name, x.nullable)
	}
	for i := 0; i < n; i++ {
		if c.Existing[i] >= 0 {
			continue
		}
		for _, x := range seen {
			if first, ok := x.lookup(rec, i); ok {
				c.Earlier[i] = int(first)
				break
			}
		}
		if c.Earlier[i] < 0 {
			for _, x := range seen {
				x.add(rec, i, int64(i))
			}
		}
	}
	if c.Rows, err = gatherRows(t.schema, found); err != nil {
		return nil, err
	}
	return c, nil
}

// gatherRows copies the given rows into one batch.
func gatherRows(schema *arrow.Schema, rows []rowRef) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, schema.NumFields())
	parts := make([]arrow.Array, len(rows))
	for c := range cols {
		if len(rows) == 0 {
			cols[c] = array.MakeArrayOfNull(memory.DefaultAllocator, schema.Field(c).Type, 0)
			continue
		}
		for j, r := range rows {
			parts[j] = array.NewSlice(r.rec.Column(c), int64(r.row), int64(r.row+1))
		}
		out, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			return nil, fmt.Errorf("storage: gather conflicting rows: %w", err)
		}
		cols[c] = out
	}
	return array.NewRecordBatch(schema, cols, int64(len(rows))), nil
}

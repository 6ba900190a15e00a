package storage

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// A change is a validated write, built against a base state but not yet
// published: the next state, its log frames, and how to take its keys back
// out of the primary key index (for a transaction's rollback). Building one
// already updates the index; all of it runs under the table's writer lock.
type change struct {
	st     *state
	frames [][]byte
	undo   func()
	n      int64 // rows written
	delta  delta // what a change feed reports (feed.go)
	// deltas, when set, replace delta: a write of several steps (UpsertMeta)
	deltas []delta
}

// prepInsert checks and indexes batches to be appended to base.
func (t *Table) prepInsert(base *state, recs []arrow.RecordBatch) (change, error) {
	batches := make([]arrow.RecordBatch, 0, len(recs))
	for _, rec := range recs {
		if rec.NumRows() == 0 {
			continue
		}
		rec, err := t.conform(rec)
		if err != nil {
			return change{}, err
		}
		batches = append(batches, rec)
	}
	if len(batches) == 0 {
		return change{}, nil
	}
	first := base.next
	unindexTo := func(k int) { // take back the keys of batches[:k]
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
			unindexTo(k)
			return change{}, err
		}
		id += rec.NumRows()
	}
	st := base
	for id, k := first, 0; k < len(batches); k++ {
		st = st.withInsert(id, batches[k])
		id += batches[k].NumRows()
	}
	return change{st: st, frames: frames, undo: func() { unindexTo(len(batches)) }, n: id - first, delta: insertDelta(batches)}, nil
}

// prepDelete deletes the live rows among ids from base.
func (t *Table) prepDelete(base *state, rowIDs []int64) change {
	ns, refs := base.withDelete(rowIDs)
	if len(refs) == 0 {
		return change{}
	}
	ids := make([]int64, len(refs))
	for i, r := range refs {
		ids[i] = r.id
		for _, x := range t.keys {
			x.remove(r.rec, r.row, r.id)
		}
	}
	return change{st: ns, frames: [][]byte{encodeDelete(ids)}, undo: func() { t.reindex(refs) }, n: int64(len(refs)), delta: deleteDelta(refs)}
}

// prepUpdate replaces the live rows among ids by rec's rows (see Update).
func (t *Table) prepUpdate(base *state, rowIDs []int64, rec arrow.RecordBatch) (change, error) {
	if int64(len(rowIDs)) != rec.NumRows() {
		return change{}, fmt.Errorf("storage: update of %d row ids with %d rows", len(rowIDs), rec.NumRows())
	}
	if len(rowIDs) == 0 {
		return change{}, nil
	}
	rec, err := t.conform(rec)
	if err != nil {
		return change{}, err
	}
	// Resolve the targets.
	keep := make([]int, 0, len(rowIDs))
	olds := make([]rowRef, 0, len(rowIDs))
	var seen map[int64]struct{}
	if len(rowIDs) > 1 {
		seen = make(map[int64]struct{}, len(rowIDs))
	}
	for i, id := range rowIDs {
		r, row, ok := base.isLive(id)
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
		return change{}, nil
	}
	ids := rowIDs
	if len(keep) < len(rowIDs) {
		ids = make([]int64, len(keep))
		for j, i := range keep {
			ids[j] = rowIDs[i]
		}
		if rec, err = takeRows(rec, keep); err != nil {
			return change{}, err
		}
	}
	first := base.next
	if err := t.checkRows(rec, first, olds); err != nil {
		return change{}, err
	}
	undo := func() {
		t.unindex(rec, first, int(rec.NumRows()))
		t.reindex(olds)
	}
	frame, err := encodeUpdate(ids, first, rec)
	if err != nil {
		undo()
		return change{}, err
	}
	ns, _ := base.withDelete(ids)
	return change{st: ns.withInsert(first, rec), frames: [][]byte{frame}, undo: undo, n: int64(len(ids)), delta: updateDelta(olds, rec)}, nil
}

// prepTruncate empties base.
func (t *Table) prepTruncate(base *state) change {
	for _, x := range t.keys {
		x.reset(0)
	}
	return change{st: base.truncated(), frames: [][]byte{encodeTruncate()}, undo: func() { t.indexState(base) }, delta: truncateDelta(base)}
}

// indexState makes the index hold exactly st's live rows.
func (t *Table) indexState(st *state) {
	rows := 0
	for _, c := range st.chunks {
		rows += int(c.Rec.NumRows())
	}
	for _, x := range t.keys {
		x.reset(rows)
		for _, c := range st.chunks {
			for i := 0; i < int(c.Rec.NumRows()); i++ {
				if c.Deleted == nil || c.Deleted[i/8]&(1<<(i%8)) == 0 {
					x.add(c.Rec, i, c.FirstRowID+int64(i))
				}
			}
		}
	}
}

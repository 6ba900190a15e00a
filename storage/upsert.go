package storage

import (
	"context"
	"errors"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
)

// UpsertMeta writes, as one all-or-nothing durable write that also records
// meta as the table's Meta (see InsertBatchesMeta): the live rows whose
// primary key equals that of a row of deletes or of upserts are deleted,
// then upserts' rows are inserted. Both batches have the table's columns
// (deletes need only its key columns; either may be nil); the caller
// gives each key at most once across both. When nothing changes (no rows
// to insert, no row found to delete) nothing is written and Meta does not
// change. The table must have a primary key. Not in a transaction.
func (t *Table) UpsertMeta(ctx context.Context, upserts, deletes arrow.RecordBatch, meta []byte) (int64, error) {
	if len(meta) > maxMeta {
		return 0, errMetaTooLong
	}
	if TxFrom(ctx) != nil {
		return 0, errMetaInTx
	}
	meta = slices.Clone(meta)
	return t.write(ctx, nil, func(base *state) (change, error) {
		if t.pk == nil {
			return change{}, errNoKey
		}
		var ids []int64
		for _, rec := range []arrow.RecordBatch{deletes, upserts} {
			if rec == nil {
				continue
			}
			rec, err := t.conform(rec)
			if err != nil {
				return change{}, err
			}
			for i := 0; i < int(rec.NumRows()); i++ {
				if id, ok := t.pk.lookup(rec, i); ok {
					ids = append(ids, id)
				}
			}
		}
		del := t.prepDelete(base, ids)
		st := base
		if len(del.frames) > 0 {
			st = del.st
		}
		var ins change
		if upserts != nil {
			var err error
			if ins, err = t.prepInsert(st, []arrow.RecordBatch{upserts}); err != nil {
				if del.undo != nil {
					del.undo()
				}
				return change{}, err
			}
		}
		c := change{st: st, n: del.n + ins.n}
		c.frames = append(del.frames, ins.frames...)
		if len(c.frames) == 0 {
			return change{}, nil
		}
		if len(del.frames) > 0 {
			c.deltas = append(c.deltas, del.delta)
		}
		if len(ins.frames) > 0 {
			c.st = ins.st
			c.deltas = append(c.deltas, ins.delta)
		}
		c.undo = func() {
			if ins.undo != nil {
				ins.undo()
			}
			if del.undo != nil {
				del.undo()
			}
		}
		if c.st == base {
			c.st = c.st.clone()
		}
		c.st.meta = meta
		c.frames = append(c.frames, encodeMeta(meta))
		chainFrames(c.frames)
		return c, nil
	})
}

var errNoKey = errors.New("storage: UpsertMeta on a table without a primary key")

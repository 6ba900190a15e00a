package planner

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/storage"
	"github.com/streamsql/streamsql/types"
)

// ConflictWrites is what an INSERT ... ON CONFLICT writes: rows to insert
// and rows to update, both in table column order. Either may be empty.
type ConflictWrites struct {
	Insert    arrow.RecordBatch
	UpdateIDs []int64
	Update    arrow.RecordBatch // Update row i replaces row id UpdateIDs[i]

	insertFrom, updateFrom []int // the proposed row each written row came from
}

// Written returns the inserted rows and the updated rows' new values in
// the order of the proposed rows they came from (what RETURNING shows).
func (w *ConflictWrites) Written() (arrow.RecordBatch, error) {
	if len(w.UpdateIDs) == 0 {
		return w.Insert, nil
	}
	if w.Insert.NumRows() == 0 {
		return w.Update, nil
	}
	// Both: interleave by proposal position.
	n := len(w.insertFrom) + len(w.updateFrom)
	cols := make([]arrow.Array, w.Insert.NumCols())
	for c := range cols {
		parts := make([]arrow.Array, 0, n)
		i, u := 0, 0
		for i < len(w.insertFrom) || u < len(w.updateFrom) {
			if u == len(w.updateFrom) || i < len(w.insertFrom) && w.insertFrom[i] < w.updateFrom[u] {
				parts = append(parts, array.NewSlice(w.Insert.Column(c), int64(i), int64(i+1)))
				i++
			} else {
				parts = append(parts, array.NewSlice(w.Update.Column(c), int64(u), int64(u+1)))
				u++
			}
		}
		out, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			return nil, fmt.Errorf("planner: ON CONFLICT rows: %w", err)
		}
		cols[c] = out
	}
	return array.NewRecordBatch(w.Insert.Schema(), cols, int64(n)), nil
}

// Count is the command tag's count: rows inserted plus rows updated.
func (w *ConflictWrites) Count() int64 {
	return w.Insert.NumRows() + int64(len(w.UpdateIDs))
}

// Resolve decides what to write for the proposed rows rec (table column
// order): rows without a conflict on an arbiter constraint are inserted
// (of several with the same key, the first); conflicting ones are skipped
// (DO NOTHING) or turned into updates of the rows they conflict with (DO
// UPDATE, when WHERE holds). A key proposed twice for DO UPDATE is 21000, as
// in PostgreSQL. ctx carries the session's storage transaction, if any
// (storage.WithTx). Writing is the caller's job; a conflict on a
// non-arbiter constraint then fails there with 23505.
func (oc *OnConflict) Resolve(ctx context.Context, ev *expr.Context, rel []types.Column, tbl *storage.Table, rec arrow.RecordBatch) (*ConflictWrites, error) {
	c, err := tbl.FindConflicts(ctx, rec, oc.Arbiters)
	if err != nil {
		return nil, err
	}
	var ins, upd, existing []int // proposed rows to insert / update; their rows in c.Rows
	var ids []int64
	k := 0 // position in c.Rows
	for i := range c.Existing {
		found := c.Existing[i] >= 0
		if found {
			k++
		}
		if !found && c.Earlier[i] < 0 {
			ins = append(ins, i)
			continue
		}
		if oc.Update == nil {
			continue
		}
		if c.Earlier[i] >= 0 { // its key is that of a row this command inserts
			return nil, errAffectTwice()
		}
		upd = append(upd, i)
		existing = append(existing, k-1)
		ids = append(ids, c.Existing[i])
	}
	schema := types.ArrowSchema(rel)
	w := &ConflictWrites{insertFrom: ins}
	if w.Insert, err = gather(schema, rec, ins); err != nil {
		return nil, err
	}
	if w.Update, err = gather(schema, rec, nil); err != nil {
		return nil, err
	}
	if len(upd) == 0 {
		return w, nil
	}
	// The batch DO UPDATE's expressions read: existing row, then EXCLUDED.
	olds, err := gather(schema, c.Rows, existing)
	if err != nil {
		return nil, err
	}
	news, err := gather(schema, rec, upd)
	if err != nil {
		return nil, err
	}
	pair := array.NewRecordBatch(types.ArrowSchema(append(append([]types.Column(nil), rel...), rel...)),
		append(append([]arrow.Array(nil), olds.Columns()...), news.Columns()...), int64(len(upd)))
	// Rows are updated one by one in PostgreSQL: a second row conflicting
	// with a row an earlier one updated (WHERE held) fails, whatever its
	// own WHERE says.
	var mask *array.Boolean
	if oc.Update.Where != nil {
		m, err := oc.Update.Where.Eval(ev, pair)
		if err != nil {
			return nil, err
		}
		var ok bool
		if mask, ok = m.(*array.Boolean); !ok {
			return nil, pgerr.Internal("ON CONFLICT WHERE yields %T", m)
		}
	}
	var keep, keptFrom []int
	var keptIDs []int64
	updated := map[int64]bool{}
	for j := range upd {
		if updated[ids[j]] {
			return nil, errAffectTwice()
		}
		if mask == nil || mask.IsValid(j) && mask.Value(j) {
			updated[ids[j]] = true
			keep = append(keep, j)
			keptIDs = append(keptIDs, ids[j])
			keptFrom = append(keptFrom, upd[j])
		}
	}
	if len(keep) < len(upd) {
		if pair, err = gather(pair.Schema(), pair, keep); err != nil {
			return nil, err
		}
	}
	ids, upd = keptIDs, keptFrom
	if len(ids) == 0 {
		return w, nil
	}
	cols := make([]arrow.Array, len(oc.Update.Set))
	for i, e := range oc.Update.Set {
		if cols[i], err = e.Eval(ev, pair); err != nil {
			return nil, err
		}
	}
	w.UpdateIDs, w.Update, w.updateFrom = ids, array.NewRecordBatch(schema, cols, int64(len(ids))), upd
	return w, nil
}

// gather returns rec's rows at the given indexes, in that order (nil:
// none), copying runs of consecutive rows as one slice.
func gather(schema *arrow.Schema, rec arrow.RecordBatch, rows []int) (arrow.RecordBatch, error) {
	type run struct{ from, to int }
	var runs []run
	for _, r := range rows {
		if k := len(runs) - 1; k >= 0 && runs[k].to == r {
			runs[k].to++
		} else {
			runs = append(runs, run{r, r + 1})
		}
	}
	cols := make([]arrow.Array, schema.NumFields())
	for c := range cols {
		switch {
		case len(rows) == 0:
			cols[c] = array.MakeArrayOfNull(memory.DefaultAllocator, schema.Field(c).Type, 0)
		case len(runs) == 1 && runs[0].from == 0 && runs[0].to == int(rec.NumRows()):
			cols[c] = rec.Column(c)
		default:
			parts := make([]arrow.Array, len(runs))
			for j, r := range runs {
				parts[j] = array.NewSlice(rec.Column(c), int64(r.from), int64(r.to))
			}
			out, err := array.Concatenate(parts, memory.DefaultAllocator)
			if err != nil {
				return nil, fmt.Errorf("planner: gather rows: %w", err)
			}
			cols[c] = out
		}
	}
	return array.NewRecordBatch(schema, cols, int64(len(rows))), nil
}

func errAffectTwice() error {
	return pgerr.New(pgerr.CardinalityViolation, "ON CONFLICT DO UPDATE command cannot affect row a second time").
		WithHint("Ensure that no rows proposed for insertion within the same command have duplicate constrained values.")
}

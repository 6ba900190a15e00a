package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/storage"
	"github.com/streamsql/streamsql/types"
)

// execDML runs INSERT, UPDATE or DELETE: the planner's Source computes the
// rows, then storage applies them in one durable, all-or-nothing call.
// Data-modifying WITH queries compute their rows first, and every write is
// applied once all rows are computed (dml_with.go).
func (s *Session) execDML(ectx *exec.Context, pl *plan) (*Result, error) {
	var with []*planner.ModifyingCTE
	switch pl.kind {
	case kindInsert:
		with = pl.insert.With
	case kindUpdate:
		with = pl.update.With
	case kindDelete:
		with = pl.del.With
	}
	writes, done, err := s.runModifying(ectx, with)
	defer done()
	if err != nil {
		return nil, err
	}
	w, err := s.computeWrite(ectx, pl.insert, pl.update, pl.del)
	if err != nil {
		return nil, err
	}
	if err := s.applyWrites(ectx.Eval.Ctx, append(writes, w)); err != nil {
		return nil, err
	}
	return s.returning(ectx, w.returning, w.tag(), w.rec)
}

// refuseAppendOnly is the error of removing or changing rows (verb: "update",
// "delete from", "truncate") of a table created APPEND ONLY, whose change
// feed only ever holds inserts.
func refuseAppendOnly(rel *catalog.Relation, verb string) error {
	if rel == nil || !rel.AppendOnly {
		return nil
	}
	return pgerr.New(pgerr.WrongObjectType, `cannot %s append-only table "%s"`, verb, rel.Name)
}

// insert, update, delete and truncate write through the open transaction
// block, or else commit on their own (durable on return).

func (s *Session) insert(ctx context.Context, t *storage.Table, rec arrow.RecordBatch) (int64, error) {
	if s.stx != nil {
		return s.stx.Insert(ctx, t, rec)
	}
	return t.Insert(ctx, rec)
}

// insertBatches writes several batches as one all-or-nothing write.
func (s *Session) insertBatches(ctx context.Context, t *storage.Table, recs []arrow.RecordBatch) (int64, error) {
	if s.stx != nil {
		return s.stx.InsertBatches(ctx, t, recs)
	}
	return t.InsertBatches(ctx, recs)
}

func (s *Session) update(ctx context.Context, t *storage.Table, ids []int64, rec arrow.RecordBatch) (int64, error) {
	if s.stx != nil {
		return s.stx.Update(ctx, t, ids, rec)
	}
	return t.Update(ctx, ids, rec)
}

func (s *Session) delete(ctx context.Context, t *storage.Table, ids []int64) (int64, error) {
	if s.stx != nil {
		return s.stx.Delete(ctx, t, ids)
	}
	return t.Delete(ctx, ids)
}

func (s *Session) truncate(ctx context.Context, t *storage.Table) error {
	if s.stx != nil {
		return s.stx.Truncate(ctx, t)
	}
	return t.Truncate(ctx)
}

// returning computes a RETURNING list over the written rows, or a plain tag.
func (s *Session) returning(ectx *exec.Context, r *planner.Returning, tag string, rec arrow.RecordBatch) (*Result, error) {
	if r == nil {
		return &Result{Tag: tag}, nil
	}
	verb := tag[:strings.IndexByte(tag, ' ')]
	if rec.NumRows() == 0 {
		return &Result{Tag: verb, Columns: r.Columns, Rows: exec.NewSliceIter(nil)}, nil
	}
	cols := make([]arrow.Array, len(r.Exprs))
	for i, e := range r.Exprs {
		a, err := e.Eval(ectx.Eval, rec)
		if err != nil {
			return nil, err
		}
		cols[i] = a
	}
	out := array.NewRecordBatch(types.ArrowSchema(r.Columns), cols, rec.NumRows())
	return &Result{Tag: verb, Columns: r.Columns, Rows: exec.NewSliceIter([]arrow.RecordBatch{out})}, nil
}

// collect runs a plan to the end and returns all its rows as one batch with
// the given columns.
func collect(ectx *exec.Context, n exec.Node, cols []types.Column) (arrow.RecordBatch, error) {
	it, err := n.Open(ectx)
	if err != nil {
		return nil, err
	}
	batches, err := exec.Drain(it)
	if err != nil {
		return nil, err
	}
	return concatBatches(types.ArrowSchema(cols), batches)
}

// collectWithIDs runs a plan whose first column is a row id and returns the
// ids and the remaining columns.
func collectWithIDs(ectx *exec.Context, n exec.Node, cols []types.Column) ([]int64, arrow.RecordBatch, error) {
	all := append([]types.Column{{Name: "rowid", Type: types.TInt8}}, cols...)
	rec, err := collect(ectx, n, all)
	if err != nil {
		return nil, nil, err
	}
	idArr := rec.Column(0).(*array.Int64)
	ids := make([]int64, idArr.Len())
	copy(ids, idArr.Int64Values())
	rest := array.NewRecordBatch(types.ArrowSchema(cols), rec.Columns()[1:], rec.NumRows())
	return ids, rest, nil
}

// concatBatches joins batches into one record with the given schema.
func concatBatches(schema *arrow.Schema, batches []arrow.RecordBatch) (arrow.RecordBatch, error) {
	if len(batches) == 1 {
		b := batches[0]
		return array.NewRecordBatch(schema, b.Columns(), b.NumRows()), nil
	}
	cols := make([]arrow.Array, schema.NumFields())
	var n int64
	for _, b := range batches {
		n += b.NumRows()
	}
	for i := range cols {
		if len(batches) == 0 {
			cols[i] = array.MakeArrayOfNull(memAlloc, schema.Field(i).Type, 0)
			continue
		}
		parts := make([]arrow.Array, len(batches))
		for j, b := range batches {
			parts[j] = b.Column(i)
		}
		c, err := array.Concatenate(parts, memAlloc)
		if err != nil {
			return nil, fmt.Errorf("concatenate column %d: %w", i, err)
		}
		cols[i] = c
	}
	return array.NewRecordBatch(schema, cols, n), nil
}

package engine

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/storage"
	"github.com/streamsql/streamsql/types"
)

// pendingWrite is an INSERT, UPDATE or DELETE whose rows are computed but
// not yet applied: rec holds the inserted rows, the updated rows' new
// values or the deleted rows (what RETURNING sees), ids the row ids of an
// UPDATE or DELETE.
type pendingWrite struct {
	kind      stmtKind
	rel       *catalog.Relation
	table     *storage.Table
	ids       []int64
	rec       arrow.RecordBatch
	returning *planner.Returning
	// checks are the table's CHECK constraints (nil: none; constraints.go).
	checks *planner.RowChecks
	// conflict, for INSERT ... ON CONFLICT, holds the rows to insert and
	// to update (rec is then the rows written, in proposal order).
	conflict *planner.ConflictWrites
}

// rows is the number of rows the write changes.
func (w *pendingWrite) rows() int64 {
	if w.conflict != nil {
		return w.conflict.Count()
	}
	if w.kind == kindInsert {
		return w.rec.NumRows()
	}
	return int64(len(w.ids))
}

// tag is the command tag of the write.
func (w *pendingWrite) tag() string {
	switch w.kind {
	case kindInsert:
		return fmt.Sprintf("INSERT 0 %d", w.rows())
	case kindUpdate:
		return fmt.Sprintf("UPDATE %d", w.rows())
	}
	return fmt.Sprintf("DELETE %d", w.rows())
}

// computeWrite computes the rows of one of ins, up, del (the others nil)
// without applying them.
func (s *Session) computeWrite(ectx *exec.Context, ins *planner.Insert, up *planner.Update, del *planner.Delete) (*pendingWrite, error) {
	switch {
	case ins != nil:
		if ins.Table == nil {
			return nil, pgerr.New(pgerr.WrongObjectType, "cannot insert into %q: it is not a table", ins.Rel.Name)
		}
		rec, err := collect(ectx, ins.Source, ins.Rel.ColumnTypes())
		if err != nil {
			return nil, err
		}
		if rec, err = ins.Gen.Apply(ectx.Eval, rec); err != nil { // generated columns
			return nil, err
		}
		w := &pendingWrite{kind: kindInsert, rel: ins.Rel, table: ins.Table, rec: rec, returning: ins.Returning, checks: ins.Checks}
		if ins.OnConflict != nil {
			if err := s.resolveConflicts(ectx, ins, w); err != nil {
				return nil, err
			}
		}
		return w, nil
	case up != nil:
		if up.Table == nil {
			return nil, pgerr.New(pgerr.WrongObjectType, "cannot update %q: it is not a table", up.Rel.Name)
		}
		if err := refuseAppendOnly(up.Rel, "update"); err != nil {
			return nil, err
		}
		ids, rec, err := collectWithIDs(ectx, up.Source, up.Rel.ColumnTypes())
		if err != nil {
			return nil, err
		}
		if rec, err = up.Gen.Apply(ectx.Eval, rec); err != nil { // generated columns
			return nil, err
		}
		return &pendingWrite{kind: kindUpdate, rel: up.Rel, table: up.Table, ids: ids, rec: rec, returning: up.Returning, checks: up.Checks}, nil
	}
	if del.Table == nil {
		return nil, pgerr.New(pgerr.WrongObjectType, "cannot delete from %q: it is not a table", del.Rel.Name)
	}
	if err := refuseAppendOnly(del.Rel, "delete from"); err != nil {
		return nil, err
	}
	ids, rec, err := collectWithIDs(ectx, del.Source, del.Rel.ColumnTypes())
	if err != nil {
		return nil, err
	}
	return &pendingWrite{kind: kindDelete, rel: del.Rel, table: del.Table, ids: ids, rec: rec, returning: del.Returning}, nil
}

// runModifying computes the rows of a statement's data-modifying WITH
// queries, in order (a later one may read an earlier one's RETURNING
// rows), and hands their RETURNING rows to the plan's reads of them. No
// write is applied: all of them read the tables as they were before the
// statement, as in PostgreSQL. done forgets the rows (call it always).
func (s *Session) runModifying(ectx *exec.Context, with []*planner.ModifyingCTE) (writes []*pendingWrite, done func(), err error) {
	done = func() {
		for _, m := range with {
			m.Done(ectx)
		}
	}
	for _, m := range with {
		w, err := s.computeWrite(ectx, m.Insert, m.Update, m.Delete)
		if err != nil {
			return nil, done, err
		}
		var rows []arrow.RecordBatch
		if w.returning != nil && w.rec.NumRows() > 0 {
			res, err := s.returning(ectx, w.returning, w.tag(), w.rec)
			if err != nil {
				return nil, done, err
			}
			if rows, err = exec.Drain(res.Rows); err != nil {
				return nil, done, err
			}
		}
		m.SetRows(ectx, rows)
		writes = append(writes, w)
	}
	return writes, done, nil
}

// applyWrites applies computed writes in order, all or none: outside a
// transaction block several writes share one storage transaction.
func (s *Session) applyWrites(ctx context.Context, writes []*pendingWrite) (err error) {
	n := 0
	for _, w := range writes {
		if w.rows() > 0 {
			n++
		}
		if err := s.checkWrite(ctx, w); err != nil { // constraints.go
			return err
		}
	}
	fks, err := s.fkChanges(ctx, writes) // fk.go
	if err != nil {
		return err
	}
	if (n > 1 || len(fks) > 0) && s.stx == nil {
		s.stx = s.eng.store.Begin()
		defer func() {
			stx := s.stx
			s.stx = nil
			if err != nil {
				stx.Rollback()
				return
			}
			err = stx.Commit(ctx)
		}()
	}
	if len(fks) > 0 {
		if err := s.lockFKTables(ctx, fks); err != nil { // fk.go
			return err
		}
	}
	for _, w := range writes {
		if w.rows() == 0 {
			continue
		}
		switch {
		case w.conflict != nil:
			err = s.writeConflicts(ctx, w.table, w.conflict)
		case w.kind == kindInsert:
			_, err = s.insert(ctx, w.table, w.rec)
		case w.kind == kindUpdate:
			_, err = s.update(ctx, w.table, w.ids, w.rec)
		default:
			_, err = s.delete(ctx, w.table, w.ids)
		}
		if err != nil {
			return err
		}
	}
	return s.enforceForeignKeys(ctx, fks)
}

// execSelectWith runs a SELECT with data-modifying WITH queries: their
// rows, then all of the SELECT's, are computed before any write is
// applied, so the SELECT reads the tables as they were.
func (s *Session) execSelectWith(ectx *exec.Context, q *planner.Query, cols []types.Column) (*Result, error) {
	writes, done, err := s.runModifying(ectx, q.With)
	defer done()
	if err != nil {
		return nil, err
	}
	it, err := q.Root.Open(ectx)
	if err != nil {
		return nil, err
	}
	batches, err := exec.Drain(it)
	if err != nil {
		return nil, err
	}
	if err := s.applyWrites(ectx.Eval.Ctx, writes); err != nil {
		return nil, err
	}
	return &Result{Tag: "SELECT", Columns: cols, Rows: exec.NewSliceIter(batches)}, nil
}

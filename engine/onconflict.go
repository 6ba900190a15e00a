package engine

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/storage"
)

// insertOnConflict runs INSERT ... ON CONFLICT: the planner's OnConflict
// decides which proposed rows are inserted and which existing rows are
// updated (see planner.OnConflict.Resolve), then they are written as a
// plain INSERT and UPDATE would be. The tag counts both; RETURNING sees the
// inserted rows and the updated rows' new values, in proposal order.
func (s *Session) insertOnConflict(ectx *exec.Context, ins *planner.Insert, rec arrow.RecordBatch) (*Result, error) {
	ctx := ectx.Eval.Ctx
	lookCtx := ctx
	if s.stx != nil {
		lookCtx = storage.WithTx(ctx, s.stx)
	}
	w, err := ins.OnConflict.Resolve(lookCtx, ectx.Eval, ins.Rel.ColumnTypes(), ins.Table, rec)
	if err != nil {
		return nil, err
	}
	if err := s.writeConflicts(ctx, ins.Table, w); err != nil {
		return nil, err
	}
	written := w.Insert
	if ins.Returning != nil {
		if written, err = w.Written(); err != nil {
			return nil, err
		}
	}
	return s.returning(ectx, ins.Returning, fmt.Sprintf("INSERT 0 %d", w.Count()), written)
}

// writeConflicts applies w all or nothing: in the session's transaction
// block, or else in a transaction of its own when it both inserts and
// updates.
func (s *Session) writeConflicts(ctx context.Context, t *storage.Table, w *planner.ConflictWrites) error {
	stx := s.stx
	own := stx == nil && w.Insert.NumRows() > 0 && len(w.UpdateIDs) > 0
	if own {
		stx = s.eng.store.Begin()
	}
	var err error
	if w.Insert.NumRows() > 0 {
		if stx != nil {
			_, err = stx.Insert(ctx, t, w.Insert)
		} else {
			_, err = t.Insert(ctx, w.Insert)
		}
	}
	if err == nil && len(w.UpdateIDs) > 0 {
		if stx != nil {
			_, err = stx.Update(ctx, t, w.UpdateIDs, w.Update)
		} else {
			_, err = t.Update(ctx, w.UpdateIDs, w.Update)
		}
	}
	if own {
		if err != nil {
			stx.Rollback()
			return err
		}
		return stx.Commit(ctx)
	}
	return err
}

package engine

import (
	"context"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/storage"
)

// resolveConflicts decides, for INSERT ... ON CONFLICT, which proposed
// rows (w.rec) are inserted and which existing rows are updated (see
// planner.OnConflict.Resolve), without writing them; w.rec becomes what
// RETURNING sees: the inserted rows and the updated rows' new values, in
// proposal order. The tag counts both.
func (s *Session) resolveConflicts(ectx *exec.Context, ins *planner.Insert, w *pendingWrite) error {
	if ins.OnConflict.Update != nil {
		if err := refuseAppendOnly(ins.Rel, "update"); err != nil {
			return err
		}
	}
	lookCtx := ectx.Eval.Ctx
	if s.stx != nil {
		lookCtx = storage.WithTx(lookCtx, s.stx)
	}
	c, err := ins.OnConflict.Resolve(lookCtx, ectx.Eval, ins.Rel.ColumnTypes(), ins.Table, w.rec)
	if err != nil {
		return err
	}
	if c.Update, err = ins.Gen.Apply(ectx.Eval, c.Update); err != nil { // generated columns of the updated rows
		return err
	}
	w.conflict, w.rec = c, c.Insert
	if ins.Returning != nil {
		if w.rec, err = c.Written(); err != nil {
			return err
		}
	}
	return nil
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

package engine

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/storage"
	"github.com/streamsql/streamsql/types"
)

// checkWrite evaluates the CHECK constraints of w's table over the rows w
// writes (inserted rows, updated rows' new values; nothing for DELETE)
// before they are applied (planner.RowChecks, docs/contributing/constraints.md).
func (s *Session) checkWrite(ctx context.Context, w *pendingWrite) error {
	if w.checks == nil || w.rows() == 0 || w.kind == kindDelete {
		return nil
	}
	ectx := s.evalContext(ctx, nil)
	recs := []arrow.RecordBatch{w.rec}
	if w.conflict != nil {
		recs = []arrow.RecordBatch{w.conflict.Insert, w.conflict.Update}
	}
	for _, rec := range recs {
		if err := w.checks.Check(ectx, rec); err != nil {
			return err
		}
	}
	return nil
}

// copyWrite inserts COPY FROM's batches all or nothing after computing
// the table's generated columns and checking its CHECK constraints; a table with foreign keys goes through
// applyWrites as one batch, so that they are checked too.
func (s *Session) copyWrite(ctx context.Context, rel *catalog.Relation, tbl *storage.Table, checks *planner.RowChecks, gen *planner.RowGen, batches []arrow.RecordBatch) error {
	ectx := s.evalContext(ctx, nil)
	for i, b := range batches {
		var err error
		if batches[i], err = gen.Apply(ectx, b); err != nil { // generated columns
			return err
		}
		if err := checks.Check(ectx, batches[i]); err != nil {
			return err
		}
	}
	if len(rel.ForeignKeys) == 0 {
		_, err := s.insertBatches(ctx, tbl, batches)
		return err
	}
	rec, err := concatBatches(types.ArrowSchema(rel.ColumnTypes()), batches)
	if err != nil {
		return err
	}
	return s.applyWrites(ctx, []*pendingWrite{{kind: kindInsert, rel: rel, table: tbl, rec: rec}})
}

// validatingCheck checks the live rows of each stored chunk against rc,
// the CHECK constraints an ALTER TABLE adds or validates, during the
// storage rewrite: under the table's lock, with nothing written meanwhile.
func (s *Session) validatingCheck(ctx context.Context, rc *planner.RowChecks) func(arrow.RecordBatch, []byte) error {
	ectx := s.evalContext(ctx, nil)
	return func(rec arrow.RecordBatch, deleted []byte) error {
		live, err := liveRows(storage.Snapshot{Chunks: []storage.Chunk{{Rec: rec, Deleted: deleted}}}) // streams.go
		if err != nil {
			return err
		}
		for _, b := range live {
			if err := rc.Check(ectx, b); err != nil {
				return err
			}
		}
		return nil
	}
}

// validateForeignKeys checks the rows of rel against foreign keys an
// ALTER TABLE adds or validates (23503 as PostgreSQL reports it). The
// rows are those committed when it runs: a row written by another
// session between this check and the ALTER's publication is checked
// when written only if the constraint is already published.
func (s *Session) validateForeignKeys(ctx context.Context, rel *catalog.Relation, fks []catalog.ForeignKey) error {
	if len(fks) == 0 {
		return nil
	}
	tbl := s.eng.cat.Table(rel.OID)
	if tbl == nil {
		return nil
	}
	ctx = s.txContext(ctx)
	live, err := liveRows(tbl.SnapshotIn(ctx)) // streams.go
	if err != nil {
		return err
	}
	for _, rows := range live {
		for _, fk := range fks {
			if fk.RefTable == 0 {
				fk.RefTable = rel.OID
			}
			if err := s.fkCheckPresentIn(ctx, rel, fk, rows); err != nil {
				return err
			}
		}
	}
	return nil
}

// refuseTruncateReferenced refuses to TRUNCATE a table that a foreign key
// of a table not truncated with it references, as PostgreSQL does
// (0A000); TRUNCATE ... CASCADE adds those tables first (execTruncate).
func (s *Session) refuseTruncateReferenced(rels []*catalog.Relation) error {
	in := map[uint32]bool{}
	for _, r := range rels {
		in[r.OID] = true
	}
	for _, r := range rels {
		for _, rk := range s.referencedBy(r) {
			if in[rk.Table.OID] {
				continue
			}
			return pgerr.New(pgerr.FeatureNotSupported, "cannot truncate a table referenced in a foreign key constraint").
				WithDetail("Table \"%s\" references \"%s\".", rk.Table.Name, r.Name).
				WithHint("Truncate table \"%s\" at the same time, or use TRUNCATE ... CASCADE.", rk.Table.Name)
		}
	}
	return nil
}

// isDeleted reports whether row r is marked in a deleted-row bitmap.
func isDeleted(deleted []byte, r int) bool {
	return deleted != nil && deleted[r/8]&(1<<(r%8)) != 0
}

package engine

import (
	"context"
	"fmt"
	"sort"
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

// Foreign key enforcement (docs/contributing/constraints.md).
//
// A statement's writes that touch a table with foreign keys, or one that
// foreign keys reference, run in a storage transaction (the session's
// block, or one applyWrites opens), which first locks every table the
// checks may touch, in OID order (lockFKTables). After the writes are applied, each
// change is checked, as PostgreSQL's RI triggers do at the end of the
// statement: the new rows of a referencing table must find their key in
// the referenced table (through its key index, as the transaction sees
// it); the keys that rows of a referenced table lost are looked up in the
// referencing tables (a scan of their rows) and the constraint's action
// applies: NO ACTION (unless the key is back) and RESTRICT fail with
// 23503, CASCADE deletes or updates the referencing rows, SET NULL and SET
// DEFAULT update them. Those writes are ordinary storage writes in the same
// transaction, so materialized views over the referencing tables see
// them in their change feeds; each becomes a change checked in turn
// (cascades chain). On any error the caller rolls the transaction back.

// fkChange is one write to check: rows newRows were written to rel
// (inserted, or the new values of updated rows) and oldRows removed
// (deleted, or the old values of updated rows, aligned with newRows).
type fkChange struct {
	rel              *catalog.Relation
	table            *storage.Table
	newRows, oldRows arrow.RecordBatch
}

// referencingCatalog is the part of the catalog that lists foreign keys
// referencing a table (implemented by *catalog.Catalog).
type referencingCatalog interface {
	Referencing(oid uint32) []catalog.ReferencingKey
}

// referencedBy lists the foreign keys referencing rel, or nil.
func (s *Session) referencedBy(rel *catalog.Relation) []catalog.ReferencingKey {
	rc, ok := s.eng.cat.(referencingCatalog)
	if !ok || rel == nil {
		return nil
	}
	return rc.Referencing(rel.OID)
}

// fkChanges lists the changes of writes that foreign keys must check,
// reading the old rows of updates of referenced tables (call before the
// writes are applied). Empty when no foreign key is involved.
func (s *Session) fkChanges(ctx context.Context, writes []*pendingWrite) ([]fkChange, error) {
	ctx = s.txContext(ctx)
	var out []fkChange
	for _, w := range writes {
		if w.rows() == 0 || w.rel == nil {
			continue
		}
		refs := len(s.referencedBy(w.rel)) > 0
		if len(w.rel.ForeignKeys) == 0 && !refs {
			continue
		}
		c := fkChange{rel: w.rel, table: w.table}
		switch {
		case w.conflict != nil:
			c.newRows = w.conflict.Insert
			out = append(out, c)
			if len(w.conflict.UpdateIDs) > 0 {
				u := fkChange{rel: w.rel, table: w.table, newRows: w.conflict.Update}
				if refs {
					old, err := rowsByID(w.table.SnapshotIn(ctx), w.conflict.UpdateIDs, w.rel.ColumnTypes())
					if err != nil {
						return nil, err
					}
					u.oldRows = old
				}
				out = append(out, u)
			}
			continue
		case w.kind == kindInsert:
			c.newRows = w.rec
		case w.kind == kindUpdate:
			c.newRows = w.rec
			if refs {
				old, err := rowsByID(w.table.SnapshotIn(ctx), w.ids, w.rel.ColumnTypes())
				if err != nil {
					return nil, err
				}
				c.oldRows = old
			}
		default:
			if !refs {
				continue
			}
			c.oldRows = w.rec
		}
		out = append(out, c)
	}
	return out, nil
}

// lockFKTables takes, in OID order, the write locks of every table the
// foreign key checks of changes may read or write: the changed tables,
// the tables they reference, and the tables referencing them (and so on
// along cascades). Taken before the writes, in one order for everyone,
// so that an insert into a referencing table and a delete from the
// referenced one wait for each other instead of deadlocking, and the
// scans see every accepted write. s.stx must be set.
func (s *Session) lockFKTables(ctx context.Context, changes []fkChange) error {
	seen := map[uint32]bool{}
	var queue []*catalog.Relation
	add := func(r *catalog.Relation) {
		if r != nil && !seen[r.OID] {
			seen[r.OID] = true
			queue = append(queue, r)
		}
	}
	for _, c := range changes {
		add(c.rel)
	}
	var oids []uint32
	for len(queue) > 0 {
		r := queue[0]
		queue = queue[1:]
		oids = append(oids, r.OID)
		for _, fk := range r.ForeignKeys {
			if !seen[fk.RefTable] { // referenced: looked up, not followed further
				seen[fk.RefTable] = true
				oids = append(oids, fk.RefTable)
			}
		}
		for _, rk := range s.referencedBy(r) {
			add(rk.Table)
		}
	}
	sort.Slice(oids, func(i, j int) bool { return oids[i] < oids[j] })
	for _, oid := range oids {
		if t := s.eng.cat.Table(oid); t != nil {
			if err := s.stx.Lock(ctx, t); err != nil {
				return err
			}
		}
	}
	return nil
}

// enforceForeignKeys checks changes (their writes applied) and applies the
// referential actions, which may add changes.
func (s *Session) enforceForeignKeys(ctx context.Context, changes []fkChange) error {
	ctx = s.txContext(ctx)
	for len(changes) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		c := changes[0]
		changes = changes[1:]
		if c.newRows != nil && c.newRows.NumRows() > 0 {
			for _, fk := range c.rel.ForeignKeys {
				if err := s.fkCheckPresent(ctx, c, fk); err != nil {
					return err
				}
			}
		}
		if c.oldRows != nil && c.oldRows.NumRows() > 0 {
			for _, rk := range s.referencedBy(c.rel) {
				more, err := s.fkReferenced(ctx, c, rk)
				if err != nil {
					return err
				}
				changes = append(changes, more...)
			}
		}
	}
	return nil
}

// txContext is ctx carrying the session's transaction, if any, so that
// storage reads see its writes.
func (s *Session) txContext(ctx context.Context) context.Context {
	if s.stx != nil && storage.TxFrom(ctx) == nil {
		return storage.WithTx(ctx, s.stx)
	}
	return ctx
}

// keyState classifies a row's key: all columns NULL, some NULL, or none.
type keyState int

const (
	keyFull keyState = iota
	keySomeNull
	keyAllNull
)

func rowKey(rec arrow.RecordBatch, row int, cols []int, ts []types.T) (string, keyState) {
	var b strings.Builder
	nulls := 0
	for k, c := range cols {
		if k > 0 {
			b.WriteByte(0)
		}
		v := types.ValueAt(rec.Column(c), row, ts[c])
		if v == nil {
			nulls++
			continue
		}
		b.WriteString(types.FormatText(v, ts[c], &types.DefaultFormat))
	}
	switch nulls {
	case 0:
		return b.String(), keyFull
	case len(cols):
		return "", keyAllNull
	}
	return "", keySomeNull
}

// keyText renders "(a, b)=(1, 2)" for a key of row.
func keyText(rel *catalog.Relation, cols []int, rec arrow.RecordBatch, row int) string {
	names, vals := make([]string, len(cols)), make([]string, len(cols))
	for k, c := range cols {
		names[k] = catalog.QuoteIdent(rel.Columns[c].Name)
		v := types.ValueAt(rec.Column(c), row, rel.Columns[c].Type)
		if v == nil {
			vals[k] = "null"
		} else {
			vals[k] = types.FormatText(v, rel.Columns[c].Type, &types.DefaultFormat)
		}
	}
	return "(" + strings.Join(names, ", ") + ")=(" + strings.Join(vals, ", ") + ")"
}

// refKeyName is the name of ref's key constraint over exactly cols.
func refKeyName(ref *catalog.Relation, cols []int) string {
	same := func(k []int) bool {
		if len(k) != len(cols) {
			return false
		}
		seen := map[int]bool{}
		for _, c := range k {
			seen[c] = true
		}
		for _, c := range cols {
			if !seen[c] {
				return false
			}
		}
		return true
	}
	if len(ref.PrimaryKey) > 0 && same(ref.PrimaryKey) {
		return ref.PKName
	}
	for _, u := range ref.Unique {
		if same(u.Columns) {
			return u.Name
		}
	}
	return ""
}

// presentIn reports, for each row of rec (in src's layout), whether the
// key in columns srcCols is a live row of ref (columns refCols, a key of
// ref), as the transaction in ctx sees it.
func (s *Session) presentIn(ctx context.Context, ref *catalog.Relation, refCols []int, rec arrow.RecordBatch, srcCols []int) ([]bool, error) {
	tbl := s.eng.cat.Table(ref.OID)
	name := refKeyName(ref, refCols)
	if tbl == nil || name == "" {
		return nil, pgerr.Internal("foreign key: table %s has no key over the referenced columns", ref.Name)
	}
	n := int(rec.NumRows())
	cols := make([]arrow.Array, len(ref.Columns))
	for k, c := range refCols {
		cols[c] = rec.Column(srcCols[k])
	}
	for i := range cols {
		if cols[i] == nil {
			cols[i] = array.MakeArrayOfNull(memAlloc, ref.Columns[i].Type.ArrowType(), n)
		}
	}
	probe := array.NewRecordBatch(types.ArrowSchema(ref.ColumnTypes()), cols, int64(n))
	conf, err := tbl.FindConflicts(ctx, probe, []string{name})
	if err != nil {
		return nil, err
	}
	out := make([]bool, n)
	for i, id := range conf.Existing {
		out[i] = id >= 0
	}
	return out, nil
}

// fkCheckPresent fails (23503) when a row written to a referencing table
// has a key its referenced table lacks.
func (s *Session) fkCheckPresent(ctx context.Context, c fkChange, fk catalog.ForeignKey) error {
	return s.fkCheckPresentIn(ctx, c.rel, fk, c.newRows)
}

// fkCheckPresentIn checks rows of rel against fk.
func (s *Session) fkCheckPresentIn(ctx context.Context, rel *catalog.Relation, fk catalog.ForeignKey, rows arrow.RecordBatch) error {
	ref := s.eng.cat.Relation(fk.RefTable)
	if fk.RefTable == rel.OID {
		ref = rel
	}
	if ref == nil {
		return pgerr.Internal("foreign key %s references a missing table", fk.Name)
	}
	ts := rel.ColumnTypes()
	typesOf := make([]types.T, len(ts))
	for i, t := range ts {
		typesOf[i] = t.Type
	}
	present, err := s.presentIn(ctx, ref, fk.RefColumns, rows, fk.Columns)
	if err != nil {
		return err
	}
	for i := 0; i < int(rows.NumRows()); i++ {
		_, st := rowKey(rows, i, fk.Columns, typesOf)
		switch {
		case st == keyAllNull:
			continue
		case st == keySomeNull && !fk.MatchFull:
			continue
		case st == keySomeNull:
			return pgerr.New(pgerr.ForeignKeyViolation, `insert or update on table "%s" violates foreign key constraint "%s"`, rel.Name, fk.Name).
				WithDetail("MATCH FULL does not allow mixing of null and nonnull key values.")
		}
		if !present[i] {
			return pgerr.New(pgerr.ForeignKeyViolation, `insert or update on table "%s" violates foreign key constraint "%s"`, rel.Name, fk.Name).
				WithDetail("Key %s is not present in table \"%s\".", keyText(rel, fk.Columns, rows, i), ref.Name)
		}
	}
	return nil
}

// fkReferenced applies foreign key rk (referencing c.rel) to the keys
// c's rows lost, returning the changes its action made.
func (s *Session) fkReferenced(ctx context.Context, c fkChange, rk catalog.ReferencingKey) ([]fkChange, error) {
	fk := rk.Key
	child := s.eng.cat.Relation(rk.Table.OID)
	if child == nil {
		return nil, nil
	}
	typesOf := func(r *catalog.Relation) []types.T {
		out := make([]types.T, len(r.Columns))
		for i, col := range r.Columns {
			out[i] = col.Type
		}
		return out
	}
	pts, cts := typesOf(c.rel), typesOf(child)
	update := c.newRows != nil
	action := fk.OnDelete
	if update {
		action = fk.OnUpdate
	}
	// lost: old key -> the first row of c that lost it.
	lost := map[string]int{}
	var order []int
	for i := 0; i < int(c.oldRows.NumRows()); i++ {
		k, st := rowKey(c.oldRows, i, fk.RefColumns, pts)
		if st != keyFull {
			continue
		}
		if update {
			if nk, _ := rowKey(c.newRows, i, fk.RefColumns, pts); nk == k {
				continue
			}
		}
		if _, dup := lost[k]; !dup {
			lost[k] = i
			order = append(order, i)
		}
	}
	if len(lost) == 0 {
		return nil, nil
	}
	if action == catalog.FKNoAction { // a key that is back is not lost
		present, err := s.presentIn(ctx, c.rel, fk.RefColumns, c.oldRows, fk.RefColumns)
		if err != nil {
			return nil, err
		}
		for _, i := range order {
			if present[i] {
				k, _ := rowKey(c.oldRows, i, fk.RefColumns, pts)
				delete(lost, k)
			}
		}
		if len(lost) == 0 {
			return nil, nil
		}
	}
	tbl := s.eng.cat.Table(child.OID)
	if tbl == nil {
		return nil, pgerr.Internal("foreign key %s: table %s has no storage", fk.Name, child.Name)
	}
	// The referencing rows: their ids, the rows and the parent row each matched.
	var ids []int64
	var parts []arrow.RecordBatch
	var parent []int
	for _, ch := range tbl.SnapshotIn(ctx).Chunks {
		var idx []int32
		for r := 0; r < int(ch.Rec.NumRows()); r++ {
			if isDeleted(ch.Deleted, r) {
				continue
			}
			k, st := rowKey(ch.Rec, r, fk.Columns, cts)
			if st != keyFull {
				continue
			}
			if p, ok := lost[k]; ok {
				idx = append(idx, int32(r))
				ids = append(ids, ch.FirstRowID+int64(r))
				parent = append(parent, p)
			}
		}
		if len(idx) > 0 {
			parts = append(parts, exec.TakeRows(memAlloc, ch.Rec, idx))
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	switch action {
	case catalog.FKNoAction, catalog.FKRestrict:
		first := parent[0]
		for _, p := range parent {
			first = min(first, p)
		}
		return nil, pgerr.New(pgerr.ForeignKeyViolation, `update or delete on table "%s" violates foreign key constraint "%s" on table "%s"`, c.rel.Name, fk.Name, child.Name).
			WithDetail("Key %s is still referenced from table \"%s\".", keyText(c.rel, fk.RefColumns, c.oldRows, first), child.Name)
	}
	old, err := concatBatches(types.ArrowSchema(child.ColumnTypes()), parts)
	if err != nil {
		return nil, err
	}
	if action == catalog.FKCascade && !update {
		if err := refuseAppendOnly(child, "delete from"); err != nil {
			return nil, err
		}
		if _, err := s.delete(ctx, tbl, ids); err != nil {
			return nil, err
		}
		return []fkChange{{rel: child, table: tbl, oldRows: old}}, nil
	}
	if err := refuseAppendOnly(child, "update"); err != nil {
		return nil, err
	}
	cols := append([]arrow.Array(nil), old.Columns()...)
	n := int(old.NumRows())
	switch action {
	case catalog.FKCascade:
		idx := make([]int32, n)
		for i, p := range parent {
			idx[i] = int32(p)
		}
		newParent := exec.TakeRows(memAlloc, c.newRows, idx)
		for k, col := range fk.Columns {
			cols[col] = newParent.Column(fk.RefColumns[k])
		}
	case catalog.FKSetNull:
		for _, col := range fk.Columns {
			cols[col] = array.MakeArrayOfNull(memAlloc, child.Columns[col].Type.ArrowType(), n)
		}
	case catalog.FKSetDefault:
		defs, err := planner.DefaultExprs(s.env(ctx, nil), child, fk.Columns)
		if err != nil {
			return nil, err
		}
		ectx := s.evalContext(ctx, nil)
		for k, col := range fk.Columns {
			a, err := defs[k].Eval(ectx, old)
			if err != nil {
				return nil, err
			}
			cols[col] = a
		}
	default:
		return nil, pgerr.Internal("foreign key %s: unknown action %q", fk.Name, action)
	}
	rec := array.NewRecordBatch(old.Schema(), cols, int64(n))
	if action == catalog.FKSetDefault { // a default equal to the lost key still references it
		for i := 0; i < n; i++ {
			if k, st := rowKey(rec, i, fk.Columns, cts); st == keyFull {
				if p, gone := lost[k]; gone {
					return nil, pgerr.New(pgerr.ForeignKeyViolation, `update or delete on table "%s" violates foreign key constraint "%s" on table "%s"`, c.rel.Name, fk.Name, child.Name).
						WithDetail("Key %s is still referenced from table \"%s\".", keyText(c.rel, fk.RefColumns, c.oldRows, p), child.Name)
				}
			}
		}
	}
	gen, err := planner.CompileGenerated(s.env(ctx, nil), child) // generated columns follow the changed key
	if err != nil {
		return nil, err
	}
	if rec, err = gen.Apply(s.evalContext(ctx, nil), rec); err != nil {
		return nil, err
	}
	checks, err := planner.CompileChecks(s.env(ctx, nil), child)
	if err != nil {
		return nil, err
	}
	if err := checks.Check(s.evalContext(ctx, nil), rec); err != nil {
		return nil, err
	}
	if _, err := s.update(ctx, tbl, ids, rec); err != nil {
		return nil, err
	}
	return []fkChange{{rel: child, table: tbl, newRows: rec, oldRows: old}}, nil
}

// rowsByID reads the live rows ids (in that order) from snap.
func rowsByID(snap storage.Snapshot, ids []int64, cols []types.Column) (arrow.RecordBatch, error) {
	cs := snap.Chunks
	parts := make([]arrow.RecordBatch, 0, len(ids))
	for _, id := range ids {
		k := sort.Search(len(cs), func(i int) bool { return cs[i].FirstRowID > id }) - 1
		if k < 0 || id >= cs[k].FirstRowID+cs[k].Rec.NumRows() {
			return nil, fmt.Errorf("engine: row %d not found", id)
		}
		i := id - cs[k].FirstRowID
		parts = append(parts, cs[k].Rec.NewSlice(i, i+1))
	}
	return concatBatches(types.ArrowSchema(cols), parts)
}

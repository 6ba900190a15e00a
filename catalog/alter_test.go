package catalog

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

func intBatch(t *testing.T, cols []types.Column, rows ...[]int64) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, types.ArrowSchema(cols))
	for _, r := range rows {
		for i, v := range r {
			b.Field(i).(*array.Int32Builder).Append(int32(v))
		}
	}
	return b.NewRecordBatch()
}

// An ALTER keeps the OID, names a new primary key as PostgreSQL does,
// rewrites the stored rows, survives a reopen, and a stale Old is refused.
func TestAlterTablePublishesAndPersists(t *testing.T) {
	dir, st := t.TempDir(), newStore(t)
	c := openTest(t, dir, st)
	ctx := context.Background()
	two := []Column{{Name: "a", Type: types.TInt4}, {Name: "b", Type: types.TInt4}}
	old := mustCreate(t, c, &Relation{Name: "t", Columns: two})
	if err := c.Comment(old.OID, 2, "bee"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Table(old.OID).Insert(ctx, intBatch(t, old.ColumnTypes(), []int64{1, 10}, []int64{2, 20})); err != nil {
		t.Fatal(err)
	}
	// DROP COLUMN a, RENAME b TO bb, ADD PRIMARY KEY (bb)
	nw := &Relation{Name: "t", Columns: []Column{{Name: "bb", Type: types.TInt4}}, PrimaryKey: []int{0}}
	convert := func(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
		return array.NewRecordBatch(types.ArrowSchema(nw.ColumnTypes()), rec.Columns()[1:], rec.NumRows()), nil
	}
	got, err := c.AlterTable(ctx, AlterSpec{Old: old, New: nw, Convert: convert, From: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	if got.OID != old.OID || got.PKName != "t_pkey" || got.PKIndexOID == 0 || !got.Columns[0].NotNull {
		t.Fatalf("altered relation = %+v", got)
	}
	if c.Relation(old.OID) != got {
		t.Fatal("altered relation not published")
	}
	if s := c.snap(); s.comments[objKey{old.OID, 1}] != "bee" || s.comments[objKey{old.OID, 2}] != "" {
		t.Fatalf("column comment did not follow the column: %v", s.comments)
	}
	_, err = c.AlterTable(ctx, AlterSpec{Old: old, New: nw})
	if pgerr.CodeOf(err) != pgerr.Code("40001") {
		t.Fatalf("stale Old: got %v, want 40001", err)
	}

	c2 := openTest(t, dir, st)
	r, err := c2.Resolve("", "t", pathPublic)
	if err != nil {
		t.Fatal(err)
	}
	if r.OID != old.OID || len(r.Columns) != 1 || r.Columns[0].Name != "bb" || r.PKName != "t_pkey" {
		t.Fatalf("reopened relation = %+v", r)
	}
	snap := c2.Table(r.OID).Snapshot()
	if len(snap.Chunks) == 0 || snap.Chunks[0].Rec.NumCols() != 1 {
		t.Fatalf("stored layout not rewritten: %+v", snap.Chunks)
	}
}

// Storage's checks on the live rows fail the ALTER and leave the relation
// as it was.
func TestAlterTableFailsCleanly(t *testing.T) {
	c := openTest(t, t.TempDir(), newStore(t))
	ctx := context.Background()
	old := mustCreate(t, c, &Relation{Name: "t", Columns: []Column{{Name: "a", Type: types.TInt4}}})
	if _, err := c.Table(old.OID).Insert(ctx, intBatch(t, old.ColumnTypes(), []int64{1}, []int64{1})); err != nil {
		t.Fatal(err)
	}
	nw := *old
	nw.Columns = []Column{{Name: "a", Type: types.TInt4}}
	nw.PrimaryKey = []int{0}
	_, err := c.AlterTable(ctx, AlterSpec{Old: old, New: &nw})
	wantErr(t, err, pgerr.UniqueViolation, `could not create unique index "t_pkey"`, "Key (a)=(1) is duplicated.")
	if c.Relation(old.OID) != old {
		t.Fatal("failed ALTER changed the relation")
	}
	// A name taken by another relation.
	mustCreate(t, c, &Relation{Name: "u", Columns: []Column{{Name: "x", Type: types.TInt4}}})
	ren := *old
	ren.Name = "u"
	_, err = c.AlterTable(ctx, AlterSpec{Old: old, New: &ren})
	wantErr(t, err, pgerr.DuplicateTable, `relation "u" already exists`)
}

// Views must be the set the caller checked; DropViews go with the change.
func TestAlterTableViews(t *testing.T) {
	c := openTest(t, t.TempDir(), newStore(t))
	ctx := context.Background()
	old := mustCreate(t, c, &Relation{Name: "t", Columns: []Column{{Name: "a", Type: types.TInt4}}})
	v := mustView(t, c, "public", "v", []Column{{Name: "a", Type: types.TInt4}}, old.OID)
	w := mustView(t, c, "public", "w", []Column{{Name: "a", Type: types.TInt4}}, v.OID)
	deps := c.Dependents(old.OID)
	if len(deps) != 2 || deps[0] != v || deps[1] != w {
		t.Fatalf("Dependents = %v", deps)
	}
	// A rename publishes the views' rewritten queries with it; the views
	// keep their OIDs and comments.
	if err := c.Comment(v.OID, 0, "vee"); err != nil {
		t.Fatal(err)
	}
	ren := *old
	ren.Name = "t2"
	_, err := c.AlterTable(ctx, AlterSpec{Old: old, New: &ren, Views: []uint32{v.OID, w.OID}, ViewQueries: map[uint32]string{old.OID: "SELECT 1"}})
	if err == nil {
		t.Fatal("ViewQueries for a table accepted")
	}
	renamed, err := c.AlterTable(ctx, AlterSpec{Old: old, New: &ren, Views: []uint32{v.OID, w.OID}, ViewQueries: map[uint32]string{v.OID: "SELECT a FROM t2 t"}})
	if err != nil {
		t.Fatal(err)
	}
	if nv := c.Relation(v.OID); nv == nil || nv.ViewQuery != "SELECT a FROM t2 t" || nv.Name != "v" || c.snap().comments[objKey{v.OID, 0}] != "vee" {
		t.Fatalf("rewritten view = %+v", nv)
	}
	old, v, w = renamed, c.Relation(v.OID), c.Relation(w.OID)
	nw := *old
	nw.Columns = []Column{{Name: "a", Type: types.TInt4}, {Name: "b", Type: types.TInt4}}
	_, err = c.AlterTable(ctx, AlterSpec{Old: old, New: &nw, Views: []uint32{v.OID}})
	if pgerr.CodeOf(err) != pgerr.Code("40001") {
		t.Fatalf("unchecked view: got %v, want 40001", err)
	}
	got, err := c.AlterTable(ctx, AlterSpec{Old: old, New: &nw, Views: []uint32{w.OID, v.OID}, DropViews: []uint32{v.OID, w.OID},
		Convert: func(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
			b := array.NewInt32Builder(memory.DefaultAllocator)
			b.AppendNulls(int(rec.NumRows()))
			return array.NewRecordBatch(types.ArrowSchema(nw.ColumnTypes()), []arrow.Array{rec.Column(0), b.NewArray()}, rec.NumRows()), nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Relation(v.OID) != nil || c.Relation(w.OID) != nil || len(c.Dependents(got.OID)) != 0 {
		t.Fatal("cascaded views not dropped")
	}
}

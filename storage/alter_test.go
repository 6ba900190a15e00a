package storage

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// addInt8Column returns a convert function appending a bigint column of v.
func addInt8Column(cols []types.Column, v int64) func(arrow.RecordBatch) (arrow.RecordBatch, error) {
	return func(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
		b := array.NewInt64Builder(mem)
		for i := 0; i < int(rec.NumRows()); i++ {
			b.Append(v)
		}
		return array.NewRecordBatch(types.ArrowSchema(cols), append(rec.Columns(), b.NewArray()), rec.NumRows()), nil
	}
}

func TestAlter(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	tb, _ := s.CreateTable(kvDef(1, false))
	tb.Insert(ctx, kvBatch(row(1, "a"), kv{id: ptr(int64(1))}, row(2, "b")))
	tb.Insert(ctx, kvBatch(row(3, "c")))

	// ALTER TABLE t ALTER s SET NOT NULL, with a NULL present.
	def := kvDef(1, false)
	def.NotNull = []bool{false, true}
	err := tb.Alter(ctx, def, nil)
	wantErr(t, err, pgerr.NotNullViolation, `column "s" of relation "t" contains null values`, "")
	// ALTER TABLE t ADD PRIMARY KEY (id), with a duplicate.
	err = tb.Alter(ctx, kvDef(1, true), nil)
	wantErr(t, err, pgerr.UniqueViolation, `could not create unique index "t_pkey"`, "Key (id)=(1) is duplicated.")
	checkRows(t, tb, []string{"0:1,a", "1:1,(null)", "2:2,b", "3:3,c"})
	if _, err := tb.Insert(ctx, kvBatch(row(1, "dup is fine without a key"))); err != nil {
		t.Fatal(err)
	}
	tb.Delete(ctx, []int64{1, 4})

	// Both succeed once the offending rows are deleted.
	def = kvDef(1, true)
	def.NotNull = []bool{false, true}
	def.TableName = "renamed"
	def.PKName = "renamed_pkey"
	if err := tb.Alter(ctx, def, nil); err != nil {
		t.Fatal(err)
	}
	_, err = tb.Insert(ctx, kvBatch(row(2, "x")))
	wantErr(t, err, pgerr.UniqueViolation, `duplicate key value violates unique constraint "renamed_pkey"`, "Key (id)=(2) already exists.")

	// ALTER TABLE t ADD COLUMN z bigint DEFAULT 5: row ids and deletions stay.
	def.Columns = append(def.Columns, types.Column{Name: "z", Type: types.TInt8})
	def.NotNull = append(def.NotNull, true)
	if err := tb.Alter(ctx, def, addInt8Column(def.Columns, 5)); err != nil {
		t.Fatal(err)
	}
	want := []string{"0:1,a,5", "2:2,b,5", "3:3,c,5"}
	checkRows(t, tb, want)
	if _, err := tb.Insert(ctx, kvBatch(row(9, "old layout"))); err == nil {
		t.Fatal("a batch in the old layout was accepted")
	}
	s.Close()

	s = mustOpen(t, dir)
	defer s.Close()
	tb = s.Table(1)
	checkRows(t, tb, want)
	if d := tb.Def(); len(d.Columns) != 3 || d.TableName != "renamed" || !d.NotNull[2] {
		t.Fatalf("definition after reopen: %+v", d)
	}
	if id, ok := tb.LookupKey([]types.Value{int64(3)}); !ok || id != 3 {
		t.Fatalf("LookupKey(3) = %d %v", id, ok)
	}
	// ALTER TABLE t DROP COLUMN s.
	def.Columns = []types.Column{def.Columns[0], def.Columns[2]}
	def.NotNull = []bool{true, true}
	dropS := func(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
		return array.NewRecordBatch(types.ArrowSchema(def.Columns), []arrow.Array{rec.Column(0), rec.Column(2)}, rec.NumRows()), nil
	}
	if err := tb.Alter(ctx, def, dropS); err != nil {
		t.Fatal(err)
	}
	checkRows(t, tb, []string{"0:1,5", "2:2,5", "3:3,5"})
}

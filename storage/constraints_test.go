package storage

import (
	"github.com/cockroachdb/apd/v3"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// wantErr checks an error's SQLSTATE, message and detail (the texts are
// PostgreSQL 15's for the same statement).
func wantErr(t *testing.T, err error, code pgerr.Code, msg, detail string) {
	t.Helper()
	e := pgerr.As(err)
	if e == nil {
		t.Fatalf("error %v, want %s %s", err, code, msg)
	}
	if e.Code != code || e.Message != msg {
		t.Fatalf("error %s %q, want %s %q", e.Code, e.Message, code, msg)
	}
	if e.Detail != detail {
		t.Fatalf("detail %q, want %q", e.Detail, detail)
	}
}

func TestNotNull(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	def := kvDef(1, false)
	def.NotNull = []bool{false, true}
	tb, _ := s.CreateTable(def)
	tb.Insert(ctx, seq(0, 1))
	// PostgreSQL: insert into t values (1,'x'), (2,null) ->
	_, err := tb.Insert(ctx, kvBatch(row(1, "x"), kv{id: ptr(int64(2))}))
	wantErr(t, err, pgerr.NotNullViolation,
		`null value in column "s" of relation "t" violates not-null constraint`,
		"Failing row contains (2, null).")
	checkRows(t, tb, []string{"0:0,v0"})
	_, err = tb.Update(ctx, []int64{0}, kvBatch(kv{}))
	wantErr(t, err, pgerr.NotNullViolation,
		`null value in column "s" of relation "t" violates not-null constraint`,
		"Failing row contains (null, null).")
	checkRows(t, tb, []string{"0:0,v0"})
}

func TestPrimaryKey(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	tb, _ := s.CreateTable(kvDef(1, true))
	if _, err := tb.Insert(ctx, seq(1, 3)); err != nil {
		t.Fatal(err)
	}
	dup := func(err error, key string) {
		t.Helper()
		wantErr(t, err, pgerr.UniqueViolation, `duplicate key value violates unique constraint "t_pkey"`,
			"Key (id)=("+key+") already exists.")
	}
	_, err := tb.Insert(ctx, kvBatch(row(5, "a"), row(1, "b")))
	dup(err, "1")
	// Within one batch: the second 6 fails, and nothing of the batch stays.
	_, err = tb.Insert(ctx, kvBatch(row(6, "a"), row(7, "b"), row(6, "c")))
	dup(err, "6")
	// The key column is NOT NULL; a null in row 2 comes before a duplicate in row 3,
	// a duplicate in row 1 before a null in row 2.
	_, err = tb.Insert(ctx, kvBatch(row(8, "a"), kv{s: ptr("n")}, row(8, "c")))
	wantErr(t, err, pgerr.NotNullViolation, `null value in column "id" of relation "t" violates not-null constraint`,
		"Failing row contains (null, n).")
	_, err = tb.Insert(ctx, kvBatch(row(2, "a"), kv{s: ptr("n")}))
	dup(err, "2")
	checkRows(t, tb, []string{"0:1,v1", "1:2,v2"})
	// Failed inserts left no keys behind.
	if _, err := tb.Insert(ctx, kvBatch(row(5, "a"), row(6, "b"), row(7, "c"), row(8, "d"))); err != nil {
		t.Fatal(err)
	}

	// Updates: the key may move to a value freed by the same statement...
	if n, err := tb.Update(ctx, []int64{0, 1}, kvBatch(row(2, "x"), row(3, "y"))); err != nil || n != 2 {
		t.Fatalf("shifting update: %d %v", n, err)
	}
	// ...but not onto another row's key, nor twice onto one value.
	_, err = tb.Update(ctx, []int64{2}, kvBatch(row(3, "z")))
	dup(err, "3")
	_, err = tb.Update(ctx, []int64{2, 3}, kvBatch(row(9, "z"), row(9, "z")))
	dup(err, "9")
	want := []string{"2:5,a", "3:6,b", "4:7,c", "5:8,d", "6:2,x", "7:3,y"}
	checkRows(t, tb, want)
	for key, id := range map[int64]int64{5: 2, 2: 6, 3: 7, 1: -1, 9: -1} {
		got, ok := tb.LookupKey([]types.Value{key})
		if (id >= 0) != ok || (ok && got != id) {
			t.Fatalf("LookupKey(%d) = %d %v, want %d", key, got, ok, id)
		}
	}
	// Deleting frees the key.
	tb.Delete(ctx, []int64{2})
	if _, err := tb.Insert(ctx, kvBatch(row(5, "again"))); err != nil {
		t.Fatal(err)
	}
	tb.Truncate(ctx)
	if _, ok := tb.LookupKey([]types.Value{int64(6)}); ok {
		t.Fatal("key survived truncate")
	}
	if _, err := tb.Insert(ctx, seq(1, 10)); err != nil {
		t.Fatal(err)
	}
}

// TestPrimaryKeyEquality checks keys that PostgreSQL's equality operators
// consider equal though they are stored differently.
func TestPrimaryKeyEquality(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	cols := []types.Column{
		{Name: "n", Type: types.TNumeric},
		{Name: "f", Type: types.TFloat8},
		{Name: "iv", Type: types.TInterval},
		{Name: "b", Type: types.TBpchar.WithTypmod(9)},
	}
	var oid uint32
	for i, c := range []struct {
		col       int
		old, new_ any
	}{
		{0, "1.50", "1.5"}, {0, "-0.00", "0"}, {0, "100", "100.000"},
		{1, 0.0, math.Copysign(0, -1)}, {1, nan(), nan()},
		{2, arrow.MonthDayNanoInterval{Months: 1}, arrow.MonthDayNanoInterval{Days: 30}},
		{2, arrow.MonthDayNanoInterval{Days: 1}, arrow.MonthDayNanoInterval{Nanoseconds: 86400e6}},
		{3, "ab", "ab   "},
	} {
		oid++
		col := cols[c.col]
		tb, err := s.CreateTable(TableDef{OID: oid, TableName: "e", Columns: []types.Column{col}, PrimaryKey: []int{0}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tb.Insert(ctx, oneValue(col.Type, c.old)); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		_, err = tb.Insert(ctx, oneValue(col.Type, c.new_))
		if pgerr.CodeOf(err) != pgerr.UniqueViolation {
			t.Fatalf("case %d: %v = %v not detected (%v)", i, c.old, c.new_, err)
		}
	}
	// And values that differ stay apart.
	oid++
	tb, _ := s.CreateTable(TableDef{OID: oid, TableName: "e", Columns: cols[:1], PrimaryKey: []int{0}})
	for _, v := range []string{"1", "10", "1.01", "0.1", "-1"} {
		if _, err := tb.Insert(ctx, oneValue(types.TNumeric, v)); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
	}
}

func nan() float64 { z := 0.0; return z / z }

func oneValue(typ types.T, v any) arrow.RecordBatch {
	b := array.NewBuilder(mem, typ.ArrowType())
	switch b := b.(type) {
	case *array.StringBuilder:
		b.Append(v.(string))
	case *array.Float64Builder:
		b.Append(v.(float64))
	case *array.MonthDayNanoIntervalBuilder:
		b.Append(v.(arrow.MonthDayNanoInterval))
	}
	schema := types.ArrowSchema([]types.Column{{Name: "c", Type: typ}})
	return array.NewRecordBatch(schema, []arrow.Array{b.NewArray()}, 1)
}

func TestMultiColumnKey(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	def := kvDef(1, false)
	def.Columns[0].Name = "A b"
	def.PrimaryKey = []int{1, 0}
	def.PKName = "u_pkey"
	tb, _ := s.CreateTable(def)
	if _, err := tb.Insert(ctx, kvBatch(row(1, "x"), row(2, "x"), row(1, "y"))); err != nil {
		t.Fatal(err)
	}
	_, err := tb.Insert(ctx, kvBatch(row(2, "x")))
	wantErr(t, err, pgerr.UniqueViolation, `duplicate key value violates unique constraint "u_pkey"`,
		`Key (s, "A b")=(x, 2) already exists.`)
	if id, ok := tb.LookupKey([]types.Value{"y", int64(1)}); !ok || id != 2 {
		t.Fatalf("LookupKey = %d %v", id, ok)
	}
}

func TestQuoteIdentAndClip(t *testing.T) {
	for in, want := range map[string]string{"id": "id", "A b": `"A b"`, "order": `"order"`, "x1_": "x1_", "1x": `"1x"`, `a"b`: `"a""b"`, "name": "name"} {
		if got := quoteIdent(in); got != want {
			t.Errorf("quoteIdent(%q) = %s, want %s", in, got, want)
		}
	}
	long := "abcdefghij"
	for len(long) < 100 {
		long += "abcdefghij"
	}
	if got := clipValue(long); got != long[:64]+"..." {
		t.Errorf("clipValue = %q", got)
	}
	// A multi-byte character straddling byte 64 is left out whole.
	s := long[:63] + "é" + "zz"
	if got := clipValue(s); got != long[:63]+"..." {
		t.Errorf("clipValue = %q", got)
	}
}

func TestLookupNumericAndRepeatedUpdateIDs(t *testing.T) {
	s := mustOpen(t, t.TempDir())
	defer s.Close()
	cols := []types.Column{{Name: "n", Type: types.TNumeric}, {Name: "s", Type: types.TText}}
	tb, _ := s.CreateTable(TableDef{OID: 1, TableName: "n", Columns: cols, PrimaryKey: []int{0}})
	b1 := array.NewStringBuilder(mem)
	b1.AppendValues([]string{"1.50", "2"}, nil)
	b2 := array.NewStringBuilder(mem)
	b2.AppendValues([]string{"a", "b"}, nil)
	rec := array.NewRecordBatch(types.ArrowSchema(cols), []arrow.Array{b1.NewArray(), b2.NewArray()}, 2)
	if _, err := tb.Insert(ctx, rec); err != nil {
		t.Fatal(err)
	}
	d, _, _ := apd.NewFromString("1.5000")
	if id, ok := tb.LookupKey([]types.Value{d}); !ok || id != 0 {
		t.Fatalf("LookupKey(1.5000) = %d %v", id, ok)
	}
	if _, ok := tb.LookupKey([]types.Value{"3"}); ok {
		t.Fatal("LookupKey(3) found a row")
	}
	// A repeated id updates its row once, with the first of its new rows.
	b1.AppendValues([]string{"5", "6"}, nil)
	b2.AppendValues([]string{"x", "y"}, nil)
	upd := array.NewRecordBatch(types.ArrowSchema(cols), []arrow.Array{b1.NewArray(), b2.NewArray()}, 2)
	if n, err := tb.Update(ctx, []int64{1, 1}, upd); err != nil || n != 1 {
		t.Fatalf("update: %d %v", n, err)
	}
	checkRows(t, tb, []string{"0:1.50,a", "2:5,x"})
	if _, ok := tb.LookupKey([]types.Value{"6"}); ok {
		t.Fatal("the skipped row's key was indexed")
	}
}

package storage

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

// allTypesBatch has a column of every SQL type's storage, 4 rows, with NULLs.
func allTypesBatch(t *testing.T) ([]types.Column, arrow.RecordBatch) {
	cols := []types.Column{
		{Name: "b", Type: types.TBool}, {Name: "i2", Type: types.TInt2}, {Name: "i4", Type: types.TInt4},
		{Name: "i8", Type: types.TInt8}, {Name: "f4", Type: types.TFloat4}, {Name: "f8", Type: types.TFloat8},
		{Name: "n", Type: types.TNumeric}, {Name: "s", Type: types.TText}, {Name: "by", Type: types.TBytea},
		{Name: "d", Type: types.TDate}, {Name: "tm", Type: types.TTime}, {Name: "ts", Type: types.TTimestamp},
		{Name: "tz", Type: types.TTimestampTZ}, {Name: "iv", Type: types.TInterval}, {Name: "o", Type: types.TOid},
		{Name: "v", Type: types.TVoid}, {Name: "a", Type: types.ArrayOf(types.TInt4)},
		{Name: "aa", Type: types.ArrayOf(types.ArrayOf(types.TText))},
		{Name: "r", Type: types.RecordOf(nil, []types.T{types.TInt4, types.ArrayOf(types.TText)})},
	}
	js := []string{
		`[true, null, false, true]`, `[1, -2, null, 32767]`, `[null, 5, 6, -7]`, `[9223372036854775807, null, 0, -1]`,
		`[1.5, null, -0.25, 3]`, `[1e300, 2.5, null, -4]`, `["1.50", null, "-3", "NaN"]`, `["", "héllo", null, "x"]`,
		`["AAE=", null, "", "/w=="]`, `[0, 19000, null, -1]`, `[0, 86399999999, null, 1]`,
		`[0, null, -1000000, 1700000000000000]`, `[5, 6, null, 7]`,
		`[{"months":1,"days":2,"nanoseconds":3000}, null, {"months":-1,"days":0,"nanoseconds":0}, {"months":0,"days":0,"nanoseconds":0}]`,
		`[1, 4294967295, null, 0]`, `[null, null, null, null]`, `[[1, null, 3], null, [], [4]]`,
		`[[["a"], null], null, [[]], [["b", null]]]`,
		`[{"f1": 1, "f2": ["a"]}, null, {"f1": null, "f2": []}, {"f1": -3, "f2": null}]`,
	}
	arrs := make([]arrow.Array, len(cols))
	for i, c := range cols {
		a, _, err := array.FromJSON(mem, c.Type.ArrowType(), strings.NewReader(js[i]))
		if err != nil {
			t.Fatalf("column %s: %v", c.Name, err)
		}
		arrs[i] = a
	}
	return cols, array.NewRecordBatch(types.ArrowSchema(cols), arrs, 4)
}

func roundTrip(t *testing.T, rec arrow.RecordBatch) arrow.RecordBatch {
	t.Helper()
	frame, err := encodeInsert(42, rec, false)
	if err != nil {
		t.Fatal(err)
	}
	r, err := decodeRecord(append([]byte(nil), frame[frameHeaderLen:]...), rec.Schema())
	if err != nil {
		t.Fatal(err)
	}
	if r.kind != recInsert || r.first != 42 {
		t.Fatalf("decoded kind %d first %d", r.kind, r.first)
	}
	return r.rec
}

func TestCodecAllTypes(t *testing.T) {
	_, rec := allTypesBatch(t)
	got := roundTrip(t, rec)
	if !array.RecordEqual(got, rec) {
		t.Fatalf("round trip:\n%v\nwant:\n%v", got, rec)
	}
	// Slices at every offset exercise bitmaps and offsets that do not start at 0.
	for i := int64(0); i <= 4; i++ {
		for j := i; j <= 4; j++ {
			sl := rec.NewSlice(i, j)
			got := roundTrip(t, sl)
			if !array.RecordEqual(got, sl) {
				t.Fatalf("slice [%d:%d]:\n%v\nwant:\n%v", i, j, got, sl)
			}
		}
	}
}

// TestCodecAllNullLists encodes list columns whose rows are all NULL: their
// value arrays are empty and may have no data buffers at all.
func TestCodecAllNullLists(t *testing.T) {
	cols := []types.Column{{Name: "a", Type: types.ArrayOf(types.TInt4)}, {Name: "b", Type: types.ArrayOf(types.TBool)},
		{Name: "t", Type: types.ArrayOf(types.TText)}}
	arrs := make([]arrow.Array, len(cols))
	for i, c := range cols {
		b := array.NewBuilder(mem, c.Type.ArrowType())
		b.AppendNull()
		b.AppendNull()
		arrs[i] = b.NewArray()
	}
	rec := array.NewRecordBatch(types.ArrowSchema(cols), arrs, 2)
	if got := roundTrip(t, rec); !array.RecordEqual(got, rec) {
		t.Fatalf("round trip:\n%v\nwant:\n%v", got, rec)
	}
}

func TestCodecRejectsGarbage(t *testing.T) {
	_, rec := allTypesBatch(t)
	frame, _ := encodeInsert(0, rec, false)
	payload := frame[frameHeaderLen:]
	// Every truncation must fail cleanly, never panic.
	for n := 0; n < len(payload); n += 3 {
		if _, err := decodeRecord(append([]byte(nil), payload[:n]...), rec.Schema()); err == nil {
			t.Fatalf("truncated payload of %d bytes decoded", n)
		}
	}
}

func TestAllTypesSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir)
	cols, rec := allTypesBatch(t)
	tb, err := s.CreateTable(TableDef{OID: 3, TableName: "all", Columns: cols})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := tb.Insert(ctx, rec.NewSlice(1, 4)); err != nil {
			t.Fatal(err)
		}
	}
	want := dump(tb.Snapshot())
	s.Close()
	s = mustOpen(t, dir)
	defer s.Close()
	checkRows(t, s.Table(3), want)
}

func TestTakeRowsAllTypes(t *testing.T) {
	_, rec := allTypesBatch(t)
	got, err := takeRows(rec, []int{0, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct{ got, from, to int64 }{{0, 0, 1}, {1, 2, 4}} {
		a := got.NewSlice(want.got, want.got+want.to-want.from)
		if !array.RecordEqual(a, rec.NewSlice(want.from, want.to)) {
			t.Fatalf("rows %d..%d:\n%v", want.from, want.to, a)
		}
	}
}

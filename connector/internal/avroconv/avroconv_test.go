package avroconv

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/hamba/avro/v2"
	"github.com/streamsql/streamsql/connector/internal/decode"
	"github.com/streamsql/streamsql/connector/srtest"
	"github.com/streamsql/streamsql/types"
)

// TestZigZag checks varints against the Avro specification's table.
func TestZigZag(t *testing.T) {
	for _, c := range []struct {
		v    int64
		want string
	}{{0, "00"}, {-1, "01"}, {1, "02"}, {-2, "03"}, {2, "04"}, {-64, "7f"}, {64, "8001"}, {8192, "808001"},
		{-9223372036854775808, "ffffffffffffffffff01"}} {
		got := hex.EncodeToString(appendLong(nil, c.v))
		if got != c.want {
			t.Errorf("zigzag(%d) = %s, want %s", c.v, got, c.want)
		}
		d := in{b: appendLong(nil, c.v)}
		if back, err := d.long(); err != nil || back != c.v {
			t.Errorf("long(%s) = %d, %v", got, back, err)
		}
	}
}

func batch(t *testing.T, cols []types.Column, rows [][]types.Value) arrow.RecordBatch {
	t.Helper()
	var arrs []arrow.Array
	for j, c := range cols {
		b := types.NewBuilder(memory.DefaultAllocator, c.Type)
		for _, r := range rows {
			if err := types.AppendValue(b, r[j], c.Type); err != nil {
				t.Fatal(err)
			}
		}
		arrs = append(arrs, b.NewArray())
	}
	return array.NewRecordBatch(types.ArrowSchema(cols), arrs, int64(len(rows)))
}

func parse(t *testing.T, cols []types.Column, text []string) [][]types.Value {
	t.Helper()
	var row []types.Value
	for j, s := range text {
		if s == "NULL" {
			row = append(row, nil)
			continue
		}
		v, err := types.ParseText(s, cols[j].Type, nil)
		if err != nil {
			t.Fatal(err)
		}
		row = append(row, v)
	}
	return [][]types.Value{row}
}

// TestFixedVector checks a record's bytes against hand-computed Avro.
func TestFixedVector(t *testing.T) {
	cols := []types.Column{{Name: "id", Type: types.TInt8}, {Name: "name", Type: types.TText},
		{Name: "price", Type: types.TNumeric.WithTypmod((10<<16 | 2) + 4)}, {Name: "day", Type: types.TDate},
		{Name: "ok", Type: types.TBool}, {Name: "gone", Type: types.TFloat8}}
	w, err := NewWriter("t", cols, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := batch(t, cols, parse(t, cols, []string{"-3", "ab", "-1.28", "1970-01-03", "true", "NULL"}))
	got := hex.EncodeToString(w.Append(nil, rec.Columns(), 0))
	// Each field: union branch 1 (02), then the value; NULL: branch 0 (00).
	// id -3 -> 05; "ab" -> 04 61 62; -1.28 -> unscaled -128 -> 1 byte 80, length 02;
	// date day 2 -> 04; true -> 01; gone NULL -> 00.
	want := "02" + "05" + "02" + "046162" + "02" + "0280" + "02" + "04" + "02" + "01" + "00"
	if got != want {
		t.Fatalf("bytes %s, want %s", got, want)
	}
	// A second library agrees: hamba's generic encoder of the same schema.
	s, err := avro.Parse(w.Schema().String())
	if err != nil {
		t.Fatal(err)
	}
	other, err := avro.Marshal(s, map[string]any{"id": int64(-3), "name": "ab", "price": big.NewRat(-128, 100),
		"day": time.Unix(2*86400, 0).UTC(), "ok": true, "gone": nil})
	if err != nil {
		t.Fatal(err)
	}
	// hamba writes -128 unscaled as ff80 (Avro does not require the
	// shortest two's complement); the rest is byte for byte the same.
	if o := hex.EncodeToString(other); strings.Replace(o, "04ff80", "0280", 1) != want {
		t.Errorf("hamba/avro writes %s, we write %s", o, want)
	}
	var m map[string]any
	if err := avro.Unmarshal(s, w.Append(nil, rec.Columns(), 0), &m); err != nil {
		t.Fatal(err)
	}
	if p, ok := m["price"].(*big.Rat); !ok || p.Cmp(big.NewRat(-128, 100)) != 0 || m["id"] != int64(-3) || m["name"] != "ab" || m["gone"] != nil {
		t.Errorf("hamba/avro reads %v", m)
	}
	if !strings.Contains(w.Schema().String(), `"logicalType":"decimal","precision":10,"scale":2`) {
		t.Errorf("schema %s", w.Schema())
	}
}

// TestRoundTrip writes every type through a registry and reads it back.
func TestRoundTrip(t *testing.T) {
	reg := srtest.Start()
	defer reg.Close()
	cols := []types.Column{
		{Name: "b", Type: types.TBool}, {Name: "i2", Type: types.TInt2}, {Name: "i4", Type: types.TInt4},
		{Name: "i8", Type: types.TInt8}, {Name: "f4", Type: types.TFloat4}, {Name: "f8", Type: types.TFloat8},
		{Name: "n", Type: types.TNumeric}, {Name: "nd", Type: types.TNumeric.WithTypmod((12<<16 | 3) + 4)},
		{Name: "t", Type: types.TText}, {Name: "vc", Type: types.TVarchar}, {Name: "by", Type: types.TBytea},
		{Name: "d", Type: types.TDate}, {Name: "tm", Type: types.TTime}, {Name: "ts", Type: types.TTimestamp},
		{Name: "tz", Type: types.TTimestampTZ}, {Name: "iv", Type: types.TInterval}, {Name: "j", Type: types.TJSONB},
		{Name: "u", Type: types.TUUID},
	}
	rows := [][]string{
		{"true", "-32768", "2147483647", "-9223372036854775808", "1.5", "-2.25e-300", "123456789.000000001", "-123456789.125",
			"héllo", "x", `\x00ff`, "2024-02-29", "23:59:59.999999", "1969-12-31 23:59:59.999999", "2024-01-01 12:00:00+00",
			"1 mon 2 days 03:04:05.000006", `{"a": [1, 2]}`, "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11"},
	}
	nulls := make([]string, len(cols))
	for i := range nulls {
		nulls[i] = "NULL"
	}
	rows = append(rows, nulls)
	var vals [][]types.Value
	for _, r := range rows {
		vals = append(vals, parse(t, cols, r)...)
	}
	rec := batch(t, cols, vals)
	w, err := NewWriter("all types", cols, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRegistry(RegistryConfig{URLs: reg.URL()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, err := r.Register(ctx, "topic-value", w.Schema())
	if err != nil {
		t.Fatal(err)
	}
	if id2, _ := r.Register(ctx, "topic-value", w.Schema()); id2 != id || r.Requests() != 1 {
		t.Fatalf("second Register: id %d, %d requests", id2, r.Requests())
	}
	// A reader with its own client resolves the id from the registry.
	r2, _ := NewRegistry(RegistryConfig{URLs: reg.URL()})
	ws, err := r2.Schema(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	sch := decode.NewSchema(cols, len(cols))
	plan, err := Compile(ws, sch)
	if err != nil {
		t.Fatal(err)
	}
	row, out := sch.NewRow(), sch.NewBatch()
	for i := range rows {
		msg := w.Append(AppendFrame(nil, id), rec.Columns(), i)
		gid, body, err := SplitFrame(msg)
		if err != nil || gid != id {
			t.Fatal(gid, err)
		}
		if col, err := plan.Decode(body, row, nil); err != nil {
			t.Fatalf("row %d column %d: %v", i, col, err)
		}
		if err := out.Add(row); err != nil {
			t.Fatal(err)
		}
	}
	back := out.Take()
	for j, c := range cols {
		for i := range rows {
			a, b := types.ValueAt(rec.Column(j), i, c.Type), types.ValueAt(back.Column(j), i, c.Type)
			if (a == nil) != (b == nil) || a != nil && types.Compare(a, b, c.Type) != 0 {
				t.Errorf("column %s row %d: wrote %v, read %v", c.Name, i, a, b)
			}
		}
	}
	if _, err := r2.Schema(ctx, 999); !errors.Is(err, ErrUnknownID) || Transient(err) {
		t.Errorf("unknown id: %v", err)
	}
	reg.SetDown(true)
	if _, err := r2.Schema(ctx, 998); err == nil || !Transient(err) {
		t.Errorf("registry down: %v", err)
	}
}

// TestResolution reads a writer schema that differs from the columns:
// extra fields skipped, missing columns NULL, int promoted to bigint,
// a bad payload reported.
func TestResolution(t *testing.T) {
	ws := avro.MustParse(`{"type":"record","name":"m","fields":[
		{"name":"host","type":"string"},
		{"name":"tags","type":{"type":"map","values":{"type":"array","items":"long"}}},
		{"name":"CPU","type":["null","int"]},
		{"name":"at","type":{"type":"long","logicalType":"timestamp-millis"}}]}`)
	cols := []types.Column{{Name: "host", Type: types.TText}, {Name: "cpu", Type: types.TInt8},
		{Name: "at", Type: types.TTimestampTZ}, {Name: "missing", Type: types.TText}}
	sch := decode.NewSchema(cols, len(cols))
	plan, err := Compile(ws, sch)
	if err != nil {
		t.Fatal(err)
	}
	// host "h", tags {"k": [1]} as one block, CPU branch 1 value 7, at 1000 ms.
	body, _ := hex.DecodeString("0268" + "02" + "026b" + "0202" + "00" + "00" + "02" + "0e" + "d00f")
	row, out := sch.NewRow(), sch.NewBatch()
	if _, err := plan.Decode(body, row, nil); err != nil {
		t.Fatal(err)
	}
	_ = out.Add(row)
	rec := out.Take()
	got := []types.Value{types.ValueAt(rec.Column(0), 0, types.TText), types.ValueAt(rec.Column(1), 0, types.TInt8),
		types.ValueAt(rec.Column(2), 0, types.TTimestampTZ), types.ValueAt(rec.Column(3), 0, types.TText)}
	if got[0] != "h" || got[1] != int64(7) || got[2] != types.TimestampValue(1_000_000) || got[3] != nil {
		t.Fatalf("got %v", got)
	}
	if _, err := plan.Decode(body[:len(body)-1], row, nil); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("truncated: %v", err)
	}
	if _, _, err := SplitFrame([]byte{1, 0, 0, 0, 1, 2}); err == nil {
		t.Error("no magic byte accepted")
	}
	bad := decode.NewSchema([]types.Column{{Name: "host", Type: types.TBytea}}, 1)
	if _, err := Compile(ws, bad); err == nil || !strings.Contains(err.Error(), `"host"`) {
		t.Errorf("string into bytea: %v", err)
	}
	if !bytes.Equal(twosComplement(bigInt(-129)), []byte{0xff, 0x7f}) || !bytes.Equal(twosComplement(bigInt(128)), []byte{0x00, 0x80}) {
		t.Error("two's complement")
	}
}

func bigInt(v int64) *big.Int { return big.NewInt(v) }

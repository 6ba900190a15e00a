package encode

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/connector/sink"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// batch builds a record of cols from rows of PostgreSQL text ("" is NULL).
func batch(t *testing.T, cols []types.Column, rows ...[]string) arrow.RecordBatch {
	t.Helper()
	arrs := make([]arrow.Array, len(cols))
	for c, col := range cols {
		vals := make([]types.Value, len(rows))
		for r, row := range rows {
			if row[c] == "" {
				continue
			}
			v, err := types.ParseText(row[c], col.Type, nil)
			if err != nil {
				t.Fatalf("%s %q: %v", col.Type, row[c], err)
			}
			vals[r] = v
		}
		a, err := types.MakeArray(memory.DefaultAllocator, col.Type, vals)
		if err != nil {
			t.Fatal(err)
		}
		arrs[c] = a
	}
	return array.NewRecordBatch(types.ArrowSchema(cols), arrs, int64(len(rows)))
}

func col(t *testing.T, name, typ string) types.Column {
	ty, err := types.ParseTypeString(typ)
	if err != nil {
		t.Fatal(err)
	}
	return types.Column{Name: name, Type: ty}
}

func encodeAll(t *testing.T, f Format, cols []types.Column, key []int, rec arrow.RecordBatch, ops []stream.Op) []string {
	t.Helper()
	e, err := New(f, cols, key)
	if err != nil {
		t.Fatal(err)
	}
	e.(*encoder).now = func() int64 { return 42 }
	var out []string
	err = e.Encode(rec, ops, func(k, v []byte) error {
		s := string(v)
		if v == nil {
			s = "<tombstone>"
		}
		if k != nil {
			s = string(k) + " => " + s
		}
		out = append(out, s)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPlainJSONValues(t *testing.T) {
	cols := []types.Column{col(t, "i", "int4"), col(t, "f", "float8"), col(t, "n", "numeric"), col(t, "s", "text"),
		col(t, "ts", "timestamptz"), col(t, "j", "jsonb"), col(t, "b", "bytea"), col(t, "a", "int4[]"), col(t, "iv", "interval"), col(t, "ok", "bool"), col(t, "u", "uuid")}
	rec := batch(t, cols,
		[]string{"1", "1.5", "12.340", "a\"b\n", "2024-01-02 03:04:05.123456+00", `{"x": [1, 2]}`, `\x00ff`, "{1,2}", "1 day 02:00:00", "true", "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11"},
		[]string{"", "NaN", "Infinity", "", "", "", "", "", "", "", ""},
	)
	got := encodeAll(t, Format{Kind: Plain}, cols, nil, rec, nil)
	want := []string{
		`{"i":1,"f":1.5,"n":12.340,"s":"a\"b\n","ts":"2024-01-02 03:04:05.123456+00","j":{"x": [1, 2]},"b":"\\x00ff","a":"{1,2}","iv":"1 day 02:00:00","ok":true,"u":"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"}`,
		`{"i":null,"f":"NaN","n":"Infinity","s":null,"ts":null,"j":null,"b":null,"a":null,"iv":null,"ok":null,"u":null}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestForceAppendOnlyDropsRetractions(t *testing.T) {
	cols := []types.Column{col(t, "k", "text"), col(t, "v", "int8")}
	rec := batch(t, cols, []string{"a", "1"}, []string{"a", "1"}, []string{"a", "2"}, []string{"b", "3"})
	ops := []stream.Op{stream.Insert, stream.UpdateBefore, stream.UpdateAfter, stream.Delete}
	got := encodeAll(t, Format{Kind: Plain, ForceAppendOnly: true}, cols, nil, rec, ops)
	if strings.Join(got, ";") != `{"k":"a","v":1};{"k":"a","v":2}` {
		t.Fatalf("got %v", got)
	}
}

func TestUpsertAndDebezium(t *testing.T) {
	cols := []types.Column{col(t, "k", "text"), col(t, "v", "int8")}
	rec := batch(t, cols, []string{"a", "1"}, []string{"a", "1"}, []string{"a", "2"}, []string{"b", "3"})
	ops := []stream.Op{stream.Insert, stream.UpdateBefore, stream.UpdateAfter, stream.Delete}
	got := encodeAll(t, Format{Kind: Upsert}, cols, []int{0}, rec, ops)
	want := `{"k":"a"} => {"k":"a","v":1};{"k":"a"} => {"k":"a","v":2};{"k":"b"} => <tombstone>`
	if strings.Join(got, ";") != want {
		t.Fatalf("upsert got %s\nwant %s", strings.Join(got, ";"), want)
	}
	// An update that changes the key deletes the old one.
	moved := batch(t, cols, []string{"a", "2"}, []string{"c", "2"})
	got = encodeAll(t, Format{Kind: Upsert}, cols, []int{0}, moved, []stream.Op{stream.UpdateBefore, stream.UpdateAfter})
	if want := `{"k":"a"} => <tombstone>;{"k":"c"} => {"k":"c","v":2}`; strings.Join(got, ";") != want {
		t.Fatalf("upsert of a moved key: %s\nwant %s", strings.Join(got, ";"), want)
	}
	got = encodeAll(t, Format{Kind: Debezium}, cols, nil, rec, ops)
	want = `{"before":null,"after":{"k":"a","v":1},"op":"c","ts_ms":42};` +
		`{"before":{"k":"a","v":1},"after":{"k":"a","v":2},"op":"u","ts_ms":42};` +
		`{"before":{"k":"b","v":3},"after":null,"op":"d","ts_ms":42}`
	if strings.Join(got, ";") != want {
		t.Fatalf("debezium got %s\nwant %s", strings.Join(got, ";"), want)
	}
}

func TestCSV(t *testing.T) {
	cols := []types.Column{col(t, "s", "text"), col(t, "n", "int4"), col(t, "ts", "timestamp")}
	rec := batch(t, cols, []string{"a,b", "1", "2024-01-01 00:00:00"}, []string{"", "", ""})
	// An empty string is not NULL: build it by hand.
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	sb.Append("a,b")
	sb.Append("")
	rec = array.NewRecordBatch(rec.Schema(), []arrow.Array{sb.NewArray(), rec.Column(1), rec.Column(2)}, 2)
	got := encodeAll(t, Format{Kind: Plain, Encoding: CSV}, cols, nil, rec, nil)
	if strings.Join(got, "\n") != "\"a,b\",1,2024-01-01 00:00:00\n\"\",," {
		t.Fatalf("got %q", got)
	}
	if h := string(CSVHeader([]types.Column{{Name: "a"}, {Name: "b,c"}})); h != `a,"b,c"` {
		t.Fatalf("header %q", h)
	}
}

func TestParse(t *testing.T) {
	cols := []types.Column{col(t, "k", "text"), col(t, "v", "int8")}
	spec := func(format, enc string, appendOnly bool, key []int, opts map[string]string) sink.Spec {
		return sink.Spec{Name: "s", Cols: cols, Format: format, Encode: enc, AppendOnly: appendOnly, Key: key, Options: opts}
	}
	for _, c := range []struct {
		s    sink.Spec
		code pgerr.Code
		want Format
	}{
		{s: spec("JSON", "", true, nil, nil), want: Format{Kind: Plain}},
		{s: spec("PLAIN", "CSV", true, nil, nil), want: Format{Kind: Plain, Encoding: CSV}},
		{s: spec("JSON", "", false, nil, nil), code: pgerr.InvalidObjectDefinition},
		{s: spec("JSON", "", false, nil, map[string]string{"force_append_only": "true"}), want: Format{Kind: Plain, ForceAppendOnly: true}},
		{s: spec("JSON", "", false, nil, map[string]string{"force_append_only": "maybe"}), code: pgerr.InvalidParameterValue},
		{s: spec("UPSERT", "JSON", false, nil, nil), code: pgerr.InvalidObjectDefinition},
		{s: spec("UPSERT", "JSON", false, []int{0}, nil), want: Format{Kind: Upsert}},
		{s: spec("UPSERT", "JSON", false, []int{0}, map[string]string{"force_append_only": "true"}), code: pgerr.InvalidParameterValue},
		{s: spec("UPSERT", "", false, []int{0}, nil), code: pgerr.InvalidParameterValue},
		{s: spec("DEBEZIUM", "JSON", false, nil, nil), want: Format{Kind: Debezium}},
		{s: spec("PLAIN", "AVRO", true, nil, nil), code: pgerr.FeatureNotSupported}, // not allowed below
		{s: spec("DEBEZIUM", "AVRO", true, nil, nil), code: pgerr.FeatureNotSupported},
		{s: spec("JSON", "", true, nil, map[string]string{"schema.registry": "http://h:1"}), code: pgerr.InvalidParameterValue},
		{s: spec("", "", true, nil, nil), code: pgerr.InvalidParameterValue},
		{s: spec("PARQUET", "", true, nil, nil), code: pgerr.FeatureNotSupported}, // not allowed below
	} {
		f, err := Parse(c.s, "test", JSON, CSV)
		if c.code != "" {
			if pgerr.CodeOf(err) != c.code {
				t.Errorf("%s %s: err %v, want %s", c.s.Format, c.s.Encode, err, c.code)
			}
			continue
		}
		if err != nil || f != c.want {
			t.Errorf("%s %s: %+v, %v; want %+v", c.s.Format, c.s.Encode, f, err, c.want)
		}
	}
	f, err := Parse(spec("UPSERT", "AVRO", false, []int{0}, map[string]string{"schema.registry": "http://h:1/"}), "kafka", JSON, Avro)
	if err != nil || f.Kind != Upsert || f.Encoding != Avro || f.Registry.URLs != "http://h:1" {
		t.Errorf("UPSERT ENCODE AVRO: %+v, %v", f, err)
	}
	if _, err := Parse(spec("PLAIN", "AVRO", true, nil, nil), "kafka", JSON, Avro); err == nil || !strings.Contains(err.Error(), "schema.registry") {
		t.Errorf("PLAIN ENCODE AVRO without a registry: %v", err)
	}
	k, err := Key(cols, map[string]string{"primary_key": "V, k"}, nil)
	if err != nil || len(k) != 2 || k[0] != 1 || k[1] != 0 {
		t.Fatalf("Key = %v, %v", k, err)
	}
	if _, err := Key(cols, map[string]string{"primary_key": "x"}, nil); pgerr.CodeOf(err) != pgerr.UndefinedColumn {
		t.Fatalf("Key of a missing column: %v", err)
	}
}

// An update that moves a row to another key leaves a tombstone on the old
// key; one that keeps the key writes only the new row.
func TestUpsertKeyChange(t *testing.T) {
	cols := []types.Column{col(t, "k", "text"), col(t, "v", "int8")}
	rec := batch(t, cols, []string{"a", "1"}, []string{"b", "1"}, []string{"b", "1"}, []string{"b", "2"}, []string{"c", "3"})
	ops := []stream.Op{stream.UpdateBefore, stream.UpdateAfter, stream.UpdateBefore, stream.UpdateAfter, stream.UpdateBefore}
	got := encodeAll(t, Format{Kind: Upsert}, cols, []int{0}, rec, ops)
	want := `{"k":"a"} => <tombstone>;{"k":"b"} => {"k":"b","v":1};{"k":"b"} => {"k":"b","v":2};{"k":"c"} => <tombstone>`
	if strings.Join(got, ";") != want {
		t.Fatalf("got %s\nwant %s", strings.Join(got, ";"), want)
	}
}

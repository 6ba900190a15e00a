package kafka

import (
	"context"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/connector/internal/avroconv"
	"github.com/streamsql/streamsql/connector/srtest"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// allTypes are a column of every type of the spec.
const allTypes = "b boolean, i2 smallint, i4 integer, i8 bigint, f4 real, f8 double precision, n numeric, " +
	"nd numeric, t text, vc varchar(5), by bytea, d date, tm time, ts timestamp, tz timestamptz, iv interval, j jsonb"

// textBatch builds a batch of cols from rows of text values ("NULL").
func textBatch(t *testing.T, cols []types.Column, rows ...[]string) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, types.ArrowSchema(cols))
	defer b.Release()
	for _, r := range rows {
		for j, s := range r {
			if s == "NULL" {
				b.Field(j).AppendNull()
				continue
			}
			v, err := types.ParseText(s, cols[j].Type, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := types.AppendValue(b.Field(j), v, cols[j].Type); err != nil {
				t.Fatal(err)
			}
		}
	}
	return b.NewRecordBatch()
}

func commitEpoch(t *testing.T, w interface {
	PreCommit(context.Context, uint64) ([]byte, error)
	Commit(context.Context, uint64, []byte) error
}, ep uint64) {
	t.Helper()
	p, err := w.PreCommit(context.Background(), ep)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(context.Background(), ep, p); err != nil {
		t.Fatal(err)
	}
}

// TestAvroSinkRoundTrip writes every type with the kafka sink (FORMAT
// PLAIN ENCODE AVRO, schema registered under out-value) and reads the
// topic back with the kafka source: the rows are equal.
func TestAvroSinkRoundTrip(t *testing.T) {
	reg := srtest.Start()
	defer reg.Close()
	addr := newTestCluster(t).ListenAddrs()[0]
	c := cols(t, allTypes)
	c[7].Type = types.TNumeric.WithTypmod((12<<16 | 3) + 4) // numeric(12,3): an Avro decimal
	spec := testSpec(addr, map[string]string{"schema.registry": reg.URL()})
	spec.Cols, spec.Format, spec.Encode = c, "PLAIN", "AVRO"
	ctx := context.Background()
	w, err := openTestSink(t, spec).NewWriter(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rows := [][]string{
		{"true", "-32768", "2147483647", "-9223372036854775808", "1.5", "-2.25e-300", "123456789.000000001", "-123456789.125",
			"héllo, \"world\"", "abcde", `\x00ff10`, "2024-02-29", "23:59:59.999999", "1969-12-31 23:59:59.999999",
			"2024-01-01 12:00:00+00", "1 year 2 mons -3 days 04:05:06.000007", `{"a": [1, 2.5, null], "b": "x"}`},
		{"false", "0", "0", "0", "-0", "Infinity", "NaN", "0.000", "", "", `\x`, "0001-01-01", "00:00:00", "2000-01-01 00:00:00",
			"1999-12-31 23:59:59.5+00", "00:00:00", "[]"},
		{"NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL", "NULL"},
	}
	if err := w.Write(ctx, textBatch(t, c, rows...), nil); err != nil {
		t.Fatal(err)
	}
	commitEpoch(t, w, 1)
	id := reg.Latest("out-value")
	if id == 0 || !strings.Contains(reg.SchemaOf(id), `"logicalType":"timestamp-micros"`) {
		t.Fatalf("out-value: id %d, schema %s", id, reg.SchemaOf(id))
	}
	for _, r := range readCommitted(t, addr, "out") {
		if r.value[0] != 0 || int(r.value[1])<<24|int(r.value[2])<<16|int(r.value[3])<<8|int(r.value[4]) != id || r.key != "" {
			t.Fatalf("record %q/%x: not framed with id %d", r.key, r.value[:5], id)
		}
	}
	src := mustOpen(t, c, map[string]string{"properties.bootstrap.server": addr, "topic": "out", "schema.registry": reg.URL()}, "PLAIN ENCODE AVRO")
	ru := start(t, src, nil)
	ru.waitRows(len(rows))
	got, _, _, errs := ru.snapshot()
	errs = slices.DeleteFunc(errs, func(err error) bool { // readCommitted's markers
		return strings.Contains(err.Error(), "the message has no value")
	})
	want := make([]string, len(rows))
	ref := textBatch(t, c, rows...)
	for i := range rows {
		want[i] = rowText(ref, c, i)
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") || len(errs) > 0 {
		t.Fatalf("read back\n%s\nwant\n%s\nerrors %v", strings.Join(got, "\n"), strings.Join(want, "\n"), errs)
	}
}

// TestAvroUpsertRoundTrip: FORMAT UPSERT ENCODE AVRO writes Avro keys
// (subject out-key) and tombstones; an UPSERT ENCODE AVRO source reads
// the keys of tombstones back.
func TestAvroUpsertRoundTrip(t *testing.T) {
	reg := srtest.Start()
	defer reg.Close()
	addr := newTestCluster(t).ListenAddrs()[0]
	ctx := context.Background()
	c := cols(t, "id bigint, name text")
	spec := testSpec(addr, map[string]string{"schema.registry": reg.URL(), "primary_key": "id"})
	spec.Cols, spec.Format, spec.Encode, spec.Key, spec.AppendOnly = c, "UPSERT", "AVRO", []int{0}, false
	w, err := openTestSink(t, spec).NewWriter(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rec := textBatch(t, c, []string{"1", "a"}, []string{"2", "b"}, []string{"2", "b"}, []string{"3", "c"}, []string{"4", "d"})
	ops := []stream.Op{stream.Insert, stream.Insert, stream.UpdateBefore, stream.UpdateAfter, stream.Delete}
	if err := w.Write(ctx, rec, ops); err != nil {
		t.Fatal(err)
	}
	commitEpoch(t, w, 1)
	kid := reg.Latest("out-key")
	if kid == 0 || strings.Contains(reg.SchemaOf(kid), `"name":"name"`) {
		t.Fatalf("out-key: %d %s", kid, reg.SchemaOf(kid))
	}
	src := mustOpen(t, c, map[string]string{"properties.bootstrap.server": addr, "topic": "out", "schema.registry": reg.URL()}, "UPSERT ENCODE AVRO")
	ru := start(t, src, nil)
	ru.waitRows(5)
	got, _, _, errs := ru.snapshot()
	sort.Strings(got)
	// 1 and 2 inserted; 2 -> 3 deletes key 2; 4 deleted.
	want := []string{"1|a|f", "2|NULL|t", "2|b|f", "3|c|f", "4|NULL|t"}
	if strings.Join(got, " ") != strings.Join(want, " ") || len(errs) > 0 {
		t.Fatalf("got %v, want %v, errors %v", got, want, errs)
	}
	_ = avroconv.Magic
}

// TestAvroSinkRegistryDown: a writer whose registry does not answer fails
// its write with 08000 naming the registry; once the registry is back a
// new writer registers and writes.
func TestAvroSinkRegistryDown(t *testing.T) {
	reg := srtest.Start()
	defer reg.Close()
	addr := newTestCluster(t).ListenAddrs()[0]
	ctx := context.Background()
	c := cols(t, "id bigint, name text")
	spec := testSpec(addr, map[string]string{"schema.registry": reg.URL(), "sink.delivery-guarantee": "at-least-once"})
	spec.Cols, spec.Format, spec.Encode = c, "PLAIN", "AVRO"
	s := openTestSink(t, spec)
	reg.SetDown(true)
	w, err := s.NewWriter(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	err = w.Write(ctx, textBatch(t, c, []string{"1", "a"}), nil)
	if err == nil || !strings.Contains(err.Error(), "schema registry") || pgerrCode(err) != "08000" {
		t.Fatalf("write with the registry down: %v", err)
	}
	w.Close()
	reg.SetDown(false)
	w, err = s.NewWriter(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Write(ctx, textBatch(t, c, []string{"1", "a"}), nil); err != nil {
		t.Fatal(err)
	}
	if reg.Latest("out-value") == 0 {
		t.Error("no schema registered")
	}
}

func pgerrCode(err error) string { return string(pgerr.CodeOf(err)) }

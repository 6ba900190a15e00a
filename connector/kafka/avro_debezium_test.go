package kafka

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/connector/srtest"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/twmb/franz-go/pkg/kgo"
)

// debeziumSchema is the shape of Debezium's Avro envelope (io.debezium
// connector for PostgreSQL): before/after unions of the row, a nested
// source record, op, and optional ts_ms and transaction.
const debeziumSchema = `{"type":"record","name":"Envelope","namespace":"pg.public.orders","fields":[
	{"name":"before","type":["null",{"type":"record","name":"Value","fields":[
		{"name":"id","type":"long"},
		{"name":"name","type":["null","string"],"default":null},
		{"name":"price","type":["null",{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}],"default":null}]}],"default":null},
	{"name":"after","type":["null","Value"],"default":null},
	{"name":"source","type":{"type":"record","name":"Source","namespace":"io.debezium.connector.postgresql","fields":[
		{"name":"version","type":"string"},{"name":"lsn","type":["null","long"],"default":null},
		{"name":"xmin","type":["null","long"],"default":null}]}},
	{"name":"op","type":"string"},
	{"name":"ts_ms","type":["null","long"],"default":null},
	{"name":"transaction","type":["null",{"type":"record","name":"block","fields":[{"name":"id","type":"string"}]}],"default":null}]}`

const debeziumKeySchema = `{"type":"record","name":"Key","namespace":"pg.public.orders","fields":[{"name":"id","type":"long"}]}`

// TestReadDebeziumAvro reads Debezium's Avro envelopes (created with
// hamba/avro, as Debezium's Avro converter would frame them): creates,
// updates, deletes, the tombstone after a delete, a truncate refused.
func TestReadDebeziumAvro(t *testing.T) {
	reg := srtest.Start()
	defer reg.Close()
	vid, kid := reg.Register("t-value", debeziumSchema), reg.Register("t-key", debeziumKeySchema)
	_, addr := cluster(t, 1)
	src := map[string]any{"version": "2.7", "lsn": map[string]any{"long": int64(42)}, "xmin": nil}
	row := func(id int64, name string) map[string]any {
		return map[string]any{"id": id, "name": map[string]any{"string": name}, "price": nil}
	}
	env := func(before, after any, op string) []byte {
		return avroMsg(t, debeziumSchema, vid, map[string]any{"before": before, "after": after, "source": src, "op": op,
			"ts_ms": map[string]any{"long": int64(1)}, "transaction": nil})
	}
	key := func(id int64) []byte { return avroMsg(t, debeziumKeySchema, kid, map[string]any{"id": id}) }
	wrap := func(m map[string]any) any { return map[string]any{"pg.public.orders.Value": m} }
	produce(t, producer(t, addr),
		&kgo.Record{Key: key(1), Value: env(nil, wrap(row(1, "a")), "r")},
		&kgo.Record{Key: key(2), Value: env(nil, wrap(row(2, "b")), "c")},
		&kgo.Record{Key: key(1), Value: env(wrap(row(1, "a")), wrap(row(1, "a2")), "u")},
		&kgo.Record{Key: key(2), Value: env(wrap(row(2, "b")), nil, "d")},
		&kgo.Record{Key: key(2)}, // Debezium's tombstone
		&kgo.Record{Key: key(3), Value: env(nil, nil, "t")},
		&kgo.Record{Key: key(3), Value: env(nil, nil, "c")},
	)
	c := cols(t, "id bigint, name text, price numeric")
	s := mustOpen(t, c, map[string]string{"properties.bootstrap.server": addr, "topic": "t", "schema.registry": reg.URL()}, "DEBEZIUM ENCODE AVRO")
	ru := start(t, s, nil)
	ru.wait("5 rows, 2 errors", func(rows []string, errs []error) bool { return len(rows) == 5 && len(errs) == 2 })
	rows, _, _, errs := ru.snapshot()
	want := "1|a|NULL|f 2|b|NULL|f 1|a2|NULL|f 2|b|NULL|t 2|NULL|NULL|t"
	if strings.Join(rows, " ") != want {
		t.Errorf("rows %v\nwant %s", rows, want)
	}
	all := errs[0].Error() + "\n" + errs[1].Error()
	if !strings.Contains(all, "truncate") || !strings.Contains(all, `an "c" event without "after"`) {
		t.Errorf("errors %s", all)
	}
}

// TestDebeziumAvroRoundTrip: the sink's FORMAT DEBEZIUM ENCODE AVRO is
// read back by the source's.
func TestDebeziumAvroRoundTrip(t *testing.T) {
	reg := srtest.Start()
	defer reg.Close()
	addr := newTestCluster(t).ListenAddrs()[0]
	ctx := context.Background()
	c := cols(t, "id bigint, name text")
	spec := testSpec(addr, map[string]string{"schema.registry": reg.URL()})
	spec.Cols, spec.Format, spec.Encode, spec.Key, spec.AppendOnly = c, "DEBEZIUM", "AVRO", []int{0}, false
	w, err := openTestSink(t, spec).NewWriter(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rec := textBatch(t, c, []string{"1", "a"}, []string{"2", "b"}, []string{"2", "b"}, []string{"2", "c"}, []string{"1", "a"})
	ops := []stream.Op{stream.Insert, stream.Insert, stream.UpdateBefore, stream.UpdateAfter, stream.Delete}
	if err := w.Write(ctx, rec, ops); err != nil {
		t.Fatal(err)
	}
	commitEpoch(t, w, 1)
	if !strings.Contains(reg.SchemaOf(reg.Latest("out-value")), `"name":"op"`) {
		t.Fatalf("out-value: %s", reg.SchemaOf(reg.Latest("out-value")))
	}
	src := mustOpen(t, c, map[string]string{"properties.bootstrap.server": addr, "topic": "out", "schema.registry": reg.URL()}, "DEBEZIUM ENCODE AVRO")
	ru := start(t, src, nil)
	ru.waitRows(4)
	got, _, _, errs := ru.snapshot()
	sort.Strings(got)
	if want := "1|a|f 1|a|t 2|b|f 2|c|f"; strings.Join(got, " ") != want || len(errs) > 0 {
		t.Fatalf("got %v, want %s, errors %v", got, want, errs)
	}
}

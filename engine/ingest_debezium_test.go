package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKafkaTableDebezium: a kafka table with FORMAT DEBEZIUM ENCODE JSON
// applies Debezium change events, bare and schema-wrapped (semantic types
// converted: a Decimal, a MicroTimestamp, a Date), creates, snapshot
// reads, updates and deletes, with Debezium's tombstones; an event
// without "after" is skipped and counted; a view follows; the format is
// refused on a source and without a primary key.
func TestKafkaTableDebezium(t *testing.T) {
	addr, prod := kafkaCluster(t)
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, fmt.Sprintf(`CREATE TABLE dz (id int, name text, price numeric(10,2), ts timestamp, d date, PRIMARY KEY (id))
		WITH (connector = 'kafka', topic = 't', properties.bootstrap.server = '%s') FORMAT DEBEZIUM ENCODE JSON`, addr))
	mustRun(t, s, "CREATE MATERIALIZED VIEW dv AS SELECT count(*) AS n, sum(price) AS p FROM dz")
	bare := func(op, before, after string) *kgo.Record {
		return &kgo.Record{Partition: 0, Value: fmt.Appendf(nil, `{"before": %s, "after": %s, "op": %q, "ts_ms": 1700000000000, "source": {"table": "dz"}}`, before, after, op)}
	}
	// The schema form: price is a Decimal (scale 2) as base64 of the
	// unscaled big-endian integer, ts a MicroTimestamp, d a Date (days).
	const rowSchema = `{"type": "struct", "fields": [{"type": "int32", "field": "id"}, {"type": "string", "field": "name"},
		{"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "parameters": {"scale": "2"}, "field": "price"},
		{"type": "int64", "name": "io.debezium.time.MicroTimestamp", "field": "ts"},
		{"type": "int32", "name": "io.debezium.time.Date", "field": "d"}]`
	wrapped := func(op, before, after string) *kgo.Record {
		schema := fmt.Sprintf(`{"type": "struct", "fields": [%s, "field": "before"}, %s, "field": "after"}, {"type": "string", "field": "op"}]}`, rowSchema, rowSchema)
		return &kgo.Record{Partition: 1, Key: []byte(`{"schema": {"type": "struct"}, "payload": {"id": 7}}`),
			Value: fmt.Appendf(nil, `{"schema": %s, "payload": {"before": %s, "after": %s, "op": %q}}`, schema, before, after, op)}
	}
	tomb := &kgo.Record{Partition: 0, Key: []byte(`{"id": 2}`)}
	produce := func(recs ...*kgo.Record) {
		t.Helper()
		if err := prod.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	produce(
		bare("r", "null", `{"id": 1, "name": "a", "price": "1.50", "ts": "2024-01-02 03:04:05", "d": "2024-01-02"}`),
		bare("c", "null", `{"id": 2, "name": "b", "price": 2, "ts": null, "d": null}`),
		bare("u", `{"id": 1}`, `{"id": 1, "name": "a2", "price": "1.75", "ts": "2024-01-02 03:04:05", "d": "2024-01-02"}`),
		bare("d", `{"id": 2, "name": "b", "price": 2}`, "null"), tomb,
		bare("c", "null", "null"),                             // no after: skipped, counted
		&kgo.Record{Partition: 0, Value: []byte(`{"id": 3}`)}, // not an event
		// -12345.67 is 0xED2979 unscaled (two's complement), "7Sl5";
		// 1704164645123456 µs is 2024-01-02 03:04:05.123456; day 19724 is 2024-01-02.
		wrapped("c", "null", `{"id": 7, "name": "w", "price": "7Sl5", "ts": 1704164645123456, "d": 19724}`),
	)
	waitRows(t, s, "SELECT * FROM dz ORDER BY id", "1|a2|1.75|2024-01-02 03:04:05|2024-01-02", "7|w|-12345.67|2024-01-02 03:04:05.123456|2024-01-02")
	waitRows(t, s, "SELECT sum(rows), sum(bad_rows) FROM streamsql_sources WHERE source_name = 'dz'", "6|2")
	produce(wrapped("d", `{"id": 7, "name": "w", "price": "7Sl5", "ts": 0, "d": 0}`, "null"), &kgo.Record{Partition: 1, Key: []byte(`{"schema": {}, "payload": {"id": 7}}`)})
	waitRows(t, s, "SELECT id FROM dz ORDER BY id", "1")
	mustRun(t, s, "FLUSH")
	waitRows(t, s, "SELECT n, p FROM dv", "1|1.75")
	for _, q := range []string{
		"CREATE TABLE a (id int, v text) WITH (connector = 'kafka', topic = 't', properties.bootstrap.server = '" + addr + "') FORMAT DEBEZIUM ENCODE JSON",
		"CREATE SOURCE a (id int, v text) WITH (connector = 'kafka', topic = 't', properties.bootstrap.server = '" + addr + "') FORMAT DEBEZIUM ENCODE JSON",
	} {
		if _, _, err := run(t, s, q); err == nil || pgerr.CodeOf(err) == "" {
			t.Errorf("%s: %v", q, err)
		}
	}
}

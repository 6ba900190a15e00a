package e2e

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/streamsql/streamsql/connector/srtest"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// pollText polls a one-text-value query until it returns want (or 30 s).
func pollText(t *testing.T, ctx context.Context, c *pgx.Conn, q, want string) {
	t.Helper()
	var got string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) { // polling for progress
		if err := c.QueryRow(ctx, q).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got == want || time.Now().After(deadline) {
			break
		}
	}
	if got != want {
		t.Fatalf("%s:\n got %q\nwant %q", q, got, want)
	}
}

// TestKafkaAvro: through pgwire, a kafka table FORMAT PLAIN ENCODE AVRO
// (schema.registry = ...) over an in-process broker and registry reads
// what a producer wrote with hamba/avro (a bad message counted in
// streamsql_sources); an Avro sink of a view writes to a topic that a
// second Avro table reads back to the same rows; a registry that is down
// fails CREATE with 08000.
func TestKafkaAvro(t *testing.T) {
	reg := srtest.Start()
	defer reg.Close()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "m"))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	broker := kc.ListenAddrs()[0]
	const schema = `{"type":"record","name":"metric","fields":[
		{"name":"host","type":"string"},
		{"name":"cpu","type":["null","double"],"default":null},
		{"name":"mem","type":"long"},
		{"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
		{"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
		{"name":"day","type":{"type":"int","logicalType":"date"}},
		{"name":"id","type":{"type":"string","logicalType":"uuid"}}]}`
	id := reg.Register("m-value", schema)
	sch := avro.MustParse(schema)
	prod, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic("m"))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var recs []*kgo.Record
	for i := range 6 {
		var cpu any
		if i%3 != 0 {
			cpu = float64(i) / 4
		}
		body, err := avro.Marshal(sch, map[string]any{"host": fmt.Sprintf("h%d", i), "cpu": cpu, "mem": int64(i) << 33,
			"price": ratOf(int64(i)*125 - 300), "ts": time.UnixMilli(1_700_000_000_000 + int64(i)).UTC(),
			"day": time.Unix(int64(i)*86400*400, 0).UTC(), "id": fmt.Sprintf("00000000-0000-0000-0000-00000000000%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, &kgo.Record{Partition: int32(i % 2), Value: append([]byte{0, 0, 0, 0, byte(id)}, body...)})
	}
	recs = append(recs, &kgo.Record{Partition: 1, Value: []byte(`{"host": "json"}`)})
	if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	s := startServer(t, t.TempDir())
	c := s.connect(ctx)
	mustExec(t, ctx, c, "SET TimeZone = 'UTC'")
	mustExec(t, ctx, c, fmt.Sprintf(`CREATE TABLE m (host text, cpu double precision, mem bigint, price numeric(9,2),
		ts timestamptz, day date, id text) WITH (connector = 'kafka', topic = 'm', properties.bootstrap.server = '%s')
		FORMAT PLAIN ENCODE AVRO (schema.registry = '%s')`, broker, reg.URL()))
	const q = `SELECT coalesce(string_agg(concat_ws(' ', host, coalesce(cpu::text, 'null'), mem, price, ts, day, id), ',' ORDER BY host), '') FROM %s`
	want := "h0 null 0 -3.00 2023-11-14 22:13:20+00 1970-01-01 00000000-0000-0000-0000-000000000000," +
		"h1 0.25 8589934592 -1.75 2023-11-14 22:13:20.001+00 1971-02-05 00000000-0000-0000-0000-000000000001," +
		"h2 0.5 17179869184 -0.50 2023-11-14 22:13:20.002+00 1972-03-11 00000000-0000-0000-0000-000000000002," +
		"h3 null 25769803776 0.75 2023-11-14 22:13:20.003+00 1973-04-15 00000000-0000-0000-0000-000000000003," +
		"h4 1 34359738368 2.00 2023-11-14 22:13:20.004+00 1974-05-20 00000000-0000-0000-0000-000000000004," +
		"h5 1.25 42949672960 3.25 2023-11-14 22:13:20.005+00 1975-06-24 00000000-0000-0000-0000-000000000005"
	pollText(t, ctx, c, fmt.Sprintf(q, "m"), want)
	pollText(t, ctx, c, `SELECT sum(bad_rows)::text || ' ' || max(last_error) FROM streamsql_sources WHERE source_name = 'm'`,
		`1 kafka topic "m", partition 1, offset 3: not a schema-registry Avro message: first byte is 0x7b, not the magic byte 0`)

	// Out through an Avro sink, back through a second Avro table.
	mustExec(t, ctx, c, `CREATE MATERIALIZED VIEW mv AS SELECT host, cpu, mem, price, ts, day, id FROM m`)
	mustExec(t, ctx, c, fmt.Sprintf(`CREATE SINK ms FROM mv WITH (connector = 'kafka', topic = 'back',
		properties.bootstrap.server = '%s', force_append_only = 'true') FORMAT PLAIN ENCODE AVRO (schema.registry = '%s')`, broker, reg.URL()))
	mustExec(t, ctx, c, fmt.Sprintf(`CREATE TABLE back (host text, cpu double precision, mem bigint, price numeric(9,2),
		ts timestamptz, day date, id text) WITH (connector = 'kafka', topic = 'back', properties.bootstrap.server = '%s',
		scan.topic.wait = 'true', schema.registry = '%s') FORMAT PLAIN ENCODE AVRO`, broker, reg.URL()))
	pollText(t, ctx, c, fmt.Sprintf(q, "back"), want)
	if sid := reg.Latest("back-value"); !strings.Contains(reg.SchemaOf(sid), `"logicalType":"decimal","precision":9,"scale":2`) {
		t.Errorf("back-value schema %d: %s", sid, reg.SchemaOf(sid))
	}

	// A registry that does not answer: CREATE fails, naming it.
	down := srtest.Start()
	down.Close()
	_, err = c.Exec(ctx, fmt.Sprintf(`CREATE TABLE d (host text) WITH (connector = 'kafka', topic = 'm',
		properties.bootstrap.server = '%s') FORMAT PLAIN ENCODE AVRO (schema.registry = '%s')`, broker, down.URL()))
	if pe, ok := err.(*pgconn.PgError); !ok || pe.Code != "08000" || !strings.Contains(pe.Message, "schema registry") {
		t.Errorf("CREATE with the registry down: %v", err)
	}
	// Unknown options are refused by name.
	_, err = c.Exec(ctx, fmt.Sprintf(`CREATE TABLE d (host text) WITH (connector = 'kafka', topic = 'm',
		properties.bootstrap.server = '%s') FORMAT PLAIN ENCODE AVRO (schema.registry = '%s', schema.registry.user = 'x')`, broker, reg.URL()))
	if err == nil || !strings.Contains(err.Error(), `"schema.registry.user"`) {
		t.Errorf("unknown option: %v", err)
	}
}

// ratOf is cents/100 as hamba/avro's decimal value.
func ratOf(cents int64) *big.Rat { return big.NewRat(cents, 100) }

package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// TestKafkaSourceKcat: messages produced by kcat (librdkafka, a second and
// independent Kafka client) with keys, one of them not JSON, are read by a
// source with INCLUDE key and partition: the good ones arrive with their
// keys, the bad one is counted and reported with its partition and offset.
func TestKafkaSourceKcat(t *testing.T) {
	kcat := needTool(t, "kcat", "kcat")
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "k"))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	broker := kc.ListenAddrs()[0]
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	produceKcat := func(part int, lines string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, kcat, "-b", broker, "-t", "k", "-P", "-p", fmt.Sprint(part), "-K", "|")
		cmd.Stdin = strings.NewReader(lines)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kcat: %v\n%s", err, out)
		}
	}
	produceKcat(0, "a|{\"id\": 1, \"name\": \"one\"}\nb|{\"id\": 2, \"name\": \"two\"}\n")
	produceKcat(1, "c|{\"id\": 3}\nd|not json\ne|{\"id\": 5, \"name\": \"five\", \"extra\": [1, 2]}\n")

	s := startServer(t, t.TempDir())
	c := s.connect(ctx)
	mustExec(t, ctx, c, fmt.Sprintf(`CREATE SOURCE ks (id int, name text) INCLUDE key AS k, partition AS p
		WITH (connector = 'kafka', topic = 'k', properties.bootstrap.server = '%s') FORMAT JSON`, broker))
	mustExec(t, ctx, c, `CREATE MATERIALIZED VIEW kv AS SELECT id, coalesce(name, '-') AS name, encode(k, 'escape') AS k, p FROM ks`)
	want := "1 one a 0,2 two b 0,3 - c 1,5 five e 1"
	var got string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) { // polling for progress
		if err := c.QueryRow(ctx, `SELECT coalesce(string_agg(id || ' ' || name || ' ' || k || ' ' || p, ',' ORDER BY id), '') FROM kv`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got == want || time.Now().After(deadline) {
			break
		}
	}
	if got != want {
		t.Fatalf("view kv: %q, want %q", got, want)
	}
	var rowErrors int64
	var lastError string
	if err := c.QueryRow(ctx, "SELECT row_errors, coalesce(last_error, '') FROM streamsql_views WHERE viewname = 'kv'").Scan(&rowErrors, &lastError); err != nil {
		t.Fatal(err)
	}
	if rowErrors != 1 || !strings.Contains(lastError, `kafka topic "k", partition 1, offset 1: invalid JSON`) {
		t.Errorf("row_errors %d, last_error %q", rowErrors, lastError)
	}
	var bad int64
	if err := c.QueryRow(ctx, "SELECT sum(bad_rows) FROM streamsql_sources WHERE view_name = 'kv'").Scan(&bad); err != nil || bad != 1 {
		t.Errorf("bad_rows %d, %v", bad, err)
	}
}

// TestKafkaSinkKcat: Kafka in, Kafka out, with kcat (librdkafka) at both
// ends and a broker process (`streamsqld kafka-dev`). kcat produces JSON
// rows; a source, a view and an exactly-once Kafka sink (FORMAT JSON)
// write them to a topic that kcat reads as a read_committed consumer, with
// every value as the encoders write it (numerics as numbers, timestamps as
// text, NULL as null, quotes escaped); a second source reads that topic
// back to the same values. An UPSERT sink of a grouped view writes keys
// (kcat -K) and a DEBEZIUM sink the envelope.
func TestKafkaSinkKcat(t *testing.T) {
	kcat := needTool(t, "kcat", "kcat")
	broker := startKafkaDev(t, "--topic", "in:2")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, kcat, append([]string{"-b", broker}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("kcat %v: %v\n%s", args, err, errb.String())
		}
		return out.String()
	}
	run(`{"id": 1, "name": "plain", "price": 12.50, "ts": "2024-01-01T00:00:01Z", "ok": true, "f": 0.1}
{"id": 2, "name": "with \"quotes\", a comma\nand a newline", "price": -0.001, "ts": "2024-06-30 23:59:59.5+02", "ok": false, "f": 1e300}
`, "-t", "in", "-P", "-p", "0")
	run(`{"id": 3, "name": null, "price": null, "ts": null, "ok": null, "f": null}
{"id": 4, "name": "ünïcode ✓", "price": 100000000000000000000.5, "ts": "1999-12-31T23:59:59.999999Z", "ok": true, "f": -2.5}
`, "-t", "in", "-P", "-p", "1")

	s := startServer(t, t.TempDir())
	c := s.connect(ctx)
	mustExec(t, ctx, c, "SET TimeZone = 'UTC'")
	const cols = "(id int, name text, price numeric, ts timestamptz, ok bool, f float8)"
	mustExec(t, ctx, c, fmt.Sprintf(`CREATE SOURCE src %s WITH (connector = 'kafka', topic = 'in',
		properties.bootstrap.server = '%s') FORMAT JSON`, cols, broker))
	mustExec(t, ctx, c, `CREATE MATERIALIZED VIEW v AS SELECT * FROM src`)
	mustExec(t, ctx, c, fmt.Sprintf(`CREATE SINK out FROM v WITH (connector = 'kafka', topic = 'out',
		properties.bootstrap.server = '%s') FORMAT JSON`, broker))
	mustExec(t, ctx, c, `CREATE MATERIALIZED VIEW per_ok AS SELECT ok, count(*) AS n FROM src GROUP BY ok`)
	mustExec(t, ctx, c, fmt.Sprintf(`CREATE SINK up FROM per_ok WITH (connector = 'kafka', topic = 'up',
		properties.bootstrap.server = '%s', primary_key = 'ok') FORMAT UPSERT ENCODE JSON`, broker))
	mustExec(t, ctx, c, fmt.Sprintf(`CREATE SINK dbz AS SELECT id, name FROM src WHERE id = 1 WITH (connector = 'kafka',
		topic = 'dbz', properties.bootstrap.server = '%s') FORMAT DEBEZIUM ENCODE JSON`, broker))
	kafkaWaitCount(t, ctx, c, "SELECT count(*) FROM v", 4)
	mustExec(t, ctx, c, "FLUSH") // the sinks commit

	consume := func(topic string, args ...string) []string {
		out := run("", append([]string{"-C", "-t", topic, "-X", "isolation.level=read_committed", "-e", "-o", "beginning", "-q"}, args...)...)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		sort.Strings(lines)
		return lines
	}
	want := []string{
		`{"id":1,"name":"plain","price":12.50,"ts":"2024-01-01 00:00:01+00","ok":true,"f":0.1}`,
		`{"id":2,"name":"with \"quotes\", a comma\nand a newline","price":-0.001,"ts":"2024-06-30 21:59:59.5+00","ok":false,"f":1e+300}`,
		`{"id":3,"name":null,"price":null,"ts":null,"ok":null,"f":null}`,
		`{"id":4,"name":"ünïcode ✓","price":100000000000000000000.5,"ts":"1999-12-31 23:59:59.999999+00","ok":true,"f":-2.5}`,
	}
	if got := consume("out"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("kcat read from the sink's topic:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// UPSERT: the last record of each key is the group's count.
	upsert := run("", "-C", "-t", "up", "-X", "isolation.level=read_committed", "-e", "-o", "beginning", "-q", "-K", "|")
	final := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(upsert), "\n") {
		k, v, _ := strings.Cut(l, "|")
		final[k] = v
	}
	wantUp := map[string]string{`{"ok":true}`: `{"ok":true,"n":2}`, `{"ok":false}`: `{"ok":false,"n":1}`, `{"ok":null}`: `{"ok":null,"n":1}`}
	if fmt.Sprint(final) != fmt.Sprint(wantUp) {
		t.Errorf("upsert topic, last value per key: %v, want %v", final, wantUp)
	}
	if got := consume("dbz"); len(got) != 1 || !strings.HasPrefix(got[0], `{"before":null,"after":{"id":1,"name":"plain"},"op":"c","ts_ms":`) {
		t.Errorf("debezium topic: %q", got)
	}

	// The sink's topic read back by a source: the same values.
	mustExec(t, ctx, c, fmt.Sprintf(`CREATE SOURCE back %s WITH (connector = 'kafka', topic = 'out',
		properties.bootstrap.server = '%s') FORMAT JSON`, cols, broker))
	mustExec(t, ctx, c, `CREATE MATERIALIZED VIEW vb AS SELECT * FROM back`)
	kafkaWaitCount(t, ctx, c, "SELECT count(*) FROM vb", 4)
	var diff int64
	if err := c.QueryRow(ctx, `SELECT count(*) FROM ((SELECT * FROM v EXCEPT ALL SELECT * FROM vb) UNION ALL (SELECT * FROM vb EXCEPT ALL SELECT * FROM v)) d`).Scan(&diff); err != nil {
		t.Fatal(err)
	}
	if diff != 0 {
		t.Errorf("%d rows differ between the view and its sink's topic read back", diff)
	}
}

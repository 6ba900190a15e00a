package e2e

import (
	"context"
	"fmt"
	"os/exec"
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
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat is not installed (Debian package kcat)")
	}
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

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kafkaTableCounts returns "rows distinct-(partition,offset) sum" of kt.
func kafkaTableCounts(t *testing.T, ctx context.Context, c *pgx.Conn) string {
	t.Helper()
	var n, d, s int64
	if err := c.QueryRow(ctx, `SELECT count(*), count(DISTINCT p::bigint * 1000000000 + o), coalesce(sum(id), 0) FROM kt`).Scan(&n, &d, &s); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d %d %d", n, d, s)
}

// TestKafkaTableCrash: a kafka table (an in-process broker, 4 partitions)
// ingests while streamsqld is killed (kill -9) three times, each time
// while a chunk of messages is being written; after the last restart the
// table holds every message exactly once (no duplicate partition/offset,
// none missing) and a view over it agrees.
func TestKafkaTableCrash(t *testing.T) {
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(kafkaParts, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	broker := kc.ListenAddrs()[0]
	prod, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic("orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	dir := t.TempDir()
	s := startServer(t, dir)
	c := s.connect(ctx)
	mustExec(t, ctx, c, fmt.Sprintf(`CREATE TABLE kt (id bigint, item text) INCLUDE partition AS p, offset AS o
		WITH (connector = 'kafka', topic = 'orders', properties.bootstrap.server = '%s') FORMAT JSON`, broker))
	mustExec(t, ctx, c, `CREATE MATERIALIZED VIEW kc AS SELECT count(*) AS n, sum(id) AS s FROM kt`)
	// The same topic into an upsert table keyed by id (every id once).
	mustExec(t, ctx, c, fmt.Sprintf(`CREATE TABLE ku (id bigint, item text, PRIMARY KEY (id))
		WITH (connector = 'kafka', topic = 'orders', properties.bootstrap.server = '%s') FORMAT UPSERT ENCODE JSON`, broker))
	next := 0
	produce := func(n int) {
		recs := make([]*kgo.Record, n)
		for i := range recs {
			recs[i] = &kgo.Record{Partition: int32(next % kafkaParts), Value: fmt.Appendf(nil, `{"id": %d, "item": "i%d"}`, next, next)}
			next++
		}
		if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	want := func() string {
		return fmt.Sprintf("%d %d %d", next, next, next*(next-1)/2)
	}
	wait := func() {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		var got string
		for time.Now().Before(deadline) {
			if got = kafkaTableCounts(t, ctx, c); got == want() {
				return
			}
			time.Sleep(20 * time.Millisecond) // polling for progress, not for correctness
		}
		t.Fatalf("kt: %s, want %s", got, want())
	}
	const chunk, rounds = 20000, 3
	midway := 0 // kills that came with part of a chunk written
	for r := 0; r < rounds; r++ {
		produce(chunk)
		// Kill once the ingest is part way through the chunk.
		deadline := time.Now().Add(30 * time.Second)
		for {
			var n int64
			if err := c.QueryRow(ctx, "SELECT count(*) FROM kt").Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n > int64(next-chunk) || time.Now().After(deadline) {
				if n < int64(next) {
					midway++
				}
				t.Logf("round %d: killed with %d of %d messages in the table", r, n, next)
				break
			}
			time.Sleep(time.Millisecond) // polling for progress
		}
		c.Close(ctx)
		s.kill()
		s = startServer(t, dir)
		c = s.connect(ctx)
	}
	wait()
	var un, us int64
	deadline := time.Now().Add(60 * time.Second)
	for {
		if err := c.QueryRow(ctx, "SELECT count(*), coalesce(sum(id), 0) FROM ku").Scan(&un, &us); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprintf("%d %d %d", un, un, us) == want() || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond) // polling for progress
	}
	if got := fmt.Sprintf("%d %d %d", un, un, us); got != want() {
		t.Errorf("upsert table ku: %s, want %s", got, want())
	}
	if midway == 0 {
		t.Errorf("no kill came while a chunk was being written")
	}
	var n, sum int64
	deadline = time.Now().Add(30 * time.Second)
	for {
		mustExec(t, ctx, c, "FLUSH")
		if err := c.QueryRow(ctx, "SELECT n, s FROM kc").Scan(&n, &sum); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprintf("%d %d %d", n, n, sum) == want() || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := fmt.Sprintf("%d %d %d", n, n, sum); got != want() {
		t.Errorf("view kc: %s, want %s", got, want())
	}
	var src string
	var rows int64
	if err := c.QueryRow(ctx, "SELECT min(source_name), count(*) FROM streamsql_sources WHERE source_name = 'kt'").Scan(&src, &rows); err != nil {
		t.Fatal(err)
	}
	if src != "kt" || rows != kafkaParts {
		t.Errorf("streamsql_sources: %q %d rows, want kt %d", src, rows, kafkaParts)
	}
	if out := s.out.String(); strings.Contains(out, "ingest failed") {
		t.Errorf("the ingest failed:\n%s", out)
	}
}

package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kafkaParts is the number of partitions of the e2e topic.
const kafkaParts = 4

// metric is one message of the e2e topic: partition p's i-th, at
// 2024-01-01 00:00:00 + sec seconds.
type metric struct {
	p   int32
	sec int64
	v   int64
}

// kafkaMetrics are the messages with times in [from, to) seconds:
// partition p has one every p+1 seconds (so the partitions run at
// different rates and a watermark over their interleaving would make the
// slow ones late), value sec*7 % 11.
func kafkaMetrics(from, to int64) []metric {
	var ms []metric
	for p := int32(0); p < kafkaParts; p++ {
		step := int64(p) + 1
		for sec := (from + step - 1) / step * step; sec < to; sec += step {
			ms = append(ms, metric{p, sec, sec * 7 % 11})
		}
	}
	return ms
}

func produceMetrics(t *testing.T, cl *kgo.Client, ms []metric) {
	t.Helper()
	recs := make([]*kgo.Record, len(ms))
	for i, m := range ms {
		ts := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(m.sec) * time.Second)
		recs[i] = &kgo.Record{Partition: m.p, Value: []byte(fmt.Sprintf(`{"host": "h%d", "v": %d, "ts": "%s"}`,
			m.p, m.v, ts.Format("2006-01-02 15:04:05Z07:00")))}
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// expectedWindows is what the e2e view holds once ms are read and every
// window before close seconds is closed: "window host count sum" lines.
func expectedWindows(ms []metric, close int64) []string {
	type key struct {
		w    int64
		host string
	}
	agg := map[key][2]int64{}
	for _, m := range ms {
		w := m.sec / 10 * 10
		if w+10 > close {
			continue
		}
		k := key{w, fmt.Sprintf("h%d", m.p)}
		a := agg[k]
		agg[k] = [2]int64{a[0] + 1, a[1] + m.v}
	}
	var out []string
	for k, a := range agg {
		out = append(out, fmt.Sprintf("%d %s %d %d", k.w, k.host, a[0], a[1]))
	}
	sort.Strings(out)
	return out
}

func kafkaWindows(t *testing.T, ctx context.Context, c *pgx.Conn) []string {
	t.Helper()
	rows, err := c.Query(ctx, "SELECT extract(epoch FROM window_start - TIMESTAMPTZ '2024-01-01 00:00:00+00')::bigint, host, n, s FROM kw")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		var w, n, s int64
		var host string
		if err := rows.Scan(&w, &host, &n, &s); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%d %s %d %d", w, host, n, s))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// waitWindows polls the view until it holds want (the reader runs on
// its own; polling waits for it, the comparison decides).
func waitWindows(t *testing.T, ctx context.Context, c *pgx.Conn, want []string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var got []string
	for time.Now().Before(deadline) {
		if got = kafkaWindows(t, ctx, c); strings.Join(got, "\n") == strings.Join(want, "\n") {
			return
		}
		time.Sleep(20 * time.Millisecond) // polling for progress, not for correctness
	}
	t.Fatalf("view kw:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
}

const kafkaDDL = `CREATE SOURCE metrics (host text, v bigint, ts timestamptz, WATERMARK FOR ts AS ts)
  INCLUDE partition AS part, offset
  WITH (connector = 'kafka', topic = 'metrics', properties.bootstrap.server = '%s',
        scan.partition.discovery.interval = '100ms') FORMAT PLAIN ENCODE JSON`

const kafkaView = `CREATE MATERIALIZED VIEW kw AS
  SELECT window_start, host, count(*) AS n, sum(v) AS s
  FROM TUMBLE(metrics, ts, INTERVAL '10 seconds') GROUP BY window_start, host EMIT ON WINDOW CLOSE`

// TestKafkaSourceCrash: metrics on 4 partitions of a Kafka topic (an
// in-process broker) → a TUMBLE view EMIT ON WINDOW CLOSE; streamsqld is
// killed (kill -9) after a checkpoint while it reads, restarted, and reads
// on, three times: the view is exactly the windows computed here (every
// message counted once, none late although the partitions run at
// different rates), as a run without a crash has them.
func TestKafkaSourceCrash(t *testing.T) {
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(kafkaParts, "metrics"))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	broker := kc.ListenAddrs()[0]
	prod, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic("metrics"))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	dir := t.TempDir()
	s := startServer(t, dir)
	c := s.connect(ctx)
	mustExec(t, ctx, c, fmt.Sprintf(kafkaDDL, broker))
	mustExec(t, ctx, c, kafkaView)
	mustExec(t, ctx, c, `CREATE MATERIALIZED VIEW kp AS SELECT part, count(*) AS n, max("_kafka_offset") AS o FROM metrics GROUP BY part`)
	_, err = c.Exec(ctx, strings.NewReplacer("'metrics'", "'no_such_topic'", "SOURCE metrics", "SOURCE m2").Replace(fmt.Sprintf(kafkaDDL, broker)))
	wantSQLState(t, err, "42704", `kafka topic "no_such_topic" does not exist`)

	// Rounds: read a chunk to its end, checkpoint, produce the next chunk
	// and kill -9 while it is read; restart.
	var all []metric
	const chunk, rounds = 300, 3
	for r := int64(0); r < rounds; r++ {
		ms := kafkaMetrics(2*r*chunk, (2*r+1)*chunk)
		produceMetrics(t, prod, ms)
		all = append(all, ms...)
		waitWindows(t, ctx, c, expectedWindows(all, (2*r+1)*chunk-kafkaParts))
		mustExec(t, ctx, c, "CHECKPOINT")
		ms = kafkaMetrics((2*r+1)*chunk, (2*r+2)*chunk)
		produceMetrics(t, prod, ms)
		all = append(all, ms...)
		c.Close(ctx)
		s.kill() // while it reads the chunk, or just after
		s = startServer(t, dir)
		c = s.connect(ctx)
	}
	waitWindows(t, ctx, c, expectedWindows(all, 2*rounds*chunk-kafkaParts))
	var late int64
	if err := c.QueryRow(ctx, "SELECT coalesce(sum(late_rows), 0) FROM streamsql_views").Scan(&late); err != nil {
		t.Fatal(err)
	}
	if late != 0 {
		t.Errorf("%d late rows", late)
	}
	// Every view resumes: the recovery logs "rebuilding from its inputs"
	// for a view it could not resume (before the view is started).
	if out := s.out.String(); strings.Contains(out, "rebuilding from its inputs") {
		t.Errorf("a view did not resume from the checkpoint:\n%s", out)
	}
	// The INCLUDE columns: every partition's messages, once each. kp has its
	// own reader, which may still be behind kw's: poll until it is at the
	// end (it never goes past it: a count above the want fails at once).
	count := map[int32]int64{}
	for _, m := range all {
		count[m.p]++
	}
	var got, want []string
	for p := int32(0); p < kafkaParts; p++ {
		want = append(want, fmt.Sprintf("%d %d %d", p, count[p], count[p]-1))
	}
	for deadline := time.Now().Add(60 * time.Second); ; {
		rows, err := c.Query(ctx, "SELECT part, n, o FROM kp ORDER BY part")
		if err != nil {
			t.Fatal(err)
		}
		got = got[:0]
		over := false
		for rows.Next() {
			var p, n, o int64
			if err := rows.Scan(&p, &n, &o); err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%d %d %d", p, n, o))
			over = over || n > count[int32(p)]
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, ",") == strings.Join(want, ",") {
			break
		}
		if over || time.Now().After(deadline) {
			t.Fatalf("per partition (partition, messages, last offset): %v, want %v", got, want)
		}
		time.Sleep(20 * time.Millisecond) // polling for progress, not for correctness
	}
	// streamsql_sources: the view's reader, each partition read to its end.
	want = want[:0]
	for p := int32(0); p < kafkaParts; p++ {
		want = append(want, fmt.Sprintf("metrics kw %d %d 0 running true false", p, count[p]))
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		got = got[:0]
		rows, err := c.Query(ctx, `SELECT source_name, view_name, partition, "offset", lag, status, watermark IS NOT NULL, idle
			FROM streamsql_sources WHERE view_name = 'kw' ORDER BY partition`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var src, view, status string
			var p, off, lag int64
			var hasWM, idle bool
			if err := rows.Scan(&src, &view, &p, &off, &lag, &status, &hasWM, &idle); err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%s %s %d %d %d %s %v %v", src, view, p, off, lag, status, hasWM, idle))
		}
		if strings.Join(got, ",") == strings.Join(want, ",") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("streamsql_sources:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		time.Sleep(20 * time.Millisecond) // polling for the next barrier, not for correctness
	}
}

package e2e

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The crash test of Kafka in → streamsql → Kafka out (issue 14): metrics
// on 4 partitions of a topic on a broker process (`streamsqld kafka-dev`,
// which survives streamsqld's kill -9) → a TUMBLE view EMIT ON WINDOW
// CLOSE → an exactly-once Kafka sink. A producer keeps producing while
// streamsqld is killed at random moments over several rounds; along the
// way a partition is added, one partition goes idle for good (idle_timeout
// lets the windows close without it), and a transactional producer writes
// rows and aborts. At the end a read_committed consumer of the sink's
// topic must see every window exactly once with the values computed here
// from what was produced.

// crashMetric is one message: host h<p> on partition p at second sec
// (after 2024-01-01 00:00:00 UTC), value v.
type crashMetric struct {
	p   int32
	sec int64
	v   int64
}

// crashChunk is the messages of chunk c (seconds [30c, 30c+20)) on the
// partitions parts: partition p has one every p%3+1 seconds. The 10 s
// between chunks are slack: a pause of the producer longer than
// idle_timeout makes the partitions idle, and their watermarks then move
// with the clock (docs/watermarks.md), by less than 10 s here.
func crashChunk(c int64, parts []int32) []crashMetric {
	var ms []crashMetric
	for _, p := range parts {
		step := int64(p)%3 + 1
		for sec := c * 30; sec < c*30+20; sec++ {
			if sec%step == 0 {
				ms = append(ms, crashMetric{p, sec, (sec*7 + int64(p)) % 11})
			}
		}
	}
	return ms
}

func crashRecords(ms []crashMetric, host func(p int32) string) []*kgo.Record {
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	recs := make([]*kgo.Record, len(ms))
	for i, m := range ms {
		ts := base.Add(time.Duration(m.sec) * time.Second)
		recs[i] = &kgo.Record{Topic: "metrics", Partition: m.p,
			Value: []byte(fmt.Sprintf(`{"host": "%s", "v": %d, "ts": "%s"}`, host(m.p), m.v, ts.Format(time.RFC3339)))}
	}
	return recs
}

func hostOf(p int32) string { return fmt.Sprintf("h%d", p) }

// crashExpected is every window (start second, host, count, sum) of ms
// that ends at or before close seconds, sorted.
func crashExpected(ms []crashMetric, close int64) []string {
	var as []metric
	for _, m := range ms {
		as = append(as, metric{m.p, m.sec, m.v})
	}
	return expectedWindows(as, close)
}

func TestKafkaSinkCrash(t *testing.T) {
	broker := startKafkaDev(t, "--topic", "metrics:4")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	prod, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { prod.Close() }()
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewSource(seed))
	t.Logf("seed %d", seed)

	var mu sync.Mutex
	var produced []crashMetric
	produce := func(ms []crashMetric) {
		if err := prod.ProduceSync(ctx, crashRecords(ms, hostOf)...).FirstErr(); err != nil {
			t.Error(err)
			return
		}
		mu.Lock()
		produced = append(produced, ms...)
		mu.Unlock()
	}
	// Partition 3 gets chunk 0 only: then it is idle for good, and
	// idle_timeout lets the windows close without it.
	produce(crashChunk(0, []int32{0, 1, 2, 3}))

	dir := t.TempDir()
	flags := []string{"--checkpoint-interval", "150ms", "--barrier-interval", "50ms"}
	s := startServer(t, dir, flags...)
	c := s.connect(ctx)
	mustExec(t, ctx, c, fmt.Sprintf(`CREATE SOURCE metrics (host text, v bigint, ts timestamptz,
		WATERMARK FOR ts AS ts WITH (idle_timeout = '1s'))
		WITH (connector = 'kafka', topic = 'metrics', properties.bootstrap.server = '%s',
		      scan.partition.discovery.interval = '100ms') FORMAT JSON`, broker))
	mustExec(t, ctx, c, kafkaView)
	mustExec(t, ctx, c, fmt.Sprintf(`CREATE SINK out FROM kw
		WITH (connector = 'kafka', topic = 'windows', properties.bootstrap.server = '%s',
		      sink.topic.partitions = '3') FORMAT JSON`, broker))

	// producer produces chunks from..to-1 on parts at a steady pace (a
	// pause longer than idle_timeout makes partitions idle: see
	// crashChunk), and a transactional producer's rows (host "aborted")
	// that it aborts after chunk abortAt.
	producer := func(from, to int64, parts []int32, abortAt int64) chan struct{} {
		done := make(chan struct{})
		go func() {
			defer close(done)
			for ch := from; ch < to && ctx.Err() == nil; ch++ {
				produce(crashChunk(ch, parts))
				if ch == abortAt {
					abortedRows(t, ctx, broker, crashChunk(ch, parts))
				}
				time.Sleep(60 * time.Millisecond) // the pace of production, so that kills fall in it
			}
		}()
		return done
	}
	kills := 0
	// killWhile kills streamsqld at random moments while the producer
	// runs, at least atLeast times.
	killWhile := func(done chan struct{}, atLeast int) {
		for n := 0; ; n++ {
			select {
			case <-done:
				if n >= atLeast {
					return
				}
			default:
			}
			// A random moment to kill at (what is slept for is the
			// moment, not a condition the test waits for).
			time.Sleep(time.Duration(300+rng.Intn(1500)) * time.Millisecond)
			c.Close(ctx)
			s.kill()
			kills++
			s = startServer(t, dir, flags...)
			c = s.connect(ctx)
		}
	}
	// sourcePoll polls streamsql_sources (for kw's reader) until cond
	// holds.
	sourcePoll := func(what, cond string) {
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) { // polling for progress
			var ok bool
			if err := c.QueryRow(ctx, "SELECT coalesce("+cond+", false) FROM streamsql_sources WHERE view_name = 'kw'").Scan(&ok); err != nil {
				t.Fatal(err)
			}
			if ok {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the reader did not %s", what)
			}
		}
	}

	// Round 1: chunks 1..39 on partitions 0-2 (3 is idle) while
	// streamsqld is killed.
	killWhile(producer(1, 40, []int32{0, 1, 2}, 5), 3)

	// A partition added while running. The reader finds it (empty: it is
	// idle after idle_timeout), and a first row on each of 0-2 and 4 at
	// the same time wakes them all before the producer goes on: else a
	// row of 4 read before those of the others would move the watermark
	// past theirs (a partition idle for idle_timeout holds nothing back),
	// and make them late.
	if _, err := kadm.NewClient(prod).CreatePartitions(ctx, 1, "metrics"); err != nil {
		t.Fatal(err)
	}
	prod.Close() // a new client: the old one's metadata knows 4 partitions
	if prod, err = kgo.NewClient(kgo.SeedBrokers(broker), kgo.RecordPartitioner(kgo.ManualPartitioner())); err != nil {
		t.Fatal(err)
	}
	sourcePoll("find partition 4", "bool_or(partition = 4)")
	live := []int32{0, 1, 2, 4}
	var wake []crashMetric
	for _, p := range live {
		wake = append(wake, crashMetric{p, 41 * 30, 1})
	}
	produce(wake)
	sourcePoll("read the first row of partition 4", `bool_and(NOT idle OR partition = 3) AND bool_or(partition = 4 AND "offset" > 0)`)

	// Round 2: chunks 41..79 on partitions 0-2 and 4 while it is killed.
	killWhile(producer(41, 80, live, 60), 3)

	// The end: a row far in the future on every live partition closes
	// every window; wait for the view to have them all, FLUSH (the
	// sink commits), and read the sink's topic.
	const far = 1_000_000
	produce([]crashMetric{{0, far, 0}, {1, far, 0}, {2, far, 0}, {4, far, 0}})
	mu.Lock()
	want := crashExpected(produced, far)
	mu.Unlock()
	if !kafkaWaitCount(t, ctx, c, "SELECT count(*) FROM kw", int64(len(want))) {
		var late int64
		c.QueryRow(ctx, "SELECT coalesce(sum(late_rows), 0) FROM streamsql_views").Scan(&late)
		t.Fatalf("view kw after %d kills (%d late rows):\n%s", kills, late, kafkaDiff(kafkaWindows(t, ctx, c), want))
	}
	mustExec(t, ctx, c, "FLUSH")
	var committed bool
	var status string
	if err := c.QueryRow(ctx, "SELECT committed_epoch IS NOT NULL, status FROM streamsql_sinks WHERE sink_name = 'out'").Scan(&committed, &status); err != nil {
		t.Fatal(err)
	}
	if !committed || status != "running" {
		t.Errorf("streamsql_sinks: committed_epoch set %v, status %q", committed, status)
	}
	got := sinkWindows(t, kafkaReadCommitted(t, ctx, broker, "windows"))
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("after %d kills, the sink's topic has %d windows, want %d:\n%s", kills, len(got), len(want), kafkaDiff(got, want))
	}
	t.Logf("%d kills, %d messages, %d windows exactly once", kills, len(produced), len(want))
}

// abortedRows writes ms with host "aborted" in a transaction and aborts
// it: a read_committed source never reads them.
func abortedRows(t *testing.T, ctx context.Context, broker string, ms []crashMetric) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.TransactionalID(fmt.Sprintf("aborter-%d", time.Now().UnixNano())))
	if err != nil {
		t.Error(err)
		return
	}
	defer cl.Close()
	if err := cl.BeginTransaction(); err != nil {
		t.Error(err)
		return
	}
	if err := cl.ProduceSync(ctx, crashRecords(ms, func(int32) string { return "aborted" })...).FirstErr(); err != nil {
		t.Error(err)
	}
	if err := cl.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Error(err)
	}
}

// kafkaWaitCount polls query (a count) until it returns want (true), or gives
// up after 30 s (false).
func kafkaWaitCount(t *testing.T, ctx context.Context, c *pgx.Conn, query string, want int64) bool {
	t.Helper()
	var n int64
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) { // polling for progress
		if err := c.QueryRow(ctx, query).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == want {
			return true
		}
		if time.Now().After(deadline) {
			t.Logf("%s: %d, want %d", query, n, want)
			return false
		}
	}
}

// kafkaDiff shows what got lacks and what it has too many of.
func kafkaDiff(got, want []string) string {
	count := map[string]int{}
	for _, w := range want {
		count[w]++
	}
	for _, g := range got {
		count[g]--
	}
	var b strings.Builder
	n := 0
	for k, v := range count {
		if v != 0 && n < 20 {
			fmt.Fprintf(&b, "%+d %s\n", -v, k)
			n++
		}
	}
	return b.String()
}

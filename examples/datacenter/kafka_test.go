package datacenter

import (
	"bufio"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamsql/streamsql/tests/harness"
)

// TestDatacenterKafka runs kafka.sql against an in-process Kafka broker
// (franz-go's kfake): metrics.jsonl is produced into the topic metrics
// (2 partitions, keyed by host), and the anomalies and silent hosts must
// arrive, exactly once, in the sinks' topics read as read_committed.
func TestDatacenterKafka(t *testing.T) {
	datacenterKafka(t, false)
}

// TestDatacenterKafkaUnkeyed produces the messages without keys as kcat -l
// does, so that the partitions hold different spans of time: partition 1
// the first 47 messages (to 00:00:38), partition 0 the rest (to 00:02:58).
// Read by two readers (streaming_parallelism 2), the reader of partition 1
// goes idle after idle_timeout and must not hold back the other: one move
// of the clock past idle_timeout closes every window, as with one reader.
func TestDatacenterKafkaUnkeyed(t *testing.T) {
	datacenterKafka(t, true)
}

func datacenterKafka(t *testing.T, unkeyed bool) {
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "metrics"))
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	broker := kc.ListenAddrs()[0]
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	opts := []kgo.Opt{kgo.SeedBrokers(broker), kgo.DefaultProduceTopic("metrics")}
	if unkeyed {
		opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	}
	prod, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	f, err := os.Open("metrics.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []*kgo.Record
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := sc.Text()
		host := line[strings.Index(line, `"host":"`)+8:]
		host = host[:strings.IndexByte(host, '"')]
		r := &kgo.Record{Key: []byte(host), Value: []byte(line)}
		if unkeyed {
			r.Key = nil
			if len(recs) >= 47 {
				r.Partition = 0
			} else {
				r.Partition = 1
			}
		}
		recs = append(recs, r)
	}
	if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	s := harness.Start(t, t.TempDir())
	c, err := pgx.Connect(ctx, s.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if unkeyed {
		if _, err := c.Exec(ctx, "SET streaming_parallelism = 2"); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range statements(t, "kafka.sql") {
		q = strings.ReplaceAll(q, ":'broker'", "'"+broker+"'") // what psql -v broker=... does
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// The reader runs on its own: end epochs until every message reached
	// the views (FLUSH waits for an epoch, so this does not spin), then
	// move the clock past idle_timeout to close the last windows, and
	// FLUSH again so that the sinks commit.
	for {
		if _, err := c.Exec(ctx, "FLUSH"); err != nil {
			t.Fatal(err)
		}
		got := rows(t, ctx, c, "SELECT rows_in FROM streamsql_views WHERE viewname = 'heartbeats'")
		if len(got) == 1 && got[0][0] == itoa(len(recs)) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("heartbeats read %v of %d rows", got, len(recs))
		}
	}
	for _, q := range []string{"ADVANCE CLOCK BY INTERVAL '10 seconds'", "FLUSH"} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}

	// The topics, read_committed: the last value of each key.
	anomalies := readTopic(t, ctx, broker, "anomalies")
	want := rows(t, ctx, c, "SELECT count(*) FROM cpu_anomalies")[0][0]
	if itoa(len(anomalies)) != want || want == "0" {
		t.Errorf("anomalies topic: %d keys, the view has %s rows: %v", len(anomalies), want, anomalies)
	}
	for k, v := range anomalies {
		if !strings.Contains(k, `"host":"web-3"`) || !strings.Contains(v, `"avg_cpu":`) {
			t.Errorf("unexpected anomaly %s => %s", k, v)
		}
	}
	silent := readTopic(t, ctx, broker, "silent_hosts")
	if len(silent) != 1 || !strings.Contains(silent[`{"host":"web-4"}`], `"last_seen":"2024-01-01 00:01:00+00"`) {
		t.Errorf("silent_hosts topic: %v, want web-4 last seen 00:01:00", silent)
	}
}

// readTopic reads topic as a read_committed consumer up to its end (a
// marker record appended to each partition outside any transaction) and
// returns the last value of each key (tombstones delete).
func readTopic(t *testing.T, ctx context.Context, broker, topic string) map[string]string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.ConsumeTopics(topic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	td, err := kadm.NewClient(cl).ListTopics(ctx, topic)
	if err != nil || td.Error() != nil {
		t.Fatalf("list topic %s: %v %v", topic, err, td.Error())
	}
	parts := int32(len(td[topic].Partitions))
	for p := int32(0); p < parts; p++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: p, Key: []byte("marker")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	out := map[string]string{}
	for seen := int32(0); seen < parts; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s: %v", topic, ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) {
			switch {
			case string(r.Key) == "marker":
				seen++
			case r.Value == nil:
				delete(out, string(r.Key))
			default:
				out[string(r.Key)] = string(r.Value)
			}
		})
	}
	return out
}

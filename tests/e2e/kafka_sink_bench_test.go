package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkKafkaSink: Kafka in, Kafka out. benchKafkaMessages small JSON
// metrics messages already in a 4-partition topic of an in-process broker
// (its CPU time is this process's, so apart) go through a streamsqld
// process:
//
//   - tumble-blackhole: a TUMBLE aggregation EMIT ON WINDOW CLOSE (100
//     hosts, 10 s windows: 4,900 closed windows) into a blackhole sink;
//   - tumble-kafka-eo: the same into an exactly-once Kafka sink;
//   - copy-kafka-eo / copy-kafka-alo: every message as it is (SELECT *)
//     into an exactly-once / at-least-once Kafka sink, which measures the
//     sink's own throughput and what exactly-once costs.
//
// msgs/s is from CREATE SINK until the sink shows its last row committed
// (streamsql_sinks.rows, polled: benchPollWait); engine-cpu-s is
// streamsqld's CPU time over that span, franz-go's client included;
// engine-minflt its minor page faults (memory touched for the first time).
func BenchmarkKafkaSink(b *testing.B) {
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, "metrics"))
	if err != nil {
		b.Fatal(err)
	}
	defer kc.Close()
	broker := kc.ListenAddrs()[0]
	prod, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.DefaultProduceTopic("metrics"), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range benchKafkaMessages {
		ts := t0.Add(time.Duration(i) * time.Millisecond)
		prod.Produce(ctx, &kgo.Record{Value: fmt.Appendf(nil, `{"host":"host-%d","cpu":%d.5,"mem":%d,"ts":"%s"}`,
			i%100, i%100, i%4096, ts.Format("2006-01-02 15:04:05.000Z07:00"))}, nil)
	}
	if err := prod.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	prod.Close()
	const tumble = `SELECT window_start, host, count(*) AS n, avg(cpu) AS cpu, max(mem) AS mem
		FROM TUMBLE(metrics, ts, INTERVAL '10 seconds') GROUP BY window_start, host`
	kafka := func(topic, guarantee string) string {
		return fmt.Sprintf(`connector = 'kafka', topic = '%s', properties.bootstrap.server = '%s', sink.delivery-guarantee = '%s'`, topic, broker, guarantee)
	}
	// One message a millisecond of event time, 100 hosts: 10-second windows
	// of 1,000 messages a host, all closed but the last.
	closed := int64(benchKafkaMessages/10_000-1) * 100
	cases := []struct {
		name string
		ddl  []string // before the clock starts
		sink string   // CREATE SINK s ...
		rows int64    // committed rows at the end
	}{
		{"tumble-blackhole", []string{"CREATE MATERIALIZED VIEW w AS " + tumble + " EMIT ON WINDOW CLOSE"},
			"CREATE SINK s FROM w WITH (connector = 'blackhole') FORMAT JSON", closed},
		{"tumble-kafka-eo", []string{"CREATE MATERIALIZED VIEW w AS " + tumble + " EMIT ON WINDOW CLOSE"},
			"CREATE SINK s FROM w WITH (" + kafka("out-tumble", "exactly-once") + ") FORMAT JSON", closed},
		{"copy-kafka-eo", nil, "CREATE SINK s AS SELECT * FROM metrics WITH (" + kafka("out-copy-eo", "exactly-once") + ") FORMAT JSON", int64(benchKafkaMessages)},
		{"copy-kafka-alo", nil, "CREATE SINK s AS SELECT * FROM metrics WITH (" + kafka("out-copy-alo", "at-least-once") + ") FORMAT JSON", int64(benchKafkaMessages)},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			var wall, cpu time.Duration
			var faults int64
			for i := range b.N {
				sinkDDL := tc.sink
				if i > 0 && strings.Contains(sinkDDL, "kafka") { // a progress topic of its own per run: a new server starts over
					sinkDDL = fmt.Sprint(sinkDDL[:len(sinkDDL)-len(") FORMAT JSON")], fmt.Sprintf(", sink.progress.topic = 'progress-%d'", i), ") FORMAT JSON")
				}
				w, c, f := benchSinkOnce(b, broker, tc.ddl, sinkDDL, tc.rows)
				wall += w
				cpu += c
				faults += f
			}
			n := float64(b.N * benchKafkaMessages)
			b.ReportMetric(n/wall.Seconds(), "msgs/s")
			b.ReportMetric(cpu.Seconds()/float64(b.N), "engine-cpu-s/run")
			b.ReportMetric(n/cpu.Seconds(), "msgs/engine-cpu-s")
			b.ReportMetric(float64(faults)/float64(b.N), "engine-minflt/run")
		})
	}
}

func benchSinkOnce(b *testing.B, broker string, ddl []string, sinkDDL string, rows int64) (wall, cpu time.Duration, faults int64) {
	ctx := context.Background()
	cmd, c := benchKafkaServer(b)
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	defer c.Close(ctx)
	exec1 := func(q string) {
		if _, err := c.Exec(ctx, q); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	exec1(fmt.Sprintf(`CREATE SOURCE metrics (host text, cpu double precision, mem bigint, ts timestamptz, WATERMARK FOR ts AS ts)
		WITH (connector = 'kafka', topic = 'metrics', properties.bootstrap.server = '%s') FORMAT JSON`, broker))
	start, c0, f0 := time.Now(), procCPU(b, cmd.Process.Pid), procFaults(b, cmd.Process.Pid)
	for _, q := range ddl {
		exec1(q)
	}
	exec1(sinkDDL)
	for {
		var got int64
		if err := c.QueryRow(ctx, "SELECT coalesce(sum(rows), 0) FROM streamsql_sinks WHERE sink_name = 's'").Scan(&got); err != nil {
			b.Fatal(err)
		}
		if got >= rows {
			if got > rows {
				b.Fatalf("sink s committed %d rows, want %d", got, rows)
			}
			break
		}
		if time.Since(start) > 5*time.Minute {
			b.Fatalf("sink s committed %d of %d rows", got, rows)
		}
		time.Sleep(benchPollWait(got, rows)) // polling for the end of the run
	}
	wall, cpu, faults = time.Since(start), procCPU(b, cmd.Process.Pid)-c0, procFaults(b, cmd.Process.Pid)-f0
	benchHeapProfile(b)
	return wall, cpu, faults
}

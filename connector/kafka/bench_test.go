package kafka

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// brokerEnv makes the test binary run an in-process broker instead of the
// tests (TestMain): the benchmarks start it as a separate process, so that
// the CPU time they measure (getrusage of this process) is the reader's
// alone, the broker's share apart.
const brokerEnv = "STREAMSQL_KAFKA_BENCH_BROKER"

func TestMain(m *testing.M) {
	if os.Getenv(brokerEnv) != "" {
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, "t"))
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println(c.ListenAddrs()[0])
		io.Copy(io.Discard, os.Stdin) // until the benchmark closes it
		c.Close()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// benchBroker starts the broker process and returns its address.
func benchBroker(b *testing.B) string {
	b.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), brokerEnv+"=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { in.Close(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.HasPrefix(line, "error") {
		b.Fatalf("broker: %q %v", line, err)
	}
	return strings.TrimSpace(line)
}

// cpuTime is this process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// metricJSON is a small metrics message (about 110 bytes).
func metricJSON(i int) []byte {
	return fmt.Appendf(nil, `{"host":"host-%d","region":"eu-west-%d","cpu":%d.%d,"mem":%d,"ts":"2024-01-01 00:%02d:%02d.%03d+00"}`,
		i%500, i%4, i%100, i%10, 1000+i%4096, i/60000%60, i/1000%60, i%1000)
}

const benchMessages = 1_000_000

// fillBench produces benchMessages metrics messages to the 4 partitions.
func fillBench(b *testing.B, addr string) {
	b.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("t"), kgo.ProducerLinger(5*time.Millisecond),
		kgo.ProducerBatchMaxBytes(1<<20), kgo.MaxBufferedRecords(1<<16))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	var ferr error
	for i := range benchMessages {
		cl.Produce(ctx, &kgo.Record{Value: metricJSON(i)}, func(_ *kgo.Record, err error) {
			if err != nil && ferr == nil {
				ferr = err
			}
		})
	}
	if err := cl.Flush(ctx); err != nil || ferr != nil {
		b.Fatal(err, ferr)
	}
}

// BenchmarkSourceJSON reads benchMessages small JSON metrics messages from
// a 4-partition topic through a Reader (fetch, read_committed, decode into
// Arrow). The broker runs in another process: engine-cpu-ns/msg is the
// reader's CPU time alone (its franz-go client included).
// bare-cpu-ns/msg is a bare franz-go consumer's (no decoding) for
// comparison.
func BenchmarkSourceJSON(b *testing.B) {
	addr := benchBroker(b)
	fillBench(b, addr)
	src := mustOpen(b, cols(b, "host text, region text, cpu double precision, mem bigint, ts timestamptz"),
		map[string]string{"properties.bootstrap.server": addr, "topic": "t"}, "JSON")
	b.ResetTimer()
	var cpu, wall, bare time.Duration
	for range b.N {
		t0, c0 := time.Now(), cpuTime()
		readN(b, src)
		wall += time.Since(t0)
		cpu += cpuTime() - c0
		c1 := cpuTime()
		bareN(b, addr)
		bare += cpuTime() - c1
	}
	b.StopTimer()
	n := float64(b.N * benchMessages)
	b.ReportMetric(n/wall.Seconds(), "msgs/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/n, "engine-cpu-ns/msg")
	b.ReportMetric(n/cpu.Seconds(), "msgs/engine-cpu-s")
	b.ReportMetric(float64(bare.Nanoseconds())/n, "bare-cpu-ns/msg")
}

// readN runs a reader until it has read benchMessages rows.
func readN(b *testing.B, src *Source) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := src.NewReader(ReaderOptions{Errors: func(err error) { b.Error(err) }})
	rows := 0
	err := r.Run(ctx, func(rec arrow.RecordBatch) error {
		rows += int(rec.NumRows())
		rec.Release()
		if rows >= benchMessages {
			cancel()
		}
		return nil
	})
	if rows != benchMessages || err != context.Canceled {
		b.Fatalf("%d rows, %v", rows, err)
	}
}

// bareN consumes benchMessages messages with a bare franz-go client
// configured as a Reader's, without decoding them.
func bareN(b *testing.B, addr string) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"t": {0: kgo.NewOffset().AtStart(), 1: kgo.NewOffset().AtStart(),
			2: kgo.NewOffset().AtStart(), 3: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxBytes(fetchMaxBytes), kgo.FetchMaxPartitionBytes(fetchMaxPartBytes),
		kgo.MaxConcurrentFetches(maxFetches))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	n := 0
	for n < benchMessages {
		fs := cl.PollRecords(context.Background(), 16384)
		if err := fs.Err0(); err != nil {
			b.Fatal(err)
		}
		n += fs.NumRecords()
	}
}

// BenchmarkDecodeJSON decodes the same messages from memory: the decoder's
// share of the reader's CPU time.
func BenchmarkDecodeJSON(b *testing.B) {
	src := mustOpen(b, cols(b, "host text, region text, cpu double precision, mem bigint, ts timestamptz"),
		map[string]string{"properties.bootstrap.server": "x:1", "topic": "t"}, "JSON")
	msgs := make([][]byte, 4096)
	for i := range msgs {
		msgs[i] = metricJSON(i * 7919)
	}
	r := src.NewReader(ReaderOptions{})
	b.ResetTimer()
	c0 := cpuTime()
	for i := range b.N {
		rec := &message{Value: msgs[i%len(msgs)]}
		if _, err := r.decode(context.Background(), rec); err != nil {
			b.Fatal(err)
		}
		if err := r.batch.Add(r.row); err != nil {
			b.Fatal(err)
		}
		if r.batch.Len() == BatchRows {
			r.batch.Take().Release()
		}
	}
	b.ReportMetric(float64((cpuTime()-c0).Nanoseconds())/float64(b.N), "cpu-ns/msg")
}

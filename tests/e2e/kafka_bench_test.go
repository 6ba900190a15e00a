package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// procCPU is the user + system CPU time of process pid (/proc/pid/stat,
// in clock ticks of 10 ms).
func procCPU(b *testing.B, pid int) time.Duration {
	f := procStat(b, pid)
	ut, _ := strconv.ParseInt(f[11], 10, 64) // fields 14 and 15 of stat
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// procFaults is the minor page faults of process pid so far: memory
// touched for the first time (or given back to the kernel and taken
// again) costs one each 4 KiB.
func procFaults(b *testing.B, pid int) int64 {
	n, _ := strconv.ParseInt(procStat(b, pid)[7], 10, 64) // field 10 of stat
	return n
}

// procStat is /proc/pid/stat's fields from the third (state) on.
func procStat(b *testing.B, pid int) []string {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	return strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
}

// benchKafkaMessages is how many messages the Kafka benchmarks produce:
// $STREAMSQL_BENCH_KAFKA_MESSAGES, else 500,000. Runs of a few million
// messages give steadier figures (the fixed costs of a run, such as
// creating the view and the source's start, weigh less).
var benchKafkaMessages = func() int {
	if n, err := strconv.Atoi(os.Getenv("STREAMSQL_BENCH_KAFKA_MESSAGES")); err == nil && n > 0 {
		return n
	}
	return 500_000
}()

// benchPollWait is how long a benchmark waits before asking the server
// again whether a run is done, having seen done of want: each question
// costs the server CPU time (about 0.4 ms), so it asks rarely until the
// run is nearly done and then often, for an exact end.
func benchPollWait(done, want int64) time.Duration {
	if done < want-want/10 {
		return 50 * time.Millisecond
	}
	return 5 * time.Millisecond
}

// BenchmarkKafkaTumble: benchKafkaMessages small JSON metrics messages
// already in a 4-partition topic (an in-process broker: its CPU time is
// this process's) are read by a streamsqld process into a TUMBLE view
// EMIT ON WINDOW CLOSE grouped by host. msgs/s is from CREATE
// MATERIALIZED VIEW until streamsql_sources shows every message read;
// engine-cpu-ns/msg is streamsqld's CPU time over that span (the broker's
// share apart).
func BenchmarkKafkaTumble(b *testing.B) {
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
	var wall, cpu time.Duration
	for range b.N {
		w, c := benchTumbleOnce(b, broker)
		wall += w
		cpu += c
	}
	n := float64(b.N * benchKafkaMessages)
	b.ReportMetric(n/wall.Seconds(), "msgs/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/n, "engine-cpu-ns/msg")
	b.ReportMetric(n/cpu.Seconds(), "msgs/engine-cpu-s")
}

// benchKafkaServer starts a streamsqld process of the benchmarks on a
// free loopback port with a data directory of its own, and connects to it.
// $STREAMSQL_BENCH_BINARY names another streamsqld to run instead of the
// one built from this tree (to compare two builds on one machine).
// The caller kills the process and closes the connection.
func benchKafkaServer(b *testing.B) (*exec.Cmd, *pgx.Conn) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	bin := binary
	if v := os.Getenv("STREAMSQL_BENCH_BINARY"); v != "" { // another build, to compare two
		bin = v
	}
	args := []string{"--listen", addr, "--data-dir", b.TempDir(), "--http", ""}
	profile := os.Getenv("STREAMSQL_BENCH_CPUPROFILE")
	var httpAddr string
	if profile != "" || os.Getenv("STREAMSQL_BENCH_HEAPPROFILE") != "" {
		hl, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		httpAddr = hl.Addr().String()
		hl.Close()
		args[len(args)-1] = httpAddr
	}
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(addr)
	for deadline := time.Now().Add(startTimeout); ; time.Sleep(20 * time.Millisecond) {
		c, err := pgx.Connect(context.Background(), fmt.Sprintf("host=%s port=%s user=streamsql password=streamsql dbname=streamsql sslmode=disable", host, port))
		if err == nil {
			if profile != "" {
				go benchCPUProfile(b, httpAddr, profile)
			}
			benchHTTP = httpAddr
			return cmd, c
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			b.Fatal(err)
		}
	}
}

func benchTumbleOnce(b *testing.B, broker string) (wall, cpu time.Duration) {
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
	start, c0 := time.Now(), procCPU(b, cmd.Process.Pid)
	exec1(`CREATE MATERIALIZED VIEW w AS SELECT window_start, host, count(*) AS n, avg(cpu) AS cpu, max(mem) AS mem
		FROM TUMBLE(metrics, ts, INTERVAL '10 seconds') GROUP BY window_start, host EMIT ON WINDOW CLOSE`)
	for {
		var read int64
		if err := c.QueryRow(ctx, "SELECT coalesce(sum(\"offset\"), 0) FROM streamsql_sources WHERE view_name = 'w'").Scan(&read); err != nil {
			b.Fatal(err)
		}
		if read >= int64(benchKafkaMessages) {
			break
		}
		if time.Since(start) > 5*time.Minute {
			b.Fatalf("read %d of %d", read, benchKafkaMessages)
		}
		time.Sleep(benchPollWait(read, int64(benchKafkaMessages))) // polling for the end of the run
	}
	wall, cpu = time.Since(start), procCPU(b, cmd.Process.Pid)-c0
	var windows int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM w").Scan(&windows); err != nil || windows == 0 {
		b.Fatalf("view w: %d rows, %v", windows, err)
	}
	return wall, cpu
}

// benchHTTP is the HTTP address of the last server benchKafkaServer
// started, when a profile was asked for ("" otherwise).
var benchHTTP string

// benchHeapProfile saves a heap profile of the benchmark's server to
// $STREAMSQL_BENCH_HEAPPROFILE, if set (at the end of a run: what the
// server still holds).
func benchHeapProfile(b *testing.B) {
	file := os.Getenv("STREAMSQL_BENCH_HEAPPROFILE")
	if file == "" || benchHTTP == "" {
		return
	}
	resp, err := http.Get("http://" + benchHTTP + "/debug/pprof/heap?gc=1")
	if err != nil {
		b.Logf("heap profile: %v", err)
		return
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err == nil {
		err = os.WriteFile(file, data, 0o644)
	}
	if err != nil {
		b.Logf("heap profile: %v", err)
	}
}

// benchCPUProfile saves a CPU profile of the benchmark's server, taken
// over $STREAMSQL_BENCH_CPUPROFILE_SECONDS (default 5) from its start, to
// file (for reading where the engine's time goes; it costs the run some
// CPU, so runs with a profile are not measurements).
func benchCPUProfile(b *testing.B, httpAddr, file string) {
	secs := os.Getenv("STREAMSQL_BENCH_CPUPROFILE_SECONDS")
	if secs == "" {
		secs = "5"
	}
	resp, err := http.Get("http://" + httpAddr + "/debug/pprof/profile?seconds=" + secs)
	if err != nil {
		b.Logf("cpu profile: %v", err)
		return
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		b.Logf("cpu profile: %v", err)
		return
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		b.Logf("cpu profile: %v", err)
	}
}

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// This file has the helpers of the tests that need a Kafka broker process
// (`streamsqld kafka-dev`, which outlives streamsqld's kill -9) and tools.

// needTool returns the path of an external tool; without it the test is
// skipped, except under CI=true, where a missing tool fails the test (CI
// installs it: a skip there would hide that the test never ran).
func needTool(t *testing.T, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed (Debian package %s), and CI=true", name, pkg)
		}
		t.Skipf("%s is not installed (Debian package %s)", name, pkg)
	}
	return p
}

// startKafkaDev runs `streamsqld kafka-dev` on a free loopback port with
// the given extra flags (--topic name:n) and returns the broker's address
// once it listens. The process is stopped when the test ends.
func startKafkaDev(t *testing.T, flags ...string) string {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"kafka-dev", "--listen", "127.0.0.1:0"}, flags...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errb := &syncBuffer{}
	cmd.Stderr = errb
	if err := cmd.Start(); err != nil {
		t.Fatalf("start kafka-dev: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "kafka-dev: listening on "); ok {
				addr <- strings.Fields(a)[0]
			}
		}
	}()
	select {
	case a := <-addr:
		return a
	case <-time.After(startTimeout):
		t.Fatalf("kafka-dev did not start: %s", errb.String())
	}
	return ""
}

// kafkaReadCommitted reads topic from its start as a read_committed consumer up
// to its current end: it first appends a marker record to every partition
// (outside any transaction), which such a consumer sees only after every
// transaction before it has ended, and reads until it has seen them all.
// It returns the values before the markers.
func kafkaReadCommitted(t *testing.T, ctx context.Context, broker, topic string) []string {
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
	parts := len(td[topic].Partitions)
	for p := 0; p < parts; p++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: int32(p), Value: []byte("marker")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	var vals []string
	for seen := 0; seen < parts; {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("reading %s: %v (%d of %d markers seen)", topic, err, seen, parts)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if string(r.Value) == "marker" {
				seen++
			} else {
				vals = append(vals, string(r.Value))
			}
		})
	}
	return vals
}

// sinkWindows turns the JSON rows of a kw sink (window_start, host, n, s)
// into "seconds-since-2024 host n s" lines, sorted.
func sinkWindows(t *testing.T, vals []string) []string {
	t.Helper()
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var out []string
	for _, v := range vals {
		var r struct {
			WindowStart string `json:"window_start"`
			Host        string `json:"host"`
			N, S        int64
		}
		if err := json.Unmarshal([]byte(v), &r); err != nil {
			t.Fatalf("sink record %q: %v", v, err)
		}
		ws, err := time.Parse("2006-01-02 15:04:05-07", r.WindowStart)
		if err != nil {
			t.Fatalf("sink record %q: window_start: %v", v, err)
		}
		out = append(out, fmt.Sprintf("%d %s %d %d", int64(ws.Sub(base)/time.Second), r.Host, r.N, r.S))
	}
	sort.Strings(out)
	return out
}

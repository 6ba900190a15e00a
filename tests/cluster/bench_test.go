package cluster_test

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/cluster/clustertest"
)

// TestClusterThroughput measures a view over CLUSTER_BENCH_EVENTS Nexmark
// events (unset: skipped) on one streamsqld and on clusters of each of
// CLUSTER_BENCH_NODES nodes (a comma-separated list, default "2"), each
// process with GOMAXPROCS=1: the time from CREATE MATERIALIZED VIEW to
// the end of FLUSH, every cluster started afresh (its own etcd prefix and
// processes). The query is CLUSTER_BENCH_QUERY: a Nexmark query's name
// (q5, q9: bench/nexmark/<name>.sql, over the sources person, auction and
// bid; default q5) or a SELECT over bid; at streaming_parallelism
// CLUSTER_BENCH_PARALLELISM (default 4). The view must have the same rows
// on every run. CLUSTER_BENCH_NODE_SPLITS=off: the nodes run with
// --cluster-node-splits=false (every source read on the coordinator).
// CLUSTER_BENCH_CHECKPOINT_INTERVAL (default 0: none) is the clusters'
// --checkpoint-interval; their commits are then summed up
// (commitSummary).
func TestClusterThroughput(t *testing.T) {
	events, _ := strconv.Atoi(os.Getenv("CLUSTER_BENCH_EVENTS"))
	if events == 0 {
		t.Skip("set CLUSTER_BENCH_EVENTS to measure")
	}
	var sizes []int
	for _, f := range strings.Split(envString("CLUSTER_BENCH_NODES", "2"), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			t.Fatalf("CLUSTER_BENCH_NODES: %q is not a node count", f)
		}
		sizes = append(sizes, n)
	}
	par := envInt("CLUSTER_BENCH_PARALLELISM", 4)
	ckpt := envString("CLUSTER_BENCH_CHECKPOINT_INTERVAL", "0")
	q := envString("CLUSTER_BENCH_QUERY", "q5")
	if regexp.MustCompile(`^q\d+$`).MatchString(q) {
		b, err := os.ReadFile("../../bench/nexmark/" + q + ".sql")
		if err != nil {
			t.Fatal(err)
		}
		q = string(b)
	}
	n := strconv.Itoa(events)
	ddl := []string{
		"CREATE SOURCE bid (WATERMARK FOR date_time AS date_time - INTERVAL '4' SECOND) WITH (connector = 'nexmark', table = 'bid', events = '" + n + "')",
		"CREATE SOURCE auction (WATERMARK FOR date_time AS date_time - INTERVAL '4' SECOND) WITH (connector = 'nexmark', table = 'auction', events = '" + n + "')",
		"CREATE SOURCE person (WATERMARK FOR date_time AS date_time - INTERVAL '4' SECOND) WITH (connector = 'nexmark', table = 'person', events = '" + n + "')",
	}
	var first []string
	measure := func(coord *node, others ...*node) time.Duration {
		coord.exec(t, ddl...)
		all := append([]*node{coord}, others...)
		cpu0 := make([]float64, len(all))
		for i, x := range all {
			cpu0[i] = cpuSeconds(t, x)
		}
		start := time.Now()
		coord.exec(t, "SET streaming_parallelism = "+strconv.Itoa(par), "CREATE MATERIALIZED VIEW q AS "+q)
		coord.exec(t, "FLUSH")
		d := time.Since(start)
		var cpu []string
		total := 0.0
		for i, x := range all {
			c := cpuSeconds(t, x) - cpu0[i]
			total += c
			cpu = append(cpu, fmt.Sprintf("%s %.2f", x.id, c))
		}
		t.Logf("CPU seconds from CREATE to the end of FLUSH: %s (total %.2f; load %s)", strings.Join(cpu, ", "), total, loadAvg())
		rows, err := coord.query(t, "SELECT * FROM q ORDER BY 1, 2")
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = rows
		} else if strings.Join(rows, "\n") != strings.Join(first, "\n") {
			t.Fatalf("%d rows on the cluster, %d on one process: %s", len(rows), len(first), firstDiff(rows, first))
		}
		return d
	}
	one := []string{"GOMAXPROCS=1"}
	single := launch(t, one, "single", "--checkpoint-interval", "0")
	d1 := measure(single)
	if len(first) == 0 {
		t.Fatal("the view is empty: nothing measured")
	}
	single.kill()
	t.Logf("1 process: %d events in %.2f s: %.0f events/s", events, d1.Seconds(), float64(events)/d1.Seconds())

	etcd := clustertest.StartEtcd(t)
	s3 := clustertest.StartS3(t, "ckpt")
	env := append(s3.Env(), one...)
	for run, size := range sizes {
		prefix := "sq" + strconv.Itoa(run)
		flags := []string{"--cluster", "etcd://" + etcd.Endpoint + "/" + prefix, "--checkpoint-url", "s3://ckpt/" + prefix, "--checkpoint-interval", ckpt}
		if os.Getenv("CLUSTER_BENCH_NODE_SPLITS") == "off" {
			flags = append(flags, "--cluster-node-splits=false")
		}
		id := func(i int) string { return prefix + "n" + strconv.Itoa(i) }
		n1 := start(t, env, id(1), flags...)
		waitNodes(t, n1, "SELECT role FROM streamsql_nodes", []string{"coordinator"})
		nodes, want := []*node{n1}, []string{id(1)}
		for i := 2; i <= size; i++ {
			nodes = append(nodes, start(t, env, id(i), flags...))
			want = append(want, id(i))
		}
		waitNodes(t, n1, "SELECT node_id FROM streamsql_nodes ORDER BY 1", want)
		dn := measure(n1, nodes[1:]...)
		t.Logf("%d nodes: %d events in %.2f s: %.0f events/s (%.2fx one process)", size, events, dn.Seconds(), float64(events)/dn.Seconds(), d1.Seconds()/dn.Seconds())
		if ckpt != "0" {
			t.Logf("%d nodes, checkpoints every %s: %s", size, ckpt, commitSummary(t, n1, 0)) // ckpt_bench_test.go
		}
		for _, x := range nodes {
			x.kill()
		}
	}
}

func envString(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// commitRE matches the coordinator's log line of a committed checkpoint.
var commitRE = regexp.MustCompile(`checkpoint \d+ committed in (\S+), (\S+) after its barrier \(\S+\): (\d+) objects, workers' state (\d+) bytes, (\d+) uploaded in (\d+) objects \(reports waited (\S+)\), coordinator's files (\d+) bytes, (\d+) uploaded in (\S+)`)

// TestClusterCheckpointScale measures, over CLUSTER_CKPT_EVENTS Nexmark
// events (unset: skipped), the cluster checkpoints of per_auction at
// parallelism 4 on three nodes (the state grows with the auctions: 3 per
// 50 events) and a worker's loss: it logs the last commits (bytes and
// times) and, after kill -9 of n3 once the input is read, the time to
// the restart and to the view being equal to one node's again.
func TestClusterCheckpointScale(t *testing.T) {
	events, _ := strconv.Atoi(os.Getenv("CLUSTER_CKPT_EVENTS"))
	if events == 0 {
		t.Skip("set CLUSTER_CKPT_EVENTS to measure")
	}
	views := []string{
		"CREATE SOURCE bid WITH (connector = 'nexmark', table = 'bid', events = '" + strconv.Itoa(events) + "')",
		"SET streaming_parallelism = 4",
		"CREATE MATERIALIZED VIEW per_auction AS SELECT auction, count(*) AS n, max(price) AS top, sum(price) AS total FROM bid GROUP BY auction",
	}
	read := "SELECT * FROM per_auction ORDER BY auction"
	single := launch(t, nil, "single")
	single.exec(t, views...)
	single.exec(t, "FLUSH")
	want, err := single.query(t, read)
	if err != nil {
		t.Fatal(err)
	}
	single.kill()
	etcd := clustertest.StartEtcd(t)
	s3 := clustertest.StartS3(t, "ckpt")
	env := s3.Env()
	flags := []string{"--cluster", "etcd://" + etcd.Endpoint + "/sq", "--checkpoint-url", "s3://ckpt/sq", "--cluster-lease-ttl", "2s",
		"--checkpoint-interval", "1s"}
	n1 := start(t, env, "n1", flags...)
	waitNodes(t, n1, "SELECT node_id, role FROM streamsql_nodes", []string{"n1|coordinator"})
	n2 := start(t, env, "n2", flags...)
	n3 := start(t, env, "n3", flags...)
	waitNodes(t, n1, "SELECT node_id FROM streamsql_nodes ORDER BY 1", []string{"n1", "n2", "n3"})
	n1.exec(t, views...)
	n1.exec(t, "FLUSH")
	// Two commits after the input was read: the whole state.
	seen := len(commitRE.FindAllString(n1.out.String(), -1))
	deadline := time.Now().Add(120 * time.Second)
	for len(commitRE.FindAllString(n1.out.String(), -1)) < seen+2 {
		if time.Now().After(deadline) {
			t.Fatal("no checkpoint committed after the input was read")
		}
		time.Sleep(100 * time.Millisecond) // polling with a deadline
	}
	all := commitRE.FindAllStringSubmatch(n1.out.String(), -1)
	for _, m := range all[max(0, len(all)-3):] {
		t.Logf("commit in %s (%s after the barrier): %s objects, workers' state %s B, %s B uploaded in %s objects (reports waited %s), coordinator's files %s B, %s B uploaded in %s",
			m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8], m[9], m[10])
	}
	n3.kill()
	killed := time.Now()
	waitLog(t, n1, 120*time.Second, "cluster: restart of views [")
	restarted := time.Since(killed)
	n1.exec(t, "FLUSH")
	got, err := n2.query(t, read)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%d rows after the restart, one node %d: %s", len(got), len(want), firstDiff(got, want))
	}
	for _, line := range strings.Split(n1.out.String()+n2.out.String(), "\n") {
		if strings.Contains(line, "restarted") && strings.Contains(line, "cluster:") {
			t.Log(line)
		}
	}
	t.Logf("%d events, %d groups: kill -9 of n3, restart done %.2f s after it, view equal to one node %.2f s after it",
		events, len(want), restarted.Seconds(), time.Since(killed).Seconds())
}

// cpuSeconds is the user and system CPU time n's process has used.
func cpuSeconds(t *testing.T, n *node) float64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", n.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	// the fields after the command's closing parenthesis: utime and
	// stime are the 12th and 13th, in clock ticks (100 per second)
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	u, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (u + st) / 100
}

// loadAvg is the machine's 1-minute load average.
func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.Fields(string(b) + " ?")[0]
}

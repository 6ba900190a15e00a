package cluster_test

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/cluster/clustertest"
)

// TestClusterThroughput measures a view over CLUSTER_BENCH_EVENTS Nexmark
// events (unset: skipped) on one streamsqld and on a cluster of
// CLUSTER_BENCH_NODES (default 2) nodes, each process with GOMAXPROCS=1:
// the time from CREATE MATERIALIZED VIEW to the end of FLUSH. The query
// is CLUSTER_BENCH_QUERY (default: Nexmark q5 as in bench/nexmark/q5.sql)
// at streaming_parallelism CLUSTER_BENCH_PARALLELISM (default 4). The
// view must have the same rows on both.
func TestClusterThroughput(t *testing.T) {
	events, _ := strconv.Atoi(os.Getenv("CLUSTER_BENCH_EVENTS"))
	if events == 0 {
		t.Skip("set CLUSTER_BENCH_EVENTS to measure")
	}
	nodes := envInt("CLUSTER_BENCH_NODES", 2)
	par := envInt("CLUSTER_BENCH_PARALLELISM", 4)
	q := os.Getenv("CLUSTER_BENCH_QUERY")
	if q == "" {
		b, err := os.ReadFile("../../bench/nexmark/q5.sql")
		if err != nil {
			t.Fatal(err)
		}
		q = string(b)
	}
	ddl := []string{
		"CREATE SOURCE bid (WATERMARK FOR date_time AS date_time - INTERVAL '4' SECOND) WITH (connector = 'nexmark', table = 'bid', events = '" + strconv.Itoa(events) + "')",
		"SET streaming_parallelism = " + strconv.Itoa(par),
	}
	var first []string
	measure := func(coord *node) time.Duration {
		coord.exec(t, ddl...)
		start := time.Now()
		coord.exec(t, "SET streaming_parallelism = "+strconv.Itoa(par), "CREATE MATERIALIZED VIEW q AS "+q)
		coord.exec(t, "FLUSH")
		d := time.Since(start)
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
	flags := []string{"--cluster", "etcd://" + etcd.Endpoint + "/sq", "--checkpoint-url", "s3://ckpt/sq", "--checkpoint-interval", "0"}
	n1 := start(t, env, "n1", flags...)
	waitNodes(t, n1, "SELECT role FROM streamsql_nodes", []string{"coordinator"})
	want := []string{"n1"}
	for i := 2; i <= nodes; i++ {
		id := "n" + strconv.Itoa(i)
		start(t, env, id, flags...)
		want = append(want, id)
	}
	waitNodes(t, n1, "SELECT node_id FROM streamsql_nodes ORDER BY 1", want)
	dn := measure(n1)
	t.Logf("%d nodes: %d events in %.2f s: %.0f events/s", nodes, events, dn.Seconds(), float64(events)/dn.Seconds())
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

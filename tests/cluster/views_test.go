package cluster_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/streamsql/streamsql/cluster/clustertest"
)

// exec runs statements in order on one connection of n.
func (n *node) exec(t *testing.T, stmts ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, n.connString())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	for _, s := range stmts {
		if _, err := c.Exec(ctx, s, pgx.QueryExecModeSimpleProtocol); err != nil {
			t.Fatalf("%s on %s: %v", s, n.id, err)
		}
	}
}

// The views of TestClusterViewEqualsSingleNode, over a finite Nexmark
// input: an aggregation by a key with many groups (q5's inner part and
// more), and one with few groups and a filter.
var clusterViews = []string{
	"CREATE SOURCE bid WITH (connector = 'nexmark', table = 'bid', events = '40000')",
	"SET streaming_parallelism = 4",
	"CREATE MATERIALIZED VIEW per_auction AS SELECT auction, count(*) AS n, max(price) AS top, sum(price) AS total FROM bid GROUP BY auction",
	"SET streaming_parallelism = 3",
	"CREATE MATERIALIZED VIEW per_channel AS SELECT channel, count(*) AS n, min(price) AS low FROM bid WHERE price > 100 GROUP BY channel",
}

var clusterReads = []string{
	"SELECT * FROM per_auction ORDER BY auction",
	"SELECT * FROM per_channel ORDER BY channel",
}

// TestClusterViewEqualsSingleNode: three streamsqld nodes (etcd and an S3
// store started by the test); CREATE SOURCE and two CREATE MATERIALIZED
// VIEWs on the coordinator run with their keyed instances spread over the
// three nodes (each worker logs the instance and vnode range it runs);
// after FLUSH (on a worker: forwarded to the coordinator) a SELECT of
// each view on every node gives the rows of one streamsqld without
// --cluster on the same input.
func TestClusterViewEqualsSingleNode(t *testing.T) {
	etcd := clustertest.StartEtcd(t)
	s3 := clustertest.StartS3(t, "ckpt")
	env := s3.Env()
	flags := []string{"--cluster", "etcd://" + etcd.Endpoint + "/sq", "--checkpoint-url", "s3://ckpt/sq", "--cluster-lease-ttl", "2s"}
	n1 := start(t, env, "n1", flags...)
	waitNodes(t, n1, "SELECT node_id, role FROM streamsql_nodes", []string{"n1|coordinator"})
	n2 := start(t, env, "n2", flags...)
	n3 := start(t, env, "n3", flags...)
	waitNodes(t, n1, "SELECT node_id, role FROM streamsql_nodes ORDER BY 1", []string{"n1|coordinator", "n2|worker", "n3|worker"})

	single := launch(t, nil, "single")
	single.exec(t, clusterViews...)
	single.exec(t, "FLUSH")
	var want [][]string
	for _, q := range clusterReads {
		rows, err := single.query(t, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) < 3 {
			t.Fatalf("%s: %d rows on one node prove little", q, len(rows))
		}
		want = append(want, rows)
	}

	start := time.Now()
	n1.exec(t, clusterViews...)
	n2.exec(t, "FLUSH") // a worker's FLUSH is the coordinator's
	t.Logf("the views over 3 nodes were complete %.2f s after CREATE SOURCE", time.Since(start).Seconds())
	for _, n := range []*node{n2, n3} {
		for _, what := range []string{"operator 0: this node runs instances [", "assignment 1"} {
			if !strings.Contains(n.out.String(), what) {
				t.Fatalf("node %s does not run its part (%q not logged):\n%s", n.id, what, n.out.String())
			}
		}
	}
	for i, q := range clusterReads {
		for _, n := range []*node{n1, n2, n3} {
			got, err := n.query(t, q)
			if err != nil {
				t.Fatalf("%s on %s: %v", q, n.id, err)
			}
			if strings.Join(got, "\n") != strings.Join(want[i], "\n") {
				t.Fatalf("%s on %s: %d rows, one node %d rows; first differing: %s", q, n.id, len(got), len(want[i]), firstDiff(got, want[i]))
			}
		}
	}
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("row %d: %q vs %q", i, a[i], b[i])
		}
	}
	return "one is a prefix of the other"
}

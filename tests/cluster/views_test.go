package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/streamsql/streamsql/cluster"
	"github.com/streamsql/streamsql/cluster/clustertest"
	"github.com/streamsql/streamsql/cluster/dist"
	"github.com/streamsql/streamsql/cluster/objstore"
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
// --cluster on the same input. Then the checkpoints: the workers upload
// their instances' state to the object store and the coordinator commits
// epochs (manifest, then the fenced pointer in etcd): the committed
// manifest names a verified state object of every instance placed on
// n2 and n3, written by that node, and the aggregation's objects hold
// state, and the coordinator's own checkpoint files are in it.
func TestClusterViewEqualsSingleNode(t *testing.T) {
	etcd := clustertest.StartEtcd(t)
	s3 := clustertest.StartS3(t, "ckpt")
	env := s3.Env()
	flags := []string{"--cluster", "etcd://" + etcd.Endpoint + "/sq", "--checkpoint-url", "s3://ckpt/sq", "--cluster-lease-ttl", "2s",
		"--checkpoint-interval", "300ms"}
	n1 := start(t, env, "n1", flags...)
	waitNodes(t, n1, "SELECT node_id, role FROM streamsql_nodes", []string{"n1|coordinator"})
	n2 := start(t, env, "n2", flags...)
	n3 := start(t, env, "n3", flags...)
	waitNodes(t, n1, "SELECT node_id, role FROM streamsql_nodes ORDER BY 1", []string{"n1|coordinator", "n2|worker", "n3|worker"})

	want := singleRun(t, clusterViews)

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
	oids, err := n1.query(t, "SELECT oid FROM pg_class WHERE relname IN ('per_auction', 'per_channel') ORDER BY relname")
	if err != nil || len(oids) != 2 {
		t.Fatalf("the views' OIDs: %v %v", oids, err)
	}
	checkCommitted(t, etcd.Endpoint, "/sq", env, oids[0], oids[1], len(want[0]))
	// A worker's loss: TestClusterWorkerKilledRestores.
}

// checkCommitted waits (up to 60 s) for a committed cluster checkpoint
// that has the views' whole state: its manifest names the 4 instances
// placed on n2 and n3 (per_auction's 2 and 3 of 4, per_channel's 1 and 2
// of 3: jobs auction and channel), each object is verified, written by
// the node the instance runs on, and per_auction's objects hold state.
func checkCommitted(t *testing.T, endpoint, prefix string, env []string, auction, channel string, groups int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cli, store := openCheckpoints(t, ctx, endpoint, env)
	wantNode := map[string]string{auction + ".p0.i2": "n2", auction + ".p0.i3": "n3", channel + ".p0.i1": "n2", channel + ".p0.i2": "n3"}
	var wantInst []string
	for k := range wantNode {
		wantInst = append(wantInst, k)
	}
	slices.Sort(wantInst)
	last := ""
	for {
		if ctx.Err() != nil {
			t.Fatalf("no committed checkpoint with the views' state: %s", last)
		}
		p, _, ok, err := cluster.ReadPointer(ctx, cli, prefix)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			last = "nothing committed"
			time.Sleep(100 * time.Millisecond) // polling with the context's deadline
			continue
		}
		ck, err := store.Recover(ctx, p)
		if err != nil {
			t.Fatalf("committed checkpoint %d: %v", p.Epoch, err)
		}
		var meta dist.CommitMeta
		if err := json.Unmarshal(ck.Manifest.Meta, &meta); err != nil {
			t.Fatal(err)
		}
		if meta.Coordinator != "n1" {
			t.Fatalf("checkpoint %d committed by %s", p.Epoch, meta.Coordinator)
		}
		if strings.Join(meta.Instances, ",") != strings.Join(wantInst, ",") {
			// An epoch before the views were created.
			last = fmt.Sprintf("checkpoint %d: instances %v, want %v", p.Epoch, meta.Instances, wantInst)
			time.Sleep(100 * time.Millisecond) // polling with the context's deadline
			continue
		}
		keys, coord := 0, 0
		for _, o := range ck.Manifest.Objects {
			if strings.HasPrefix(o.Op, "coord/") { // the coordinator's own checkpoint files
				if o.Node != "n1" {
					t.Fatalf("object %s of the coordinator's part written by %s", o.Key, o.Node)
				}
				coord++
				continue
			}
			inst := o.Op[:strings.LastIndex(o.Op, ".n")]
			// Incremental: a chain of objects of this epoch and earlier
			// ones, all written by the instance's node.
			if wantNode[inst] != o.Node || o.Epoch > p.Epoch {
				t.Fatalf("object %s of %s written by %s in epoch %d; want %s, epoch up to %d", o.Key, inst, o.Node, o.Epoch, wantNode[inst], p.Epoch)
			}
		}
		keys = chainKeys(t, ck, auction+".")
		// n2 and n3 own half of per_auction's vnodes: about half its
		// groups, each with at least one key.
		if coord < 2 {
			t.Fatalf("checkpoint %d: %d files of the coordinator's part, want its manifest and at least a segment", p.Epoch, coord)
		}
		if keys >= groups/4 {
			t.Logf("checkpoint %d committed: %d objects, %d keys of per_auction's state on n2 and n3 (%d groups in all)", p.Epoch, len(ck.Manifest.Objects), keys, groups)
			return
		}
		last = fmt.Sprintf("checkpoint %d holds %d keys of per_auction", p.Epoch, keys)
		time.Sleep(100 * time.Millisecond) // polling with the context's deadline
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

// openCheckpoints connects to the cluster's etcd at endpoint and opens
// its checkpoint store s3://ckpt/sq (with the store's environment env),
// both closed when the test ends.
func openCheckpoints(t *testing.T, ctx context.Context, endpoint string, env []string) (*clientv3.Client, *objstore.Store) {
	t.Helper()
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	u, err := cluster.ParseCheckpointURL("s3://ckpt/sq")
	if err != nil {
		t.Fatal(err)
	}
	store, err := objstore.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	return cli, store
}

// chainKeys is the number of keys the worker's instances of the job
// whose ops begin with job (e.g. "16401.") restore from checkpoint ck:
// each operator's chain of objects (a base and deltas) applied in order.
func chainKeys(t *testing.T, ck *objstore.Checkpoint, job string) int {
	t.Helper()
	keys := 0
	seen := map[string]bool{}
	for _, o := range ck.Manifest.Objects {
		if !strings.HasPrefix(o.Op, job) || seen[o.Op] {
			continue
		}
		seen[o.Op] = true
		kv := map[string][]byte{}
		for _, b := range ck.State(o.Op, o.Lo) {
			if err := dist.ApplyState(kv, b); err != nil {
				t.Fatalf("object %s: %v", o.Key, err)
			}
		}
		keys += len(kv)
	}
	return keys
}

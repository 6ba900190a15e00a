package cluster_test

import (
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/cluster/clustertest"
)

// TestClusterRestartOnOldDataDir: the worker n3, then the coordinator
// n1, is killed and started again on its old data directory (a machine
// rebooted, a pod restarted on its volume), whose catalog has the source
// and both views. The node does not start the views itself from that
// directory (it would run them whole, from their inputs or its local
// checkpoint, until the supervision stopped them), does not fail the
// log's statements it ran before ("already exists") but runs those
// logged while it was down (a view created then), and comes back as a
// worker of the views, restored from the cluster's checkpoint (n2 is
// the coordinator once n1 was killed). The views equal one streamsqld's.
func TestClusterRestartOnOldDataDir(t *testing.T) {
	want := singleRun(t, outageSingle)
	etcd := clustertest.StartEtcd(t)
	s3 := clustertest.StartS3(t, "ckpt")
	env := s3.Env()
	flags := []string{"--cluster", "etcd://" + etcd.Endpoint + "/sq", "--checkpoint-url", "s3://ckpt/sq", "--cluster-lease-ttl", "2s",
		"--checkpoint-interval", "300ms"}
	dirs := map[string]string{"n1": t.TempDir(), "n3": t.TempDir()}
	onDir := func(id string) *node { return start(t, env, id, append(flags, "--data-dir", dirs[id])...) }
	n1 := onDir("n1")
	waitNodes(t, n1, "SELECT node_id, role FROM streamsql_nodes", []string{"n1|coordinator"})
	n2 := start(t, env, "n2", flags...)
	n3 := onDir("n3")
	waitNodes(t, n1, "SELECT node_id, role FROM streamsql_nodes ORDER BY 1", []string{"n1|coordinator", "n2|worker", "n3|worker"})
	n1.exec(t, outageViews...)
	oids, err := n1.query(t, "SELECT oid FROM pg_class WHERE relname IN ('per_auction', 'per_channel') ORDER BY relname")
	if err != nil || len(oids) != 2 {
		t.Fatalf("the views' OIDs: %v %v", oids, err)
	}
	var e uint64
	for _, c := range []struct{ victim, coord string }{{"n3", "n1"}, {"n1", "n2"}} {
		nodes := map[string]*node{"n1": n1, "n2": n2, "n3": n3}
		e = committedAfter(t, etcd.Endpoint, env, oids, e)
		nodes[c.victim].kill()
		coord := nodes[c.coord]
		var more string // a view created while n3 is down: replayed on it, not skipped
		if c.victim == "n3" {
			n1.exec(t, "SET streaming_parallelism = 2", "CREATE MATERIALIZED VIEW per_bidder AS SELECT bidder, count(*) AS n FROM bid GROUP BY bidder")
			rows, err := n1.query(t, "SELECT oid FROM pg_class WHERE relname = 'per_bidder'")
			if err != nil || len(rows) != 1 {
				t.Fatalf("per_bidder's OID: %v %v", rows, err)
			}
			more = rows[0]
		}
		mark := len(coord.out.String())
		if c.victim == "n1" { // n2 takes over first
			for _, oid := range oids {
				restartedFrom(t, coord, 0, 60*time.Second, oid)
			}
			mark = len(coord.out.String())
		}
		began := time.Now()
		back := onDir(c.victim)
		waitLogAfter(t, coord, mark, 60*time.Second, "(3 nodes)")
		for _, oid := range oids {
			waitLogAfter(t, back, 0, 60*time.Second, "cluster: job "+oid+" restarted on this node from checkpoint ")
		}
		if more != "" {
			waitLogAfter(t, back, 0, 60*time.Second, "cluster: job "+more+" restarted on this node from ")
		}
		t.Logf("%s started again on its old data directory: its instances restored %.2f s after its start", c.victim, time.Since(began).Seconds())
		out := back.out.String()
		for _, bad := range []string{"failed on this node", "recovery: materialized view", "no longer the coordinator: stopped"} {
			if strings.Contains(out, bad) {
				t.Fatalf("%s on its old data directory logged %q:\n%s", c.victim, bad, out)
			}
		}
		// n3 ran the source and two views; n1 also created per_bidder.
		if n, ran := strings.Count(out, "is in this node's catalog already"), map[string]int{"n3": 3, "n1": 4}[c.victim]; n != ran {
			t.Fatalf("%s skipped %d statements it ran before, want %d:\n%s", c.victim, n, ran, out)
		}
		if c.victim == "n1" {
			n1 = back
		} else {
			n3 = back
		}
	}
	waitEqual(t, want, 120*time.Second, n1, n2, n3)
}

package cluster_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/cluster/clustertest"
	"github.com/streamsql/streamsql/cluster/clustertest/faultproxy"
)

// TestClusterPartition: three nodes run two views over a paced input,
// every exchange connection into the worker n3 through a proxy the test
// controls (n3 listens for the exchange on one port and advertises the
// proxy's), --cluster-exchange-timeout 2s. Once a checkpoint with the
// views' state is committed, the proxy cuts those connections silently
// (no reset, no close: a network partition between the coordinator and
// n3, while both still reach etcd). Both ends of every stream through it
// notice the silence after the timeout and the views fail; with the same
// live nodes, the coordinator restarts them from the last committed
// checkpoint one lease TTL later. The partition then heals, the
// restarted streams connect, and the views equal one streamsqld's.
func TestClusterPartition(t *testing.T) {
	partition(t)
}

// partition is TestClusterPartition with more flags for every node; it
// returns the worker n2's output since the cut.
func partition(t *testing.T, more ...string) string {
	want := singleRun(t, outageSingle)
	etcd := clustertest.StartEtcd(t)
	s3 := clustertest.StartS3(t, "ckpt")
	env := s3.Env()
	flags := []string{"--cluster", "etcd://" + etcd.Endpoint + "/sq", "--checkpoint-url", "s3://ckpt/sq", "--cluster-lease-ttl", "2s",
		"--checkpoint-interval", "300ms", "--cluster-exchange-timeout", "2s"}
	flags = append(flags, more...)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n3x := l.Addr().String()
	l.Close()
	proxy := faultproxy.Start(t, n3x)
	n1 := start(t, env, "n1", flags...)
	waitNodes(t, n1, "SELECT node_id, role FROM streamsql_nodes", []string{"n1|coordinator"})
	n2 := start(t, env, "n2", flags...)
	n3 := start(t, env, "n3", append(flags, "--exchange-listen", n3x, "--advertise-exchange", proxy.Addr())...)
	waitNodes(t, n1, "SELECT node_id, role FROM streamsql_nodes ORDER BY 1", []string{"n1|coordinator", "n2|worker", "n3|worker"})
	n1.exec(t, outageViews...)
	oids, err := n1.query(t, "SELECT oid FROM pg_class WHERE relname IN ('per_auction', 'per_channel') ORDER BY relname")
	if err != nil || len(oids) != 2 {
		t.Fatalf("the views' OIDs: %v %v", oids, err)
	}
	e0 := committedAfter(t, etcd.Endpoint, env, oids, 0)
	m1, m2, m3 := len(n1.out.String()), len(n2.out.String()), len(n3.out.String())
	before := bidsCounted(t, n1)

	proxy.Cut()
	cut := time.Now()
	// Both sides notice: the coordinator's views fail, n3's instances end.
	for _, what := range []string{"materialized view per_auction failed: ", "materialized view per_channel failed: "} {
		waitLogAfter(t, n1, m1, 30*time.Second, what)
	}
	detected := time.Since(cut)
	waitLogAfter(t, n3, m3, 30*time.Second, "cluster: this node's instances of job "+oids[0]+" (assignment 1) ended: ")
	// The same nodes are live: each view restarted from the checkpoint
	// over the three nodes a TTL after its failure.
	for _, oid := range oids {
		if from := restartedFrom(t, n1, m1, 60*time.Second, oid); from < e0 {
			t.Fatalf("view %s restarted from checkpoint %d, before %d committed before the cut", oid, from, e0)
		}
	}
	restarted := time.Since(cut)
	for _, l := range strings.Split(n1.out.String()[m1:], "\n") {
		if strings.Contains(l, "cluster: restarting views") && !strings.HasSuffix(l, "(3 nodes)") {
			t.Fatalf("a restart not over the three nodes: %s", l)
		}
	}
	proxy.Heal()
	healed := time.Now()
	waitEqual(t, want, 120*time.Second, n1, n2, n3)
	after := bidsCounted(t, n1)
	if after <= before {
		t.Fatalf("the cut was not mid-stream: %d bids counted before it, %d at the end", before, after)
	}
	t.Logf("exchange into n3 cut with %d bids counted: the views failed %.2f s after the cut (exchange timeout 2 s), restarted from the checkpoint %.2f s after it (lease TTL 2 s); healed after %.2f s; equal to one node %.2f s after healing",
		before, detected.Seconds(), restarted.Seconds(), healed.Sub(cut).Seconds(), time.Since(healed).Seconds())
	return n2.out.String()[m2:]
}

// waitLogAfter waits (up to d) until n's output after its first from
// bytes contains what.
func waitLogAfter(t *testing.T, n *node, from int, d time.Duration, what string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !strings.Contains(n.out.String()[from:], what) {
		if time.Now().After(deadline) {
			t.Fatalf("node %s did not log %q within %s", n.id, what, d)
		}
		time.Sleep(20 * time.Millisecond) // polling with a deadline
	}
}

// TestClusterCoordinatorCutFromEtcd: the coordinator n1 reaches etcd
// through a proxy the test cuts, while it still reaches the other nodes
// (and they etcd). Its lease expires: n2 is elected and restarts the
// views over n2 and n3 from the committed checkpoint; n1, orphaned, goes
// on answering reads of its own (now stale) views and cannot commit
// (its term is gone). When the cut heals n1 registers again, as a
// worker, the views are restarted over the three nodes, and they equal
// one streamsqld's; etcd's history shows no write of n1's term after
// n2's.
func TestClusterCoordinatorCutFromEtcd(t *testing.T) {
	want := singleRun(t, outageSingle)
	etcd := clustertest.StartEtcd(t)
	s3 := clustertest.StartS3(t, "ckpt")
	env := s3.Env()
	proxy := faultproxy.Start(t, etcd.Endpoint)
	flags := []string{"--checkpoint-url", "s3://ckpt/sq", "--cluster-lease-ttl", "2s", "--checkpoint-interval", "300ms"}
	n1 := start(t, env, "n1", append(flags, "--cluster", "etcd://"+proxy.Addr()+"/sq")...)
	waitNodes(t, n1, "SELECT node_id, role FROM streamsql_nodes", []string{"n1|coordinator"})
	n2 := start(t, env, "n2", append(flags, "--cluster", "etcd://"+etcd.Endpoint+"/sq")...)
	n3 := start(t, env, "n3", append(flags, "--cluster", "etcd://"+etcd.Endpoint+"/sq")...)
	waitNodes(t, n1, "SELECT node_id, role FROM streamsql_nodes ORDER BY 1", []string{"n1|coordinator", "n2|worker", "n3|worker"})
	n1.exec(t, outageViews...)
	oids, err := n1.query(t, "SELECT oid FROM pg_class WHERE relname IN ('per_auction', 'per_channel') ORDER BY relname")
	if err != nil || len(oids) != 2 {
		t.Fatalf("the views' OIDs: %v %v", oids, err)
	}
	e0 := committedAfter(t, etcd.Endpoint, env, oids, 0)
	m1, m2 := len(n1.out.String()), len(n2.out.String())

	proxy.Cut()
	cut := time.Now()
	for _, oid := range oids {
		if from := restartedFrom(t, n2, m2, 60*time.Second, oid); from < e0 {
			t.Fatalf("n2 restarted view %s from checkpoint %d, before %d committed before the cut", oid, from, e0)
		}
	}
	elected := time.Since(cut)
	waitLogAfter(t, n1, m1, 30*time.Second, "node n1 lost its lease")
	if _, err := n1.query(t, clusterReads[1]); err != nil {
		t.Fatalf("the orphaned n1 does not answer %s: %v", clusterReads[1], err)
	}
	proxy.Heal()
	healed := time.Now()
	waitNodes(t, n2, "SELECT node_id, role FROM streamsql_nodes ORDER BY 1", []string{"n1|worker", "n2|coordinator", "n3|worker"})
	waitLogAfter(t, n2, m2, 60*time.Second, "(3 nodes)")
	waitEqual(t, want, 120*time.Second, n1, n2, n3)
	terms, epochs := fencedHistory(t, etcd.Endpoint)
	t.Logf("n1 cut from etcd: n2 restarted the views as coordinator %.2f s after the cut; healed after %.2f s, equal to one node %.2f s later; terms %v; %d checkpoints committed",
		elected.Seconds(), healed.Sub(cut).Seconds(), time.Since(healed).Seconds(), terms, len(epochs))
}

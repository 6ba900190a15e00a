package cluster_test

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/streamsql/streamsql/cluster"
	"github.com/streamsql/streamsql/cluster/clustertest"
)

// threeNodes starts etcd, an S3 store and nodes n1 (the coordinator), n2
// and n3 with 2 s leases and 300 ms checkpoints, and creates pacedViews
// on n1; it returns the nodes, the views' OIDs, the etcd endpoint and the
// store's environment.
func threeNodes(t *testing.T) (n1, n2, n3 *node, oids []string, endpoint string, env []string) {
	t.Helper()
	return threeNodesOn(t, clustertest.StartS3(t, "ckpt"), pacedViews)
}

// threeNodesOn is threeNodes with the store s3, the statements views and
// more flags for every node.
func threeNodesOn(t *testing.T, s3 *clustertest.S3, views []string, more ...string) (n1, n2, n3 *node, oids []string, endpoint string, env []string) {
	t.Helper()
	return threeNodesWith(t, clustertest.StartEtcd(t), s3, views, more...)
}

// threeNodesWith is threeNodesOn with the etcd etcd.
func threeNodesWith(t *testing.T, etcd *clustertest.Etcd, s3 *clustertest.S3, views []string, more ...string) (n1, n2, n3 *node, oids []string, endpoint string, env []string) {
	t.Helper()
	env = s3.Env()
	flags := []string{"--cluster", "etcd://" + etcd.Endpoint + "/sq", "--checkpoint-url", "s3://ckpt/sq", "--cluster-lease-ttl", "2s",
		"--checkpoint-interval", "300ms"}
	flags = append(flags, more...)
	n1 = start(t, env, "n1", flags...)
	waitNodes(t, n1, "SELECT node_id, role FROM streamsql_nodes", []string{"n1|coordinator"})
	n2 = start(t, env, "n2", flags...)
	n3 = start(t, env, "n3", flags...)
	waitNodes(t, n1, "SELECT node_id, role FROM streamsql_nodes ORDER BY 1", []string{"n1|coordinator", "n2|worker", "n3|worker"})
	n1.exec(t, views...)
	oids, err := n1.query(t, "SELECT oid FROM pg_class WHERE relname IN ('per_auction', 'per_channel') ORDER BY relname")
	if err != nil || len(oids) != 2 {
		t.Fatalf("the views' OIDs: %v %v", oids, err)
	}
	return n1, n2, n3, oids, etcd.Endpoint, env
}

// TestClusterCoordinatorKilledRestores: kill -9 of the coordinator
// mid-stream. n2 wins the election once n1's lease expires, restarts
// both views from the committed checkpoint as their coordinator (the
// sources, exchanges and the views' rows now on n2; n3's instances
// restored from the object store), and the views on n2 and n3 equal one
// streamsqld's on the same input.
func TestClusterCoordinatorKilledRestores(t *testing.T) {
	want := singleRun(t, unpacedViews)
	n1, n2, n3, oids, endpoint, env := threeNodes(t)
	committedAfter(t, endpoint, env, oids, 0)
	before := bidsCounted(t, n1)
	n1.kill()
	killed := time.Now()
	for _, oid := range oids {
		waitLog(t, n2, 60*time.Second, "cluster: view "+oid+" restarted from checkpoint ")
		waitLog(t, n3, 30*time.Second, "cluster: job "+oid+" restarted on this node from checkpoint ")
	}
	restarted := time.Since(killed)
	waitEqual(t, want, 120*time.Second, n2, n3)
	t.Logf("kill -9 of the coordinator with %d bids counted: n2 restarted the views %.2f s after the kill, equal to one node %.2f s after it",
		before, restarted.Seconds(), time.Since(killed).Seconds())
}

// pause stops n (SIGSTOP) and returns the function that resumes it
// (SIGCONT), called at the test's end if the test did not.
func pause(t *testing.T, n *node) (resume func()) {
	t.Helper()
	if err := n.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	resume = func() { once.Do(func() { n.cmd.Process.Signal(syscall.SIGCONT) }) }
	t.Cleanup(resume)
	return resume
}

var leaseRE = regexp.MustCompile(`node n3 registered in \S+ \(lease ([0-9a-f]+),`)

// TestClusterZombieWorker: SIGSTOP of the worker n3 past its lease. The
// coordinator restarts the views without it; on SIGCONT n3 finds its
// lease gone, registers as a new incarnation and the views are restarted
// again over the three nodes. No checkpoint committed after the first
// restart names an object of n3's first incarnation, and the views equal
// one streamsqld's.
func TestClusterZombieWorker(t *testing.T) {
	want := singleRun(t, unpacedViews)
	n1, n2, n3, oids, endpoint, env := threeNodes(t)
	committedAfter(t, endpoint, env, oids, 0)
	resume := pause(t, n3)
	waitLog(t, n1, 60*time.Second, "with assignment 2 (2 nodes)", "cluster: restart of views ["+oids[0]+" "+oids[1]+"] done")
	resume()
	// n3 comes back as another incarnation; the views are restarted
	// over the three nodes.
	deadline := time.Now().Add(60 * time.Second)
	var leases [][]string
	for {
		leases = leaseRE.FindAllStringSubmatch(n3.out.String(), -1)
		if len(leases) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("n3 did not register again after SIGCONT:\n%s", n3.out.String())
		}
		time.Sleep(50 * time.Millisecond) // polling with a deadline
	}
	waitLog(t, n1, 60*time.Second, "with assignment 3 (3 nodes)")
	for _, oid := range oids {
		waitLog(t, n3, 30*time.Second, "cluster: job "+oid+" restarted on this node from checkpoint ")
	}
	waitEqual(t, want, 120*time.Second, n1, n2, n3)
	// Every checkpoint committed now names n3's objects only of its new
	// incarnation.
	old := "/nodes/n3-" + leases[0][1] + "/"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cli, store := openCheckpoints(t, ctx, endpoint, env)
	var err error
	var p cluster.Pointer
	n3objs := 0
	for n3objs == 0 {
		if ctx.Err() != nil {
			t.Fatalf("no checkpoint with an object of n3's new incarnation committed (last %d)", p.Epoch)
		}
		var ok bool
		p, _, ok, err = cluster.ReadPointer(ctx, cli, "/sq")
		if err != nil || !ok {
			t.Fatalf("pointer: %v %v", ok, err)
		}
		m, err := store.ReadManifest(ctx, p.Manifest)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range m.Objects {
			if strings.Contains(o.Key, old) {
				t.Fatalf("checkpoint %d names %s, an object of n3's first incarnation", p.Epoch, o.Key)
			}
			if o.Node == "n3" {
				n3objs++
			}
		}
		time.Sleep(100 * time.Millisecond) // polling with the context's deadline
	}
	t.Logf("n3 paused past its lease and resumed as lease %s (was %s); checkpoint %d names %d objects of the new incarnation", leases[1][1], leases[0][1], p.Epoch, n3objs)
}

// TestClusterZombieCoordinator views: SIGSTOP of the coordinator n1 past
// its lease while the views run. n2 wins the election and restarts the
// views as their coordinator; on SIGCONT n1 finds its lease gone and
// registers again as a worker, and n2 restarts the views over the three
// nodes. n1 commits nothing after SIGCONT (every pointer from then on is
// n2's term), and the views equal one streamsqld's on every node (n1
// reads them from n2 now).
func TestClusterZombieCoordinatorViews(t *testing.T) {
	want := singleRun(t, unpacedViews)
	n1, n2, n3, oids, endpoint, env := threeNodes(t)
	committedAfter(t, endpoint, env, oids, 0)
	resume := pause(t, n1)
	for _, oid := range oids {
		waitLog(t, n2, 60*time.Second, "cluster: view "+oid+" restarted from checkpoint ")
	}
	resume()
	resumed := len(n1.out.String())
	waitNodes(t, n2, "SELECT node_id, role FROM streamsql_nodes ORDER BY 1", []string{"n1|worker", "n2|coordinator", "n3|worker"})
	waitLog(t, n2, 60*time.Second, "(3 nodes)")
	for _, oid := range oids {
		waitLog(t, n1, 30*time.Second, "cluster: job "+oid+" restarted on this node from checkpoint ")
	}
	waitEqual(t, want, 120*time.Second, n1, n2, n3)
	// n1 may log after SIGCONT a commit whose transaction etcd applied
	// before its lease expired (its reply waited in the paused process):
	// that one is at most the checkpoint n2 restarted from. A later one
	// would be the zombie's.
	took := regexp.MustCompile(`cluster: view \d+ restarted from checkpoint (\d+)`).FindStringSubmatch(n2.out.String())
	if took == nil {
		t.Fatalf("n2 restarted no view from a checkpoint:\n%s", n2.out.String())
	}
	from, _ := strconv.ParseUint(took[1], 10, 64)
	for _, m := range regexp.MustCompile(`cluster: checkpoint (\d+) committed in`).FindAllStringSubmatch(n1.out.String()[resumed:], -1) {
		if e, _ := strconv.ParseUint(m[1], 10, 64); e > from {
			t.Fatalf("the zombie coordinator committed checkpoint %d after SIGCONT, after n2 took over from %d:\n%s", e, from, n1.out.String()[resumed:])
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cli, _ := openCheckpoints(t, ctx, endpoint, env)
	p, _, ok, err := cluster.ReadPointer(ctx, cli, "/sq")
	if err != nil || !ok || p.Coordinator != "n2" {
		t.Fatalf("pointer %+v (%v %v): want one committed by n2", p, ok, err)
	}
	t.Logf("n1 paused past its lease, resumed as a worker; checkpoint %d committed by n2 (term %d)", p.Epoch, p.Term)
}

package cluster_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/cluster"
	"github.com/streamsql/streamsql/cluster/clustertest"
)

// The views of the restore tests: clusterViews over a paced input (about
// 8 s of it at 7 500 events/s), so that a node can be killed mid-stream,
// and the same input unpaced (the pace changes event times only, which
// the views do not read) for the single-node run, whose FLUSH waits for
// the end of a finite input. A paced input is not finite: the cluster's
// views are polled until they equal the single node's, with a deadline.
var (
	pacedViews   = bidViews(60000, 7500)
	unpacedViews = bidViews(60000, 0)
)

// bidViews are clusterViews over a source of events Nexmark events,
// paced at eps events per second (0: as fast as they are read).
func bidViews(events, eps int) []string {
	src := fmt.Sprintf("CREATE SOURCE bid WITH (connector = 'nexmark', table = 'bid', events = '%d'", events)
	if eps > 0 {
		src += fmt.Sprintf(", events_per_second = '%d'", eps)
	}
	return append([]string{src + ")"}, clusterViews[1:]...)
}

// restartedFrom waits (up to d) until n logged, after the first from
// bytes of its output, that view oid restarted from a checkpoint, and
// returns the checkpoint's epoch.
func restartedFrom(t *testing.T, n *node, from int, d time.Duration, oid string) uint64 {
	t.Helper()
	what := "cluster: view " + oid + " restarted from checkpoint "
	waitLogAfter(t, n, from, d, what)
	out := n.out.String()[from:]
	var epoch uint64
	fmt.Sscanf(out[strings.Index(out, what)+len(what):], "%d", &epoch)
	return epoch
}

// waitEqual polls every node's reads until they equal want, up to d.
func waitEqual(t *testing.T, want [][]string, d time.Duration, nodes ...*node) {
	t.Helper()
	waitReads(t, clusterReads, want, d, nodes...)
}

// waitLog waits (up to d) until n's output contains every one of what.
func waitLog(t *testing.T, n *node, d time.Duration, what ...string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		out := n.out.String()
		missing := ""
		for _, w := range what {
			if !strings.Contains(out, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s did not log %q within %s", n.id, missing, d)
		}
		time.Sleep(20 * time.Millisecond) // polling with a deadline
	}
}

// singleRun is the single-node result of views: the rows of each of
// clusterReads after FLUSH.
func singleRun(t *testing.T, views []string) [][]string {
	t.Helper()
	return singleReads(t, views, clusterReads)
}

// singleReads is the single-node result of views: the rows of each of
// reads after FLUSH (at least 3 each).
func singleReads(t *testing.T, views, reads []string) [][]string {
	t.Helper()
	single := launch(t, nil, "single")
	single.exec(t, views...)
	single.exec(t, "FLUSH")
	var want [][]string
	for _, q := range reads {
		rows, err := single.query(t, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) < 3 {
			t.Fatalf("%s: %d rows on one node prove little", q, len(rows))
		}
		want = append(want, rows)
	}
	single.kill()
	return want
}

// checkEqual checks that every node's reads equal want.
func checkEqual(t *testing.T, want [][]string, nodes ...*node) {
	t.Helper()
	for i, q := range clusterReads {
		for _, n := range nodes {
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

// bidsCounted is how many bids per_auction has counted on n.
func bidsCounted(t *testing.T, n *node) int {
	t.Helper()
	rows, err := n.query(t, "SELECT coalesce(sum(n), 0)::int8 FROM per_auction")
	if err != nil || len(rows) != 1 {
		t.Fatalf("count on %s: %v %v", n.id, rows, err)
	}
	c, err := strconv.Atoi(rows[0])
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestClusterWorkerKilledRestores: three nodes run two views over a
// paced Nexmark input; once a cluster checkpoint with the views' state
// is committed and while the input is still being read, kill -9 of the
// worker n3. When its lease expires the coordinator restarts both views
// from the committed checkpoint with n3's vnodes reassigned to n1 and n2
// (n2 restores n3's instances from the object store), the source resumes
// at the checkpoint's position, and after FLUSH both views on both live
// nodes equal one streamsqld without --cluster on the same input. The
// time from the kill to the restart and to the complete views is logged.
func TestClusterWorkerKilledRestores(t *testing.T) {
	want := singleRun(t, unpacedViews)
	n1, n2, n3, oids, endpoint, env := threeNodes(t)
	// A committed checkpoint with state on n2 and n3, mid-stream.
	checkCommitted(t, endpoint, "/sq", env, oids[0], oids[1], 200)
	before := bidsCounted(t, n1)
	n3.kill()
	killed := time.Now()
	waitLog(t, n1, 60*time.Second, "cluster: restart of views ["+oids[0]+" "+oids[1]+"] done")
	restarted := time.Since(killed)
	for _, oid := range oids {
		waitLog(t, n1, time.Second, "cluster: view "+oid+" restarted from checkpoint ")
		waitLog(t, n2, 30*time.Second, "cluster: job "+oid+" restarted on this node from checkpoint ")
	}
	// n2 runs n3's instances now: per_auction's 2 and 3 of 4.
	waitLog(t, n2, 30*time.Second, "cluster: job "+oids[0]+" operator 0: this node runs instances [2,4) of 4, vnodes [128,256), assignment 2")
	waitEqual(t, want, 120*time.Second, n1, n2)
	complete := time.Since(killed)
	after := bidsCounted(t, n1)
	if before >= after {
		t.Fatalf("the kill was not mid-stream: %d bids counted before it, %d at the end", before, after)
	}
	t.Logf("kill -9 of n3 with %d of %d bids counted: views restarted %.2f s after the kill (lease TTL 2 s), complete and equal to one node %.2f s after it",
		before, after, restarted.Seconds(), complete.Seconds())
}

// committedAfter waits (up to 60 s) until the committed pointer names a
// checkpoint after epoch that has the coordinator's part, state of
// per_auction (job oids[0]) in a worker's upload and an upload of
// per_channel (oids[1]), and returns its epoch.
func committedAfter(t *testing.T, endpoint string, env []string, oids []string, after uint64) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cli, store := openCheckpoints(t, ctx, endpoint, env)
	last := "nothing committed"
	for {
		if ctx.Err() != nil {
			t.Fatalf("no checkpoint after %d with per_auction's state committed: %s", after, last)
		}
		p, _, ok, err := cluster.ReadPointer(ctx, cli, "/sq")
		if err != nil {
			t.Fatal(err)
		}
		if ok && p.Epoch > after {
			ck, err := store.Recover(ctx, p)
			if err != nil {
				t.Fatalf("committed checkpoint %d: %v", p.Epoch, err)
			}
			keys, coord, channel := 0, 0, 0
			for _, o := range ck.Manifest.Objects {
				if strings.HasPrefix(o.Op, "coord/") {
					coord++
				}
				if strings.HasPrefix(o.Op, oids[1]+".") {
					channel++
				}
			}
			keys = chainKeys(t, ck, oids[0]+".") // views_test.go
			if keys > 0 && coord >= 2 && channel > 0 {
				return p.Epoch
			}
			last = fmt.Sprintf("checkpoint %d: %d keys of per_auction in uploads, %d of per_channel's objects, %d files of the coordinator", p.Epoch, keys, channel, coord)
		}
		time.Sleep(100 * time.Millisecond) // polling with the context's deadline
	}
}

// rescaleViews: 45 000 events at 3 000 events/s (15 s), for two whole
// cluster restarts mid-stream.
var (
	rescaleViews  = bidViews(45000, 3000)
	rescaleSingle = bidViews(45000, 0)
)

// TestClusterRestartRescale: the whole cluster is killed (kill -9 of
// every node) and started again with empty data directories, twice,
// each time mid-stream: 2 nodes, then 3, then 1. Each time the nodes
// replay the statement log, the coordinator restarts both views from the
// committed checkpoint with the vnodes assigned over the new nodes (the
// state of an instance comes from whichever node uploaded it, the
// coordinator's part included), the source resumes at the checkpoint's
// position, and at the end the views equal one streamsqld without
// --cluster on the same input.
func TestClusterRestartRescale(t *testing.T) {
	want := singleRun(t, rescaleSingle)
	etcd := clustertest.StartEtcd(t)
	s3 := clustertest.StartS3(t, "ckpt")
	env := s3.Env()
	flags := []string{"--cluster", "etcd://" + etcd.Endpoint + "/sq", "--checkpoint-url", "s3://ckpt/sq", "--cluster-lease-ttl", "2s",
		"--checkpoint-interval", "300ms"}
	boot := func(ids ...string) []*node {
		var nodes []*node
		for i, id := range ids {
			n := start(t, env, id, flags...)
			if i == 0 {
				waitNodes(t, n, "SELECT node_id, role FROM streamsql_nodes WHERE node_id = '"+id+"'", []string{id + "|coordinator"})
			}
			nodes = append(nodes, n)
		}
		var rows []string
		for i, id := range ids {
			role := "worker"
			if i == 0 {
				role = "coordinator"
			}
			rows = append(rows, id+"|"+role)
		}
		waitNodes(t, nodes[0], "SELECT node_id, role FROM streamsql_nodes ORDER BY 1", rows)
		return nodes
	}
	nodes := boot("n1", "n2")
	nodes[0].exec(t, rescaleViews...)
	oids, err := nodes[0].query(t, "SELECT oid FROM pg_class WHERE relname IN ('per_auction', 'per_channel') ORDER BY relname")
	if err != nil || len(oids) != 2 {
		t.Fatalf("the views' OIDs: %v %v", oids, err)
	}
	var epoch uint64
	for _, ids := range [][]string{{"n1", "n2", "n3"}, {"n1"}} {
		epoch = committedAfter(t, etcd.Endpoint, env, oids, epoch)
		before, was := bidsCounted(t, nodes[0]), len(nodes)
		for _, n := range nodes {
			n.kill()
		}
		stopped := time.Now()
		nodes = boot(ids...)
		for _, oid := range oids {
			waitLog(t, nodes[0], 60*time.Second, "cluster: view "+oid+" restarted from checkpoint ")
		}
		restarted := time.Since(stopped)
		// It resumed from the checkpoint committed before the kill, or a
		// later one (a commit in flight at the kill).
		out := nodes[0].out.String()
		i := strings.Index(out, "cluster: view "+oids[0]+" restarted from checkpoint ")
		var from uint64
		fmt.Sscanf(out[i+len("cluster: view "+oids[0]+" restarted from checkpoint "):], "%d", &from)
		if from < epoch {
			t.Fatalf("restarted from checkpoint %d, before %d committed before the kill", from, epoch)
		}
		epoch = from
		for _, n := range nodes[1:] {
			for _, oid := range oids {
				waitLog(t, n, 30*time.Second, "cluster: job "+oid+" restarted on this node from checkpoint ")
			}
		}
		t.Logf("%d nodes -> %d: with %d bids counted, killed; started again, views restarted from checkpoint %d %.2f s after the kill",
			was, len(ids), before, from, restarted.Seconds())
	}
	waitEqual(t, want, 120*time.Second, nodes...)
	if after := bidsCounted(t, nodes[0]); after != 41400 {
		t.Fatalf("%d bids counted at the end, want 41400", after)
	}
}

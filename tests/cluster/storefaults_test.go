package cluster_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/streamsql/streamsql/cluster"
	"github.com/streamsql/streamsql/cluster/clustertest"
	"github.com/streamsql/streamsql/cluster/objstore"
)

// slowViews: 120 000 events at 3 000 events/s (40 s of input), so that
// three store outages, their recoveries and a kill all happen mid-stream;
// slowSingle the same input unpaced, for the single node.
var (
	slowViews  = bidViews(120000, 3000)
	slowSingle = bidViews(120000, 0)
)

// checkpointKeys matches the PUTs of checkpoint objects (state objects
// and manifests) of the cluster's store s3://ckpt/sq.
const checkpointKeys = "/ckpt/sq/epochs/"

// readCommitted reads the committed pointer and checks that the
// checkpoint it names is whole: its manifest and every object the
// manifest names exist and have the size and CRC it says
// (objstore.Store.Load, which, unlike Recover, never falls back).
func readCommitted(t *testing.T, ctx context.Context, cli *clientv3.Client, store *objstore.Store) cluster.Pointer {
	t.Helper()
	p, _, ok, err := cluster.ReadPointer(ctx, cli, "/sq")
	if err != nil || !ok {
		t.Fatalf("committed pointer: %v (found %v)", err, ok)
	}
	ck, err := store.Load(ctx, p.Manifest)
	if err != nil {
		t.Fatalf("the committed checkpoint %d is not whole: %v", p.Epoch, err)
	}
	if len(ck.Manifest.Objects) == 0 || ck.Manifest.Epoch != p.Epoch {
		t.Fatalf("the committed checkpoint %d: manifest of epoch %d with %d objects", p.Epoch, ck.Manifest.Epoch, len(ck.Manifest.Objects))
	}
	return p
}

// failedCommits counts the checkpoints n's log after offset from says
// were not committed, and how many of those say why with one of why.
func failedCommits(n *node, from int, why []string) (failed, because int) {
	for _, l := range strings.Split(n.out.String()[from:], "\n") {
		if !strings.Contains(l, "cluster: checkpoint ") || !strings.Contains(l, " not committed") {
			continue
		}
		failed++
		for _, w := range why {
			if strings.Contains(l, w) {
				because++
				break
			}
		}
	}
	return failed, because
}

// storeOutage makes the checkpoint PUTs of s3 whose path contains match
// meet fault until at least
// 3 s passed and three checkpoints failed for one of why (n1's log);
// meanwhile the committed pointer stays and names a whole checkpoint,
// and the views answer on n1 and n2 and keep counting. Then the store
// recovers, and storeOutage waits for the next commit. It returns what
// it measured, for the log, and the epoch committed before the outage.
func storeOutage(t *testing.T, ctx context.Context, s3 *clustertest.S3, fault clustertest.Fault, match string, why []string,
	cli *clientv3.Client, store *objstore.Store, n1, n2 *node) (string, uint64) {
	t.Helper()
	// A commit in flight may still move the pointer once (its manifest
	// was written before); from the first failed commit on, it stays.
	mark, hits := len(n1.out.String()), s3.Faults.Hits()
	s3.Faults.Set(fault, match)
	began := time.Now()
	deadline := began.Add(60 * time.Second)
	for f, _ := failedCommits(n1, mark, why); f == 0; f, _ = failedCommits(n1, mark, why) {
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint failed within 60 s of the store's fault %d (%d PUTs met it)", fault, s3.Faults.Hits()-hits)
		}
		time.Sleep(50 * time.Millisecond) // polling with a deadline
	}
	p0 := readCommitted(t, ctx, cli, store)
	before := bidsCounted(t, n1)
	base, _ := failedCommits(n1, mark, why)
	for {
		if p := readCommitted(t, ctx, cli, store); p.Epoch != p0.Epoch {
			t.Fatalf("the pointer moved from %d to %d during the store's fault %d", p0.Epoch, p.Epoch, fault)
		}
		for _, n := range []*node{n1, n2} {
			if _, err := n.query(t, clusterReads[0]); err != nil {
				t.Fatalf("%s on %s during the store's fault %d: %v", clusterReads[0], n.id, fault, err)
			}
		}
		f, because := failedCommits(n1, mark, why)
		if f >= base+3 && because >= 3 && time.Since(began) >= 3*time.Second {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d checkpoints failed (%d for %q) within 60 s of the store's fault %d", f, because, why, fault)
		}
		time.Sleep(100 * time.Millisecond) // polling with a deadline
	}
	during := bidsCounted(t, n1)
	if during <= before {
		t.Fatalf("the views stopped counting during the store's fault %d: %d bids, then %d", fault, before, during)
	}
	failed, because := failedCommits(n1, mark, why)

	s3.Faults.Set(clustertest.FaultNone, "")
	recovered := time.Now()
	p1 := readCommitted(t, ctx, cli, store)
	for ; p1.Epoch == p0.Epoch; p1 = readCommitted(t, ctx, cli, store) {
		if time.Since(recovered) > 60*time.Second {
			t.Fatalf("nothing committed within 60 s of the store's recovery (still %d)", p0.Epoch)
		}
		time.Sleep(20 * time.Millisecond) // polling with a deadline
	}
	if p1.Epoch < p0.Epoch {
		t.Fatalf("the pointer went back from %d to %d", p0.Epoch, p1.Epoch)
	}
	return fmt.Sprintf("fault %d for %.2f s (%d PUTs met it; %d then %d bids counted): %d checkpoints not committed (%d for %q), the pointer stayed at %d; "+
		"the next commit %.2f s after the recovery, %.2f s after the fault began",
		fault, recovered.Sub(began).Seconds(), s3.Faults.Hits()-hits, before, during, failed, because, why, p0.Epoch,
		time.Since(recovered).Seconds(), time.Since(began).Seconds()), p0.Epoch
}

// TestClusterObjectStoreFaults: three nodes run two views over a paced
// input, checkpoints every 300 ms, --cluster-checkpoint-timeout 2s.
// Once a checkpoint with the views' state is committed, the store in
// front of gofakes3 (clustertest.Faults) first answers every PUT of a
// checkpoint object with 500, then holds them unanswered, then holds
// only the manifests' PUTs (every state object of those epochs is
// uploaded, their manifests are not). While it
// does, checkpoints are attempted and fail (a worker's failed upload is
// reported and aborts the epoch at once; a stall fails the uploads and
// the commit after the timeout), the committed pointer does not move and
// names a whole checkpoint (manifest and every object present and
// verified), and the views answer SELECT on the coordinator and a worker
// and keep counting. After each recovery checkpoints commit again; then
// kill -9 of the worker n3 restores the views from a checkpoint
// committed after the outages, and they equal one streamsqld's on the
// same input.
func TestClusterObjectStoreFaults(t *testing.T) {
	want := singleRun(t, slowSingle)
	s3 := clustertest.StartS3(t, "ckpt")
	n1, n2, n3, oids, endpoint, env := threeNodesOn(t, s3, slowViews, "--cluster-checkpoint-timeout", "2s")
	committedAfter(t, endpoint, env, oids, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cli, store := openCheckpoints(t, ctx, endpoint, env)

	failing, _ := storeOutage(t, ctx, s3, clustertest.FaultFail, checkpointKeys, []string{"failed to upload its state", "objstore: put"}, cli, store, n1, n2)
	t.Log("500s: " + failing)
	stalling, _ := storeOutage(t, ctx, s3, clustertest.FaultStall, checkpointKeys, []string{"deadline exceeded", "did not report within"}, cli, store, n1, n2)
	t.Log("stalls: " + stalling)
	// Only the manifests stall: every state object of an epoch is
	// uploaded, its manifest never is.
	manifests, epoch := storeOutage(t, ctx, s3, clustertest.FaultStall, "/MANIFEST", []string{"/MANIFEST"}, cli, store, n1, n2)
	t.Log("manifest stalls: " + manifests)

	// A checkpoint with the views' state after the outages; a worker's
	// loss restores from it.
	e := committedAfter(t, endpoint, env, oids, epoch)
	during := bidsCounted(t, n1)
	n3.kill()
	waitLog(t, n1, 60*time.Second, "cluster: restart of views ["+oids[0]+" "+oids[1]+"] done")
	for _, oid := range oids {
		waitLog(t, n1, time.Second, "cluster: view "+oid+" restarted from checkpoint ")
	}
	waitEqual(t, want, 120*time.Second, n1, n2)
	if after := bidsCounted(t, n1); during >= after {
		t.Fatalf("the kill was not mid-stream: %d bids counted at the kill, %d at the end", during, after)
	}
	t.Logf("kill -9 of n3 after checkpoint %d (with %d bids counted): views restored and equal to one node", e, during)
}

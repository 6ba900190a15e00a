package cluster_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/cluster/clustertest"
)

// TestClusterStoreFaultsDuringRestore: the object store fails while a
// restart reads the committed checkpoint. Three nodes run two views over
// a paced input; once a checkpoint with their state is committed, every
// read of a checkpoint's state object is answered 500 and the worker n3
// is killed: the coordinator cannot read the checkpoint, so it restarts
// nothing (it logs the restart as postponed and tries again), never
// from the views' inputs; when the store answers again it restarts them
// from the checkpoint over n1 and n2. Then n3 comes back while only the
// first read of each checkpoint object succeeds (the coordinator's):
// the workers' reads fail, so they retry with backoff and start their
// instances only once the store answers again, restored from the
// checkpoint. The views equal one streamsqld's.
func TestClusterStoreFaultsDuringRestore(t *testing.T) {
	storeFaultsDuringRestore(t, "answered 500", clustertest.FaultFail, clustertest.FaultFailAfterFirst)
}

// TestClusterStoreStallsDuringRestore is TestClusterStoreFaultsDuringRestore
// with reads that the store never answers instead of errors: each read
// of the checkpoint (the coordinator's, a worker's attempt) is given up
// after --cluster-checkpoint-timeout (2 s here) and tried again; without
// that bound the coordinator's supervision waits on its first read for
// as long as the store holds it, and nothing is restarted.
func TestClusterStoreStallsDuringRestore(t *testing.T) {
	storeFaultsDuringRestore(t, "held unanswered", clustertest.FaultStall, clustertest.FaultStallAfterFirst)
}

// storeFaultsDuringRestore is both tests: fault on every read of the
// state objects while the coordinator restarts, afterFirst on the
// workers' reads when n3 comes back.
func storeFaultsDuringRestore(t *testing.T, what string, fault, afterFirst clustertest.Fault) {
	want := singleRun(t, outageSingle)
	s3 := clustertest.StartS3(t, "ckpt")
	n1, n2, n3, oids, endpoint, env := threeNodesOn(t, s3, outageViews, "--cluster-checkpoint-timeout", "2s")
	flags := []string{"--cluster", "etcd://" + endpoint + "/sq", "--checkpoint-url", "s3://ckpt/sq", "--cluster-lease-ttl", "2s",
		"--checkpoint-interval", "300ms", "--cluster-checkpoint-timeout", "2s"}
	e0 := committedAfter(t, endpoint, env, oids, 0)

	// The coordinator's reads fail.
	m1 := len(n1.out.String())
	// The state objects (the workers' and the coordinator's files), not
	// the manifests: the coordinator finds the checkpoint and cannot
	// read it.
	s3.Faults.SetMethod(http.MethodGet, fault, "/nodes/")
	n3.kill()
	killed := time.Now()
	deadline := killed.Add(60 * time.Second)
	for {
		out := n1.out.String()[m1:]
		for _, bad := range []string{"cluster: restarting views", "restarts from its inputs"} {
			if strings.Contains(out, bad) {
				t.Fatalf("n1 restarted views while the store failed every read:\n%s", out)
			}
		}
		if strings.Count(out, "postponed: ") >= 3 && time.Since(killed) >= 3*time.Second {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("n1 did not try (and postpone) the restart three times within 60 s:\n%s", out)
		}
		time.Sleep(50 * time.Millisecond) // polling with a deadline
	}
	postponed := strings.Count(n1.out.String()[m1:], "postponed: ")
	hits := s3.Faults.Hits()
	s3.Faults.Set(clustertest.FaultNone, "")
	healed := time.Now()
	var from uint64
	for _, oid := range oids {
		if from = restartedFrom(t, n1, m1, 60*time.Second, oid); from < e0 {
			t.Fatalf("view %s restarted from checkpoint %d, before %d committed before the kill", oid, from, e0)
		}
	}
	t.Logf("kill -9 of n3 with every state read %s: restart postponed %d times (%d reads met the fault) in %.2f s; restarted from checkpoint %d %.2f s after the store recovered",
		what, postponed, hits, healed.Sub(killed).Seconds(), from, time.Since(healed).Seconds())

	// The workers' reads fail: n3 comes back, the views are restarted
	// over three nodes from a checkpoint the coordinator reads first.
	committedAfter(t, endpoint, env, oids, from)
	m1, m2 := len(n1.out.String()), len(n2.out.String())
	s3.Faults.SetMethod(http.MethodGet, afterFirst, checkpointKeys)
	n3 = start(t, env, "n3", flags...)
	waitLogAfter(t, n1, m1, 60*time.Second, "(3 nodes)")
	for _, w := range []struct {
		n    *node
		from int
	}{{n3, 0}, {n2, m2}} {
		waitLogAfter(t, w.n, w.from, 60*time.Second, "cannot be read (attempt 3)")
		if out := w.n.out.String()[w.from:]; strings.Contains(out, "restarted on this node from") {
			t.Fatalf("%s restarted its instances while it could not read the checkpoint:\n%s", w.n.id, out)
		}
	}
	hits = s3.Faults.Hits() - hits
	s3.Faults.Set(clustertest.FaultNone, "")
	healed = time.Now()
	for _, oid := range oids {
		waitLogAfter(t, n3, 0, 60*time.Second, "cluster: job "+oid+" restarted on this node from checkpoint ")
	}
	t.Logf("n3 back with the workers' reads %s (%d reads): its instances restored %.2f s after the store recovered",
		what, hits, time.Since(healed).Seconds())
	waitEqual(t, want, 120*time.Second, n1, n2, n3)
	for _, n := range []*node{n1, n2, n3} {
		if out := n.out.String(); strings.Contains(out, "restarts from its inputs") || strings.Contains(out, "restarted on this node from its inputs") {
			t.Fatalf("%s restarted a view from its inputs:\n%s", n.id, out)
		}
	}
}

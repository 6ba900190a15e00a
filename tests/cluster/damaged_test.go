package cluster_test

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/cluster"
	"github.com/streamsql/streamsql/cluster/clustertest"
	"github.com/streamsql/streamsql/cluster/objstore"
)

// TestClusterDamagedCheckpoint: the committed checkpoint is damaged in
// the store (an object its manifest names deleted and another
// overwritten, or the manifest itself overwritten, or a view's part of
// it and of the previous one deleted) and then the worker n3 is killed.
// The coordinator's restart verifies what it reads (sizes, CRCs), finds
// the pointer's checkpoint damaged and restarts the views from the
// pointer's previous checkpoint, from their inputs only when that is
// damaged too;
// the workers restore from it too; commits resume after it, and the
// views equal one streamsqld's over the same input. While the store is
// damaged its manifests' PUTs are held, so that the pointer cannot move
// past the damage before the restart.
func TestClusterDamagedCheckpoint(t *testing.T) {
	want := singleRun(t, outageSingle)
	for _, c := range []struct {
		name string
		// damage damages checkpoint p names (its manifest m; prev is
		// p's previous one) in the store and returns what n1 logs for it
		// and the checkpoint each view restarts from (0: its inputs).
		damage func(t *testing.T, s3 *clustertest.S3, p cluster.Pointer, m, prev *objstore.Manifest, oids []string) ([]string, []uint64)
	}{
		{"objects", func(t *testing.T, s3 *clustertest.S3, p cluster.Pointer, m, _ *objstore.Manifest, oids []string) ([]string, []uint64) {
			gone := workerObject(t, m, oids[0])
			if _, err := s3.Backend.DeleteObject("ckpt", gone.Key); err != nil {
				t.Fatal(err)
			}
			bad := workerObject(t, m, oids[1])
			overwrite(t, s3, bad.Key, int(bad.Size))
			return []string{"cluster: view " + oids[0] + " restores from the previous checkpoint, ",
				"cluster: view " + oids[1] + " restores from the previous checkpoint, "}, []uint64{p.Previous, p.Previous}
		}},
		{"manifest", func(t *testing.T, s3 *clustertest.S3, p cluster.Pointer, _, _ *objstore.Manifest, _ []string) ([]string, []uint64) {
			overwrite(t, s3, p.Manifest, 200)
			return []string{"cannot be read (objstore: checkpoint damaged: manifest "}, []uint64{p.Previous, p.Previous}
		}},
		// per_auction's part damaged in both checkpoints: it restarts
		// from its inputs (a Nexmark source replays exactly), per_channel
		// from the pointer's checkpoint.
		{"previous-too", func(t *testing.T, s3 *clustertest.S3, p cluster.Pointer, m, prev *objstore.Manifest, oids []string) ([]string, []uint64) {
			for _, o := range []objstore.Object{workerObject(t, m, oids[0]), workerObject(t, prev, oids[0])} {
				if _, err := s3.Backend.DeleteObject("ckpt", o.Key); err != nil {
					t.Fatal(err)
				}
			}
			return []string{"cluster: view " + oids[0] + " restarts from its inputs: checkpoint "}, []uint64{0, p.Epoch}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s3 := clustertest.StartS3(t, "ckpt")
			n1, n2, n3, oids, endpoint, env := threeNodesOn(t, s3, outageViews, "--cluster-checkpoint-timeout", "2s")
			e0 := committedAfter(t, endpoint, env, oids, 0)
			committedAfter(t, endpoint, env, oids, e0)

			// The pointer stops: once a commit failed on a held manifest
			// PUT, no later one can move it (one commit at a time).
			mark := len(n1.out.String())
			s3.Faults.Set(clustertest.FaultStall, "/MANIFEST")
			deadline := time.Now().Add(60 * time.Second)
			for f, _ := failedCommits(n1, mark, nil); f == 0; f, _ = failedCommits(n1, mark, nil) {
				if time.Now().After(deadline) {
					t.Fatal("no checkpoint failed within 60 s of the manifests' PUTs held")
				}
				time.Sleep(50 * time.Millisecond) // polling with a deadline
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cli, store := openCheckpoints(t, ctx, endpoint, env)
			p, _, ok, err := cluster.ReadPointer(ctx, cli, "/sq")
			if err != nil || !ok || p.PreviousManifest == "" {
				t.Fatalf("committed pointer: %+v %v (found %v)", p, err, ok)
			}
			m, err := store.ReadManifest(ctx, p.Manifest)
			if err != nil {
				t.Fatal(err)
			}
			prev, err := store.Load(ctx, p.PreviousManifest)
			if err != nil {
				t.Fatalf("the previous checkpoint, %d: %v", p.Previous, err)
			}
			workerObject(t, &prev.Manifest, oids[0]) // the previous one has the views' state on the workers
			workerObject(t, &prev.Manifest, oids[1])
			logs, froms := c.damage(t, s3, p, m, &prev.Manifest, oids)
			if _, err := store.Load(ctx, p.Manifest); err == nil {
				t.Fatalf("checkpoint %d still loads after the damage", p.Epoch)
			}

			m1, m2 := len(n1.out.String()), len(n2.out.String())
			n3.kill()
			killed := time.Now()
			for _, what := range logs {
				waitLogAfter(t, n1, m1, 60*time.Second, what)
			}
			inputs := 0
			for i, oid := range oids {
				if froms[i] == 0 {
					inputs++
					waitLogAfter(t, n1, m1, 60*time.Second, "cluster: view "+oid+" restarted from its inputs")
				} else if from := restartedFrom(t, n1, m1, 60*time.Second, oid); from != froms[i] {
					t.Fatalf("view %s restarted from checkpoint %d, want %d (the pointer's %d, previous %d)", oid, from, froms[i], p.Epoch, p.Previous)
				}
			}
			restarted := time.Since(killed)
			// The views progress again: per_auction counts more bids
			// than when it restarted (the rows of the older checkpoint).
			for c0 := bidsCounted(t, n1); bidsCounted(t, n1) <= c0; {
				if time.Since(killed) > 60*time.Second {
					t.Fatalf("per_auction did not count a bid within 60 s of the kill after its restart (%d)", c0)
				}
				time.Sleep(20 * time.Millisecond) // polling with a deadline
			}
			progressing := time.Since(killed)
			s3.Faults.Set(clustertest.FaultNone, "")
			for i, oid := range oids {
				from := "its inputs"
				if froms[i] != 0 {
					from = "checkpoint " + strconv.FormatUint(froms[i], 10) + " "
				}
				waitLogAfter(t, n2, m2, 60*time.Second, "cluster: job "+oid+" restarted on this node from "+from)
			}
			// Commits resume after the damaged one.
			after := committedAfter(t, endpoint, env, oids, p.Epoch)
			waitEqual(t, want, 120*time.Second, n1, n2)
			// No view restarts from its inputs unless both checkpoints
			// are damaged for it.
			// (a view may restart twice, once when it fails and once
			// when n3's lease expires: count views, not restarts)
			fromInputs := map[string]bool{}
			for _, m := range regexp.MustCompile(`cluster: view (\d+) restarts from its inputs`).FindAllStringSubmatch(n1.out.String(), -1) {
				fromInputs[m[1]] = true
			}
			if len(fromInputs) != inputs {
				t.Fatalf("n1 restarted %d views from their inputs, want %d:\n%s", len(fromInputs), inputs, n1.out.String())
			}
			t.Logf("checkpoint %d damaged (%s), kill -9 of n3: views restarted from checkpoints %v (previous %d) %.2f s after the kill (lease TTL 2 s), counting again %.2f s after it; checkpoint %d committed after it; equal %.2f s after the kill",
				p.Epoch, c.name, froms, p.Previous, restarted.Seconds(), progressing.Seconds(), after, time.Since(killed).Seconds())
		})
	}
}

// workerObject is an object of m that a worker uploaded for job oid.
func workerObject(t *testing.T, m *objstore.Manifest, oid string) objstore.Object {
	t.Helper()
	for _, o := range m.Objects {
		// Written at the manifest's epoch: an object of an earlier epoch
		// (a chain's base) may be named by the previous checkpoint too.
		if strings.HasPrefix(o.Op, oid+".") && o.Size > 0 && o.Epoch == m.Epoch {
			return o
		}
	}
	t.Fatalf("checkpoint %d has no worker's object of job %s written in its epoch", m.Epoch, oid)
	return objstore.Object{}
}

// overwrite replaces object key of the store with size bytes that are
// not its own.
func overwrite(t *testing.T, s3 *clustertest.S3, key string, size int) {
	t.Helper()
	junk := bytes.Repeat([]byte{0x5a}, size)
	if _, err := s3.Backend.PutObject("ckpt", key, map[string]string{}, bytes.NewReader(junk), int64(size), nil); err != nil {
		t.Fatal(err)
	}
}

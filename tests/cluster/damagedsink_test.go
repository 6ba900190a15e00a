package cluster_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/cluster"
	"github.com/streamsql/streamsql/cluster/clustertest"
)

// TestClusterDamagedCheckpointSink: an exactly-once Kafka sink over
// three nodes; its part of the committed checkpoint is damaged (a
// worker's object deleted) and the worker n3 killed. Restarting the sink
// from the previous checkpoint, or from its inputs, would write again
// output it committed (a replay does not cut the same epochs), so the
// coordinator does not restart it: it logs an ERROR naming the sink, the
// sink is not restarted, checkpoints stop committing (the sink is not
// in them), and the topic holds no message twice and none that one
// streamsqld's sink does not write. DROP SINK lets checkpoints commit
// again.
func TestClusterDamagedCheckpointSink(t *testing.T) {
	kc, prod := startKafka(t)
	broker := kc.ListenAddrs()[0]
	produceBids(t, prod, 0, 4000)
	etcd := clustertest.StartEtcd(t)
	s3 := clustertest.StartS3(t, "ckpt")
	env := s3.Env()
	flags := []string{"--cluster", "etcd://" + etcd.Endpoint + "/sq", "--checkpoint-url", "s3://ckpt/sq", "--cluster-lease-ttl", "2s",
		"--checkpoint-interval", "300ms", "--cluster-checkpoint-timeout", "2s"}
	n1 := start(t, env, "n1", flags...)
	waitNodes(t, n1, "SELECT node_id, role FROM streamsql_nodes", []string{"n1|coordinator"})
	n2 := start(t, env, "n2", flags...)
	n3 := start(t, env, "n3", flags...)
	waitNodes(t, n1, "SELECT node_id, role FROM streamsql_nodes ORDER BY 1", []string{"n1|coordinator", "n2|worker", "n3|worker"})
	n1.exec(t, kafkaSinkStatements(broker, "kout")...)
	waitLog(t, n2, 30*time.Second, " operator 0: this node runs instances [")
	oid := regexp.MustCompile(`cluster: job (\d+) operator 0: this node runs instances \[`).FindStringSubmatch(n2.out.String())[1]
	waitLog(t, n3, 30*time.Second, "cluster: job "+oid+" operator 0: this node runs instances [")
	n2.exec(t, "FLUSH")
	if got := readTopic(t, kc, "kout"); len(got) < 10 {
		t.Fatalf("%d messages in kout after FLUSH", len(got))
	}

	// A committed checkpoint with the sink's state on a worker, after the
	// FLUSH; then the pointer stops (the manifests' PUTs held).
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cli, store := openCheckpoints(t, ctx, etcd.Endpoint, env)
	p := pointerAfter(t, etcd.Endpoint, env, 0)
	pointerAfter(t, etcd.Endpoint, env, p.Epoch)
	mark := len(n1.out.String())
	s3.Faults.Set(clustertest.FaultStall, "/MANIFEST")
	for f, _ := failedCommits(n1, mark, nil); f == 0; f, _ = failedCommits(n1, mark, nil) {
		if ctx.Err() != nil {
			t.Fatal("no checkpoint failed within 60 s of the manifests' PUTs held")
		}
		time.Sleep(50 * time.Millisecond) // polling with a deadline
	}
	p, _, ok, err := cluster.ReadPointer(ctx, cli, "/sq")
	if err != nil || !ok {
		t.Fatalf("committed pointer: %v (found %v)", err, ok)
	}
	m, err := store.ReadManifest(ctx, p.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	gone := workerObject(t, m, oid)
	if _, err := s3.Backend.DeleteObject("ckpt", gone.Key); err != nil {
		t.Fatal(err)
	}

	m1 := len(n1.out.String())
	n3.kill()
	killed := time.Now()
	waitLogAfter(t, n1, m1, 60*time.Second, "ERROR: cluster: sink "+oid+": checkpoint ")
	refused := time.Since(killed)
	s3.Faults.Set(clustertest.FaultNone, "")
	// Checkpoints are refused while the sink does not run.
	m2 := len(n1.out.String())
	for {
		if _, because := failedCommits(n1, m2, []string{"view " + oid + " is not"}); because >= 3 {
			break
		}
		if time.Since(killed) > 90*time.Second {
			t.Fatalf("the checkpoints were not refused for the sink within 90 s of the kill:\n%s", n1.out.String()[m1:])
		}
		time.Sleep(50 * time.Millisecond) // polling with a deadline
	}
	if q, _, _, err := cluster.ReadPointer(ctx, cli, "/sq"); err != nil || q.Epoch != p.Epoch {
		t.Fatalf("the pointer moved from %d to %d (%v) while the sink was not restarted", p.Epoch, q.Epoch, err)
	}
	if out := n1.out.String()[m1:]; strings.Contains(out, "cluster: view "+oid+" restarted") {
		t.Fatalf("the sink was restarted past its damaged checkpoint:\n%s", out)
	}
	got := readTopic(t, kc, "kout")

	// One node's sink over the same input: kout never has a message it
	// does not write, nor one twice.
	single := launch(t, nil, "single")
	single.exec(t, kafkaSinkStatements(broker, "kout_single")...)
	single.exec(t, "FLUSH")
	want := readTopic(t, kc, "kout_single")
	single.kill()
	for i, msg := range got {
		if i > 0 && got[i-1] == msg {
			t.Fatalf("kout has %s twice", msg)
		}
		if _, ok := slices.BinarySearch(want, msg); !ok {
			t.Fatalf("kout has %s, which one node's sink does not write", msg)
		}
	}

	n1.exec(t, "DROP SINK kout")
	after := pointerAfter(t, etcd.Endpoint, env, p.Epoch)
	t.Logf("sink's checkpoint %d damaged, kill -9 of n3: the sink refused %.2f s after the kill; %d messages in kout, none twice; checkpoint %d committed after DROP SINK",
		p.Epoch, refused.Seconds(), len(got), after.Epoch)
}

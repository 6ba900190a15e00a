package cluster_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/cluster/failpoint"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kafkaSink is an exactly-once Kafka sink of windowed counts (EMIT ON
// WINDOW CLOSE: append-only, so its aggregation runs as 3 instances
// spread over the nodes); %[1]s is the broker, %[2]s the topic.
const kafkaSink = `SET streaming_parallelism = 3;
CREATE SINK kout AS SELECT window_start, auction, count(*) AS n, sum(price) AS total
  FROM TUMBLE(kbid, ts, INTERVAL '5 seconds') GROUP BY window_start, auction EMIT ON WINDOW CLOSE
  WITH (connector = 'kafka', topic = '%[2]s', properties.bootstrap.server = '%[1]s') FORMAT JSON`

func kafkaSinkStatements(broker, topic string) []string {
	out := kafkaStatements(broker)[:2] // the sources
	for _, s := range strings.Split(fmt.Sprintf(kafkaSink, broker, topic), ";\n") {
		out = append(out, strings.TrimSpace(s))
	}
	return out
}

// readTopic reads every committed message of topic (read_committed: the
// rows of aborted transactions are not returned), up to the end each
// partition has now, and returns their values sorted. Control records
// are fetched too, so that the end (usually a transaction marker) is
// seen.
func readTopic(t *testing.T, kc *kfake.Cluster, topic string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()[0]), kgo.ConsumeTopics(topic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	left := map[int32]int64{} // partition -> its end offset not reached yet
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			t.Fatalf("end offset of %s/%d: %v", topic, o.Partition, o.Err)
		}
		if o.Offset > 0 {
			left[o.Partition] = o.Offset
		}
	})
	var out []string
	for len(left) > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s: partitions %v not read to their end", topic, left)
		}
		fs.EachError(func(_ string, p int32, err error) { t.Fatalf("reading %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			if !r.Attrs.IsControl() {
				out = append(out, string(r.Value))
			}
			if end, ok := left[r.Partition]; ok && r.Offset+1 >= end {
				delete(left, r.Partition)
			}
		})
	}
	slices.Sort(out)
	return out
}

// sinkEqualsSingle runs the sink on one streamsqld over the broker's
// input, into kout_single, and checks that kout holds exactly its
// messages; it returns them.
func sinkEqualsSingle(t *testing.T, kc *kfake.Cluster, broker string) []string {
	t.Helper()
	single := launch(t, nil, "single")
	defer single.kill()
	single.exec(t, kafkaSinkStatements(broker, "kout_single")...)
	single.exec(t, "FLUSH")
	return topicEqual(t, kc, "kout", "kout_single")
}

// topicEqual checks that topic holds exactly the messages of topic
// single (a single node's sink; at least 100), both read with
// read_committed, and returns them.
func topicEqual(t *testing.T, kc *kfake.Cluster, topic, single string) []string {
	t.Helper()
	want := readTopic(t, kc, single)
	got := readTopic(t, kc, topic)
	if len(want) < 100 {
		t.Fatalf("the single node wrote %d messages: too few to prove anything", len(want))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%s: %d messages, one node's sink %d; first differing: %s", topic, len(got), len(want), firstDiff(got, want))
	}
	return got
}

// TestClusterKafkaSinkExactlyOnce: an exactly-once Kafka sink created on
// the coordinator of three nodes, its windowed aggregation over a Kafka
// source spread over them, its writer on the coordinator. Its Kafka
// transactions commit only after the cluster committed the checkpoint
// (the pointer in etcd). kill -9 of the worker n3 mid-input, then of the
// coordinator n1: each time the sink is restarted from the committed
// checkpoint (by n1, then by n2 as the new coordinator, which fences the
// dead writer's transactions and commits what the checkpoint had
// pending). A read_committed reader of the topic finds exactly the
// messages of one streamsqld's sink over the same input: none lost, none
// twice.
func TestClusterKafkaSinkExactlyOnce(t *testing.T) {
	// --cluster-node-splits=false: the coordinator reads every partition.
	t.Run("coordinator-reads", func(t *testing.T) { kafkaSinkExactlyOnce(t, "runs instances", "--cluster-node-splits=false") })
	// --cluster-node-splits (the default): the sink query's Kafka readers
	// run on the nodes of its aggregation's instances (each node reads
	// its own partitions); their offsets are in the checkpoints all the
	// same.
	t.Run("node-splits", func(t *testing.T) { kafkaSinkExactlyOnce(t, "reads splits") })
}

// kafkaSinkExactlyOnce is TestClusterKafkaSinkExactlyOnce with more flags
// on every node; placed is what a worker logs of the sink's operator 0.
func kafkaSinkExactlyOnce(t *testing.T, placed string, more ...string) {
	kc, prod := startKafka(t)
	broker := kc.ListenAddrs()[0]
	const third = 4000
	produceBids(t, prod, 0, third)
	etcdFlags, env := clusterServices(t)
	flags := append(append(etcdFlags, "--checkpoint-interval", "300ms"), more...)
	n1 := start(t, env, "n1", flags...)
	waitNodes(t, n1, "SELECT node_id, role FROM streamsql_nodes", []string{"n1|coordinator"})
	n2 := start(t, env, "n2", flags...)
	n3 := start(t, env, "n3", flags...)
	waitNodes(t, n1, "SELECT node_id, role FROM streamsql_nodes ORDER BY 1", []string{"n1|coordinator", "n2|worker", "n3|worker"})
	n1.exec(t, kafkaSinkStatements(broker, "kout")...)
	// The sink is the only job: its OID from a worker's log.
	waitLog(t, n2, 30*time.Second, " operator 0: this node "+placed+" [")
	m := regexp.MustCompile(`cluster: job (\d+) operator 0: this node ` + placed + ` \[`).FindStringSubmatch(n2.out.String())
	oid := m[1]
	waitLog(t, n3, 30*time.Second, "cluster: job "+oid+" operator 0: this node "+placed+" [")
	n2.exec(t, "FLUSH") // the input so far read, and the sink committed it
	if got := readTopic(t, kc, "kout"); len(got) < 10 {
		t.Fatalf("%d messages in kout after the first FLUSH", len(got))
	}

	n3.kill()
	produceBids(t, prod, third, 2*third)
	waitLog(t, n1, 60*time.Second, "cluster: view "+oid+" restarted from checkpoint ")
	n1.exec(t, "FLUSH")

	restarts := strings.Count(n1.out.String(), "restarted from checkpoint")
	n1.kill()
	killed := time.Now()
	produceBids(t, prod, 2*third, 3*third)
	waitLog(t, n2, 60*time.Second, "cluster: view "+oid+" restarted from checkpoint ")
	t.Logf("the coordinator killed after %d restart(s); n2 restarted the sink %.2f s after it", restarts, time.Since(killed).Seconds())
	n2.exec(t, "FLUSH")

	got := sinkEqualsSingle(t, kc, broker)
	t.Logf("kout: %d messages, exactly those of one node's sink", len(got))
	// DROP SINK on the coordinator: its job stops, checkpoints go on.
	n2.exec(t, "DROP SINK kout")
	waitLog(t, n2, 10*time.Second, "sink kout dropped")
	p := pointerAfter(t, etcdEndpoint(etcdFlags), env, 0)
	pointerAfter(t, etcdEndpoint(etcdFlags), env, p.Epoch)
}

// TestClusterSinkCrashAfterCommit: the coordinator n1 is killed (a
// failpoint: SIGKILL of itself) right after the cluster committed a
// checkpoint, before its sink committed that epoch's Kafka transaction:
// the epoch's rows are pending in the committed checkpoint only. n2
// becomes the coordinator and restarts the sink from that checkpoint; the
// sink's recovery fences n1's transactional ids and commits the pending
// rows; the input after the checkpoint is replayed. A read_committed
// reader finds exactly one streamsqld's output: the pending rows once,
// nothing replayed twice.
func TestClusterSinkCrashAfterCommit(t *testing.T) {
	kc, prod := startKafka(t)
	broker := kc.ListenAddrs()[0]
	const half = 5000
	produceBids(t, prod, 0, half)
	flags, env := clusterServices(t)
	flags = append(flags, "--checkpoint-interval", "300ms")
	arm := filepath.Join(t.TempDir(), "armed")
	n1 := start(t, append(slices.Clone(env), failpoint.Env+"="+failpoint.CoordinatorAfterCommit+"@"+arm), "n1", flags...)
	waitNodes(t, n1, "SELECT node_id, role FROM streamsql_nodes", []string{"n1|coordinator"})
	n2 := start(t, env, "n2", flags...)
	waitNodes(t, n1, "SELECT node_id, role FROM streamsql_nodes ORDER BY 1", []string{"n1|coordinator", "n2|worker"})
	n1.exec(t, kafkaSinkStatements(broker, "kout")...)
	n1.exec(t, "FLUSH")
	before := len(readTopic(t, kc, "kout"))
	produceBids(t, prod, half, 2*half)
	if err := os.WriteFile(arm, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-n1.exited:
	case <-time.After(60 * time.Second):
		t.Fatal("the failpoint did not kill n1 within 60 s")
	}
	m := regexp.MustCompile(`failpoint coordinator-after-commit hit \(checkpoint (\d+)`).FindStringSubmatch(n1.out.String())
	if m == nil {
		t.Fatalf("n1 exited without the failpoint:\n%s", n1.out.String())
	}
	waitLog(t, n2, 60*time.Second, "restarted from checkpoint "+m[1])
	n2.exec(t, "FLUSH")

	got := sinkEqualsSingle(t, kc, broker)
	t.Logf("n1 killed after the cluster committed checkpoint %s, before its sink's commit; %d messages before, %d at the end, exactly one node's",
		m[1], before, len(got))
}

// TestClusterSinkZombieCoordinator: the coordinator n1, which runs an
// exactly-once Kafka sink, is paused (SIGSTOP) past its lease while input
// comes: n2 becomes the coordinator and restarts the sink from the
// committed checkpoint, its writer fencing n1's transactional ids. On
// SIGCONT n1 finds it lost the role and stops its jobs (its sink writes
// nothing more, and does not fence n2's writer back), then serves as a
// worker. The topic read with read_committed holds exactly one
// streamsqld's output.
func TestClusterSinkZombieCoordinator(t *testing.T) {
	kc, prod := startKafka(t)
	broker := kc.ListenAddrs()[0]
	const third = 4000
	produceBids(t, prod, 0, third)
	flags, env := clusterServices(t)
	flags = append(flags, "--checkpoint-interval", "300ms")
	n1 := start(t, env, "n1", flags...)
	waitNodes(t, n1, "SELECT node_id, role FROM streamsql_nodes", []string{"n1|coordinator"})
	n2 := start(t, env, "n2", flags...)
	waitNodes(t, n1, "SELECT node_id, role FROM streamsql_nodes ORDER BY 1", []string{"n1|coordinator", "n2|worker"})
	n1.exec(t, kafkaSinkStatements(broker, "kout")...)
	n1.exec(t, "FLUSH")
	waitLog(t, n2, 30*time.Second, " operator 0: this node runs instances [")
	oid := regexp.MustCompile(`cluster: job (\d+) operator 0: this node runs instances \[`).FindStringSubmatch(n2.out.String())[1]

	resume := pause(t, n1)
	produceBids(t, prod, third, 2*third)
	waitLog(t, n2, 60*time.Second, "cluster: view "+oid+" restarted from checkpoint ")
	resume()
	waitLog(t, n1, 60*time.Second, "cluster: no longer the coordinator: stopped this node's jobs ["+oid+"]")
	waitNodes(t, n2, "SELECT node_id, role FROM streamsql_nodes ORDER BY 1", []string{"n1|worker", "n2|coordinator"})
	// n1 back as a new incarnation: the sink is restarted over both
	// nodes (a FLUSH during that restart may return before the restarted
	// job caught up: docs/cluster.md).
	waitLog(t, n2, 60*time.Second, "(2 nodes)")
	for deadline := time.Now().Add(60 * time.Second); strings.Count(n2.out.String(), "cluster: restart of views ["+oid+"] done") < 2; {
		if time.Now().After(deadline) {
			t.Fatal("the sink was not restarted over both nodes within 60 s")
		}
		time.Sleep(20 * time.Millisecond) // polling with a deadline
	}
	produceBids(t, prod, 2*third, 3*third)
	n2.exec(t, "FLUSH")

	got := sinkEqualsSingle(t, kc, broker)
	t.Logf("n1 paused past its lease and resumed: stopped its sink; kout has exactly one node's %d messages", len(got))
}

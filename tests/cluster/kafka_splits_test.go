package cluster_test

import (
	"strings"
	"testing"
	"time"
)

// TestClusterKafkaNodeSplits: TestClusterKafkaEqualsSingleNode's topics
// and views with --cluster-node-splits: the Kafka readers of a view
// whose keyed operator reads the source directly (k_auction: 4 readers,
// partition p to reader p, 4 instances) run on the nodes of their
// instances, so each node reads its own partitions from the broker. The
// views equal one streamsqld's after FLUSH on a worker (it waits for
// every partition's end, also those read on other nodes), and again after
// kill -9 of n3 and a second half produced: the splits n3 read resume on
// the others at the committed checkpoint's offsets.
func TestClusterKafkaNodeSplits(t *testing.T) {
	kc, prod := startKafka(t)
	broker := kc.ListenAddrs()[0]
	const half = 6000
	produceBids(t, prod, 0, half)
	nodes, oids, endpoint, env := kafkaCluster(t, broker, "--cluster-node-splits")
	n1, n2, n3 := nodes[0], nodes[1], nodes[2]
	waitLog(t, n1, 30*time.Second, "operator 0 (HashAgg) runs on the nodes with its 4 source splits")
	waitLog(t, n2, 30*time.Second, "cluster: job "+oids[0]+" operator 0: this node reads splits [")
	waitLog(t, n3, 30*time.Second, "cluster: job "+oids[0]+" operator 0: this node reads splits [")
	for _, n := range []*node{n2, n3} {
		for _, l := range strings.Split(n.out.String(), "\n") {
			if strings.Contains(l, "this node reads splits") {
				t.Logf("%s: %s", n.id, l)
			}
		}
	}
	n2.exec(t, "FLUSH")
	first := readAll(t, n2, kafkaReads)
	want := kafkaSingle(t, broker, kafkaReads)
	for i, q := range kafkaReads {
		if strings.Join(first[i], "\n") != strings.Join(want[i], "\n") {
			t.Fatalf("after FLUSH on n2, %s differs from one node: %s", q, firstDiff(first[i], want[i]))
		}
	}
	p := pointerAfter(t, endpoint, env, 0)
	p = pointerAfter(t, endpoint, env, p.Epoch) // one begun after the FLUSH
	n3.kill()
	killed := time.Now()
	produceBids(t, prod, half, 2*half)
	waitLog(t, n1, 60*time.Second, "cluster: view "+oids[0]+" restarted from checkpoint ")
	want = kafkaSingle(t, broker, kafkaReads)
	n1.exec(t, "FLUSH")
	waitReads(t, kafkaReads, want, 120*time.Second, n1, n2)
	for _, n := range []*node{n1, n2} {
		if out := n.out.String(); strings.Contains(out, "restarts from its inputs") || strings.Contains(out, "rebuilt from its inputs") {
			t.Fatalf("%s restarted a view from its inputs, not from the committed checkpoint:\n%s", n.id, out)
		}
	}
	t.Logf("kill -9 of n3 after checkpoint %d with the Kafka splits on the nodes: equal to one node over %d bids %.2f s after it",
		p.Epoch, 2*half, time.Since(killed).Seconds())
}

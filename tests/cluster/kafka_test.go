package cluster_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamsql/streamsql/cluster"
	"github.com/streamsql/streamsql/cluster/clustertest"
	"github.com/streamsql/streamsql/exec/dataflow"
)

// Kafka inputs on a cluster (docs/cluster.md, "Kafka on a cluster"): a
// Kafka broker (kfake) in the test process, topics kbid (4 partitions:
// bids with an event time, each partition at its own rate) and kitem (2
// partitions: each auction's category). The coordinator reads every
// partition; the rows are shuffled over the network to the instances on
// the workers.

const (
	kBidParts  = 4
	kItemParts = 2
	kAuctions  = 97
)

// kafkaViews are the statements of the Kafka tests; %s is the broker.
const kafkaViews = `CREATE SOURCE kbid (auction bigint, price bigint, ts timestamptz, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH (connector = 'kafka', topic = 'kbid', properties.bootstrap.server = '%[1]s') FORMAT JSON;
CREATE SOURCE kitem (id bigint, category text)
  WITH (connector = 'kafka', topic = 'kitem', properties.bootstrap.server = '%[1]s') FORMAT JSON;
SET streaming_parallelism = 4;
CREATE MATERIALIZED VIEW k_auction AS SELECT auction, count(*) AS n, max(price) AS top, sum(price) AS total FROM kbid GROUP BY auction;
SET streaming_parallelism = 3;
CREATE MATERIALIZED VIEW k_window AS SELECT window_start, auction, count(*) AS n, sum(price) AS total
  FROM TUMBLE(kbid, ts, INTERVAL '10 seconds') GROUP BY window_start, auction EMIT ON WINDOW CLOSE;
SET streaming_parallelism = 2;
CREATE MATERIALIZED VIEW k_category AS SELECT i.category, count(*) AS n, sum(b.price) AS total
  FROM kbid b JOIN kitem i ON b.auction = i.id GROUP BY i.category`

var kafkaReads = []string{
	"SELECT * FROM k_auction ORDER BY auction",
	"SELECT * FROM k_window ORDER BY window_start, auction",
	"SELECT * FROM k_category ORDER BY category",
}

// kafkaStatements splits kafkaViews for broker into statements.
func kafkaStatements(broker string) []string {
	var out []string
	for _, s := range strings.Split(fmt.Sprintf(kafkaViews, broker), ";\n") {
		out = append(out, strings.TrimSpace(s))
	}
	return out
}

// startKafka starts a broker with kbid and kitem and returns it and a
// producer that writes to the partition each record names.
func startKafka(t *testing.T) (*kfake.Cluster, *kgo.Client) {
	t.Helper()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(kBidParts, "kbid"), kfake.SeedTopics(kItemParts, "kitem"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	prod, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()[0]), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(prod.Close)
	return kc, prod
}

// produceBids writes bids [from, to) of the deterministic sequence:
// bid i goes to partition i%4, at 2024-01-01 + (i/4)*(p+1)/3 seconds on
// partition p (the partitions run at different rates), auction i*7%97,
// price 1 + i*13%1000.
func produceBids(t *testing.T, prod *kgo.Client, from, to int) {
	t.Helper()
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var recs []*kgo.Record
	for i := from; i < to; i++ {
		p := i % kBidParts
		ts := base.Add(time.Duration(i/kBidParts*(p+1)) * time.Second / 3)
		v := fmt.Sprintf(`{"auction": %d, "price": %d, "ts": "%s"}`, i*7%kAuctions, 1+i*13%1000, ts.Format(time.RFC3339Nano))
		recs = append(recs, &kgo.Record{Topic: "kbid", Partition: int32(p), Value: []byte(v)})
	}
	for i := range kAuctions {
		if from == 0 { // the items once, with the first bids
			v := fmt.Sprintf(`{"id": %d, "category": "c%d"}`, i, i%7)
			recs = append(recs, &kgo.Record{Topic: "kitem", Partition: int32(i % kItemParts), Value: []byte(v)})
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// readAll runs reads on n; every read must have rows.
func readAll(t *testing.T, n *node, reads []string) [][]string {
	t.Helper()
	var out [][]string
	for _, q := range reads {
		rows, err := n.query(t, q)
		if err != nil {
			t.Fatalf("%s on %s: %v", q, n.id, err)
		}
		if len(rows) < 3 {
			t.Fatalf("%s on %s: %d rows prove little", q, n.id, len(rows))
		}
		out = append(out, rows)
	}
	return out
}

// waitReads polls reads on every node until they equal want, up to d.
func waitReads(t *testing.T, reads []string, want [][]string, d time.Duration, nodes ...*node) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		diff := ""
	poll:
		for i, q := range reads {
			for _, n := range nodes {
				got, err := n.query(t, q)
				if err != nil {
					diff = fmt.Sprintf("%s on %s: %v", q, n.id, err)
				} else if strings.Join(got, "\n") != strings.Join(want[i], "\n") {
					diff = fmt.Sprintf("%s on %s: %d rows, one node %d rows; first differing: %s", q, n.id, len(got), len(want[i]), firstDiff(got, want[i]))
				}
				if diff != "" {
					break poll
				}
			}
		}
		if diff == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not equal to one node within %s: %s", d, diff)
		}
		time.Sleep(200 * time.Millisecond) // polling with a deadline
	}
}

// kafkaSingle is the single-node result of kafkaViews over what the
// broker holds now: FLUSH waits for every partition's end.
func kafkaSingle(t *testing.T, broker string, reads []string) [][]string {
	t.Helper()
	single := launch(t, nil, "single")
	defer single.kill()
	single.exec(t, kafkaStatements(broker)...)
	single.exec(t, "FLUSH")
	return readAll(t, single, reads)
}

// pointerAfter waits (up to 60 s) for a committed cluster checkpoint
// after epoch and returns it.
func pointerAfter(t *testing.T, endpoint string, env []string, after uint64) cluster.Pointer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cli, _ := openCheckpoints(t, ctx, endpoint, env)
	for {
		p, _, ok, err := cluster.ReadPointer(ctx, cli, "/sq")
		if err != nil {
			t.Fatalf("no checkpoint after %d committed: %v", after, err)
		}
		if ok && p.Epoch > after {
			return p
		}
		time.Sleep(50 * time.Millisecond) // polling with the context's deadline
	}
}

// kafkaCluster starts etcd, a store and three nodes, and runs kafkaViews
// on n1; it returns the nodes, the views' OIDs (k_auction, k_window,
// k_category), the etcd endpoint and the store's environment.
func kafkaCluster(t *testing.T, broker string, more ...string) (nodes []*node, oids []string, endpoint string, env []string) {
	t.Helper()
	nodes, endpoint, env = threeKafkaNodes(t, kafkaStatements(broker), more...)
	oids, err := nodes[0].query(t, "SELECT oid FROM pg_class WHERE relname IN ('k_auction', 'k_window', 'k_category') ORDER BY oid")
	if err != nil || len(oids) != 3 {
		t.Fatalf("the views' OIDs: %v %v", oids, err)
	}
	return nodes, oids, endpoint, env
}

// threeKafkaNodes starts etcd, a store and three nodes with 300 ms
// checkpoints and more flags, and runs stmts on n1; it returns the
// nodes, the etcd endpoint and the store's environment.
func threeKafkaNodes(t *testing.T, stmts []string, more ...string) (nodes []*node, endpoint string, env []string) {
	t.Helper()
	flags, env := clusterServices(t)
	endpoint = etcdEndpoint(flags)
	flags = append(flags, "--checkpoint-interval", "300ms")
	flags = append(flags, more...)
	n1 := start(t, env, "n1", flags...)
	waitNodes(t, n1, "SELECT node_id, role FROM streamsql_nodes", []string{"n1|coordinator"})
	n2 := start(t, env, "n2", flags...)
	n3 := start(t, env, "n3", flags...)
	waitNodes(t, n1, "SELECT node_id, role FROM streamsql_nodes ORDER BY 1", []string{"n1|coordinator", "n2|worker", "n3|worker"})
	n1.exec(t, stmts...)
	return []*node{n1, n2, n3}, endpoint, env
}

// etcdEndpoint is the etcd endpoint of clusterServices' flags.
func etcdEndpoint(flags []string) string {
	return strings.TrimSuffix(strings.TrimPrefix(flags[1], "etcd://"), "/sq")
}

// clusterServices starts etcd and an S3 store and returns the flags of a
// node of a cluster on them (prefix /sq, 2 s leases; the etcd URL is
// flags[1]) and the store's environment.
func clusterServices(t *testing.T) (flags, env []string) {
	t.Helper()
	etcd := clustertest.StartEtcd(t)
	env = clustertest.StartS3(t, "ckpt").Env()
	return []string{"--cluster", "etcd://" + etcd.Endpoint + "/sq", "--checkpoint-url", "s3://ckpt/sq", "--cluster-lease-ttl", "2s"}, env
}

// TestClusterKafkaEqualsSingleNode: three nodes read two Kafka topics (4
// and 2 partitions) into an aggregation, a window EMIT ON WINDOW CLOSE
// and a join, their keyed instances spread over the nodes. After the
// first half of the input is read (FLUSH on a worker) and a checkpoint
// committed, the worker n3 is killed (kill -9) and the second half
// produced: the coordinator restarts the views from the committed
// checkpoint, the readers resume at its offsets (a reader that started
// over would count the first half twice, one that skipped would miss
// rows), and the views on every live node equal one streamsqld's over
// the whole input.
func TestClusterKafkaEqualsSingleNode(t *testing.T) {
	kc, prod := startKafka(t)
	broker := kc.ListenAddrs()[0]
	const half = 6000
	produceBids(t, prod, 0, half)
	nodes, oids, endpoint, env := kafkaCluster(t, broker)
	n1, n2, n3 := nodes[0], nodes[1], nodes[2]
	n2.exec(t, "FLUSH")        // forwarded to the coordinator: waits for the topics' ends
	for _, oid := range oids { // every view has instances on n2 (its keyed operators are spread)
		waitLog(t, n2, 30*time.Second, "cluster: job "+oid+" operator 0: this node runs instances [")
	}
	first := readAll(t, n2, kafkaReads)
	p := pointerAfter(t, endpoint, env, 0)
	p = pointerAfter(t, endpoint, env, p.Epoch) // one begun after the FLUSH
	n3.kill()
	killed := time.Now()
	produceBids(t, prod, half, 2*half)
	waitLog(t, n1, 60*time.Second, fmt.Sprintf("cluster: restart of views [%s %s %s] done", oids[0], oids[1], oids[2]))
	for _, oid := range oids {
		waitLog(t, n1, time.Second, "cluster: view "+oid+" restarted from checkpoint ")
	}
	restarted := time.Since(killed)
	want := kafkaSingle(t, broker, kafkaReads)
	n1.exec(t, "FLUSH")
	waitReads(t, kafkaReads, want, 120*time.Second, n1, n2)
	if strings.Join(first[0], "\n") == strings.Join(want[0], "\n") {
		t.Fatal("the second half changed nothing")
	}
	t.Logf("kill -9 of n3 after checkpoint %d: views restarted %.2f s after it, equal to one node over %d bids %.2f s after it",
		p.Epoch, restarted.Seconds(), 2*half, time.Since(killed).Seconds())
	dropOnCluster(t, n1, n2, oids[2], endpoint, env)
	waitReads(t, kafkaReads[:2], want[:2], 30*time.Second, n1, n2)
}

// dropOnCluster: DROP MATERIALIZED VIEW k_category (job oid) sent to the
// worker n2 runs on the coordinator n1 (forwarded); n2 replays it (the
// view leaves its catalog, its instances stop); the checkpoints committed
// after it name none of the view's objects. Then DROP SOURCE kitem, which
// nothing reads any more, is replayed on n2 too.
func dropOnCluster(t *testing.T, n1, n2 *node, oid, endpoint string, env []string) {
	t.Helper()
	n2.exec(t, "DROP MATERIALIZED VIEW k_category") // forwarded to the coordinator
	droppedAt := time.Now()
	waitLog(t, n2, 30*time.Second, "cluster: job "+oid+" dropped")
	for _, n := range []*node{n1, n2} {
		if rows, err := n.query(t, "SELECT count(*) FROM pg_class WHERE relname = 'k_category'"); err != nil || rows[0] != "0" {
			t.Fatalf("k_category on %s after DROP: %v %v", n.id, rows, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, store := openCheckpoints(t, ctx, endpoint, env)
	p := pointerAfter(t, endpoint, env, 0)
	for !dataflow.EpochTime(p.Epoch).After(droppedAt) { // one begun after the DROP
		p = pointerAfter(t, endpoint, env, p.Epoch)
	}
	ck, err := store.Recover(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range ck.Manifest.Objects {
		if strings.HasPrefix(o.Op, oid+".") {
			t.Fatalf("checkpoint %d after the DROP names %s", p.Epoch, o.Key)
		}
	}
	n1.exec(t, "DROP SOURCE kitem")
	waitLog(t, n2, 30*time.Second, "source kitem dropped")
}

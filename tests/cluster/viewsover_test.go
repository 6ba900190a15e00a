package cluster_test

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Views over views and sinks FROM a view on a cluster (docs/cluster.md,
// "Views over views"). %[1]s is the broker, %[2]s the sink's topic, %[3]s
// the Nexmark source's pace option.
const viewsOver = `CREATE SOURCE kbid (auction bigint, price bigint, ts timestamptz, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH (connector = 'kafka', topic = 'kbid', properties.bootstrap.server = '%[1]s') FORMAT JSON;
CREATE SOURCE bid WITH (connector = 'nexmark', table = 'bid', events = '40000'%[3]s);
SET streaming_parallelism = 4;
CREATE MATERIALIZED VIEW k_auction AS SELECT auction, count(*) AS n, max(price) AS top, sum(price) AS total FROM kbid GROUP BY auction;
CREATE MATERIALIZED VIEW nx_auction AS SELECT auction, count(*) AS n, max(price) AS top FROM bid GROUP BY auction;
SET streaming_parallelism = 3;
CREATE MATERIALIZED VIEW k_window AS SELECT window_start, auction, count(*) AS n, sum(price) AS total
  FROM TUMBLE(kbid, ts, INTERVAL '5 seconds') GROUP BY window_start, auction EMIT ON WINDOW CLOSE;
CREATE MATERIALIZED VIEW k_by_top AS SELECT top, count(*) AS auctions, sum(n) AS bids FROM k_auction GROUP BY top;
CREATE MATERIALIZED VIEW nx_by_n AS SELECT n, count(*) AS auctions, max(top) AS top FROM nx_auction WHERE n > 1 GROUP BY n;
SET streaming_parallelism = 2;
CREATE MATERIALIZED VIEW k_windows AS SELECT auction, count(*) AS windows, sum(n) AS n FROM k_window GROUP BY auction;
CREATE SINK kvout AS SELECT window_start, auction, n, total FROM k_window WHERE n > 1
  WITH (connector = 'kafka', topic = '%[2]s', properties.bootstrap.server = '%[1]s') FORMAT JSON`

var viewsOverReads = []string{
	"SELECT * FROM k_auction ORDER BY auction",
	"SELECT * FROM k_by_top ORDER BY top",
	"SELECT * FROM k_windows ORDER BY auction",
	"SELECT * FROM nx_by_n ORDER BY n",
}

func viewsOverStatements(broker, topic, pace string) []string {
	var out []string
	for _, s := range strings.Split(fmt.Sprintf(viewsOver, broker, topic, pace), ";\n") {
		out = append(out, strings.TrimSpace(s))
	}
	return out
}

// TestClusterViewsOverViews: three nodes run views over views (an
// aggregation over the aggregation of a Kafka source, another over a
// window EMIT ON WINDOW CLOSE, a filtered aggregation over the
// aggregation of a paced Nexmark source), their keyed instances spread
// over the nodes, and an exactly-once Kafka sink FROM the window view.
// DROP of an upstream view is refused while a view reads it (2BP01), on
// the coordinator and forwarded from a worker; DROP ... CASCADE from a
// worker drops both on every node. Then, mid-input, kill -9 of the
// worker n3 and, after more input, of the coordinator n1: each time the
// upstream views, the views over them and the sink restart together from
// the committed checkpoint (none of them from its inputs), and the views
// on the last node, n2, and the topic read with read_committed equal one
// streamsqld's over the same input: nothing lost, nothing twice.
func TestClusterViewsOverViews(t *testing.T) {
	kc, prod := startKafka(t)
	broker := kc.ListenAddrs()[0]
	const third = 4000
	produceBids(t, prod, 0, third)
	nodes, endpoint, env := threeKafkaNodes(t, viewsOverStatements(broker, "kvout", ", events_per_second = '4000'"))
	n1, n2, n3 := nodes[0], nodes[1], nodes[2]
	oids, err := n1.query(t, "SELECT oid FROM pg_class WHERE relname IN ('k_auction', 'nx_auction', 'k_window', 'k_by_top', 'nx_by_n', 'k_windows') ORDER BY oid")
	if err != nil || len(oids) != 6 {
		t.Fatalf("the views' OIDs: %v %v", oids, err)
	}
	// The views over views run instances on the workers (k_by_top,
	// nx_by_n: 3 instances, one per node; k_windows: 2, on n1 and n2).
	for _, oid := range oids[3:5] {
		for _, n := range []*node{n2, n3} {
			waitLog(t, n, 30*time.Second, "cluster: job "+oid+" operator 0: this node runs instances [")
		}
	}
	waitLog(t, n2, 30*time.Second, "cluster: job "+oids[5]+" operator 0: this node runs instances [")

	// DROP of a view that others read: refused as on one machine;
	// CASCADE from a worker (forwarded) drops both on every node.
	n1.exec(t, "SET streaming_parallelism = 3",
		"CREATE MATERIALIZED VIEW tmp_up AS SELECT auction, count(*) AS n FROM kbid GROUP BY auction",
		"CREATE MATERIALIZED VIEW tmp_down AS SELECT n, count(*) AS c FROM tmp_up GROUP BY n")
	for _, n := range []*node{n1, n2} {
		_, err := n.query(t, "DROP MATERIALIZED VIEW tmp_up")
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "2BP01" {
			t.Fatalf("DROP of a view another reads on %s: %v, want 2BP01", n.id, err)
		}
	}
	tmp, err := n1.query(t, "SELECT oid FROM pg_class WHERE relname IN ('tmp_up', 'tmp_down') ORDER BY oid")
	if err != nil || len(tmp) != 2 {
		t.Fatalf("tmp views: %v %v", tmp, err)
	}
	n2.exec(t, "DROP MATERIALIZED VIEW tmp_up CASCADE")
	for _, n := range []*node{n1, n2, n3} {
		for deadline := time.Now().Add(30 * time.Second); ; {
			rows, err := n.query(t, "SELECT count(*) FROM pg_class WHERE relname IN ('tmp_up', 'tmp_down')")
			if err == nil && rows[0] == "0" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("tmp views on %s after DROP CASCADE: %v %v", n.id, rows, err)
			}
			time.Sleep(50 * time.Millisecond) // polling with a deadline
		}
	}
	waitLog(t, n3, 30*time.Second, "cluster: job "+tmp[1]+" dropped")

	n2.exec(t, "FLUSH") // the Kafka input so far read
	p := pointerAfter(t, endpoint, env, 0)
	pointerAfter(t, endpoint, env, p.Epoch) // one begun after the FLUSH
	n3.kill()
	killed := time.Now()
	produceBids(t, prod, third, 2*third)
	waitLog(t, n1, 60*time.Second, "cluster: restart of views [")
	restarted := time.Since(killed)
	// One restart: every view and the sink (its OID is the last).
	m := regexp.MustCompile(`cluster: restart of views \[([0-9 ]+)\] done`).FindStringSubmatch(n1.out.String())
	if m == nil || !strings.HasPrefix(m[1], strings.Join(oids, " ")+" ") || len(strings.Fields(m[1])) != 7 {
		t.Fatalf("restart of views %v, want the six views %v and the sink in one group", m, oids)
	}
	all := "[" + m[1] + "]"
	oids = strings.Fields(m[1])
	for _, oid := range oids {
		waitLog(t, n1, time.Second, "cluster: view "+oid+" restarted from checkpoint ")
	}
	for _, oid := range oids[3:5] {
		waitLog(t, n2, 30*time.Second, "cluster: job "+oid+" restarted on this node from checkpoint ")
	}
	n1.exec(t, "FLUSH")
	p = pointerAfter(t, endpoint, env, 0)
	pointerAfter(t, endpoint, env, p.Epoch)

	from := len(n2.out.String())
	n1.kill()
	killed2 := time.Now()
	produceBids(t, prod, 2*third, 3*third)
	waitLogAfter(t, n2, from, 60*time.Second, "cluster: restart of views "+all+" done")
	restarted2 := time.Since(killed2)
	for _, oid := range oids {
		waitLogAfter(t, n2, from, time.Second, "cluster: view "+oid+" restarted from checkpoint ")
	}
	n2.exec(t, "FLUSH")

	// One streamsqld over the same input (Nexmark unpaced: the pace
	// changes event times only, which no view reads).
	single := launch(t, nil, "single")
	defer single.kill()
	single.exec(t, viewsOverStatements(broker, "kvout_single", "")...)
	single.exec(t, "FLUSH")
	want := readAll(t, single, viewsOverReads)
	waitReads(t, viewsOverReads, want, 120*time.Second, n2)
	got := topicEqual(t, kc, "kvout", "kvout_single")
	held := func(n *node) []string { // how long each group restart held the epochs
		var out []string
		for _, m := range regexp.MustCompile(`cluster: (\d+) jobs restarted together, epochs held for (\S+)`).FindAllStringSubmatch(n.out.String(), -1) {
			out = append(out, m[1]+" jobs "+m[2])
		}
		return out
	}
	t.Logf("views over views and a sink FROM a view: restarted %.2f s after the worker's kill (epochs held %v), %.2f s after the coordinator's (held %v); equal to one node (%d sink messages)",
		restarted.Seconds(), held(n1), restarted2.Seconds(), held(n2), len(got))
}

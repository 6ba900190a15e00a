package cluster_test

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/cluster/clustertest"
)

// The exchanges above the first keyed operator on the nodes
// (--cluster-node-splits, docs/contributing/cluster.md "Source splits on
// the nodes"): Nexmark q5 (a join above two keyed operators, one of them
// above another) and q9 (a top-N taking the join's instances directly)
// run whole on the nodes; only their top operator's outputs come back
// to the coordinator.

// upperViews are q5 (with shorter windows) and q9 over Nexmark sources of events events, paced
// at 10 000 events per second (the default event-time rate: the same
// event times as unpaced) when paced.
func upperViews(t *testing.T, events int, paced bool) []string {
	t.Helper()
	var views []string
	for _, table := range []string{"bid", "auction"} {
		src := fmt.Sprintf("CREATE SOURCE %s (WATERMARK FOR date_time AS date_time - INTERVAL '4' SECOND) WITH (connector = 'nexmark', table = '%s', events = '%d'", table, table, events)
		if paced {
			src += ", events_per_second = '10000'"
		}
		views = append(views, src+")")
	}
	views = append(views, "SET streaming_parallelism = 4")
	for _, q := range []string{"q5", "q9"} {
		b, err := os.ReadFile("../../bench/nexmark/" + q + ".sql")
		if err != nil {
			t.Fatal(err)
		}
		// q5's windows of 2 s sliding by 1 s: more rows in a short input
		sql := strings.ReplaceAll(string(b), "INTERVAL '2' SECOND, INTERVAL '10' SECOND", "INTERVAL '1' SECOND, INTERVAL '2' SECOND")
		views = append(views, "CREATE MATERIALIZED VIEW "+q+" AS "+sql)
	}
	return views
}

var upperReads = []string{"SELECT * FROM q5 ORDER BY 1, 2", "SELECT * FROM q9 ORDER BY 1"}

// TestClusterUpperExchanges: q5 and q9 at parallelism 4 on three nodes
// over a paced input: every operator of both runs on the nodes (the
// workers log it for the join, q5's max and q9's top-N), the coordinator
// takes back only the top operators' outputs and sends no instance its
// input (its log names no other stream of them); once a checkpoint is
// committed, kill -9 of n3 mid-stream: both views restart from the
// checkpoint on n1 and n2 and equal one streamsqld's over the same input.
func TestClusterUpperExchanges(t *testing.T) {
	const events = 100000
	want := singleReads(t, upperViews(t, events, false), upperReads)

	etcd := clustertest.StartEtcd(t)
	env := clustertest.StartS3(t, "ckpt").Env()
	flags := []string{"--cluster", "etcd://" + etcd.Endpoint + "/sq", "--checkpoint-url", "s3://ckpt/sq", "--cluster-lease-ttl", "2s",
		"--checkpoint-interval", "300ms", "--cluster-node-splits"}
	n1 := start(t, env, "n1", flags...)
	waitNodes(t, n1, "SELECT node_id, role FROM streamsql_nodes", []string{"n1|coordinator"})
	n2 := start(t, env, "n2", flags...)
	n3 := start(t, env, "n3", flags...)
	waitNodes(t, n1, "SELECT node_id, role FROM streamsql_nodes ORDER BY 1", []string{"n1|coordinator", "n2|worker", "n3|worker"})
	n1.exec(t, upperViews(t, events, true)...)
	oids, err := n1.query(t, "SELECT oid FROM pg_class WHERE relname IN ('q5', 'q9') ORDER BY relname")
	if err != nil || len(oids) != 2 {
		t.Fatalf("the views' OIDs: %v %v", oids, err)
	}
	q5, q9 := oids[0], oids[1]
	// q5: 0 the join, 1 and 3 the window counts over bid, 2 the max;
	// q9: 0 the top-N, 1 the join over auction and bid.
	up := func(oid string, op int, lo, hi int, to string) string {
		return fmt.Sprintf("cluster: job %s operator %d: this node runs instances [%d,%d) of 4 fed by every node's exchanges directly; output to %s", oid, op, lo, hi, to)
	}
	waitLog(t, n2, 30*time.Second, up(q5, 0, 2, 3, "the coordinator"), up(q5, 2, 2, 3, "the operator above on the nodes"), up(q9, 0, 2, 3, "the coordinator"),
		"cluster: job "+q9+" operator 1: this node reads splits [2,3) of 4, its exchanges sending to every node's instances directly; output to the operator above on the nodes")
	waitLog(t, n3, 30*time.Second, up(q5, 0, 3, 4, "the coordinator"), up(q9, 0, 3, 4, "the coordinator"))
	waitLog(t, n1, 10*time.Second, "operator 0 (HashJoin) runs on the nodes above operators placed there",
		"operator 0 (TopN) runs on the nodes above operators placed there, each instance taking its input")
	// two commits after both views run: the second's epoch began after
	// they started
	from := len(n1.out.String())
	waitCommit(t, n1, from)
	waitCommit(t, n1, from+commitRE.FindStringIndex(n1.out.String()[from:])[1])
	before, err := n1.query(t, "SELECT count(*) FROM q9")
	if err != nil {
		t.Fatal(err)
	}
	n3.kill()
	killed := time.Now()
	for _, oid := range oids {
		waitLog(t, n1, 60*time.Second, "cluster: view "+oid+" restarted from checkpoint ")
		waitLog(t, n2, 30*time.Second, "cluster: job "+oid+" restarted on this node from checkpoint ")
	}
	waitLog(t, n2, 30*time.Second, up(q5, 0, 2, 4, "the coordinator"))
	waitReads(t, upperReads, want, 120*time.Second, n1, n2)
	after, err := n1.query(t, "SELECT count(*) FROM q9")
	if err != nil {
		t.Fatal(err)
	}
	if before[0] == after[0] {
		t.Fatalf("the kill was not mid-stream: q9 had %s rows before it, %s at the end", before[0], after[0])
	}
	for _, n := range []*node{n1, n2} {
		if out := n.out.String(); strings.Contains(out, "restarts from its inputs") || strings.Contains(out, "rebuilt from its inputs") {
			t.Fatalf("%s restarted a view from its inputs, not from the committed checkpoint:\n%s", n.id, out)
		}
	}
	// The coordinator relayed nothing: the only outputs it took back are
	// the top operators' (both runs), and it fed no instance.
	out := n1.out.String()
	for _, oid := range oids {
		for _, k := range []int{2, 3} {
			if !strings.Contains(out, fmt.Sprintf("cluster: job %s: instance %d of operator 0 sends its output to the coordinator", oid, k)) {
				t.Fatalf("n1 did not take view %s's instance %d's output back:\n%s", oid, k, out)
			}
		}
		if m := regexp.MustCompile(`cluster: job ` + oid + `: instance \d+ of operator [1-9]\d* sends its output to the coordinator|cluster: job ` + oid + `: instance \d+ of operator \d+ runs on another node, its inputs sent from the coordinator`).FindString(out); m != "" {
			t.Fatalf("the coordinator relays rows between operators of view %s: %s", oid, m)
		}
	}
	t.Logf("kill -9 of n3 with %s of %s q9 rows: equal to one node %.2f s after the kill", before[0], after[0], time.Since(killed).Seconds())
}

// waitCommit waits until n (the coordinator) logged a committed
// checkpoint after the first from bytes of its output.
func waitCommit(t *testing.T, n *node, from int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !commitRE.MatchString(n.out.String()[from:]) {
		if time.Now().After(deadline) {
			t.Fatalf("%s committed no checkpoint", n.id)
		}
		time.Sleep(50 * time.Millisecond) // polling with a deadline
	}
}

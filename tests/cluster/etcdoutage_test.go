package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/streamsql/streamsql/cluster"
	"github.com/streamsql/streamsql/cluster/clustertest"
)

// outageViews: 60 000 events at 3 000 events/s (20 s of input), so that
// an etcd outage and the restart after it happen mid-stream;
// outageSingle the same input unpaced, for the single node.
var (
	outageViews  = bidViews(60000, 3000)
	outageSingle = bidViews(60000, 0)
)

// fencedHistory reads every write etcd ever took under /sq (a watch
// from revision 1: the test's etcd never compacts) and checks that the
// coordinators' writes never overlapped: the committed pointer's epochs
// only grow and its terms never go back, the statement log's entries
// and the assignments' generations are in term order, and one term is
// one node's. It returns the terms and their coordinators in order, and
// every epoch the pointer named.
func fencedHistory(t *testing.T, endpoint string) (terms []string, epochs []uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	now, err := cli.Get(ctx, "/sq/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	last := now.Header.Revision
	owner := map[int64]string{}
	check := func(what string, term int64, node string, prevTerm *int64) {
		if o, ok := owner[term]; ok && o != node {
			t.Fatalf("%s: term %d written by %s and by %s", what, term, o, node)
		}
		if !func() bool { _, ok := owner[term]; return ok }() {
			owner[term] = node
			terms = append(terms, fmt.Sprintf("%d:%s", term, node))
		}
		if term < *prevTerm {
			t.Fatalf("%s: term %d (%s) after term %d: an older coordinator wrote after a newer one", what, term, node, *prevTerm)
		}
		*prevTerm = term
	}
	var ptrTerm, logTerm, asgTerm int64
	var epoch, gen uint64
	wc := cli.Watch(ctx, "/sq/", clientv3.WithPrefix(), clientv3.WithRev(1))
	for rev := int64(0); rev < last; {
		resp, ok := <-wc
		if !ok || resp.Err() != nil {
			t.Fatalf("watch of etcd's history: %v", resp.Err())
		}
		for _, ev := range resp.Events {
			rev = ev.Kv.ModRevision
			if ev.Type != clientv3.EventTypePut {
				continue
			}
			key := strings.TrimPrefix(string(ev.Kv.Key), "/sq/")
			switch {
			case key == "checkpoint/committed":
				var p cluster.Pointer
				if err := json.Unmarshal(ev.Kv.Value, &p); err != nil {
					t.Fatal(err)
				}
				if p.Epoch <= epoch {
					t.Fatalf("the pointer moved from epoch %d to %d", epoch, p.Epoch)
				}
				epoch = p.Epoch
				epochs = append(epochs, p.Epoch)
				check(fmt.Sprintf("pointer to checkpoint %d", p.Epoch), p.Term, p.Coordinator, &ptrTerm)
			case strings.HasPrefix(key, "ddl/"):
				var st cluster.Statement
				if err := json.Unmarshal(ev.Kv.Value, &st); err != nil {
					t.Fatal(err)
				}
				check(fmt.Sprintf("statement %d", st.Seq), st.Term, st.Coordinator, &logTerm)
			case key == "assignment":
				var a cluster.Assignment
				if err := json.Unmarshal(ev.Kv.Value, &a); err != nil {
					t.Fatal(err)
				}
				if a.Generation <= gen {
					t.Fatalf("assignment %d after %d", a.Generation, gen)
				}
				gen = a.Generation
				check(fmt.Sprintf("assignment %d", a.Generation), a.Term, a.Coordinator, &asgTerm)
			}
		}
	}
	return terms, epochs
}

// TestClusterEtcdOutage: three nodes run two views over a paced input;
// once a checkpoint with their state is committed, etcd is stopped for
// longer than two lease TTLs, then started again on the same data and
// port. While it is down the views go on (the coordinator answers SELECT,
// and so does a worker, from the coordinator it last found in etcd, and
// the views keep counting), no checkpoint commits (the pointer cannot move),
// and every node notices its lease is lost and stops acting as
// coordinator. Once etcd is back every node registers again as a new
// incarnation, one coordinator is elected, it restarts the views from
// the last committed checkpoint over the three nodes, checkpoints commit
// again under its term, and the views equal one streamsqld's. etcd's
// whole history shows that the writes of two coordinators (pointer,
// statement log, assignments) never overlapped.
func TestClusterEtcdOutage(t *testing.T) {
	want := singleRun(t, outageSingle)
	etcd := clustertest.StartEtcd(t)
	s3 := clustertest.StartS3(t, "ckpt")
	n1, n2, n3, oids, endpoint, env := threeNodesWith(t, etcd, s3, outageViews)
	nodes := []*node{n1, n2, n3}
	e0 := committedAfter(t, endpoint, env, oids, 0)
	marks := make([]int, len(nodes))
	for i, n := range nodes {
		marks[i] = len(n.out.String())
	}
	before := bidsCounted(t, n1)
	if _, err := n2.query(t, clusterReads[1]); err != nil { // n2 learns where the coordinator is
		t.Fatal(err)
	}

	etcd.Stop()
	stopped := time.Now()
	// Down until every node noticed the loss of its lease, and at least
	// two TTLs: meanwhile the coordinator's views answer and count.
	deadline := stopped.Add(60 * time.Second)
	for {
		for _, n := range []*node{n1, n2} {
			if _, err := n.query(t, clusterReads[1]); err != nil {
				t.Fatalf("%s on %s with etcd down: %v", clusterReads[1], n.id, err)
			}
		}
		lost := 0
		for i, n := range nodes {
			if strings.Contains(n.out.String()[marks[i]:], "node "+n.id+" lost its lease") {
				lost++
			}
		}
		if lost == len(nodes) && time.Since(stopped) >= 4*time.Second {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 3 nodes noticed the loss of their lease within 60 s of etcd's stop", lost)
		}
		time.Sleep(200 * time.Millisecond) // polling with a deadline
	}
	during := bidsCounted(t, n1)
	if during <= before {
		t.Fatalf("the views stopped counting while etcd was down: %d bids, then %d", before, during)
	}
	etcd.Restart(t)
	back := time.Now()

	// One coordinator restarts the views over the three nodes from the
	// checkpoint committed before the outage (or a later one: a commit
	// in flight at the stop may complete when etcd is back, its
	// coordinator's lease not revoked yet).
	var coord *node
	var from uint64
	for _, oid := range oids {
		what := "cluster: view " + oid + " restarted from checkpoint "
		deadline := time.Now().Add(60 * time.Second)
		for from = 0; from == 0; {
			for i, n := range nodes {
				out := n.out.String()[marks[i]:]
				if k := strings.Index(out, what); k >= 0 {
					if coord != nil && coord != n {
						t.Fatalf("both %s and %s restarted views after the outage", coord.id, n.id)
					}
					coord = n
					fmt.Sscanf(out[k+len(what):], "%d", &from)
				}
			}
			if from == 0 && time.Now().After(deadline) {
				t.Fatalf("no node restarted view %s from a checkpoint within 60 s of etcd's return", oid)
			}
			time.Sleep(50 * time.Millisecond) // polling with a deadline
		}
		if from < e0 {
			t.Fatalf("view %s restarted from checkpoint %d, before %d committed before the outage", oid, from, e0)
		}
	}
	waitNodes(t, n1, "SELECT node_id, role = 'coordinator' FROM streamsql_nodes ORDER BY 1", func() []string {
		var r []string
		for _, n := range nodes {
			r = append(r, fmt.Sprintf("%s|%v", n.id, n == coord))
		}
		return r
	}())
	restarted := time.Since(back)
	// Checkpoints commit again, under the new term.
	e1 := committedAfter(t, endpoint, env, oids, from)
	committed := time.Since(back)
	waitEqual(t, want, 120*time.Second, n1, n2, n3)
	if after := bidsCounted(t, n1); after <= during {
		t.Fatalf("the outage was not mid-stream: %d bids counted during it, %d at the end", during, after)
	}
	terms, _ := fencedHistory(t, endpoint)
	t.Logf("etcd down %.2f s (%d then %d bids counted meanwhile); after its return %s restarted the views from checkpoint %d in %.2f s, "+
		"committed checkpoint %d %.2f s after it; terms in etcd's history: %v",
		back.Sub(stopped).Seconds(), before, during, coord.id, from, restarted.Seconds(), e1, committed.Seconds(), terms)
}

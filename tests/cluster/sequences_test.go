package cluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/streamsql/streamsql/cluster/clustertest"
)

// Sequences on a cluster (docs/contributing/cluster.md, "Tables in a
// cluster", step 5): serial columns and CREATE SEQUENCE run on the
// coordinator (forwarded from a worker), nextval and setval only there,
// and each committed checkpoint holds every sequence's logged value next
// to the tables' rows, so that a new coordinator never hands out a value
// of a row in the tables it loaded.

// evDDL creates a table with a bigserial key and a view over it whose two
// instances are spread over the nodes.
var evDDL = []string{"CREATE TABLE ev (id bigserial PRIMARY KEY, v int)",
	"SET streaming_parallelism = 2",
	"CREATE MATERIALIZED VIEW ev_count AS SELECT v % 3 AS k, count(*) AS n FROM ev GROUP BY v % 3"}

// seqImage reads sequence oid's image in the committed checkpoint.
func seqImage(t *testing.T, ctx context.Context, endpoint string, env []string, oid string) (epoch uint64, last int64, called, ok bool) {
	t.Helper()
	p, b, ok := imageOf(t, ctx, endpoint, env, oid)
	if !ok {
		return 0, 0, false, false
	}
	var img struct {
		Last   int64 `json:"last"`
		Called bool  `json:"called"`
	}
	if err := json.Unmarshal(b, &img); err != nil {
		t.Fatalf("sequence image of %s: %v (%q)", oid, err, b)
	}
	return p.Epoch, img.Last, img.Called, true
}

// TestClusterSequenceCoordinatorKilled: a table with a bigserial key and a
// sequence created on a worker (forwarded), rows numbered on the
// coordinator and through a worker, nextval refused on a worker; once a
// committed checkpoint holds the numbered rows and the sequences, more
// rows are numbered and the coordinator is killed (kill -9). The new
// coordinator loads the table and the sequences of that checkpoint: new
// rows get keys above every loaded one (the primary key would refuse a
// value given out again) and the sequence goes on after the committed
// values.
func TestClusterSequenceCoordinatorKilled(t *testing.T) {
	nodes, endpoint, env, _ := tableCluster(t)
	n1, n2, n3 := nodes[0], nodes[1], nodes[2]
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	n1.exec(t, append(evDDL, "INSERT INTO ev (v) SELECT g FROM generate_series(1, 300) g")...)
	n2.exec(t, "CREATE SEQUENCE tickets START 100") // forwarded to n1
	n3.exec(t, "INSERT INTO ev (v) VALUES (1000)")  // forwarded: numbered by n1
	refused(t, n3, "SELECT nextval('tickets')", "nextval and setval of sequence \"tickets\" runs only on the cluster's coordinator")
	refused(t, n2, "SELECT setval('ev_id_seq', 5)", "runs only on the cluster's coordinator")
	var taken []string
	for i := 0; i < 3; i++ {
		got, err := n1.query(t, "SELECT nextval('tickets')")
		if err != nil {
			t.Fatal(err)
		}
		taken = append(taken, got...)
	}
	if taken[0] != "100" || taken[2] != "102" {
		t.Fatalf("nextval on the coordinator: %v, want 100, 101, 102", taken)
	}
	waitNodes(t, n2, "SELECT max(id), count(*) FROM ev", []string{"301|301"})

	evOID, seqOID, ticketsOID := oidOf(t, n1, "ev"), oidOf(t, n1, "ev_id_seq"), oidOf(t, n1, "tickets")
	var committed uint64
	for {
		rows, okT := imageCount(t, ctx, endpoint, env, evOID)
		e1, last1, called1, ok1 := seqImage(t, ctx, endpoint, env, seqOID)
		_, last2, called2, ok2 := seqImage(t, ctx, endpoint, env, ticketsOID)
		if okT && rows == 301 && ok1 && ok2 && called1 && called2 && last1 >= 301 && last2 >= 102 {
			committed = e1
			t.Logf("checkpoint %d: 301 rows, ev_id_seq logged at %d, tickets at %d", e1, last1, last2)
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("no committed checkpoint with the rows and both sequences (rows %d %v, seq %d %v %v, tickets %d %v %v)", rows, okT, last1, called1, ok1, last2, called2, ok2)
		}
		time.Sleep(100 * time.Millisecond) // polling with the context's deadline
	}
	// Numbered after the checkpoint: lost with the coordinator, as the
	// rows written after it are.
	n1.exec(t, "INSERT INTO ev (v) SELECT g FROM generate_series(1, 50) g")
	n1.kill()
	waitNodes(t, n2, "SELECT node_id, role FROM streamsql_nodes ORDER BY 1", []string{"n2|coordinator", "n3|worker"})
	waitLog(t, n2, 60*time.Second, "cluster: tables loaded from checkpoint ")

	got, err := n2.query(t, "SELECT max(id) FROM ev")
	if err != nil {
		t.Fatal(err)
	}
	maxLoaded := mustInt(t, got[0])
	t.Logf("n2 loaded keys up to %d (committed epoch %d or later)", maxLoaded, committed)
	// New rows through the new coordinator and a worker: the primary key
	// refuses any key given out before.
	n2.exec(t, "INSERT INTO ev (v) SELECT g FROM generate_series(1, 20) g")
	n3.exec(t, "INSERT INTO ev (v) VALUES (2000)")
	after, err := n2.query(t, "SELECT min(id) FROM ev WHERE id > "+strconv.FormatInt(maxLoaded, 10))
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != 1 || mustInt(t, after[0]) <= maxLoaded {
		t.Fatalf("new keys %v after the loaded maximum %d", after, maxLoaded)
	}
	next, err := n2.query(t, "SELECT nextval('tickets')")
	if err != nil {
		t.Fatal(err)
	}
	if v := mustInt(t, next[0]); v <= 102 {
		t.Fatalf("tickets on the new coordinator: %d, a value handed out before the checkpoint", v)
	}
	waitNodes(t, n3, "SELECT count(*) FROM ev WHERE v IN (1000, 2000)", []string{"2"})
	n3.exec(t, "DROP SEQUENCE tickets") // forwarded, logged, replayed
	for _, n := range []*node{n2, n3} {
		waitNodes(t, n, "SELECT count(*) FROM pg_class WHERE relname = 'tickets'", []string{"0"})
	}
}

// imageCount counts the rows of table oid's image in the committed
// checkpoint.
func imageCount(t *testing.T, ctx context.Context, endpoint string, env []string, oid string) (int, bool) {
	t.Helper()
	_, b, ok := imageOf(t, ctx, endpoint, env, oid)
	if !ok {
		return 0, false
	}
	r, err := ipc.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("table image of %s: %v", oid, err)
	}
	defer r.Release()
	n := 0
	for r.Next() {
		n += int(r.RecordBatch().NumRows())
	}
	if err := r.Err(); err != nil {
		t.Fatalf("table image of %s: %v", oid, err)
	}
	return n, true
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}

// TestClusterCheckpointCommand: with checkpoints an hour apart, CHECKPOINT
// (on the coordinator, and sent to a worker, which forwards it) returns
// once the cluster committed a checkpoint holding what was written
// before it: the table's rows and its sequence's value are in the
// committed checkpoint's images.
func TestClusterCheckpointCommand(t *testing.T) {
	etcd := clustertest.StartEtcd(t)
	s3 := clustertest.StartS3(t, "ckpt")
	env := s3.Env()
	flags := []string{"--cluster", "etcd://" + etcd.Endpoint + "/sq", "--checkpoint-url", "s3://ckpt/sq", "--cluster-lease-ttl", "2s",
		"--checkpoint-interval", "1h"}
	n1 := start(t, env, "n1", flags...)
	waitNodes(t, n1, "SELECT node_id, role FROM streamsql_nodes", []string{"n1|coordinator"})
	n2 := start(t, env, "n2", flags...)
	waitNodes(t, n1, "SELECT node_id, role FROM streamsql_nodes ORDER BY 1", []string{"n1|coordinator", "n2|worker"})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	n1.exec(t, append(evDDL, "INSERT INTO ev (v) SELECT g FROM generate_series(1, 500) g")...)
	evOID, seqOID := oidOf(t, n1, "ev"), oidOf(t, n1, "ev_id_seq")
	// Uploads answered after 300 ms: a CHECKPOINT that did not wait for
	// the cluster's commit would return before the images are committed.
	s3.Faults.SetLatency(http.MethodPut, 300*time.Millisecond)
	for i, n := range []*node{n1, n2} {
		rows := 500 * (i + 1)
		if i > 0 {
			n.exec(t, "INSERT INTO ev (v) SELECT g FROM generate_series(1, 500) g") // forwarded
		}
		n.exec(t, "CHECKPOINT")
		got, ok := imageCount(t, ctx, etcd.Endpoint, env, evOID)
		if !ok || got != rows {
			t.Fatalf("after CHECKPOINT on %s: the committed checkpoint has %d rows of the table (%v), want %d", n.id, got, ok, rows)
		}
		_, last, called, ok := seqImage(t, ctx, etcd.Endpoint, env, seqOID)
		if !ok || !called || last < int64(rows) {
			t.Fatalf("after CHECKPOINT on %s: the sequence's image %d %v %v, want at least %d", n.id, last, called, ok, rows)
		}
	}
}

// oidOf is the OID of relation name on n.
func oidOf(t *testing.T, n *node, name string) string {
	t.Helper()
	got, err := n.query(t, "SELECT oid FROM pg_class WHERE relname = '"+name+"'")
	if err != nil || len(got) != 1 {
		t.Fatalf("the OID of %s: %v %v", name, got, err)
	}
	return got[0]
}

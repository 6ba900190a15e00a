package cluster_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/streamsql/streamsql/cluster"
	"github.com/streamsql/streamsql/cluster/clustertest"
)

// Tables on a cluster (docs/contributing/cluster.md, "Tables in a
// cluster"): a table's rows live on the coordinator, are written there
// only, are read from any node, feed views running over the nodes, and
// are in each committed cluster checkpoint.

// tableDDL creates the table and the two views over it (their keyed
// instances spread over the nodes).
var tableDDL = []string{
	"CREATE TABLE bids (id int8 PRIMARY KEY, auction int8, price int8, channel text)",
	"SET streaming_parallelism = 4",
	"CREATE MATERIALIZED VIEW t_auction AS SELECT auction, count(*) AS n, sum(price) AS total, max(price) AS top FROM bids GROUP BY auction",
	"SET streaming_parallelism = 3",
	"CREATE MATERIALIZED VIEW t_channel AS SELECT channel, count(*) AS n, min(price) AS low FROM bids WHERE price > 100 GROUP BY channel",
}

// tableReads read the views and the table.
var tableReads = []string{
	"SELECT * FROM t_auction ORDER BY auction",
	"SELECT * FROM t_channel ORDER BY channel",
	"SELECT count(*), sum(price), sum(auction), count(DISTINCT channel) FROM bids",
}

// bidRows are INSERT ... SELECT of the ids from..to.
func bidRows(from, to, mul int) string {
	return fmt.Sprintf("INSERT INTO bids SELECT g, g %% 97, (g * %d) %% 1000, 'ch' || (g %% 7) FROM generate_series(%d, %d) g", mul, from, to)
}

// tableWrites are the writes of TestClusterTableViewEqualsSingleNode,
// after the views exist: inserts, an update, a delete and a COPY FROM.
func tableWrites(t *testing.T, n *node) {
	t.Helper()
	n.exec(t, bidRows(20001, 30000, 31), "UPDATE bids SET price = price + 1 WHERE id % 3 = 0", "DELETE FROM bids WHERE id % 11 = 0")
	var b strings.Builder
	for id := 30001; id <= 31000; id++ {
		fmt.Fprintf(&b, "%d\t%d\t%d\tcopy%d\n", id, id%13, id%500, id%3)
	}
	if got := copyBids(t, n, b.String()); got != 1000 {
		t.Fatalf("COPY FROM on %s: %d rows", n.id, got)
	}
}

// copyBids runs COPY bids FROM STDIN on n with text's rows; it returns
// how many it copied.
func copyBids(t *testing.T, n *node, text string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, n.connString())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	tag, err := c.PgConn().CopyFrom(ctx, strings.NewReader(text), "COPY bids FROM STDIN")
	if err != nil {
		t.Fatalf("COPY FROM on %s: %v", n.id, err)
	}
	return tag.RowsAffected()
}

// tableSingle runs stmts and then writes on one streamsqld without
// --cluster and returns tableReads after FLUSH.
func tableSingle(t *testing.T, stmts []string, writes func(*node)) [][]string {
	t.Helper()
	single := launch(t, nil, "single")
	defer single.kill()
	single.exec(t, stmts...)
	if writes != nil {
		writes(single)
	}
	single.exec(t, "FLUSH")
	var want [][]string
	for _, q := range tableReads {
		rows, err := single.query(t, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) < 1 || (q != tableReads[2] && len(rows) < 3) {
			t.Fatalf("%s: %d rows on one node prove little", q, len(rows))
		}
		want = append(want, rows)
	}
	return want
}

// tableCluster starts etcd, a store and three nodes with 2 s leases and
// 300 ms checkpoints; n1 is the coordinator. boot starts more nodes with
// the same flags, the first one the coordinator (when the others are gone).
func tableCluster(t *testing.T) (nodes []*node, endpoint string, env []string, boot func(ids ...string) []*node) {
	t.Helper()
	etcd := clustertest.StartEtcd(t)
	s3 := clustertest.StartS3(t, "ckpt")
	env = s3.Env()
	flags := []string{"--cluster", "etcd://" + etcd.Endpoint + "/sq", "--checkpoint-url", "s3://ckpt/sq", "--cluster-lease-ttl", "2s",
		"--checkpoint-interval", "300ms"}
	boot = func(ids ...string) []*node {
		var rows []string
		var ns []*node
		for i, id := range ids {
			ns = append(ns, start(t, env, id, flags...))
			role := "worker"
			if i == 0 {
				role = "coordinator"
				waitNodes(t, ns[0], "SELECT node_id, role FROM streamsql_nodes WHERE node_id = '"+id+"'", []string{id + "|coordinator"})
			}
			rows = append(rows, id+"|"+role)
		}
		waitNodes(t, ns[0], "SELECT node_id, role FROM streamsql_nodes ORDER BY 1", rows)
		return ns
	}
	return boot("n1", "n2", "n3"), etcd.Endpoint, env, boot
}

// refused checks that sql on n fails with SQLSTATE 0A000 and a message
// containing every one of what.
func refused(t *testing.T, n *node, sql string, what ...string) {
	t.Helper()
	_, err := n.query(t, sql)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "0A000" {
		t.Fatalf("%s on %s: err = %v, want 0A000", sql, n.id, err)
	}
	for _, w := range what {
		if !strings.Contains(pe.Message, w) {
			t.Fatalf("%s on %s: %q does not say %q", sql, n.id, pe.Message, w)
		}
	}
}

// TestClusterTableViewEqualsSingleNode: CREATE TABLE and writes on the
// coordinator, two views over the table with instances on the three
// nodes; the views and the table read on every node (a worker reads the
// table from the coordinator) equal one streamsqld's after the same
// statements. A worker refuses writes that return rows, naming the
// coordinator's address; temporary tables are refused.
func TestClusterTableViewEqualsSingleNode(t *testing.T) {
	stmts := append([]string{tableDDL[0], bidRows(1, 20000, 7919)}, tableDDL[1:]...)
	want := tableSingle(t, stmts, func(n *node) { tableWrites(t, n) })
	nodes, _, _, _ := tableCluster(t)
	n1, n2, n3 := nodes[0], nodes[1], nodes[2]
	n1.exec(t, stmts...)
	tableWrites(t, n1)
	for _, n := range []*node{n2, n3} {
		if !strings.Contains(n.out.String(), "operator 0: this node runs instances [") {
			t.Fatalf("node %s runs no instance of the views:\n%s", n.id, n.out.String())
		}
	}
	waitReads(t, tableReads, want, 60*time.Second, n1, n2, n3)

	// A worker forwards writes to the coordinator, but not one that
	// returns rows, nor COPY FROM.
	refused(t, n2, "INSERT INTO bids VALUES (0, 0, 0, 'x') RETURNING auction", "INSERT runs only on the cluster's coordinator", n1.addr)
	refused(t, n3, "DELETE FROM bids RETURNING auction", "DELETE runs only on the cluster's coordinator", n1.addr)
	refused(t, n1, "CREATE TEMPORARY TABLE tt (a int)", "CREATE TEMPORARY TABLE is not supported on a cluster")
	waitReads(t, tableReads, want, 10*time.Second, n2) // nothing written by the refused statements
	// CREATE TABLE and writes on a worker run on the coordinator; the
	// worker reads the rows back at once.
	n2.exec(t, "CREATE TABLE u (a int)", "INSERT INTO u VALUES (1), (2)", "UPDATE u SET a = a * 10", "DELETE FROM u WHERE a = 10")
	for _, n := range nodes {
		waitNodes(t, n, "SELECT a FROM u", []string{"20"})
	}
	n3.exec(t, "DROP TABLE u")

	// DROP TABLE ... CASCADE (forwarded from a worker) drops the views
	// too, on every node.
	n3.exec(t, "DROP TABLE bids CASCADE")
	for _, n := range nodes {
		waitNodes(t, n, "SELECT count(*) FROM pg_class WHERE relname IN ('bids', 't_auction', 't_channel')", []string{"0"})
	}
}

// imageRows reads the rows of table oid in the committed checkpoint p,
// as "id|auction|price|channel" lines sorted by id; ok false when the
// checkpoint has no image of it.
func imageRows(t *testing.T, ctx context.Context, endpoint string, env []string, oid string) (p cluster.Pointer, rows []string, ok bool) {
	t.Helper()
	p, b, ok := imageOf(t, ctx, endpoint, env, oid)
	if !ok {
		return p, nil, false
	}
	r, err := ipc.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("table image of %s: %v", oid, err)
	}
	defer r.Release()
	type row struct {
		id   int64
		line string
	}
	var rs []row
	for r.Next() {
		rec := r.RecordBatch()
		id, auction, price, channel := rec.Column(0).(*array.Int64), rec.Column(1).(*array.Int64), rec.Column(2).(*array.Int64), rec.Column(3).(*array.String)
		for i := 0; i < int(rec.NumRows()); i++ {
			rs = append(rs, row{id.Value(i), fmt.Sprintf("%d|%d|%d|%s", id.Value(i), auction.Value(i), price.Value(i), channel.Value(i))})
		}
	}
	if err := r.Err(); err != nil {
		t.Fatalf("table image of %s: %v", oid, err)
	}
	slices.SortFunc(rs, func(a, b row) int { return int(a.id - b.id) })
	for _, x := range rs {
		rows = append(rows, x.line)
	}
	return p, rows, true
}

// imageOf reads the image of table or sequence oid in the committed
// checkpoint p; ok false when the checkpoint has none.
func imageOf(t *testing.T, ctx context.Context, endpoint string, env []string, oid string) (p cluster.Pointer, image []byte, ok bool) {
	t.Helper()
	cli, store := openCheckpoints(t, ctx, endpoint, env)
	p, _, has, err := cluster.ReadPointer(ctx, cli, "/sq")
	if err != nil || !has {
		return p, nil, false
	}
	m, err := store.ReadManifest(ctx, p.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range m.Objects {
		if !strings.HasPrefix(o.Op, "table/"+oid+".") {
			continue
		}
		b, err := store.Fetch(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		return p, b, true
	}
	return p, nil, false
}

// tableCommitted creates the table (20 000 rows) and the views on the
// coordinator n, waits until a committed checkpoint's image of the table
// has those rows, and returns the table's OID.
func tableCommitted(t *testing.T, ctx context.Context, n *node, endpoint string, env []string) string {
	t.Helper()
	n.exec(t, append([]string{tableDDL[0], bidRows(1, 20000, 7919)}, tableDDL[1:]...)...)
	oid, err := n.query(t, "SELECT oid FROM pg_class WHERE relname = 'bids'")
	if err != nil || len(oid) != 1 {
		t.Fatalf("the table's OID: %v %v", oid, err)
	}
	for {
		p, rows, ok := imageRows(t, ctx, endpoint, env, oid[0])
		if ok && len(rows) == 20000 {
			t.Logf("checkpoint %d has the table's 20000 rows", p.Epoch)
			return oid[0]
		}
		if ctx.Err() != nil {
			t.Fatalf("no committed checkpoint with the table's 20000 rows (last: %d rows, %v)", len(rows), ok)
		}
		time.Sleep(100 * time.Millisecond) // polling with the context's deadline
	}
}

// checkLoaded checks, once the coordinator nodes[0] logged that it
// loaded the tables, that its table equals the committed checkpoint's
// image row for row, that it accepts writes, and that the views on every
// node equal one streamsqld's over exactly the image's rows; it returns
// the checkpoint's epoch and its rows.
func checkLoaded(t *testing.T, ctx context.Context, endpoint string, env []string, oid string, nodes ...*node) (uint64, int) {
	t.Helper()
	n := nodes[0]
	waitLog(t, n, 60*time.Second, "cluster: tables loaded from checkpoint ")
	p, image, ok := imageRows(t, ctx, endpoint, env, oid)
	if !ok || len(image) < 20000 {
		t.Fatalf("checkpoint %d: %d rows of the table (%v), want at least the 20000 committed", p.Epoch, len(image), ok)
	}
	got, err := n.query(t, "SELECT * FROM bids ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "\n") != strings.Join(image, "\n") {
		t.Fatalf("the new coordinator's table: %d rows, checkpoint %d's %d; first differing: %s", len(got), p.Epoch, len(image), firstDiff(got, image))
	}
	// Writes wait for the load; these land (and leave the rows as they were).
	n.exec(t, "INSERT INTO bids VALUES (1000000, 1, 1, 'late')", "DELETE FROM bids WHERE id = 1000000")
	// One streamsqld over the rows of that checkpoint.
	var b strings.Builder
	for _, line := range image {
		b.WriteString(strings.ReplaceAll(line, "|", "\t") + "\n")
	}
	want := tableSingle(t, tableDDL[:1], func(n *node) { copyBids(t, n, b.String()); n.exec(t, tableDDL[1:]...) })
	waitReads(t, tableReads, want, 90*time.Second, nodes...)
	return p.Epoch, len(image)
}

// TestClusterTableCoordinatorKilled: rows written on the coordinator are
// in the committed checkpoint (an image of the table); after more writes
// the coordinator is killed (kill -9). The new coordinator has exactly the
// rows of the last committed checkpoint (those written after it are
// lost, as documented), accepts writes once it loaded them, and the
// views over the table, restarted from their inputs there, equal one
// streamsqld's over those rows.
func TestClusterTableCoordinatorKilled(t *testing.T) {
	nodes, endpoint, env, _ := tableCluster(t)
	n1, n2, n3 := nodes[0], nodes[1], nodes[2]
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	oid := tableCommitted(t, ctx, n1, endpoint, env)
	n1.exec(t, bidRows(20001, 25000, 31), "DELETE FROM bids WHERE id % 10 = 0")
	n1.kill()
	killed := time.Now()
	waitNodes(t, n2, "SELECT node_id, role FROM streamsql_nodes ORDER BY 1", []string{"n2|coordinator", "n3|worker"})
	epoch, rows := checkLoaded(t, ctx, endpoint, env, oid, n2, n3)
	t.Logf("kill -9 of the coordinator: n2 has checkpoint %d's %d rows (%d acknowledged rows after it lost), views equal one node (a single-node run included) %.2f s after the kill",
		epoch, rows, 20000+5000-2500-rows, time.Since(killed).Seconds())
}

// TestClusterTableWholeClusterRestarted: every node killed, and the
// cluster started again on other nodes with empty data directories: the
// new coordinator replays the catalog and loads the table from the
// committed checkpoint; the views equal one streamsqld's over its rows.
func TestClusterTableWholeClusterRestarted(t *testing.T) {
	nodes, endpoint, env, boot := tableCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	oid := tableCommitted(t, ctx, nodes[0], endpoint, env)
	for _, n := range nodes {
		n.kill()
	}
	killed := time.Now()
	nodes = boot("n4", "n5")
	epoch, rows := checkLoaded(t, ctx, endpoint, env, oid, nodes...)
	t.Logf("3 nodes killed, 2 others started: checkpoint %d's %d rows loaded, views equal one node (a single-node run included) %.2f s after the kill", epoch, rows, time.Since(killed).Seconds())
}

// TestClusterTableWorkerKilled: kill -9 of a worker loses nothing of a
// table (its rows never lived there): every row written before and after
// the kill is read on the coordinator and the other worker, and the
// views over the table, restarted without the dead worker, equal one
// streamsqld's.
func TestClusterTableWorkerKilled(t *testing.T) {
	stmts := append([]string{tableDDL[0], bidRows(1, 20000, 7919)}, tableDDL[1:]...)
	writes := []string{bidRows(20001, 26000, 31), "UPDATE bids SET price = price + 1 WHERE id % 4 = 0"}
	want := tableSingle(t, stmts, func(n *node) { n.exec(t, writes...) })
	nodes, _, _, _ := tableCluster(t)
	n1, n2, n3 := nodes[0], nodes[1], nodes[2]
	n1.exec(t, stmts...)
	waitLog(t, n1, 60*time.Second, "committed in")
	n3.kill()
	killed := time.Now()
	n1.exec(t, writes...)
	// The views restart without n3 once its lease ends. They may first
	// restart with n3 still a member (assignment 2 of 3 nodes, when its
	// exchange connections broke before its lease ended: seen once in
	// CI), so the 2-node assignment's number is not fixed.
	waitLog(t, n1, 60*time.Second, "(2 nodes)")
	waitReads(t, tableReads, want, 90*time.Second, n1, n2)
	t.Logf("kill -9 of a worker: the table and the views equal one node %.2f s after the kill", time.Since(killed).Seconds())
}

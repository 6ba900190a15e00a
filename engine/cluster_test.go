package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/dataflow"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// fakeCluster lists whatever nodes the test sets, or fails.
type fakeCluster struct {
	mu    sync.Mutex
	nodes []catalog.NodeStatus
	err   error
	coord bool // a coordinator whose Publish succeeds
}

func (f *fakeCluster) Nodes(context.Context) ([]catalog.NodeStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.nodes, f.err
}

// The fake is a worker (or, coord set, a coordinator) that runs nothing:
// the views' part is tested with real nodes (tests/cluster).
func (f *fakeCluster) IsCoordinator() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.coord
}
func (f *fakeCluster) Placement() dataflow.Placement    { return nil }
func (f *fakeCluster) CheckPlace(context.Context) error { return nil }
func (f *fakeCluster) Publish(context.Context, ClusterStatement) error {
	if f.IsCoordinator() {
		return nil
	}
	return errors.New("not the coordinator")
}
func (f *fakeCluster) ServeView(context.Context, uint32, stream.Node) error {
	return errors.New("no views")
}
func (f *fakeCluster) Forward(context.Context, string) error { return errors.New("no coordinator") }
func (f *fakeCluster) CheckpointTaken(uint64, func())        {}
func (f *fakeCluster) Forget(func(uint32) bool)              {}
func (f *fakeCluster) ReadView(context.Context, string, string, []types.Column) ([]arrow.RecordBatch, error) {
	return nil, errors.New("no coordinator")
}

// openCluster opens a server in the cluster fc (closed at the test's
// end) and a session of it.
func openCluster(t *testing.T, fc ClusterNode) *Session {
	t.Helper()
	e, err := Open(Config{DataDir: t.TempDir(), Cluster: fc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	s, err := e.NewSession("tester", "db", nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestClusterNodesAndRefusals(t *testing.T) {
	fc := &fakeCluster{nodes: []catalog.NodeStatus{
		{NodeID: "n1", Address: "h1:5433", Role: "coordinator", State: "running", Runs: "nothing", Self: true},
		{NodeID: "n2", Address: "h2:5433", Role: "worker", State: "running", Runs: "nothing"},
	}}
	s := openCluster(t, fc)
	lines, _, err := run(t, s, "SHOW NODES")
	if err != nil || strings.Join(lines, ";") != "n1 *|h1:5433|coordinator|running|nothing;n2|h2:5433|worker|running|nothing" {
		t.Fatalf("SHOW NODES = %q, %v", lines, err)
	}
	lines, _, err = run(t, s, "SELECT node_id, role, is_self FROM streamsql_nodes ORDER BY node_id DESC")
	if err != nil || strings.Join(lines, ";") != "n2|worker|f;n1|coordinator|t" {
		t.Fatalf("streamsql_nodes = %q, %v", lines, err)
	}
	fc.mu.Lock()
	fc.err = errors.New("etcd down")
	fc.mu.Unlock()
	for _, q := range []string{"SHOW NODES", "SELECT * FROM streamsql_nodes"} {
		if _, _, err := run(t, s, q); pgerr.CodeOf(err) != pgerr.ConnectionException || !strings.Contains(err.Error(), "etcd down") {
			t.Errorf("%s with etcd down: err = %v, want 08000", q, err)
		}
	}
	for q, what := range map[string]string{
		"GRANT SELECT ON t TO x":     "GRANT SELECT",
		"ALTER TABLE t ADD b int":    "ALTER TABLE",
		"ALTER SEQUENCE q RESTART":   "ALTER SEQUENCE",
		"CREATE TABLE u AS SELECT 1": "CREATE TABLE AS",
	} {
		_, _, err := run(t, s, q)
		if pgerr.CodeOf(err) != pgerr.FeatureNotSupported || !strings.Contains(err.Error(), what+" is not supported on a cluster node yet") {
			t.Errorf("%s: err = %v, want 0A000 naming %s", q, err, what)
		}
	}
	for q, what := range map[string]string{
		"create materialized view v as select 1":                      "CREATE MATERIALIZED VIEW",
		"CREATE SOURCE b WITH (connector = 'nexmark', table = 'bid')": "CREATE SOURCE",
		"CREATE SINK k AS SELECT 1 WITH (connector = 'blackhole')":    "CREATE SINK",
		"DROP MATERIALIZED VIEW v":                                    "DROP MATERIALIZED VIEW",
		"DROP SINK k":                                                 "DROP SINK",
		"DROP SOURCE b":                                               "DROP SOURCE",
		"CREATE TABLE t (a int)":                                      "CREATE TABLE",
		"CREATE SEQUENCE q":                                           "CREATE SEQUENCE",
		"SUBSCRIBE TO t":                                              "SUBSCRIBE",
		"DROP TABLE t":                                                "DROP TABLE",
		"INSERT INTO t VALUES (1)":                                    "INSERT",
		"UPDATE t SET a = 1":                                          "UPDATE",
		"DELETE FROM t":                                               "DELETE",
		"TRUNCATE t":                                                  "TRUNCATE",
		"COPY t FROM STDIN":                                           "COPY FROM",
		"WITH x AS (DELETE FROM t RETURNING a) SELECT * FROM x": "a data-modifying WITH",
	} {
		_, _, err := run(t, s, q)
		if pgerr.CodeOf(err) != pgerr.FeatureNotSupported || !strings.Contains(err.Error(), what+" runs only on the cluster's coordinator") {
			t.Errorf("%s on a worker: err = %v, want 0A000 naming %s", q, err, what)
		}
	}
	for _, q := range []string{"SELECT 1", "SET search_path = public", "SHOW search_path", "BEGIN", "COMMIT", "COPY (SELECT 1) TO STDOUT"} {
		if _, _, err := run(t, s, q); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
}

func TestShowNodesOutsideACluster(t *testing.T) {
	_, s := open(t, t.TempDir())
	if _, _, err := run(t, s, "SHOW NODES"); pgerr.CodeOf(err) != pgerr.ObjectNotInPrerequisiteState {
		t.Fatalf("SHOW NODES: err = %v, want 55000", err)
	}
	lines, _, err := run(t, s, "SELECT count(*) FROM streamsql_nodes")
	if err != nil || strings.Join(lines, ";") != "0" {
		t.Fatalf("streamsql_nodes = %q, %v", lines, err)
	}
	if _, _, err := run(t, s, "CREATE TABLE t (a int)"); err != nil {
		t.Fatalf("outside a cluster CREATE TABLE: %v", err)
	}
}

// TestClusterWritePreparedOnCoordinator: a write prepared while the node
// was the coordinator is refused when it is executed after the node
// lost the role (the table's rows are the new coordinator's); a read of
// the table on a worker goes to the coordinator.
func TestClusterWritePreparedOnCoordinator(t *testing.T) {
	fc := &fakeCluster{coord: true, nodes: []catalog.NodeStatus{{NodeID: "n2", Address: "h2:5433", Role: "coordinator"}}}
	s := openCluster(t, fc)
	if _, _, err := run(t, s, "CREATE TABLE t (a int); INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	stmts, err := sql.Parse("INSERT INTO t VALUES (2)")
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Prepare(context.Background(), stmts[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	fc.mu.Lock()
	fc.coord = false
	fc.mu.Unlock()
	if _, err := s.Execute(context.Background(), p, nil); pgerr.CodeOf(err) != pgerr.FeatureNotSupported || !strings.Contains(err.Error(), "coordinator at h2:5433") {
		t.Fatalf("a write prepared on the coordinator, executed on a worker: %v", err)
	}
	if _, _, err := run(t, s, "SELECT count(*) FROM t"); err == nil || !strings.Contains(err.Error(), "table \"t\" cannot be read from the coordinator") {
		t.Fatalf("a worker's read of a table: %v, want it read from the coordinator", err)
	}
}

// TestClusterReplaySkipsOIDs: the coordinator may have used OIDs for a
// statement it refused after creating its relation (never logged); a
// worker's replay of the next logged statement takes the coordinator's
// OID, past the gap, instead of failing as "the catalogs differ".
func TestClusterReplaySkipsOIDs(t *testing.T) {
	s := openCluster(t, &fakeCluster{})
	const gap = 1 << 20
	ctx := context.Background()
	if err := s.eng.ReplayClusterStatement(ctx, ClusterStatement{SQL: "CREATE TABLE a (x int)", User: "tester", OID: gap}); err != nil {
		t.Fatalf("replay past a gap: %v", err)
	}
	if err := s.eng.ReplayClusterStatement(ctx, ClusterStatement{SQL: "CREATE TABLE b (x int)", User: "tester", OID: gap + 2}); err != nil {
		t.Fatalf("the next replay: %v", err)
	}
	lines, _, err := run(t, s, "SELECT relname, oid FROM pg_class WHERE relname IN ('a', 'b') ORDER BY 1")
	if err != nil || strings.Join(lines, ";") != fmt.Sprintf("a|%d;b|%d", gap, gap+2) {
		t.Fatalf("OIDs %q, %v", lines, err)
	}
	// An OID below the catalog's next one is not handed out again.
	if err := s.eng.ReplayClusterStatement(ctx, ClusterStatement{SQL: "CREATE TABLE c (x int)", User: "tester", OID: 5000}); err == nil || !strings.Contains(err.Error(), "the catalogs differ") {
		t.Fatalf("a replay behind the catalog: %v", err)
	}
}

// A view's late rows are not stored from a cluster's nodes: LATE ROWS INTO
// is refused there (not accepted and dropped).
func TestClusterRefusesLateRowsInto(t *testing.T) {
	fc := &fakeCluster{coord: true, nodes: []catalog.NodeStatus{{NodeID: "n1", Role: "coordinator", State: "running", Self: true}}}
	s := openCluster(t, fc)
	mustRun(t, s, "CREATE TABLE ev (k int, ts timestamp, WATERMARK FOR ts AS ts) APPEND ONLY")
	mustRun(t, s, "CREATE TABLE late (k int, ts timestamp, view_name text, watermark timestamptz)")
	_, _, err := run(t, s, "CREATE MATERIALIZED VIEW w AS SELECT window_start, count(*) FROM TUMBLE(ev, ts, INTERVAL '10' SECOND) GROUP BY window_start EMIT ON WINDOW CLOSE LATE ROWS INTO late")
	if pgerr.CodeOf(err) != pgerr.FeatureNotSupported || !strings.Contains(err.Error(), "LATE ROWS INTO is not supported on a cluster node") {
		t.Fatalf("got %v", err)
	}
}

package cluster_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/streamsql/streamsql/cluster/clustertest"
)

// TestClusterForwardedDDL: DDL sent to a worker runs on the coordinator
// (docs/cluster.md, "DDL on any node"): with the session's settings
// (streaming_parallelism), answered once the worker applied it (the view
// is in its catalog at once), the coordinator's errors relayed with their
// SQLSTATE; inside a transaction block it stays refused. The forwarded
// view equals the coordinator's own over the same input after FLUSH, and
// a DROP forwarded from the other worker removes it everywhere.
func TestClusterForwardedDDL(t *testing.T) {
	n1, n2, n3, _, _, _ := threeNodesOn(t, clustertest.StartS3(t, "ckpt"), clusterViews)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, n2.connString())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	exec := func(q string) error {
		_, err := c.Exec(ctx, q, pgx.QueryExecModeSimpleProtocol)
		return err
	}
	for _, q := range []string{"SET streaming_parallelism = 2",
		"CREATE MATERIALIZED VIEW fw AS SELECT auction, count(*) AS n FROM bid GROUP BY auction"} {
		if err := exec(q); err != nil {
			t.Fatalf("%s on n2: %v", q, err)
		}
	}
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_class WHERE relname = 'fw'").Scan(&n); err != nil || n != 1 {
		t.Fatalf("fw in n2's catalog right after CREATE: %d, %v", n, err)
	}
	waitLog(t, n1, 10*time.Second, "materialized view fw created, parallelism 2")
	var pe *pgconn.PgError
	if err := exec("CREATE MATERIALIZED VIEW bad AS SELECT * FROM nosuch"); !errors.As(err, &pe) || pe.Code != "42P01" {
		t.Fatalf("a forwarded statement's error: %v, want 42P01 from the coordinator", err)
	}
	if err := exec("BEGIN"); err != nil {
		t.Fatal(err)
	}
	if err := exec("DROP MATERIALIZED VIEW fw"); !errors.As(err, &pe) || pe.Code != "0A000" || !strings.Contains(pe.Message, "runs only on the cluster's coordinator") {
		t.Fatalf("DDL in a transaction block on a worker: %v, want 0A000", err)
	}
	if err := exec("ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	// A user name the nodes trust without a role (the tests' nodes run
	// with trust authentication) forwards as that name.
	ac, err := pgx.Connect(ctx, strings.Replace(n3.connString(), "user=streamsql", "user=alice", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer ac.Close(context.Background())
	if _, err := ac.Exec(ctx, "CREATE TABLE alices (a int)", pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatalf("CREATE TABLE on n3 as alice: %v", err)
	}
	waitNodes(t, n1, "SELECT count(*) FROM pg_class WHERE relname = 'alices'", []string{"1"})
	n2.exec(t, "FLUSH")
	for _, nd := range []*node{n1, n2, n3} {
		waitNodes(t, nd, "SELECT (SELECT sum(n) FROM fw) = (SELECT sum(n) FROM per_auction), (SELECT count(*) FROM fw) = (SELECT count(*) FROM per_auction)", []string{"true|true"})
	}
	n3.exec(t, "DROP MATERIALIZED VIEW fw")
	for _, nd := range []*node{n1, n2, n3} {
		waitNodes(t, nd, "SELECT count(*) FROM pg_class WHERE relname = 'fw'", []string{"0"})
	}
}

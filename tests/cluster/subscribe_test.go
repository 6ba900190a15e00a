package cluster_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestClusterSubscribe: SUBSCRIBE TO a materialized view whose instances
// run on three nodes, on the coordinator (where the view's rows and
// changes live): its snapshot equals the view, and a write to the table
// under the view comes as changes. A worker refuses SUBSCRIBE naming the
// coordinator (it is not forwarded: its rows would have to be relayed);
// the coordinator refuses what a cluster does not keep (a query's
// subscription, since = ...).
func TestClusterSubscribe(t *testing.T) {
	nodes, _, _, _ := tableCluster(t)
	n1, n2 := nodes[0], nodes[1]
	n1.exec(t, append([]string{tableDDL[0], bidRows(1, 20000, 7919)}, tableDDL[1:]...)...)
	n1.exec(t, "FLUSH")
	want, err := n1.query(t, "SELECT * FROM t_channel ORDER BY channel")
	if err != nil || len(want) < 3 {
		t.Fatalf("the view: %v %v", want, err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, n1.connString())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	qctx, stop := context.WithCancel(ctx)
	defer stop()
	rows, err := c.Query(qctx, "SUBSCRIBE TO t_channel")
	if err != nil {
		t.Fatal(err)
	}
	next := func() string {
		t.Helper()
		if !rows.Next() {
			t.Fatalf("the subscription ended: %v", rows.Err())
		}
		vals, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		parts := []string{fmt.Sprint(vals[0])}
		for _, v := range vals[2:] { // without epoch_time
			parts = append(parts, fmt.Sprint(v))
		}
		return strings.Join(parts, "|")
	}
	var snap []string
	for range want {
		snap = append(snap, next())
	}
	slices.Sort(snap)
	for i, w := range want {
		if snap[i] != "insert|"+w {
			t.Fatalf("snapshot row %d: %q, want %q (all: %v)", i, snap[i], "insert|"+w, snap)
		}
	}
	// A new channel's row comes as an insert.
	n1.exec(t, "INSERT INTO bids VALUES (900001, 5, 777, 'zz-new')")
	if got := next(); got != "insert|zz-new|1|777" {
		t.Fatalf("the change after an INSERT: %q", got)
	}
	stop()
	rows.Close()

	refused(t, n2, "SUBSCRIBE TO t_channel", "SUBSCRIBE runs only on the cluster's coordinator")
	refused(t, n1, "SUBSCRIBE (SELECT channel FROM bids)", "SUBSCRIBE to a query, a table or a source is not supported on a cluster")
	refused(t, n1, "SUBSCRIBE TO t_channel WITH (since = '2026-01-01')", "since = ...) is not supported on a cluster")
}

package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/connector/pgcdc/pgtest"
)

// TestPostgresSink: CREATE SINK ... WITH (connector = 'postgres') keeps
// the target table equal to a grouped query over a table through inserts,
// updates and deletes (groups appearing and disappearing) and a restart;
// an append-only sink writes each row once.
func TestPostgresSink(t *testing.T) {
	pg := pgtest.Start(t)
	ctx := context.Background()
	pg.Exec(ctx, "CREATE TABLE totals (grp int PRIMARY KEY, n bigint, total numeric(12,2)); CREATE TABLE events (id int, amt numeric(10,2))")
	up := pg.Connect(ctx)
	dir := t.TempDir()
	e, s := open(t, dir)
	opts := fmt.Sprintf("connector = 'postgres', hostname = '127.0.0.1', port = '%d', username = 'postgres', database.name = 'postgres'", pg.Port)
	mustRun(t, s, "CREATE TABLE src (id int PRIMARY KEY, grp int, amt numeric(10,2))")
	mustRun(t, s, "INSERT INTO src SELECT i, i % 5, i * 1.25 FROM generate_series(1, 100) i")
	mustRun(t, s, "CREATE MATERIALIZED VIEW tv AS SELECT grp, count(*) AS n, sum(amt) AS total FROM src GROUP BY grp")
	mustRun(t, s, "CREATE SINK ts FROM tv WITH ("+opts+", table.name = 'totals')")
	mustRun(t, s, "CREATE TABLE ev (id int, amt numeric(10,2)) APPEND ONLY")
	mustRun(t, s, "CREATE SINK es FROM ev WITH ("+opts+", table.name = 'public.events')")
	same := func() {
		t.Helper()
		mustRun(t, s, "FLUSH")
		want := strings.Join(mustRun(t, s, "SELECT grp, n, total FROM tv ORDER BY grp"), ",")
		deadline := time.Now().Add(30 * time.Second)
		var got string
		for time.Now().Before(deadline) {
			if got = strings.Join(pgtest.Rows(ctx, t, up, "SELECT grp, n, total FROM totals ORDER BY grp"), ","); got == want {
				break
			}
			time.Sleep(10 * time.Millisecond) // polling for the commit
		}
		if got != want {
			t.Fatalf("totals: %s\nwant %s", got, want)
		}
	}
	same()
	mustRun(t, s, "UPDATE src SET grp = 7 WHERE id <= 10")
	mustRun(t, s, "DELETE FROM src WHERE grp = 3")
	mustRun(t, s, "INSERT INTO ev SELECT i, i FROM generate_series(1, 50) i")
	same()
	e.Close()
	e, s = open(t, dir)
	defer e.Close()
	mustRun(t, s, "DELETE FROM src WHERE grp = 7")
	mustRun(t, s, "INSERT INTO src VALUES (1000, 9, 0.01)")
	mustRun(t, s, "INSERT INTO ev SELECT i, i FROM generate_series(51, 60) i")
	same()
	if got := pgtest.Rows(ctx, t, up, "SELECT count(*), count(DISTINCT id), sum(amt) FROM events"); got[0] != "60|60|1830.00" {
		t.Fatalf("events: %v", got)
	}
	waitRows(t, s, "SELECT sink_name, status FROM streamsql_sinks ORDER BY sink_name", "es|running", "ts|running")
}

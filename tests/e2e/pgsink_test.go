package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/connector/pgcdc/pgtest"
)

// TestPostgresSinkCrash: a keyed sink (a grouped view) and an append-only
// sink into a real PostgreSQL 15 while streamsqld is killed (kill -9)
// right after bursts of inserts, three times: afterwards the target
// tables equal the view and the table, every appended row once.
func TestPostgresSinkCrash(t *testing.T) {
	pg := pgtest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pg.Exec(ctx, "CREATE TABLE totals (grp int PRIMARY KEY, n bigint, total numeric(14,2)); CREATE TABLE events (id int, amt numeric(10,2))")
	up := pg.Connect(ctx)
	dir := t.TempDir()
	s := startServer(t, dir)
	c := s.connect(ctx)
	opts := fmt.Sprintf("connector = 'postgres', hostname = '127.0.0.1', port = '%d', username = 'postgres', database.name = 'postgres'", pg.Port)
	mustExec(t, ctx, c, "CREATE TABLE ev (id int, grp int, amt numeric(10,2)) APPEND ONLY")
	mustExec(t, ctx, c, "CREATE MATERIALIZED VIEW tv AS SELECT grp, count(*) AS n, sum(amt) AS total FROM ev GROUP BY grp")
	mustExec(t, ctx, c, "CREATE SINK ts FROM tv WITH ("+opts+", table.name = 'totals')")
	mustExec(t, ctx, c, "CREATE SINK es AS SELECT id, amt FROM ev WITH ("+opts+", table.name = 'events')")
	next := 0
	count := func() int {
		var n int
		if err := up.QueryRow(ctx, "SELECT count(*) FROM events").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	insert := func(stmts int) {
		for range stmts {
			mustExec(t, ctx, c, fmt.Sprintf("INSERT INTO ev SELECT i, i %% 17, i * 0.5 FROM generate_series(%d, %d) i", next, next+499))
			next += 500
		}
	}
	for round := 0; round < 3; round++ {
		insert(10)
		// Let some epochs commit, then kill during the next burst.
		for before := next - 5000; count() <= before; {
			time.Sleep(5 * time.Millisecond) // polling for progress
		}
		insert(10)
		t.Logf("round %d: killed with %d of %d rows in the append target", round, count(), next)
		s.kill()
		s = startServer(t, dir)
		c = s.connect(ctx)
	}
	mustExec(t, ctx, c, "FLUSH")
	want := strings.Join(pgtest.Rows(ctx, t, c, "SELECT grp, n, total FROM tv ORDER BY grp"), ",")
	wantEv := fmt.Sprintf("%d|%d", next, next)
	deadline := time.Now().Add(60 * time.Second)
	var got, gotEv string
	for time.Now().Before(deadline) {
		got = strings.Join(pgtest.Rows(ctx, t, up, "SELECT grp, n, total FROM totals ORDER BY grp"), ",")
		gotEv = strings.Join(pgtest.Rows(ctx, t, up, "SELECT count(*), count(DISTINCT id) FROM events"), ",")
		if got == want && gotEv == wantEv {
			break
		}
		time.Sleep(20 * time.Millisecond) // polling for the commits
	}
	if got != want {
		t.Errorf("totals:\n got %s\nwant %s", got, want)
	}
	if gotEv != wantEv {
		t.Errorf("events (rows, distinct ids): %s, want %s", gotEv, wantEv)
	}
}

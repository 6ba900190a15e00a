package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/streamsql/streamsql/connector/pgcdc/pgtest"
)

const cdcE2EColumns = `id bigint PRIMARY KEY, grp int, price numeric(14,4), note text, ts timestamptz, tags int[], big text`

// cdcE2EGen makes random changes of the upstream table. Owned by one
// goroutine.
type cdcE2EGen struct {
	rng  *rand.Rand
	next int64
	live []int64
}

func (g *cdcE2EGen) row() string {
	r := g.rng
	g.next++
	g.live = append(g.live, g.next)
	big := "NULL"
	if r.IntN(10) == 0 { // TOASTed: incompressible, over 2 kB
		b := make([]byte, 2500+r.IntN(2000))
		for i := range b {
			b[i] = byte('a' + r.IntN(26))
		}
		big = "'" + string(b) + "'"
	}
	return fmt.Sprintf("(%d, %d, %d.%04d, 'n%d', '2025-01-01 00:00:00+00'::timestamptz + %d * interval '1 second', '{%d,%d}', %s)",
		g.next, r.IntN(10), r.IntN(1000000), r.IntN(10000), r.IntN(1000), r.IntN(1e8), r.IntN(9), r.IntN(9), big)
}

func (g *cdcE2EGen) change() string {
	r := g.rng
	if len(g.live) == 0 || r.IntN(10) < 4 {
		return "INSERT INTO orders VALUES " + g.row()
	}
	k := r.IntN(len(g.live))
	id := g.live[k]
	if r.IntN(10) < 7 {
		if r.IntN(20) == 0 { // a new key
			g.next++
			g.live[k] = g.next
			return fmt.Sprintf("UPDATE orders SET id = %d, grp = %d WHERE id = %d", g.next, r.IntN(10), id)
		}
		return fmt.Sprintf("UPDATE orders SET grp = %d, price = price + 1.5, note = NULL WHERE id = %d", r.IntN(10), id)
	}
	g.live[k] = g.live[len(g.live)-1]
	g.live = g.live[:len(g.live)-1]
	return fmt.Sprintf("DELETE FROM orders WHERE id = %d", id)
}

// cdcRows renders a query's rows as text, NULL as NULL.
func cdcRows(t *testing.T, ctx context.Context, c *pgx.Conn, q string) string {
	t.Helper()
	return strings.Join(pgtest.Rows(ctx, t, c, q), "\n")
}

// TestCDCCrash: a postgres-cdc table of a real PostgreSQL 15 while
// streamsqld is killed (kill -9) during the initial snapshot and three
// times while random upstream transactions stream, and while the upstream
// PostgreSQL crashes once (immediate shutdown): afterwards the table
// equals the upstream table and a view over it equals the same query run
// upstream.
func TestCDCCrash(t *testing.T) {
	pg := pgtest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	up := pg.Connect(ctx)
	mustExec(t, ctx, up, "CREATE TABLE orders ("+cdcE2EColumns+")")
	g := &cdcE2EGen{rng: rand.New(rand.NewPCG(7, 8))}
	const initial = 60000
	for done := 0; done < initial; done += 1000 {
		vals := make([]string, 1000)
		for i := range vals {
			vals[i] = g.row()
		}
		mustExec(t, ctx, up, "INSERT INTO orders VALUES "+strings.Join(vals, ", "))
	}

	dir := t.TempDir()
	s := startServer(t, dir)
	c := s.connect(ctx)
	mustExec(t, ctx, c, fmt.Sprintf(`CREATE TABLE orders (%s) WITH (connector = 'postgres-cdc', %s, table.name = 'public.orders', slot.name = 'crash')`, cdcE2EColumns, pg.Options()))
	const view = `SELECT grp, count(*) AS n, sum(price) AS p, max(ts) AS t, count(big) AS b FROM orders GROUP BY grp`
	mustExec(t, ctx, c, "CREATE MATERIALIZED VIEW ov AS "+view)
	// Kill during the snapshot: some rows in, not all.
	for {
		var n int64
		if err := c.QueryRow(ctx, "SELECT count(*) FROM orders").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			t.Logf("killed during the snapshot with %d of %d rows", n, initial)
			break
		}
		time.Sleep(time.Millisecond) // polling for progress
	}
	s.kill()
	pg.WaitSlotInactive(ctx, "crash")
	s = startServer(t, dir)

	// Upstream changes in the background while streamsqld and PostgreSQL crash.
	var stop atomic.Bool
	var wg sync.WaitGroup
	var txs atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			conn, err := pgx.Connect(ctx, pg.DSN())
			if err != nil {
				time.Sleep(50 * time.Millisecond) // upstream restarting: retry
				continue
			}
			for !stop.Load() {
				n := 1 + g.rng.IntN(30)
				stmts := make([]string, n)
				for i := range stmts {
					stmts[i] = g.change()
				}
				if _, err := conn.Exec(ctx, "BEGIN; "+strings.Join(stmts, "; ")+"; COMMIT"); err != nil {
					// Lost with the upstream crash, or committed just
					// before it: the generator's live list may be off,
					// which only makes later changes miss their rows.
					break
				}
				txs.Add(1)
			}
			conn.Close(ctx)
		}
	}()
	for round := 0; round < 3; round++ {
		start := txs.Load()
		for txs.Load() < start+50 {
			time.Sleep(5 * time.Millisecond) // polling for progress
		}
		if round == 1 {
			pg.Crash()
			pg.Start()
			t.Logf("upstream crashed and restarted")
		}
		s.kill()
		pg.WaitSlotInactive(ctx, "crash")
		s = startServer(t, dir)
	}
	for start := txs.Load(); txs.Load() < start+100; {
		time.Sleep(5 * time.Millisecond) // polling for progress
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d upstream transactions", txs.Load())

	c = s.connect(ctx)
	mustExec(t, ctx, c, "SET TimeZone = 'UTC'")
	up = pg.Connect(ctx) // the first one went with the upstream crash
	mustExec(t, ctx, up, "SET TimeZone = 'UTC'")
	for _, q := range []struct{ mine, theirs string }{
		{"SELECT * FROM orders ORDER BY id", "SELECT * FROM orders ORDER BY id"},
		{"SELECT * FROM ov ORDER BY grp", view + " ORDER BY grp"},
	} {
		want := cdcRows(t, ctx, up, q.theirs)
		deadline := time.Now().Add(90 * time.Second)
		var got string
		for time.Now().Before(deadline) {
			mustExec(t, ctx, c, "FLUSH")
			if got = cdcRows(t, ctx, c, q.mine); got == want {
				break
			}
			time.Sleep(20 * time.Millisecond) // polling for progress
		}
		if got != want {
			gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
			for i := range min(len(gl), len(wl)) {
				if gl[i] != wl[i] {
					t.Fatalf("%s: %d rows, upstream %d; row %d:\n got %.200s\nwant %.200s", q.mine, len(gl), len(wl), i, gl[i], wl[i])
				}
			}
			t.Fatalf("%s: %d rows, upstream %d", q.mine, len(gl), len(wl))
		}
	}
	var status string
	var rows int64
	if err := c.QueryRow(ctx, "SELECT status, rows FROM streamsql_sources WHERE source_name = 'orders'").Scan(&status, &rows); err != nil {
		t.Fatal(err)
	}
	if status != "streaming" {
		t.Errorf("streamsql_sources: status %s", status)
	}
}

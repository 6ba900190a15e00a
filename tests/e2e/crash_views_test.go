package e2e

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// crashViews are the views TestKillDuringViewMaintenance keeps, each with
// the batch query its contents must equal once the inputs are read (the
// "uninterrupted run": a view equals its query over its inputs).
var crashViews = []struct{ name, view, oracle string }{
	{"agg", "SELECT k, count(*) AS n, sum(v) AS s, min(v) AS lo, max(v) AS hi FROM ev GROUP BY k", ""},
	{"acct_n", "SELECT a.id, a.bal, count(e.id) AS n FROM acct a LEFT JOIN ev e ON e.k = a.id GROUP BY a.id, a.bal", ""},
	{"top", "SELECT id, bal FROM acct ORDER BY bal DESC, id LIMIT 5", ""},
	{"win", "SELECT window_start, k, count(*) AS n, sum(v) AS s FROM TUMBLE(ev, ts, INTERVAL '10' SECOND) GROUP BY window_start, k EMIT ON WINDOW CLOSE LATE ROWS INTO ev_late",
		// Only closed windows (the watermark, max ts - 5 s, passed their
		// end), of the rows that were not late: each row is counted
		// either here or in ev_late, once.
		"SELECT window_start, k, count(*) AS n, sum(v) AS s FROM TUMBLE((SELECT * FROM ev WHERE id NOT IN (SELECT id FROM ev_late)), ts, INTERVAL '10' SECOND) GROUP BY window_start, k " +
			"HAVING window_start + INTERVAL '10' SECOND <= (SELECT max(ts) - INTERVAL '5' SECOND FROM ev)"},
	{"bids", "SELECT auction, count(*) AS n, max(price) AS p FROM bid GROUP BY auction", ""},
	// A paced generator: it is still being read when the server is killed,
	// so resuming it (and holding a view's changes until the replay has
	// read as far as before) goes by its position.
	{"pbids", "SELECT auction % 10 AS g, count(*) AS n, sum(price) AS s FROM pbid GROUP BY auction % 10", ""},
}

// pbidRows is how many bids the paced source makes (46 of every 50 events).
const pbidRows = 20000 * 46 / 50

// TestKillDuringViewMaintenance writes to tables (inserts, updates,
// deletes) while views over them and over a generator source are
// maintained and checkpointed, kills the server with SIGKILL at random
// moments, restarts it on the same data, and repeats; at the end every view
// must equal its query over its inputs: no change lost, none counted
// twice, no EMIT ON WINDOW CLOSE row emitted twice, and each late row
// either counted by its window view or stored by LATE ROWS INTO, once.
// Rounds:
// STREAMSQL_CRASH_ROUNDS (default 4); seed: STREAMSQL_CRASH_SEED.
func TestKillDuringViewMaintenance(t *testing.T) {
	rounds := 4
	if n, err := strconv.Atoi(os.Getenv("STREAMSQL_CRASH_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	seed := time.Now().UnixNano()
	if n, err := strconv.ParseInt(os.Getenv("STREAMSQL_CRASH_SEED"), 10, 64); err == nil {
		seed = n
	}
	t.Logf("seed %d (STREAMSQL_CRASH_SEED), %d rounds", seed, rounds)
	rng := rand.New(rand.NewSource(seed))
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	flags := []string{"--checkpoint-interval", "150ms", "--barrier-interval", "20ms"}

	s := startServer(t, dir, flags...)
	c := s.connect(ctx)
	for _, q := range []string{
		"CREATE TABLE acct (id int PRIMARY KEY, bal int NOT NULL)",
		"CREATE TABLE ev (id bigint, k int, v int, ts timestamp, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) APPEND ONLY",
		"CREATE TABLE ev_late (id bigint, k int, v int, ts timestamp, view_name text, watermark timestamptz)",
		"CREATE SOURCE bid WITH (connector = 'nexmark', table = 'bid', events = '1000000')",
		"CREATE SOURCE pbid WITH (connector = 'nexmark', table = 'bid', events = '20000', events_per_second = '4000')",
	} {
		mustExec(t, ctx, c, q)
	}
	var subs []*crashSub
	for _, v := range crashViews {
		mustExec(t, ctx, c, "CREATE MATERIALIZED VIEW "+v.name+" AS "+v.view)
		subs = append(subs, &crashSub{view: v.name, appendOnly: strings.Contains(v.view, "EMIT ON WINDOW CLOSE")})
	}
	var evID int64
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for round := 0; round < rounds; round++ {
		if round > 0 {
			s = startServer(t, dir, flags...)
		}
		// Subscribers follow every view, resuming after the last epoch
		// they have whole; they end with the kill.
		subErrs := make(chan error, len(subs))
		for _, cs := range subs {
			go func() { subErrs <- cs.run(ctx, s.connString(), time.Time{}) }()
		}
		// Writers run until the kill; their errors after it are expected.
		stopAt := time.Duration(100+rng.Intn(1100)) * time.Millisecond
		var wg sync.WaitGroup
		var mu sync.Mutex
		var writeErr error
		for w := 0; w < 2; w++ {
			wrng := rand.New(rand.NewSource(rng.Int63()))
			wc, err := pgx.Connect(ctx, s.connString())
			if err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer wc.Close(context.Background())
				for {
					var err error
					switch op := wrng.Intn(10); {
					case op < 5 && w == 0: // append events with rising time
						mu.Lock()
						evID++
						id := evID
						mu.Unlock()
						ts := base.Add(time.Duration(id)*200*time.Millisecond - time.Duration(wrng.Intn(3000))*time.Millisecond)
						if wrng.Intn(10) == 0 { // late for win: its window has closed
							ts = ts.Add(-8*time.Second - time.Duration(wrng.Intn(10000))*time.Millisecond)
						}
						_, err = wc.Exec(ctx, "INSERT INTO ev VALUES ($1, $2, $3, $4)", id, wrng.Intn(20), wrng.Intn(1000)-100, ts)
					case op < 7:
						_, err = wc.Exec(ctx, "INSERT INTO acct VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET bal = excluded.bal", wrng.Intn(30), wrng.Intn(500))
					case op < 9:
						_, err = wc.Exec(ctx, "UPDATE acct SET bal = bal + $1 WHERE id = $2", wrng.Intn(50)-25, wrng.Intn(30))
					default:
						_, err = wc.Exec(ctx, "DELETE FROM acct WHERE id = $1", wrng.Intn(30))
					}
					if err != nil {
						mu.Lock()
						if writeErr == nil {
							writeErr = err
						}
						mu.Unlock()
						return
					}
				}
			}()
		}
		time.Sleep(stopAt) // the crash's random moment (not a wait for a result)
		if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatalf("kill: %v", err)
		}
		<-s.exited
		wg.Wait()
		for range subs {
			if err := <-subErrs; isServerError(err) {
				t.Errorf("round %d: a subscription was refused or ended by the server: %v", round, err)
			}
		}
		t.Logf("round %d: killed after %v (%d events so far)", round, stopAt, evID)
	}

	s = startServer(t, dir, flags...)
	c = s.connect(ctx)
	mustExec(t, ctx, c, "FLUSH")
	var recovered *time.Time
	if err := c.QueryRow(ctx, "SELECT recovered_from FROM pg_catalog.streamsql_checkpoints").Scan(&recovered); err != nil {
		t.Fatalf("streamsql_checkpoints: %v", err)
	}
	t.Logf("the last start recovered from checkpoint %v", recovered)
	// The source's uninterrupted run: a view created now reads it whole.
	mustExec(t, ctx, c, "CREATE MATERIALIZED VIEW bids_check AS "+crashViews[4].view)
	mustExec(t, ctx, c, "CREATE MATERIALIZED VIEW pbids_check AS "+crashViews[5].view)
	// The paced source is not finite (FLUSH does not wait for it): wait
	// until both views have read all of it.
	for _, v := range []string{"pbids", "pbids_check"} {
		for {
			var n int64
			if err := c.QueryRow(ctx, "SELECT coalesce(sum(n), 0) FROM "+v).Scan(&n); err != nil {
				t.Fatalf("%s: %v", v, err)
			}
			if n == pbidRows {
				break
			}
			if n > pbidRows {
				t.Fatalf("%s counted %d bids of %d", v, n, pbidRows)
			}
			select {
			case <-ctx.Done():
				t.Fatalf("%s: %d bids of %d read: %v", v, n, pbidRows, ctx.Err())
			case <-time.After(50 * time.Millisecond): // polling for an expected state
			}
		}
	}
	mustExec(t, ctx, c, "FLUSH")
	// Every subscriber catches up to now and must hold exactly the view.
	until := time.Now()
	for _, cs := range subs {
		sctx, scancel := context.WithTimeout(ctx, time.Minute)
		err := cs.run(sctx, s.connString(), until)
		scancel()
		if err != nil {
			t.Fatalf("subscriber of %s (last epoch %s): %v", cs.view, cs.last, err)
		}
		d, err := cs.diff(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range cs.problems {
			t.Errorf("subscriber of %s: %s", cs.view, p)
		}
		if len(d) > 0 {
			t.Errorf("subscriber of %s (resumed %d times) differs from the view in %d rows: %v", cs.view, cs.resumes, len(d), d[:min(len(d), 10)])
		} else {
			t.Logf("subscriber of %s: resumed %d times, %d changes, %d rows, equal to the view", cs.view, cs.resumes, cs.applied, len(cs.rows))
		}
	}
	// LATE ROWS INTO stored each late row once (the oracle of win above
	// checks that it holds every row the view did not count).
	var late, lateIDs int
	if err := c.QueryRow(ctx, "SELECT count(*), count(DISTINCT id) FROM ev_late").Scan(&late, &lateIDs); err != nil {
		t.Fatal(err)
	}
	if late != lateIDs || late == 0 {
		t.Errorf("ev_late holds %d rows of %d late events (each once, and some, expected)", late, lateIDs)
	} else {
		t.Logf("ev_late: %d late events, each once", late)
	}
	for i, v := range crashViews {
		oracle := v.oracle
		if oracle == "" {
			oracle = v.view
		}
		if i == 4 {
			oracle = "SELECT * FROM bids_check"
		}
		if i == 5 {
			oracle = "SELECT * FROM pbids_check"
		}
		q := fmt.Sprintf("SELECT count(*) FROM ((SELECT * FROM %s EXCEPT ALL (%s)) UNION ALL ((%s) EXCEPT ALL SELECT * FROM %s)) d", v.name, oracle, oracle, v.name)
		var diff, rows int
		if err := c.QueryRow(ctx, q).Scan(&diff); err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		if err := c.QueryRow(ctx, "SELECT count(*) FROM "+v.name).Scan(&rows); err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		if diff != 0 {
			t.Errorf("view %s differs from its query over its inputs in %d rows (it has %d)", v.name, diff, rows)
		} else {
			t.Logf("view %s: %d rows, equal to its query", v.name, rows)
		}
	}
}

// isServerError reports whether err came from the server (an error
// response), not from the connection breaking.
func isServerError(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe)
}

func mustExec(t *testing.T, ctx context.Context, c *pgx.Conn, q string) {
	t.Helper()
	if _, err := c.Exec(ctx, q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

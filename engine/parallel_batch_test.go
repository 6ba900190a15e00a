package engine

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// max_parallel_workers_per_gather (and max_parallel_workers) set how many
// goroutines a batch operator may use, PostgreSQL's way: the helpers
// besides the leader; 0 is serial.
func TestParallelWorkersSetting(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	for _, c := range []struct {
		stmts []string
		want  int
	}{
		{nil, 3},
		{[]string{"SET max_parallel_workers_per_gather = 0"}, 1},
		{[]string{"SET max_parallel_workers_per_gather = 1"}, 2},
		{[]string{"SET max_parallel_workers_per_gather = 6", "SET max_parallel_workers = 2"}, 3},
		{[]string{"SET max_parallel_workers = 0"}, 1},
		{[]string{"RESET max_parallel_workers", "RESET max_parallel_workers_per_gather"}, 3},
	} {
		for _, q := range c.stmts {
			if _, _, err := run(t, s, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		if got := s.execContext(context.Background(), nil).Workers; got != c.want {
			t.Errorf("after %v: %d workers, want %d", c.stmts, got, c.want)
		}
	}
}

// A GROUP BY and a join give the same rows with and without parallelism,
// and statement_timeout stops the parallel aggregation.
func TestParallelBatchQueriesThroughSQL(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	for _, q := range []string{
		"CREATE TABLE t (k int, v bigint, f float8, s text)",
		"INSERT INTO t SELECT i % 1000, i, i * 0.1, 'x' || (i % 7) FROM generate_series(1, 50000) i",
		"INSERT INTO t VALUES (NULL, 1, NULL, NULL)",
		"CREATE TABLE u (k int, w text)",
		"INSERT INTO u SELECT i, 'w' || i FROM generate_series(0, 999, 3) i",
	} {
		if _, _, err := run(t, s, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	queries := []string{
		"SELECT k, count(*), sum(v), avg(v), min(v), max(v) FROM t GROUP BY k",
		"SELECT k, sum(f), string_agg(s, ',' ORDER BY v), count(DISTINCT s) FROM t GROUP BY k",
		"SELECT t.k, t.v, u.w FROM t JOIN u ON t.k = u.k",
		"SELECT t.k, u.w FROM t LEFT JOIN u ON t.k = u.k WHERE t.v % 100 = 0",
	}
	for _, q := range queries {
		if _, _, err := run(t, s, "SET max_parallel_workers_per_gather = 0"); err != nil {
			t.Fatal(err)
		}
		serial, _, err := run(t, s, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if _, _, err := run(t, s, "SET max_parallel_workers_per_gather = 3"); err != nil {
			t.Fatal(err)
		}
		par, _, err := run(t, s, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		slices.Sort(serial)
		slices.Sort(par)
		if !slices.Equal(serial, par) {
			t.Fatalf("%s: %d rows in parallel, %d serially (or different rows)", q, len(par), len(serial))
		}
		if len(serial) < 2 {
			t.Fatalf("%s: %d rows", q, len(serial))
		}
	}
	// statement_timeout stops a parallel GROUP BY over a long input (the
	// wire layer turns the deadline into 57014).
	if _, _, err := run(t, s, "SET statement_timeout = '200ms'"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, _, err := run(t, s, "SELECT i % 10, count(*), sum(i) FROM generate_series(1, 2000000000) i GROUP BY 1")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("statement_timeout: got %v after %v", err, time.Since(start))
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("statement_timeout of 200ms stopped the query after %v", d)
	}
}

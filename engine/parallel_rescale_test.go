package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestViewRescaleByRestart: views created without an explicit
// streaming_parallelism follow the server's --streaming-parallelism; a
// restart with another value resumes them from the checkpoint with their
// keyed state redistributed by vnode (they read only the writes after the
// cut), 4 -> 2 -> 3 -> 1: aggregations, DISTINCT, a join, a TUMBLE window
// emitted on window close, SESSION windows, a window function and window
// functions emitted on window close (row_number: partitions that freed
// their rows keep counting). A view
// created with SET streaming_parallelism keeps its value. Every view
// equals its batch query after every restart (the closed windows of the
// EMIT ON WINDOW CLOSE views: the windows ending at or below the
// watermark, the rows below it).
func TestViewRescaleByRestart(t *testing.T) {
	dir := t.TempDir()
	exec := func(s *Session, q string) []string {
		t.Helper()
		rows, _, err := run(t, s, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return rows
	}
	views := map[string]string{
		"agg":      "SELECT auction, count(*) AS n, count(DISTINCT bidder) AS d, min(price) AS lo, max(price) AS hi, sum(price) AS s FROM bid GROUP BY auction",
		"dist":     "SELECT DISTINCT bidder, auction % 5 AS a5 FROM bid",
		"fixed":    "SELECT bidder, count(*) AS n, sum(price) AS s FROM bid GROUP BY bidder",
		"joined":   "SELECT a.category, count(*) AS n FROM bid b JOIN auction a ON a.id = b.auction GROUP BY a.category",
		"over":     "SELECT auction, bidder, price, sum(price) OVER (PARTITION BY auction) AS total FROM bid",
		"eowc":     "SELECT k, window_start, window_end, count(*) AS n, sum(v) AS s, max(v) AS mx FROM TUMBLE(ev, ts, INTERVAL '10' SECOND) GROUP BY k, window_start, window_end EMIT ON WINDOW CLOSE",
		"eowcover": "SELECT k, ts, v, row_number() OVER (PARTITION BY k ORDER BY ts) AS rn, lag(v) OVER (PARTITION BY k ORDER BY ts) AS pv FROM ev EMIT ON WINDOW CLOSE",
		"sess":     "SELECT k, window_start, window_end, count(*) AS n, sum(v) AS s FROM SESSION(sr, ts, INTERVAL '6' SECOND) GROUP BY k, window_start, window_end",
		// streaming_split_distinct = on: partials per (key, tag, bucket)
		"split": "SELECT auction % 7 AS a7, count(DISTINCT bidder) AS d, count(DISTINCT price) FILTER (WHERE price > 500) AS dp, count(*) AS n, max(price) AS hi, sum(price) AS s FROM bid GROUP BY auction % 7",
	}
	// what the EMIT ON WINDOW CLOSE view holds: the windows the watermark
	// (max(ts) - 1 s) closed
	batch := map[string]string{
		"eowc": "SELECT k, window_start, window_end, count(*) AS n, sum(v) AS s, max(v) AS mx FROM TUMBLE(ev, ts, INTERVAL '10' SECOND) " +
			"WHERE window_end <= (SELECT max(ts) - INTERVAL '1' SECOND FROM ev) GROUP BY k, window_start, window_end",
		"eowcover": "SELECT * FROM (SELECT k, ts, v, row_number() OVER (PARTITION BY k ORDER BY ts) AS rn, lag(v) OVER (PARTITION BY k ORDER BY ts) AS pv FROM ev) x " +
			"WHERE ts < (SELECT max(ts) - INTERVAL '1' SECOND FROM ev)",
	}
	round := 0
	write := func(s *Session) {
		round++
		exec(s, fmt.Sprintf("INSERT INTO bid SELECT (g * %d) %% 53, g %% 17, (g * 7919 + %d) %% 1000 FROM generate_series(1, 400) g", round+1, round))
		exec(s, fmt.Sprintf("DELETE FROM bid WHERE price %% 13 = %d", round%13))
		exec(s, fmt.Sprintf("UPDATE bid SET auction = auction + 1 WHERE bidder = %d", round%17))
		// event time moves on 100 s a round, in order (no row is late)
		exec(s, fmt.Sprintf("INSERT INTO ev SELECT g %% 7, (g * 31) %% 97, '2024-01-01'::timestamp + (%d * 100 + g / 3) * INTERVAL '1 second' FROM generate_series(0, 299) g", round))
		exec(s, fmt.Sprintf("INSERT INTO sr SELECT %d * 1000 + g, g %% 5, g %% 11, '2024-01-01'::timestamp + ((g * 7919) %% 400) * INTERVAL '1 second' FROM generate_series(1, 60) g", round))
		exec(s, fmt.Sprintf("DELETE FROM sr WHERE (id * 13) %% 7 = %d", round%7))
		exec(s, fmt.Sprintf("UPDATE sr SET ts = ts + INTERVAL '5 seconds' WHERE id %% 9 = %d", round%9))
	}
	check := func(s *Session, when string) {
		t.Helper()
		exec(s, "FLUSH")
		for name, q := range views {
			got := exec(s, "SELECT * FROM "+name)
			if b, ok := batch[name]; ok {
				q = b
			}
			want := exec(s, q)
			slices.Sort(got)
			slices.Sort(want)
			if len(want) == 0 {
				t.Fatalf("%s: the query of view %s has no rows", when, name)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%s: view %s has %d rows, its query %d", when, name, len(got), len(want))
			}
		}
	}
	e, err := Open(Config{DataDir: dir, StreamingParallelism: 4})
	if err != nil {
		t.Fatal(err)
	}
	s, err := e.NewSession("tester", "db", nil)
	if err != nil {
		t.Fatal(err)
	}
	exec(s, "CREATE TABLE bid (auction int, bidder int, price bigint)")
	exec(s, "CREATE TABLE auction (id int PRIMARY KEY, category int)")
	exec(s, "INSERT INTO auction SELECT g, g % 4 FROM generate_series(0, 60) g")
	exec(s, "CREATE TABLE ev (k int, v int, ts timestamp, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) APPEND ONLY")
	exec(s, "CREATE TABLE sr (id int, k int, v int, ts timestamp)")
	resumed := []string{"agg", "dist", "joined", "over", "eowc", "eowcover", "sess", "split"}
	for _, name := range resumed {
		if name == "split" {
			exec(s, "SET streaming_split_distinct = on")
		}
		exec(s, fmt.Sprintf("CREATE MATERIALIZED VIEW %s AS %s", name, views[name]))
	}
	exec(s, "RESET streaming_split_distinct")
	// auto splits it too (no plain key, parallelism 4); off does not
	for _, mode := range []string{"auto", "off"} {
		exec(s, "SET streaming_split_distinct = "+mode)
		plan := strings.Join(exec(s, "EXPLAIN CREATE MATERIALIZED VIEW x AS "+views["split"]), "\n")
		if strings.Contains(plan, "StreamSplitExpand") != (mode == "auto") {
			t.Fatalf("streaming_split_distinct = %s:\n%s", mode, plan)
		}
	}
	exec(s, "RESET streaming_split_distinct")
	exec(s, "SET streaming_parallelism = 3")
	exec(s, "CREATE MATERIALIZED VIEW fixed AS "+views["fixed"])
	exec(s, "RESET streaming_parallelism")
	write(s)
	check(s, "at 4")

	prev := 4
	for _, n := range []int{2, 3, 1} {
		exec(s, "CHECKPOINT")
		write(s)
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		e, err = Open(Config{DataDir: dir, StreamingParallelism: n})
		if err != nil {
			t.Fatal(err)
		}
		s, err = e.NewSession("tester", "db", nil)
		if err != nil {
			t.Fatal(err)
		}
		viewOID := func(name string) uint32 {
			oid, err := e.cat.RelationOID(name, []string{"public"})
			if err != nil {
				t.Fatal(err)
			}
			return oid
		}
		when := fmt.Sprintf("restarted from %d at %d", prev, n)
		check(s, when)
		for _, name := range append(resumed, "fixed") {
			// the default rule spreads n over a plan's keyed operators
			// (planner's spreadOver): the join and its GROUP BY,
			// the split-distinct's two phases
			eff := func(n int) int {
				if name == "joined" || name == "split" {
					return max(1, n/2)
				}
				return n
			}
			wantFrom := eff(prev)
			if name == "fixed" {
				wantFrom = 0
			}
			rec := e.flow.Job(viewOID(name)).Recovery()
			if rec.Epoch == 0 {
				t.Fatalf("%s: view %s was rebuilt: %s", when, name, rec.Rebuilt)
			}
			if eff(prev) == eff(n) {
				wantFrom = 0
			}
			if rec.RescaledFrom != wantFrom {
				t.Fatalf("%s: view %s rescaled from %d, want %d", when, name, rec.RescaledFrom, wantFrom)
			}
		}
		write(s)
		check(s, when+", then written")
		prev = n
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}

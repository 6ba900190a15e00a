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
// cut), 4 -> 2 -> 3 -> 1: aggregations, DISTINCT, a join. A view created with SET streaming_parallelism
// keeps its value; a view whose window function cannot redistribute its
// state yet is rebuilt, saying so. Every view equals its batch query after every
// restart.
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
		"agg":    "SELECT auction, count(*) AS n, count(DISTINCT bidder) AS d, min(price) AS lo, max(price) AS hi, sum(price) AS s FROM bid GROUP BY auction",
		"dist":   "SELECT DISTINCT bidder, auction % 5 AS a5 FROM bid",
		"fixed":  "SELECT bidder, count(*) AS n, sum(price) AS s FROM bid GROUP BY bidder",
		"joined": "SELECT a.category, count(*) AS n FROM bid b JOIN auction a ON a.id = b.auction GROUP BY a.category",
		"over":   "SELECT auction, bidder, price, sum(price) OVER (PARTITION BY auction) AS total FROM bid",
	}
	round := 0
	write := func(s *Session) {
		round++
		exec(s, fmt.Sprintf("INSERT INTO bid SELECT (g * %d) %% 53, g %% 17, (g * 7919 + %d) %% 1000 FROM generate_series(1, 400) g", round+1, round))
		exec(s, fmt.Sprintf("DELETE FROM bid WHERE price %% 13 = %d", round%13))
		exec(s, fmt.Sprintf("UPDATE bid SET auction = auction + 1 WHERE bidder = %d", round%17))
	}
	check := func(s *Session, when string) {
		t.Helper()
		exec(s, "FLUSH")
		for name, q := range views {
			got := exec(s, "SELECT * FROM "+name)
			want := exec(s, q)
			slices.Sort(got)
			slices.Sort(want)
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
	for _, name := range []string{"agg", "dist", "joined", "over"} {
		exec(s, fmt.Sprintf("CREATE MATERIALIZED VIEW %s AS %s", name, views[name]))
	}
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
		for name, wantFrom := range map[string]int{"agg": prev, "dist": prev, "joined": prev, "fixed": 0} {
			rec := e.flow.Job(viewOID(name)).Recovery()
			if rec.Epoch == 0 {
				t.Fatalf("%s: view %s was rebuilt: %s", when, name, rec.Rebuilt)
			}
			if prev == n {
				wantFrom = 0
			}
			if rec.RescaledFrom != wantFrom {
				t.Fatalf("%s: view %s rescaled from %d, want %d", when, name, rec.RescaledFrom, wantFrom)
			}
		}
		if rec := e.flow.Job(viewOID("over")).Recovery(); !strings.Contains(rec.Rebuilt, "StreamOverWindow") || !strings.Contains(rec.Rebuilt, "cannot redistribute its state") {
			t.Fatalf("%s: the window function's view resumed or said %q", when, rec.Rebuilt)
		}
		write(s)
		check(s, when+", then written")
		prev = n
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}

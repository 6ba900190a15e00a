package bench

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamsql/streamsql/exec/stream"
)

// aggSQL is issue 15's one-heavy-operator aggregation.
const aggSQL = `SELECT auction, count(*), count(DISTINCT bidder), min(price), max(price), sum(price), avg(price) FROM bid GROUP BY auction`

// TestParallelismGivesTheSameResults runs the keyed queries at parallelism
// 1, 3 and 8 (the plans have hash exchanges at 3 and 8, N×N between
// parallel operators, chains fused over the split sources) and requires
// the same net result rows from each.
func TestParallelismGivesTheSameResults(t *testing.T) {
	cases := []struct{ name, query, sql string }{
		{"q4", "q4", ""}, {"q5", "q5", ""}, {"q7", "q7", ""}, {"q9", "q9", ""}, {"q11", "q11", ""}, {"agg", "", aggSQL},
		// keyed by two bigint columns: the split readers route their rows
		// by both (connector.Route.Owner2)
		{"q18", "q18", ""}, {"agg2", "", `SELECT bidder, auction, count(*), max(price), min(date_time) FROM bid GROUP BY bidder, auction`},
		// an aggregation of a filtered aggregation: N×N between the two
		{"aggagg", "", `SELECT n, count(*), sum(hi) FROM (SELECT auction, count(*) AS n, max(price) AS hi FROM bid WHERE price > 1000 GROUP BY auction) s GROUP BY n`},
		// a global aggregation: a partial per reader, one final merge (no exchange)
		{"global", "", `SELECT count(*), sum(price), min(price), max(price), count(extra) FROM bid WHERE auction % 7 <> 0`},
		// over a retracting input (a parallel GROUP BY): count and sum in two phases
		{"globalagg", "", `SELECT count(*), sum(n), count(hi) FROM (SELECT auction, count(*) AS n, max(price) AS hi FROM bid GROUP BY auction) s`},
		// the same aggregate over the same column with and without a FILTER: two partials
		{"globalfilter", "", `SELECT sum(price), sum(price) FILTER (WHERE price > 5000), count(price) FILTER (WHERE auction % 3 = 0), count(price), avg(price) FILTER (WHERE bidder % 2 = 0) FROM bid`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var want []string
			for _, par := range []int{1, 3, 8} {
				lines, err := ExplainAt(c.query, c.sql, par)
				if err != nil {
					t.Fatal(err)
				}
				plan := strings.Join(lines, "\n")
				if exch := strings.Contains(plan, "StreamExchange") || strings.Contains(plan, "StreamPartialAgg"); exch != (par > 1) {
					t.Fatalf("parallelism %d: plan has exchanges: %v\n%s", par, exch, strings.Join(lines, "\n"))
				}
				if strings.HasPrefix(c.name, "global") && par > 1 && !strings.Contains(plan, "StreamPartialAgg") {
					t.Fatalf("parallelism %d: no two-phase aggregation:\n%s", par, plan)
				}
				got := runNetRows(t, Options{Query: c.query, SQL: c.sql, Parallelism: par})
				if par == 1 {
					if len(got) == 0 {
						t.Fatal("no result rows: the test checks nothing")
					}
					want = got
					t.Logf("%d result rows", len(got))
					continue
				}
				if !slices.Equal(got, want) {
					t.Fatalf("parallelism %d differs from 1 (%d vs %d rows):\n%s", par, len(got), len(want), diff(got, want))
				}
			}
		})
	}
}

// runNetRows runs o over windowEvents/2 events with 1 ms epochs and
// returns the net result rows the sink received.
func runNetRows(t *testing.T, o Options) []string {
	t.Helper()
	var mu sync.Mutex
	var chunks []*stream.Chunk
	o.Events, o.BarrierInterval = windowEvents/2, time.Millisecond
	o.OnChunk = func(ch *stream.Chunk) { mu.Lock(); chunks = append(chunks, ch); mu.Unlock() }
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	got, _ := netRows(t, res.Columns, chunks)
	return got
}

package bench

import (
	"slices"
	"strings"
	"testing"
)

// TestSplitDistinctEqualsSerial runs aggregations with count(DISTINCT)
// as split-distinct plans (streaming_split_distinct = on) at parallelism
// 1, 3 and 8, and once more at 3 with the split off, and requires the net
// result rows of the serial plan without the split. The cases cover
// several DISTINCT arguments with FILTERs (q15, q16), one hot group (q15:
// one day), many groups (issue 15's aggregation), no GROUP BY, and an
// input that retracts (an aggregation's updates).
func TestSplitDistinctEqualsSerial(t *testing.T) {
	cases := []struct{ name, query, sql string }{
		{"q15", "q15", ""}, {"q16", "q16", ""}, {"agg", "", aggSQL},
		{"global", "", `SELECT count(DISTINCT bidder), count(DISTINCT auction) FILTER (WHERE price > 1000), count(*), sum(price) FROM bid`},
		// the input retracts: each auction's row is updated as bids come
		{"retract", "", `SELECT n % 5 AS m, count(DISTINCT hi), count(DISTINCT lo) FILTER (WHERE n > 2), count(*), max(hi), min(lo), sum(n), avg(n)
			FROM (SELECT auction, count(*) AS n, max(price) / 1000 AS hi, min(price) / 1000 AS lo FROM bid GROUP BY auction) s GROUP BY n % 5`},
	}
	runs := []struct {
		par   int
		split string
	}{{1, "off"}, {1, "on"}, {3, "on"}, {8, "on"}, {3, "off"}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var want []string
			for _, r := range runs {
				lines, err := ExplainOpts(c.query, c.sql, Options{Parallelism: r.par, SplitDistinct: r.split})
				if err != nil {
					t.Fatal(err)
				}
				plan := strings.Join(lines, "\n")
				if split := strings.Contains(plan, "StreamSplitExpand"); split != (r.split == "on") {
					t.Fatalf("parallelism %d, split %s: plan splits: %v\n%s", r.par, r.split, split, plan)
				}
				got := runNetRows(t, Options{Query: c.query, SQL: c.sql, Parallelism: r.par, SplitDistinct: r.split})
				if want == nil {
					if len(got) == 0 {
						t.Fatal("no result rows: the test checks nothing")
					}
					want = got
					t.Logf("%d result rows", len(got))
					continue
				}
				if !slices.Equal(got, want) {
					t.Fatalf("parallelism %d, split %s differs from the serial plan (%d vs %d rows):\n%s", r.par, r.split, len(got), len(want), diff(got, want))
				}
			}
		})
	}
}

package engine

import (
	"fmt"
	"strings"
	"testing"
)

// TestSharedReadRestart: a view that scans one nexmark source twice (the
// bids per auction and window against the window's highest bid, Nexmark
// q5's shape) reads it once: EXPLAIN marks both scans, over the union of
// their columns with the watermark renumbered for each. A checkpoint
// taken while its two readers run records one position per reader, a
// restart at the same parallelism resumes them, and the view ends equal
// to the batch query; the windows close, so each scan's watermark
// arrives on its own date_time column.
func TestSharedReadRestart(t *testing.T) {
	const q = "SELECT a.window_start, a.auction, a.n, m.hi FROM " +
		"(SELECT window_start, auction, count(*) AS n FROM TUMBLE(%[1]s, date_time, INTERVAL '1' SECOND) GROUP BY window_start, auction) a JOIN " +
		"(SELECT window_start, max(price) AS hi FROM TUMBLE(%[1]s, date_time, INTERVAL '1' SECOND) GROUP BY window_start) m " +
		"ON a.window_start = m.window_start"
	r := &restartRig{t: t, dir: t.TempDir(), view: fmt.Sprintf(q, "bid"), batch: fmt.Sprintf(q, "bidall")}
	e, s := r.openWithBids(2)
	r.exec(s, "SET streaming_parallelism = 2")
	plan := strings.Join(r.exec(s, "EXPLAIN CREATE MATERIALIZED VIEW v AS "+r.view), "\n")
	if n := strings.Count(plan, "(2 readers) (read shared by 2 scans)"); n != 2 {
		t.Fatalf("%d scans of bid share one read by 2 readers, want 2:\n%s", n, plan)
	}
	r.resumesWithWatermark(e, s, 2)
}

// TestSharedSubplanRestart: a view whose query computes one windowed
// count twice (the counts per auction and window, and their maximum per
// window, Nexmark q5's shape) computes it once (EXPLAIN: a share computed
// for 2 parents, one scan). A checkpoint taken while it runs resumes at
// the same parallelism (the roots and operator states of the one copy
// line up), and the view ends equal to the batch query.
func TestSharedSubplanRestart(t *testing.T) {
	const counts = "(SELECT window_start, auction, count(*) AS n FROM TUMBLE(%[1]s, date_time, INTERVAL '1' SECOND) GROUP BY window_start, auction)"
	const q = "SELECT a.window_start, a.auction, a.n FROM " + counts + " a JOIN (SELECT c.window_start, max(c.n) AS hi FROM " + counts + " c GROUP BY c.window_start) m " +
		"ON a.window_start = m.window_start AND a.n >= m.hi"
	r := &restartRig{t: t, dir: t.TempDir(), view: fmt.Sprintf(q, "bid"), batch: fmt.Sprintf(q, "bidall")}
	e, s := r.openWithBids(2)
	r.exec(s, "SET streaming_parallelism = 2")
	plan := strings.Join(r.exec(s, "EXPLAIN CREATE MATERIALIZED VIEW v AS "+r.view), "\n")
	if !strings.Contains(plan, "StreamShare 1: computed once for 2 parents") || strings.Count(plan, "StreamScan") != 1 {
		t.Fatalf("the windowed count is not computed once:\n%s", plan)
	}
	r.resumesWithWatermark(e, s, 2)
}

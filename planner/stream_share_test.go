package planner

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/sql"
)

// The scans of one source in a plan share one read over the union of
// their columns, the watermark rebound over it (the bids of q5's two
// window aggregations, a union of two filters); an interval join of a
// source's rows as read against an aggregate of the same source reads
// them apart (q7's shape); scans of different sources never share.
func TestStreamShareSources(t *testing.T) {
	d := newNexmarkDB(t)
	d.cat.rels["bid"].Watermark = &catalog.Watermark{Column: "date_time", Expr: "date_time - INTERVAL '4' SECOND"}
	for _, tc := range []struct {
		sql    string
		shared int   // scans sharing a read
		read   []int // the shared read's columns
		wmCol  int   // its watermark's column
	}{
		{"SELECT a.window_start, a.auction, a.n, m.hi FROM " +
			"(SELECT window_start, auction, count(*) AS n FROM TUMBLE(bid, date_time, INTERVAL '10' SECOND) GROUP BY window_start, auction) a JOIN " +
			"(SELECT window_start, max(price) AS hi FROM TUMBLE(bid, date_time, INTERVAL '10' SECOND) GROUP BY window_start) m " +
			"ON a.window_start = m.window_start", 2, []int{0, 2, 5}, 2},
		{"SELECT auction FROM bid WHERE price > 10 UNION ALL SELECT bidder FROM bid WHERE price < 5", 2, []int{0, 1, 2, 5}, 3},
		{"SELECT b.auction, b.price FROM bid b JOIN (SELECT max(price) AS maxprice, window_end AS date_time FROM TUMBLE(bid, date_time, INTERVAL '10' SECOND) GROUP BY window_end) b1 " +
			"ON b.price = b1.maxprice WHERE b.date_time BETWEEN b1.date_time - INTERVAL '10' SECOND AND b1.date_time EMIT ON WINDOW CLOSE", 0, nil, 0},
		// the same without EMIT ON WINDOW CLOSE: not an interval join (no watermark on the
		// window's end), both sides kept whole either way
		{"SELECT b.auction, b.price FROM bid b JOIN (SELECT max(price) AS maxprice, window_end AS date_time FROM TUMBLE(bid, date_time, INTERVAL '10' SECOND) GROUP BY window_end) b1 " +
			"ON b.price = b1.maxprice WHERE b.date_time BETWEEN b1.date_time - INTERVAL '10' SECOND AND b1.date_time", 2, []int{0, 2, 5}, 2},
		{"SELECT a.id FROM auction a JOIN person p ON a.seller = p.id", 0, nil, 0},
	} {
		q, err := d.planEmit(tc.sql)
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		var scans []*stream.Scan
		for _, sc := range scansIn(q.Root) {
			if sc.Share != nil {
				scans = append(scans, sc)
			}
		}
		plan := strings.Join(ExplainStream(q.Root), "\n")
		if len(scans) != tc.shared {
			t.Fatalf("%s: %d scans share a read, want %d\n%s", tc.sql, len(scans), tc.shared, plan)
		}
		for i, sc := range scans {
			sh := sc.Share
			if sh != scans[0].Share || sc.ShareIdx != i || sh.Scans != tc.shared || !slices.Equal(sh.Reads[i], sc.Read) {
				t.Errorf("%s: scan %d: share %p (index %d of %d, reads %v), want %p (index %d of %d, reads %v)", tc.sql, i, sh, sc.ShareIdx, sh.Scans, sh.Reads, scans[0].Share, i, tc.shared, sc.Read)
			}
			if !slices.Equal(sh.Read, tc.read) || sh.Watermark == nil || sh.Watermark.Col != tc.wmCol {
				t.Errorf("%s: the shared read reads %v with watermark %+v, want %v with its watermark on column %d", tc.sql, sh.Read, sh.Watermark, tc.read, tc.wmCol)
			}
			if !strings.Contains(sc.Explain(), "(read shared by 2 scans)") {
				t.Errorf("%s: EXPLAIN does not say the read is shared: %s", tc.sql, sc.Explain())
			}
		}
	}
}

// q7's shape, read apart, ties its two scans of bid: the bids as read
// (the join's left input) are kept behind the scan under the window's
// maximum (its split readers wait for the other's); EXPLAIN says which.
func TestStreamReadApartKeepsRawBehind(t *testing.T) {
	d := newNexmarkDB(t)
	d.cat.rels["bid"].Watermark = &catalog.Watermark{Column: "date_time", Expr: "date_time - INTERVAL '4' SECOND"}
	const q7 = "SELECT b.auction, b.price FROM bid b JOIN (SELECT max(price) AS maxprice, window_end AS date_time FROM TUMBLE(bid, date_time, INTERVAL '10' SECOND) GROUP BY window_end) b1 " +
		"ON b.price = b1.maxprice WHERE b.date_time BETWEEN b1.date_time - INTERVAL '10' SECOND AND b1.date_time EMIT ON WINDOW CLOSE"
	q, err := d.planEmit(q7)
	if err != nil {
		t.Fatal(err)
	}
	scans := scansIn(q.Root)
	plan := strings.Join(ExplainStream(q.Root), "\n")
	if len(scans) != 2 || scans[0].Lead == nil || scans[0].Lead != scans[1].Lead || !scans[0].Behind || scans[1].Behind {
		t.Fatalf("want the left scan kept behind the right one:\n%s", plan)
	}
	if !strings.Contains(scans[0].Explain(), "(kept behind the source's other scan)") || strings.Contains(scans[1].Explain(), "kept behind") {
		t.Errorf("EXPLAIN does not say which scan is kept behind:\n%s", plan)
	}
}

// scansIn returns the scans of the plan under n, in plan order.
func scansIn(n stream.Node) []*stream.Scan {
	if sc, ok := n.(*stream.Scan); ok {
		return []*stream.Scan{sc}
	}
	var out []*stream.Scan
	for _, in := range n.Inputs() {
		out = append(out, scansIn(in)...)
	}
	return out
}

// Equal subtrees with a stateful operator over sources are computed once:
// q5's two counts per auction and hopping window get one group of two
// Shared nodes (the first in preorder computed, EXPLAIN not showing the
// other's subtree, its scan left out of shared reads) at parallelism 1
// and 2, and the default parallelism counts the count once; so are two
// equal aggregations over a view; subtrees that differ in a constant are
// not.
func TestStreamShareSubtrees(t *testing.T) {
	d := newNexmarkDB(t)
	d.cat.rels["bid"].Watermark = &catalog.Watermark{Column: "date_time", Expr: "date_time - INTERVAL '4' SECOND"}
	const q5 = "SELECT a.auction, a.num FROM (SELECT auction, count(*) AS num, window_start AS starttime FROM HOP(bid, date_time, INTERVAL '2' SECOND, INTERVAL '10' SECOND) GROUP BY auction, window_start) a " +
		"JOIN (SELECT max(c.num) AS maxn, c.starttime_c FROM (SELECT count(*) AS num, window_start AS starttime_c FROM HOP(bid, date_time, INTERVAL '2' SECOND, INTERVAL '10' SECOND) GROUP BY auction, window_start) c GROUP BY c.starttime_c) m " +
		"ON a.starttime = m.starttime_c AND a.num >= m.maxn EMIT ON WINDOW CLOSE"
	for _, tc := range []struct {
		sql    string
		par    int
		shared int // Shared nodes
	}{
		{q5, 1, 2},
		{q5, 2, 2},
		{"SELECT * FROM (SELECT auction, count(*) FROM bid WHERE price > 10 GROUP BY auction) x UNION ALL SELECT * FROM (SELECT auction, count(*) FROM bid WHERE price > 11 GROUP BY auction) y", 1, 0},
		{"SELECT * FROM (SELECT auction, count(*) FROM bid WHERE price > 10 GROUP BY auction) x UNION ALL SELECT * FROM (SELECT auction, count(*) FROM bid WHERE price > 10 GROUP BY auction) y", 1, 2},
		{"SELECT * FROM (SELECT n, count(*) FROM mv GROUP BY n) x UNION ALL SELECT * FROM (SELECT n, count(*) FROM mv GROUP BY n) y", 1, 2},
	} {
		stmts, err := sql.Parse(tc.sql)
		if err != nil {
			t.Fatal(err)
		}
		env := d.env(tc.sql)
		env.Emit, env.Parallelism = emitOf(stmts[0]), tc.par
		q, err := PlanStream(env, stmts[0].AST)
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		var shares []*stream.Shared
		var walk func(n stream.Node)
		walk = func(n stream.Node) {
			if s, ok := n.(*stream.Shared); ok {
				shares = append(shares, s)
			}
			for _, in := range n.Inputs() {
				walk(in)
			}
		}
		walk(q.Root)
		plan := strings.Join(ExplainStream(q.Root), "\n")
		if len(shares) != tc.shared {
			t.Fatalf("%s at %d: %d Shared nodes, want %d\n%s", tc.sql, tc.par, len(shares), tc.shared, plan)
		}
		if tc.shared == 0 {
			continue
		}
		if k := keyedStages(q.Root); tc.sql == q5 && k != 3 {
			t.Errorf("q5 at %d: %d stateful operators counted for the default parallelism, want 3 (the copy not computed left out)", tc.par, k)
		}
		a, b := shares[0], shares[1]
		if a.Group != b.Group || a.Group.N != 2 || a.Idx != 0 || b.Idx != 1 || a.Input == b.Input || !reflect.DeepEqual(a.Input, b.Input) {
			t.Fatalf("%s at %d: not one group of two equal subtrees, the first computed\n%s", tc.sql, tc.par, plan)
		}
		if strings.Count(plan, "StreamShare 1: computed once for 2 parents") != 1 || strings.Count(plan, "StreamShare 1: the output of share 1 above, not computed again") != 1 ||
			strings.Count(plan, "StreamScan") != 1 || strings.Contains(plan, "read shared") {
			t.Errorf("%s at %d: EXPLAIN does not show one computed share and one scan:\n%s", tc.sql, tc.par, plan)
		}
	}
}

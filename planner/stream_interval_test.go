package planner

import (
	"strings"
	"testing"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/stream"
)

// intervalDB has append-only tables a and b with watermarks on ts, c
// without one, u (not append only) with one, and z with a timestamptz
// watermark column.
func intervalDB(t *testing.T) *streamDB {
	d := newStreamDB(t)
	for _, ddl := range []string{"CREATE TABLE a (k int8, ts timestamp, v int8)",
		"CREATE TABLE b (k int8, ts timestamp, w int8)",
		"CREATE TABLE c (k int8, ts timestamp)",
		"CREATE TABLE u (k int8, ts timestamp)",
		"CREATE TABLE z (k int8, tz timestamptz)",
		"CREATE TABLE z2 (k int8, tz timestamptz)"} {
		d.mustExec(ddl)
	}
	for _, n := range []string{"a", "b", "c", "u", "z", "z2"} {
		r := d.cat.rels[n]
		r.AppendOnly = n != "u"
		if n == "z" || n == "z2" {
			r.Watermark = &catalog.Watermark{Column: "tz", Expr: "tz - INTERVAL '5' SECOND"}
		} else if n != "c" {
			r.Watermark = &catalog.Watermark{Column: "ts", Expr: "ts - INTERVAL '5' SECOND"}
		}
	}
	return d
}

// TestIntervalJoinRecognised checks which join conditions make interval
// joins (and with which bounds) and which stay ordinary joins.
func TestIntervalJoinRecognised(t *testing.T) {
	d := intervalDB(t)
	for _, c := range []struct{ sql, want string }{
		{"SELECT * FROM a JOIN b ON a.k = b.k AND a.ts BETWEEN b.ts - INTERVAL '10' SECOND AND b.ts",
			"interval join: ts - ts between -10s and 0s; frees left rows below the right watermark - 10s, right rows below the left watermark)"},
		{"SELECT * FROM a, b WHERE a.ts >= b.ts AND a.ts < b.ts + INTERVAL '1' MINUTE",
			"interval join: ts - ts between 0s and 1m0s"},
		{"SELECT * FROM a JOIN b ON a.k = b.k AND a.ts >= b.ts",
			"interval join: ts - ts >= 0s; frees left rows below the right watermark)"},
		{"SELECT * FROM a JOIN b ON a.k = b.k AND b.ts + INTERVAL '5' SECOND <= a.ts AND a.ts < INTERVAL '1' HOUR + b.ts",
			"between 5s and 1h0m0s"},
		{"SELECT * FROM a LEFT JOIN b ON a.k = b.k AND a.ts BETWEEN b.ts AND b.ts + INTERVAL '10' SECOND",
			"StreamHashJoin: left on a.k = b.k filter ((a.ts >= b.ts) AND (a.ts <= (b.ts + '00:00:10'::interval second))) (interval join: ts - ts between 0s and 10s"},
		{"SELECT * FROM a RIGHT JOIN b ON a.ts <= b.ts - INTERVAL '2' SECOND",
			"StreamHashJoin: right filter (a.ts <= (b.ts - '00:00:02'::interval second)) (interval join: ts - ts <= -2s"},
		// A day of timestamptz arithmetic may be 23 or 25 hours.
		{"SELECT * FROM z JOIN z2 ON z.tz BETWEEN z2.tz AND z2.tz + INTERVAL '1' DAY",
			"between 0s and 25h0m0s"},
		{"SELECT * FROM a JOIN b ON a.ts BETWEEN b.ts AND b.ts + INTERVAL '1' DAY",
			"between 0s and 24h0m0s"},
	} {
		plan := strings.Join(ExplainStream(d.plan(t, c.sql).Root), "\n")
		if !strings.Contains(plan, c.want) {
			t.Errorf("%s: want %q in\n%s", c.sql, c.want, plan)
		}
	}
	for _, sql := range []string{
		"SELECT * FROM a JOIN c ON a.ts BETWEEN c.ts AND c.ts + INTERVAL '1' SECOND",                   // c has no watermark
		"SELECT * FROM a JOIN u ON a.ts BETWEEN u.ts AND u.ts + INTERVAL '1' SECOND",                   // u is not append only
		"SELECT * FROM a JOIN b ON a.ts <= b.ts + INTERVAL '1' MONTH",                                  // months: no fixed length
		"SELECT * FROM a JOIN b ON a.ts >= b.ts OR a.ts <= b.ts - INTERVAL '1' SECOND",                 // no conjunct bounds
		"SELECT * FROM a JOIN b ON a.k = b.k AND a.v < b.w",                                            // no times
		"SELECT * FROM a JOIN b ON a.ts - b.ts < INTERVAL '1' SECOND",                                  // not col + constant
		"SELECT * FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND b.ts >= a.ts)",              // semi join
		"SELECT * FROM a JOIN b ON a.ts >= b.ts AND a.ts <= b.ts - INTERVAL '1' SECOND",                // empty range
		"SELECT * FROM a FULL JOIN b ON a.ts BETWEEN b.ts AND b.ts + INTERVAL '1' SECOND OR a.k = b.k", // OR
	} {
		plan := strings.Join(ExplainStream(d.plan(t, sql).Root), "\n")
		if strings.Contains(plan, "interval join") {
			t.Errorf("%s: not an interval join, got\n%s", sql, plan)
		}
	}
}

// An interval join's output carries the watermark on its time column, so
// EMIT ON WINDOW CLOSE over it needs no window.
func TestIntervalJoinOutputWatermark(t *testing.T) {
	d := intervalDB(t)
	q, err := d.planEmit("SELECT a.k, b.ts AS bts, a.ts AS ats FROM a JOIN b ON a.k = b.k AND a.ts BETWEEN b.ts AND b.ts + INTERVAL '10' SECOND EMIT ON WINDOW CLOSE")
	if err != nil {
		t.Fatal(err)
	}
	plan := strings.Join(ExplainStream(q.Root), "\n")
	if !strings.HasPrefix(plan, "StreamEowc: bts") {
		t.Errorf("want an EOWC on bts (the first column with a watermark):\n%s", plan)
	}
	// Without bounds from the watermarked side nothing is carried.
	if _, err := d.planEmit("SELECT a.k, a.ts FROM a JOIN c ON a.k = c.k AND a.ts >= c.ts EMIT ON WINDOW CLOSE"); err == nil ||
		!strings.Contains(err.Error(), "carries the watermark") {
		t.Errorf("EOWC over a join without an interval: %v", err)
	}
}

// findInterval returns the interval join of a plan, or nil.
func findInterval(n stream.Node) *stream.IntervalJoin {
	if j, ok := n.(*stream.HashJoin); ok && j.Interval != nil {
		return j.Interval
	}
	for _, in := range n.Inputs() {
		if iv := findInterval(in); iv != nil {
			return iv
		}
	}
	return nil
}

// A join's condition is split into the comparisons of a left column with
// a right one, which the join runs on the values in place, and the rest
// (Residual), evaluated; strictness and offsets are kept, and DST-widened
// offsets and same-side comparisons stay in the rest.
func TestJoinPairCompares(t *testing.T) {
	d := intervalDB(t)
	for _, c := range []struct {
		sql      string
		compares string // stream.PairCompare.String()s, "; "-joined
		residual string // "" for none
	}{
		{"SELECT * FROM a JOIN b ON a.k = b.k AND a.ts BETWEEN b.ts - INTERVAL '10' SECOND AND b.ts",
			"left[1] - right[1] >= -10000000; left[1] - right[1] <= 0", ""},
		{"SELECT * FROM a, b WHERE a.ts > b.ts AND a.ts < b.ts + INTERVAL '1' MINUTE",
			"left[1] - right[1] > 0; left[1] - right[1] < 60000000", ""},
		{"SELECT * FROM a JOIN b ON b.ts <= a.ts", "left[1] - right[1] >= 0", ""},
		{"SELECT * FROM a JOIN b ON a.ts >= b.ts AND a.ts <= b.ts + INTERVAL '1' DAY",
			"left[1] - right[1] >= 0; left[1] - right[1] <= 86400000000", ""},
		// Bigints, and every conjunct of the kind: nothing is evaluated.
		{"SELECT * FROM a JOIN b ON a.ts >= b.ts AND a.v < b.w", "left[1] - right[1] >= 0; left[2] - right[2] < 0", ""},
		{"SELECT * FROM a JOIN b ON a.k = b.k AND b.w <> a.v", "left[2] - right[2] <> 0", ""},
		// Offsets on both sides.
		{"SELECT * FROM a JOIN b ON a.ts + INTERVAL '2' SECOND > b.ts + INTERVAL '5' SECOND", "left[1] - right[1] > 3000000", ""},
		// What is not a comparison of the two sides stays evaluated.
		{"SELECT * FROM a JOIN b ON a.k = b.k AND a.ts >= b.ts AND a.v + b.w > 3", "left[1] - right[1] >= 0", "((a.v + b.w) > '3'::bigint)"},
		{"SELECT * FROM a LEFT JOIN b ON a.k = b.k AND a.v > a.k AND a.ts < b.ts", "left[1] - right[1] < 0", "(a.v > a.k)"},
		{"SELECT * FROM z JOIN z2 ON z.tz BETWEEN z2.tz AND z2.tz + INTERVAL '1' DAY", "left[1] - right[1] >= 0",
			"(z.tz <= (z2.tz + '1 day'::interval day))"},
		{"SELECT * FROM a JOIN b ON a.k = b.k AND a.v + b.w > 3", "", ""},
	} {
		j, _ := findNode[*stream.HashJoin](d.plan(t, c.sql).Root)
		if j == nil {
			t.Errorf("%s: no join", c.sql)
			continue
		}
		var got []string
		for _, pc := range j.Compares {
			got = append(got, pc.String())
		}
		res := ""
		if j.Residual != nil {
			res = j.Residual.String()
		}
		if strings.Join(got, "; ") != c.compares || res != c.residual {
			t.Errorf("%s:\n compares %q, residual %q\n want     %q, residual %q", c.sql, strings.Join(got, "; "), res, c.compares, c.residual)
		}
		if len(j.Compares) == 0 && j.Residual != nil {
			t.Errorf("%s: a residual without comparisons", c.sql)
		}
	}
}

// A join does not gather the output columns that nothing above reads:
// those only its condition or its keys read. A view of every column keeps
// them all.
func TestJoinPrunedColumns(t *testing.T) {
	d := intervalDB(t)
	d.mustExec("CREATE TABLE p (k int8 PRIMARY KEY, v int8)")
	d.mustExec("CREATE TABLE q (k int8 PRIMARY KEY, w int8)")
	for _, c := range []struct{ sql, pruned string }{
		{"SELECT a.k, max(b.w) FROM a JOIN b ON a.k = b.k AND a.ts >= b.ts GROUP BY a.k", "ts k ts"},
		{"SELECT a.v FROM a JOIN b ON a.k = b.k", "k k"},
		{"SELECT * FROM a JOIN b ON a.k = b.k AND a.ts >= b.ts", ""},
		{"SELECT p.v FROM p JOIN q ON p.v = q.w", "w"}, // a key read by the join only
	} {
		j, _ := findNode[*stream.HashJoin](d.plan(t, c.sql).Root)
		if j == nil {
			t.Fatalf("%s: no join", c.sql)
		}
		var got []string
		for i, p := range j.Pruned {
			if p {
				got = append(got, j.Cols[i].Name)
			}
		}
		if strings.Join(got, " ") != c.pruned {
			t.Errorf("%s: pruned %q, want %q (columns %v)", c.sql, strings.Join(got, " "), c.pruned, j.Cols)
		}
	}
}

package engine

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
)

// TestExplainAnalyze: EXPLAIN ANALYZE runs the query and prints each node's
// actual rows and loops (and times unless TIMING OFF) in PostgreSQL's shape,
// with the Planning/Execution Time footer unless SUMMARY OFF; options that
// ask for more are refused by name and DML is refused without taking effect.
func TestExplainAnalyze(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE TABLE t (a int, b text)")
	mustRun(t, s, "CREATE TABLE u (a int, c int)")
	mustRun(t, s, "INSERT INTO t SELECT g, 'b' || (g % 10) FROM generate_series(1, 1000) g")
	mustRun(t, s, "INSERT INTO u SELECT g, g * 2 FROM generate_series(1, 100) g")

	// Timed: every node line has "(actual time=S..T rows=R loops=L)", S <= T,
	// then the two footer lines.
	lines := mustRun(t, s, "EXPLAIN ANALYZE SELECT b, count(*) FROM t WHERE a > 900 GROUP BY b")
	nodeRE := regexp.MustCompile(`^ *\S.*  \(actual time=(\d+\.\d{3})\.\.(\d+\.\d{3}) rows=(\d+) loops=(\d+)\)$`)
	if len(lines) != 4 {
		t.Fatalf("want 2 nodes and 2 footer lines:\n%s", strings.Join(lines, "\n"))
	}
	wantRows := []string{"10", "100"}
	for i, l := range lines[:2] {
		m := nodeRE.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("line %q is not a timed node line", l)
		}
		if start, _ := strconv.ParseFloat(m[1], 64); start > mustFloat(t, m[2]) {
			t.Errorf("startup after total in %q", l)
		}
		if m[3] != wantRows[i] || m[4] != "1" {
			t.Errorf("line %q: want rows=%s loops=1", l, wantRows[i])
		}
	}
	if !strings.HasPrefix(lines[0], "HashAggregate") || !strings.HasPrefix(lines[1], "  Seq Scan on t") {
		t.Errorf("plan shape:\n%s", strings.Join(lines, "\n"))
	}
	if !regexp.MustCompile(`^Planning Time: \d+\.\d{3} ms$`).MatchString(lines[2]) ||
		!regexp.MustCompile(`^Execution Time: \d+\.\d{3} ms$`).MatchString(lines[3]) {
		t.Errorf("footer:\n%s", strings.Join(lines[2:], "\n"))
	}

	// Untimed: deterministic counts.
	check := func(q string, want ...string) {
		t.Helper()
		got := mustRun(t, s, q)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s:\n got:\n%s\nwant:\n%s", q, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	check("EXPLAIN (ANALYZE, TIMING OFF, SUMMARY OFF) SELECT * FROM t JOIN u ON t.a = u.a WHERE t.b = 'b3'",
		"Hash Join (inner) on t.a = u.a  (actual rows=10 loops=1)",
		"  Seq Scan on t (filter: (t.b = 'b3'::text))  (actual rows=100 loops=1)",
		"  Seq Scan on u  (actual rows=100 loops=1)")
	lines = mustRun(t, s, "EXPLAIN (ANALYZE, TIMING OFF) SELECT a FROM u ORDER BY a DESC")
	if len(lines) != 4 || lines[0] != "Sort: a DESC  (actual rows=100 loops=1)" || !strings.HasPrefix(lines[3], "Execution Time: ") {
		t.Errorf("TIMING OFF keeps the footer:\n%s", strings.Join(lines, "\n"))
	}
	// A prepared EXPLAIN ANALYZE with a parameter runs with its value.
	rows := queryWith(t, s, "EXPLAIN (ANALYZE, TIMING OFF, SUMMARY OFF) SELECT * FROM u WHERE a <= $1", int64(7))
	if len(rows) != 1 || !strings.HasSuffix(rows[0], "(actual rows=7 loops=1)") {
		t.Errorf("with $1 = 7: %q", rows)
	}

	// A materialized view is read from its snapshot, as by SELECT.
	mustRun(t, s, "CREATE MATERIALIZED VIEW mv AS SELECT a % 3 AS r, count(*) FROM u GROUP BY a % 3")
	mustRun(t, s, "FLUSH")
	check("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT * FROM mv JOIN u ON mv.r = u.a",
		"Hash Join (inner) on mv.r = u.a  (actual rows=2 loops=1)",
		"  Seq Scan on mv  (actual rows=3 loops=1)",
		"  Seq Scan on u  (actual rows=100 loops=1)")

	// Refusals, by option name; DML does not run.
	_, _, err := run(t, s, "EXPLAIN (ANALYZE, BUFFERS) SELECT * FROM t")
	wantErr(t, err, pgerr.FeatureNotSupported, "EXPLAIN option BUFFERS is not supported")
	_, _, err = run(t, s, "EXPLAIN (TIMING) SELECT * FROM t")
	wantErr(t, err, pgerr.InvalidParameterValue, "EXPLAIN option TIMING requires ANALYZE")
	_, _, err = run(t, s, "EXPLAIN ANALYZE DELETE FROM u")
	wantErr(t, err, pgerr.FeatureNotSupported, "EXPLAIN ANALYZE of DELETE is not supported: only queries (SELECT, VALUES, TABLE) are run")
	if got := mustRun(t, s, "SELECT count(*) FROM u"); len(got) != 1 || got[0] != "100" {
		t.Errorf("EXPLAIN ANALYZE DELETE changed u: %v", got)
	}
	// ANALYZE OFF is plain EXPLAIN.
	if got := mustRun(t, s, "EXPLAIN (ANALYZE OFF) SELECT * FROM u"); len(got) != 1 || got[0] != "Seq Scan on u" {
		t.Errorf("ANALYZE OFF: %q", got)
	}
}

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

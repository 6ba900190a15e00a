package engine

import (
	"strings"
	"testing"

)

// TestExplainAnalyzeShow prints a few plans (run with -v to look at them).
func TestExplainAnalyzeShow(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE TABLE t (a int, b text)")
	mustRun(t, s, "CREATE TABLE u (a int, c int)")
	mustRun(t, s, "INSERT INTO t SELECT g, 'b' || (g % 10) FROM generate_series(1, 1000) g")
	mustRun(t, s, "INSERT INTO u SELECT g, g * 2 FROM generate_series(1, 100) g")
	for _, q := range []string{
		"EXPLAIN ANALYZE SELECT * FROM t WHERE a > 900",
		"EXPLAIN (ANALYZE, TIMING OFF) SELECT b, count(*) FROM t GROUP BY b ORDER BY b",
		"EXPLAIN (ANALYZE, TIMING OFF, SUMMARY OFF) SELECT * FROM t JOIN u ON t.a = u.a",
		"EXPLAIN (ANALYZE, TIMING OFF, SUMMARY OFF) SELECT * FROM t LIMIT 5",
		"EXPLAIN (ANALYZE, TIMING OFF, SUMMARY OFF) SELECT * FROM t WHERE a < (SELECT max(a) FROM u) AND a IN (SELECT a FROM u WHERE c > t.a)",
		"EXPLAIN (ANALYZE, TIMING OFF, SUMMARY OFF) SELECT * FROM t JOIN u ON t.a < u.a WHERE u.a < 3",
		"EXPLAIN (ANALYZE, TIMING OFF, SUMMARY OFF) SELECT * FROM t JOIN u ON t.a = u.a WHERE u.a < 0",
	} {
		t.Logf("%s\n%s", q, strings.Join(mustRun(t, s, q), "\n"))
	}
}

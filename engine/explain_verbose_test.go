package engine

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
)

// TestExplainVerboseAndJSON: VERBOSE adds each node's output columns under
// it (qualified where they come from a table); FORMAT JSON is one row, a
// JSON document of the same tree; both go with writes, EXECUTE and
// ANALYZE, not with a materialized view's plan, and other formats are
// refused by name.
func TestExplainVerboseAndJSON(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE TABLE t (a int, b text)")
	mustRun(t, s, "CREATE TABLE u (a int, c int)")

	got := mustRun(t, s, "EXPLAIN (VERBOSE, COSTS OFF) SELECT t.a + 1, u.c FROM t JOIN u ON t.a = u.a WHERE u.c > 1")
	want := []string{
		"Project: (t.a + 1), u.c",
		"  Output: (t.a + 1), u.c",
		"  Hash Join (inner) on t.a = u.a",
		"    Output: t.a, u.a, u.c",
		"    Seq Scan on t",
		"      Output: t.a",
		"    Seq Scan on u (filter: (u.c > 1))",
		"      Output: u.a, u.c",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("VERBOSE:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// VERBOSE OFF is the plain plan.
	if got := mustRun(t, s, "EXPLAIN (VERBOSE OFF) SELECT a FROM u"); len(got) != 1 || got[0] != "Seq Scan on u" {
		t.Errorf("VERBOSE OFF: %q", got)
	}
	// A write: its head has no output line, the plan of its rows has.
	got = mustRun(t, s, "EXPLAIN VERBOSE DELETE FROM u WHERE c = 3")
	if len(got) < 3 || got[0] != "Delete on u" || strings.HasPrefix(strings.TrimSpace(got[1]), "Output:") || !strings.HasPrefix(strings.TrimSpace(got[2]), "Output:") {
		t.Errorf("VERBOSE DELETE:\n%s", strings.Join(got, "\n"))
	}

	// FORMAT JSON: one row, PostgreSQL's shape [{"Plan": {...}}].
	got = mustRun(t, s, "EXPLAIN (FORMAT JSON, VERBOSE) SELECT a FROM t WHERE a > 1 ORDER BY a")
	if len(got) != 1 {
		t.Fatalf("FORMAT JSON: %d rows", len(got))
	}
	type node struct {
		Type   string   `json:"Node Type"`
		Rel    string   `json:"Relation Name"`
		Detail string   `json:"Detail"`
		Output []string `json:"Output"`
		Plans  []node   `json:"Plans"`
	}
	var doc []struct {
		Plan node `json:"Plan"`
	}
	if err := json.Unmarshal([]byte(got[0]), &doc); err != nil {
		t.Fatalf("FORMAT JSON is not JSON: %v\n%s", err, got[0])
	}
	p := doc[0].Plan
	if len(doc) != 1 || p.Type != "Sort" || len(p.Plans) != 1 || p.Plans[0].Type != "Seq Scan" ||
		p.Plans[0].Detail != "on t (filter: (t.a > 1))" || p.Plans[0].Rel != "t" || p.Rel != "" || strings.Join(p.Plans[0].Output, ",") != "t.a" {
		t.Errorf("FORMAT JSON: %s", got[0])
	}
	got = mustRun(t, s, "EXPLAIN (FORMAT JSON) INSERT INTO u SELECT a, a FROM t")
	if !strings.Contains(got[0], `"Node Type": "Insert"`) || strings.Contains(got[0], `"Output"`) {
		t.Errorf("FORMAT JSON INSERT (no VERBOSE: no Output): %s", got[0])
	}
	mustRun(t, s, "PREPARE q AS SELECT c FROM u WHERE a = $1")
	if got := mustRun(t, s, "EXPLAIN (VERBOSE) EXECUTE q(1)"); len(got) != 4 || got[1] != "  Output: u.c" || got[3] != "    Output: u.a, u.c" {
		t.Errorf("VERBOSE EXECUTE: %q", got)
	}

	// With ANALYZE: the counters after each line, the Output lines under
	// it; as JSON, PostgreSQL's "Actual ..." fields and the two times.
	mustRun(t, s, "INSERT INTO u SELECT g, g FROM generate_series(1, 10) g")
	got = mustRun(t, s, "EXPLAIN (ANALYZE, VERBOSE, TIMING OFF, SUMMARY OFF) SELECT c FROM u WHERE a > 7")
	want = []string{
		"Project: u.c  (actual rows=3 loops=1)",
		"  Output: u.c",
		"  Seq Scan on u (filter: (u.a > 7))  (actual rows=3 loops=1)",
		"    Output: u.a, u.c",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("ANALYZE, VERBOSE:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	got = mustRun(t, s, "EXPLAIN (ANALYZE, FORMAT JSON) SELECT c FROM u WHERE a > 7")
	var adoc []map[string]any
	if len(got) != 1 || json.Unmarshal([]byte(got[0]), &adoc) != nil || len(adoc) != 1 {
		t.Fatalf("ANALYZE, FORMAT JSON: %q", got)
	}
	plan, _ := adoc[0]["Plan"].(map[string]any)
	_, planning := adoc[0]["Planning Time"].(float64)
	_, execution := adoc[0]["Execution Time"].(float64)
	_, total := plan["Actual Total Time"].(float64)
	if plan["Actual Rows"] != 3.0 || plan["Actual Loops"] != 1.0 || !total || !planning || !execution {
		t.Errorf("ANALYZE, FORMAT JSON: %s", got[0])
	}

	for stmt, msg := range map[string]string{
		"EXPLAIN (FORMAT YAML) SELECT 1":                                   "EXPLAIN option FORMAT YAML is not supported: plans are TEXT or JSON",
		"EXPLAIN (VERBOSE) CREATE MATERIALIZED VIEW mv AS SELECT a FROM u": "EXPLAIN (VERBOSE) and EXPLAIN (FORMAT JSON) of CREATE MATERIALIZED VIEW are not supported: its plan is text",
	} {
		_, _, err := run(t, s, stmt)
		wantErr(t, err, pgerr.FeatureNotSupported, msg)
	}
}

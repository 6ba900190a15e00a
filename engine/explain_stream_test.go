package engine

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
)

// TestExplainMaterializedView: EXPLAIN MATERIALIZED VIEW prints the
// running view's plan under its Materialize line; EXPLAIN ANALYZE adds
// each operator's counts, which match the rows the view received; the
// DURATION form counts only what arrived meanwhile; errors name the
// object and option.
func TestExplainMaterializedView(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE TABLE t (k int, v int)")
	mustRun(t, s, "INSERT INTO t SELECT g % 10, g FROM generate_series(1, 1000) g")
	mustRun(t, s, "CREATE MATERIALIZED VIEW mv AS SELECT k, count(*) AS n FROM t WHERE v > 500 GROUP BY k")

	plan := mustRun(t, s, "EXPLAIN MATERIALIZED VIEW mv")
	if len(plan) < 3 || plan[0] != "Materialize: mv" || !strings.Contains(strings.Join(plan, "\n"), "StreamHashAgg") || !strings.Contains(strings.Join(plan, "\n"), "StreamScan") {
		t.Fatalf("plan:\n%s", strings.Join(plan, "\n"))
	}

	lines := mustRun(t, s, "EXPLAIN ANALYZE MATERIALIZED VIEW mv")
	text := strings.Join(lines, "\n")
	t.Logf("EXPLAIN ANALYZE:\n%s", text)
	scan := regexp.MustCompile(`StreamScan.*\(rows in=(\d+) out=(\d+),`).FindStringSubmatch(text)
	filter := regexp.MustCompile(`StreamFilter.*\(rows in=(\d+) out=(\d+),`).FindStringSubmatch(text)
	if scan == nil || scan[2] != "1000" || filter == nil || filter[1] != "1000" || filter[2] != "500" || !regexp.MustCompile(`StreamHashAgg.*\(rows in=500 out=10,`).MatchString(text) {
		t.Fatalf("analyze:\n%s", text)
	}
	if !strings.Contains(text, "backpressure=") || !strings.Contains(text, "Measured over:") || !strings.Contains(text, "Backfill: done, 1000 of 1000 rows") {
		t.Errorf("analyze figures:\n%s", text)
	}

	// Over a window: only the rows inserted during it.
	stmts, err := sql.Parse("EXPLAIN (ANALYZE, DURATION '1s') MATERIALIZED VIEW mv")
	if err != nil {
		t.Fatal(err)
	}
	s2, err := e.NewSession("tester", "db", nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := s2.Prepare(context.Background(), stmts[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	type out struct {
		lines []string
		err   error
	}
	done := make(chan out, 1)
	start := time.Now()
	go func() {
		l, err := execute(t, s2, p)
		done <- out{l, err}
	}()
	// The insert lands inside the window unless this goroutine is held
	// back for most of a second; then the count is smaller, never larger.
	mustRun(t, s, "INSERT INTO t SELECT 1, 600 FROM generate_series(1, 7) g")
	mustRun(t, s, "FLUSH")
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if time.Since(start) < time.Second {
		t.Errorf("DURATION '1s' returned after %v", time.Since(start))
	}
	text = strings.Join(r.lines, "\n")
	scan = regexp.MustCompile(`StreamScan.*\(rows in=(\d+) out=(\d+),`).FindStringSubmatch(text)
	if scan == nil || (scan[2] != "7" && scan[2] != "0") || !strings.Contains(text, "Measured over: 1.") {
		t.Errorf("window:\n%s", text)
	}

	// Cancel ends the wait.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	p, err = s2.Prepare(ctx, parseOne(t, "EXPLAIN ANALYZE (DURATION '1 hour') MATERIALIZED VIEW mv"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Execute(ctx, p, nil); pgerr.CodeOf(err) != pgerr.QueryCanceled {
		t.Errorf("canceled: %v", err)
	}

	for q, code := range map[string]pgerr.Code{
		"EXPLAIN MATERIALIZED VIEW nope":                         pgerr.UndefinedTable,
		"EXPLAIN ANALYZE SINK mv":                                pgerr.WrongObjectType,
		"EXPLAIN MATERIALIZED VIEW t":                            pgerr.WrongObjectType,
		"EXPLAIN (ANALYZE, DURATION '-1s') MATERIALIZED VIEW mv": pgerr.InvalidParameterValue,
	} {
		if _, _, err := run(t, s, q); pgerr.CodeOf(err) != code {
			t.Errorf("%s: %v, want %s", q, err, code)
		}
	}
}

// EXPLAIN ANALYZE of a view that computes one aggregation for two
// parents (stream.Shared): both share lines count the rows the one copy
// computes, the copy that is not computed shows no subtree, and the scan
// counts each row once.
func TestExplainAnalyzeSharedSubplan(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE TABLE t (k int, v int)")
	mustRun(t, s, "INSERT INTO t SELECT g % 10, g FROM generate_series(1, 1000) g")
	mustRun(t, s, "SET streaming_parallelism = 2")
	mustRun(t, s, "CREATE MATERIALIZED VIEW mv AS SELECT k, sum(v) AS s FROM t GROUP BY k UNION ALL SELECT k, sum(v) AS s FROM t GROUP BY k")
	mustRun(t, s, "FLUSH")
	text := strings.Join(mustRun(t, s, "EXPLAIN ANALYZE MATERIALIZED VIEW mv"), "\n")
	first := regexp.MustCompile(`StreamShare 1: computed once for 2 parents  \(rows out=10,`)
	copied := regexp.MustCompile(`StreamShare 1: the output of share 1 above, not computed again  \(rows out=10,`)
	if !first.MatchString(text) || !copied.MatchString(text) || strings.Count(text, "StreamScan") != 1 || strings.Count(text, "StreamHashAgg") != 1 ||
		!regexp.MustCompile(`StreamScan.*\(rows in=1000 out=1000,`).MatchString(text) || !regexp.MustCompile(`StreamUnion.*\(rows in=20 out=20,`).MatchString(text) {
		t.Fatalf("analyze:\n%s", text)
	}
}

func parseOne(t *testing.T, q string) sql.Statement {
	t.Helper()
	stmts, err := sql.Parse(q)
	if err != nil || len(stmts) != 1 {
		t.Fatalf("parse %s: %v", q, err)
	}
	return stmts[0]
}

// TestShowCreate: SHOW CREATE rebuilds each kind's statement, which runs
// again; a wrong kind or name is refused.
func TestShowCreate(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE TABLE t (k int PRIMARY KEY, v text NOT NULL DEFAULT 'x', ts timestamp, WATERMARK FOR ts AS ts - INTERVAL '5 seconds')")
	mustRun(t, s, "CREATE MATERIALIZED VIEW mv AS SELECT k, v FROM t WHERE k > 1")
	got := mustRun(t, s, "SHOW CREATE TABLE t")
	want := "public.t|CREATE TABLE public.t (k integer, v text DEFAULT 'x' NOT NULL, ts timestamp without time zone, PRIMARY KEY (k), WATERMARK FOR ts AS ts - INTERVAL '5 seconds')"
	if len(got) != 1 || got[0] != want {
		t.Errorf("table:\n got %q\nwant %q", got, want)
	}
	got = mustRun(t, s, "SHOW CREATE MATERIALIZED VIEW mv")
	if len(got) != 1 || !strings.HasPrefix(got[0], "public.mv|CREATE MATERIALIZED VIEW public.mv AS SELECT k, v FROM t WHERE k > 1") {
		t.Errorf("view: %q", got)
	}
	// The rebuilt statements run.
	mustRun(t, s, "DROP MATERIALIZED VIEW mv")
	mustRun(t, s, strings.SplitN(got[0], "|", 2)[1])
	tbl := strings.SplitN(mustRun(t, s, "SHOW CREATE TABLE t")[0], "|", 2)[1]
	mustRun(t, s, "CREATE SCHEMA other")
	mustRun(t, s, strings.Replace(tbl, "public.t", "other.t", 1))

	mustRun(t, s, "CREATE SOURCE src (a int, b text) WITH (connector = 'datagen', rows_per_second = '10')")
	got = mustRun(t, s, "SHOW CREATE SOURCE src")
	if len(got) != 1 || !strings.HasPrefix(got[0], "public.src|CREATE SOURCE public.src (a integer, b text) WITH (connector = 'datagen', rows_per_second = '10')") {
		t.Errorf("source: %q", got)
	}
	mustRun(t, s, "CREATE SINK k AS SELECT k FROM t WITH (connector = 'blackhole')")
	got = mustRun(t, s, "SHOW CREATE SINK k")
	if len(got) != 1 || !strings.HasPrefix(got[0], "public.k|CREATE SINK public.k AS SELECT k FROM t WITH (connector = 'blackhole')") {
		t.Errorf("sink: %q", got)
	}
	// A file sink's format given as an option is rebuilt as the option
	// alone (the clause too would give it twice), and runs again.
	dir := t.TempDir()
	mustRun(t, s, "CREATE SINK f AS SELECT k FROM t WITH (connector = 'file', path = '"+dir+"', format = 'json', force_append_only = 'true')")
	got = mustRun(t, s, "SHOW CREATE SINK f")
	if len(got) != 1 || !strings.Contains(got[0], "format = 'json'") || strings.Contains(got[0], "FORMAT") {
		t.Errorf("file sink: %q", got)
	}
	mustRun(t, s, "DROP SINK f")
	mustRun(t, s, strings.SplitN(got[0], "|", 2)[1])
	for q, code := range map[string]pgerr.Code{
		"SHOW CREATE TABLE mv":              pgerr.WrongObjectType,
		"SHOW CREATE SINK t":                pgerr.WrongObjectType,
		"SHOW CREATE MATERIALIZED VIEW xyz": pgerr.UndefinedTable,
	} {
		if _, _, err := run(t, s, q); pgerr.CodeOf(err) != code {
			t.Errorf("%s: %v, want %s", q, err, code)
		}
	}
}

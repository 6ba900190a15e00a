package engine

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// sinkObs records sink commits (an Observer that is a SinkObserver).
type sinkObs struct {
	mu      sync.Mutex
	commits map[string]int
}

func (o *sinkObs) EpochDone(string, time.Duration) {}
func (o *sinkObs) CheckpointDone(CheckpointEvent)  {}
func (o *sinkObs) SinkCommitted(s string, _ time.Duration) {
	o.mu.Lock()
	o.commits[s]++
	o.mu.Unlock()
}

// TestSinkCommitObserved: a sink's commits reach a SinkObserver (the
// streamsql_sink_commit_duration_seconds histogram of package web).
func TestSinkCommitObserved(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	o := &sinkObs{commits: map[string]int{}}
	e.SetObserver(o)
	mustRun(t, s, "CREATE TABLE t (k int)")
	mustRun(t, s, "CREATE SINK k AS SELECT k FROM t WITH (connector = 'blackhole')")
	o.mu.Lock()
	before := o.commits["k"]
	o.mu.Unlock()
	mustRun(t, s, "INSERT INTO t VALUES (1), (2)")
	mustRun(t, s, "FLUSH")
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.commits["k"] <= before {
		t.Fatalf("commits of k: %d before, %d after FLUSH", before, o.commits["k"])
	}
}

// TestSubscriptionsView: streamsql_subscriptions lists a SUBSCRIBE cursor
// with the changed rows it has not fetched yet; fetching them brings its
// lag back to 0.
func TestSubscriptionsView(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE TABLE t (k int)")
	mustRun(t, s, "CREATE MATERIALIZED VIEW mv AS SELECT k FROM t")
	other, err := e.NewSession("tester", "db", nil)
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, s, "BEGIN")
	mustRun(t, s, "DECLARE c CURSOR FOR SUBSCRIBE TO mv WITH (snapshot = false)")
	mustRun(t, other, "INSERT INTO t SELECT g FROM generate_series(1, 5) g")
	mustRun(t, other, "FLUSH")
	got := mustRun(t, other, "SELECT view_name, rows_sent, rows_read, lag_rows FROM streamsql_subscriptions")
	if len(got) != 1 || got[0] != "mv|5|0|5" {
		t.Fatalf("before FETCH: %q", got)
	}
	if rows := mustRun(t, s, "FETCH 5 c"); len(rows) != 5 {
		t.Fatalf("fetched %q", rows)
	}
	got = mustRun(t, other, "SELECT lag_rows, rows_read FROM streamsql_subscriptions WHERE view_name = 'mv'")
	if len(got) != 1 || got[0] != "0|5" {
		t.Fatalf("after FETCH: %q", got)
	}
	mustRun(t, s, "COMMIT")
}

// TestStreamingDDLLogged: creating and dropping views, sinks and sources
// is logged.
func TestStreamingDDLLogged(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	e, err := Open(Config{DataDir: t.TempDir(), Logf: func(f string, a ...any) {
		mu.Lock()
		lines = append(lines, fmt.Sprintf(f, a...))
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s, err := e.NewSession("tester", "db", nil)
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, s, "CREATE TABLE t (k int)")
	mustRun(t, s, "INSERT INTO t VALUES (1), (2)")
	mustRun(t, s, "CREATE MATERIALIZED VIEW mv AS SELECT k FROM t")
	mustRun(t, s, "CREATE SINK k AS SELECT k FROM t WITH (connector = 'blackhole')")
	mustRun(t, s, "CREATE SOURCE src (a int) WITH (connector = 'datagen')")
	mustRun(t, s, "DROP MATERIALIZED VIEW mv")
	mustRun(t, s, "DROP SINK k")
	mustRun(t, s, "DROP SOURCE src")
	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(lines, "\n")
	for _, want := range []string{"materialized view mv created, backfilled 2 rows in ", "sink k created", "source src created (connector datagen)",
		"materialized view mv dropped", "sink k dropped", "source src dropped"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in the log:\n%s", want, all)
		}
	}
}

// TestCleanShutdownLogsNoFailure: closing an engine with running views,
// a sink and a subscription logs nothing that failed.
func TestCleanShutdownLogsNoFailure(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	dir := t.TempDir()
	e, err := Open(Config{DataDir: dir, Logf: func(f string, a ...any) {
		mu.Lock()
		lines = append(lines, fmt.Sprintf(f, a...))
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := e.NewSession("tester", "db", nil)
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, s, "CREATE TABLE t (k int)")
	mustRun(t, s, "INSERT INTO t SELECT g FROM generate_series(1, 100) g")
	mustRun(t, s, "CREATE MATERIALIZED VIEW mv AS SELECT k % 3 AS g, count(*) FROM t GROUP BY 1")
	mustRun(t, s, "CREATE MATERIALIZED VIEW mv2 AS SELECT * FROM mv")
	mustRun(t, s, "CREATE SINK k AS SELECT k FROM t WITH (connector = 'blackhole')")
	mustRun(t, s, "BEGIN")
	mustRun(t, s, "DECLARE c CURSOR FOR SUBSCRIBE TO mv")
	mustRun(t, s, "INSERT INTO t VALUES (7)")
	s.Close()
	e.Close()
	mu.Lock()
	defer mu.Unlock()
	for _, l := range lines {
		low := strings.ToLower(l)
		if strings.Contains(low, "fail") || strings.Contains(low, "error") || strings.Contains(low, "cannot") || strings.Contains(low, "could not") {
			t.Errorf("shutdown logged a failure: %s", l)
		}
	}
}

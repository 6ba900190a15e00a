package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSplitSourceRestart: a nexmark source read by a view at parallelism 3
// runs 3 readers (EXPLAIN says so); a checkpoint taken while they run
// records each reader's position and a restart with the same parallelism
// resumes each (no event lost or read twice: the view ends equal to the
// batch query over the source); a restart with another parallelism
// rebuilds the view, saying why, and it again ends equal.
func TestSplitSourceRestart(t *testing.T) {
	dir := t.TempDir()
	exec := func(s *Session, q string) []string {
		t.Helper()
		rows, _, err := run(t, s, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return rows
	}
	const view = "SELECT auction, count(*) AS n, sum(price) AS s FROM bid GROUP BY auction"
	const events = 40000
	open := func(n int) (*Engine, *Session) {
		e, err := Open(Config{DataDir: dir, StreamingParallelism: n})
		if err != nil {
			t.Fatal(err)
		}
		s, err := e.NewSession("tester", "db", nil)
		if err != nil {
			t.Fatal(err)
		}
		return e, s
	}
	// settled waits until the view holds every bid, then compares it with
	// the batch query over the same bids.
	settled := func(s *Session, when string) {
		t.Helper()
		want := exec(s, strings.Replace(view, "FROM bid", "FROM bidall", 1))
		slices.Sort(want)
		deadline := time.Now().Add(90 * time.Second)
		for {
			got := exec(s, "SELECT * FROM v")
			slices.Sort(got)
			if slices.Equal(got, want) {
				return
			}
			total := exec(s, "SELECT coalesce(sum(n), 0) FROM v")
			if time.Now().After(deadline) {
				t.Fatalf("%s: the view has %d rows (%s bids), its query %d", when, len(got), total[0], len(want))
			}
			time.Sleep(20 * time.Millisecond) // polling with a deadline
		}
	}
	e, s := open(3)
	// the same bids unpaced (a bounded source the batch engine reads;
	// pacing changes event times only)
	exec(s, fmt.Sprintf("CREATE SOURCE bidall WITH (connector = 'nexmark', table = 'bid', events = %d)", events))
	exec(s, fmt.Sprintf("CREATE SOURCE bid WITH (connector = 'nexmark', table = 'bid', events = %d, events_per_second = 20000)", events))
	plan := strings.Join(exec(s, "EXPLAIN CREATE MATERIALIZED VIEW v AS "+view), "\n")
	if !strings.Contains(plan, "(3 readers)") {
		t.Fatalf("the source is not split in three:\n%s", plan)
	}
	exec(s, "CREATE MATERIALIZED VIEW v AS "+view)
	for deadline := time.Now().Add(30 * time.Second); ; {
		if n := exec(s, "SELECT count(*) FROM v"); n[0] != "0" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the view got no rows")
		}
		time.Sleep(5 * time.Millisecond)
	}
	exec(s, "CHECKPOINT")
	t.Logf("checkpoint with %s of %d bids", exec(s, "SELECT sum(n) FROM v")[0], events/50*46)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	viewOID := func(e *Engine) uint32 {
		oid, err := e.cat.RelationOID("v", []string{"public"})
		if err != nil {
			t.Fatal(err)
		}
		return oid
	}
	e, s = open(3)
	if rec := e.flow.Job(viewOID(e)).Recovery(); rec.Epoch == 0 || rec.Rebuilt != "" {
		t.Fatalf("restarted at 3: the view did not resume: %+v", rec)
	}
	settled(s, "resumed at 3")
	exec(s, "CHECKPOINT")
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e, s = open(2)
	if rec := e.flow.Job(viewOID(e)).Recovery(); !strings.Contains(rec.Rebuilt, "read by 3 readers and is now read by 2") {
		t.Fatalf("restarted at 2: the view resumed or said %q", rec.Rebuilt)
	}
	settled(s, "rebuilt at 2")
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}

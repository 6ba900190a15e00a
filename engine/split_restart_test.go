package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// restartRig runs a view over a source across restarts of an engine on
// one data directory.
type restartRig struct {
	t    *testing.T
	dir  string
	view string // the view's query over source bid
	// batch is the same query over source bidall, the same bids unpaced
	// (a bounded source the batch engine reads; pacing changes event
	// times only)
	batch string
}

func (r *restartRig) exec(s *Session, q string) []string {
	r.t.Helper()
	rows, _, err := run(r.t, s, q)
	if err != nil {
		r.t.Fatalf("%s: %v", q, err)
	}
	return rows
}

// open starts the engine at streaming parallelism n.
func (r *restartRig) open(n int) (*Engine, *Session) {
	r.t.Helper()
	e, err := Open(Config{DataDir: r.dir, StreamingParallelism: n})
	if err != nil {
		r.t.Fatal(err)
	}
	s, err := e.NewSession("tester", "db", nil)
	if err != nil {
		r.t.Fatal(err)
	}
	return e, s
}

// settled waits until the view v holds every bid, then compares it with
// the batch query over the same bids (source bidall).
func (r *restartRig) settled(s *Session, when string) {
	r.t.Helper()
	want := r.exec(s, r.batch)
	slices.Sort(want)
	deadline := time.Now().Add(90 * time.Second)
	for {
		got := r.exec(s, "SELECT * FROM v")
		slices.Sort(got)
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%s: the view has %d rows, its query %d", when, len(got), len(want))
		}
		time.Sleep(20 * time.Millisecond) // polling with a deadline
	}
}

// started waits until the view v has rows.
func (r *restartRig) started(s *Session) {
	r.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; {
		if n := r.exec(s, "SELECT count(*) FROM v"); n[0] != "0" {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatal("the view got no rows")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (r *restartRig) viewOID(e *Engine) uint32 {
	r.t.Helper()
	oid, err := e.cat.RelationOID("v", []string{"public"})
	if err != nil {
		r.t.Fatal(err)
	}
	return oid
}

func (r *restartRig) close(e *Engine) {
	r.t.Helper()
	if err := e.Close(); err != nil {
		r.t.Fatal(err)
	}
}

// TestSplitSourceRestart: a nexmark source read by a view at parallelism 3
// runs 3 readers (EXPLAIN says so), each building only the columns the
// view reads; a checkpoint taken while they run records each reader's
// position and a restart with the same parallelism resumes each (no event
// lost or read twice: the view ends equal to the batch query over the
// source); a restart with another parallelism rebuilds the view, saying
// why, and it again ends equal.
func TestSplitSourceRestart(t *testing.T) {
	const q = "SELECT auction, count(*) AS n, sum(price) AS s FROM %s GROUP BY auction"
	r := &restartRig{t: t, dir: t.TempDir(), view: fmt.Sprintf(q, "bid"), batch: fmt.Sprintf(q, "bidall")}
	const events = 40000
	e, s := r.open(3)
	r.exec(s, fmt.Sprintf("CREATE SOURCE bidall WITH (connector = 'nexmark', table = 'bid', events = %d)", events))
	r.exec(s, fmt.Sprintf("CREATE SOURCE bid WITH (connector = 'nexmark', table = 'bid', events = %d, events_per_second = 20000)", events))
	plan := strings.Join(r.exec(s, "EXPLAIN CREATE MATERIALIZED VIEW v AS "+r.view), "\n")
	if !strings.Contains(plan, "(columns: auction, price) (3 readers)") {
		t.Fatalf("the source is not split in three readers of two columns:\n%s", plan)
	}
	r.exec(s, "CREATE MATERIALIZED VIEW v AS "+r.view)
	r.started(s)
	r.exec(s, "CHECKPOINT")
	t.Logf("checkpoint with %s of %d bids", r.exec(s, "SELECT sum(n) FROM v")[0], events/50*46)
	r.close(e)
	e, s = r.open(3)
	if rec := e.flow.Job(r.viewOID(e)).Recovery(); rec.Epoch == 0 || rec.Rebuilt != "" {
		t.Fatalf("restarted at 3: the view did not resume: %+v", rec)
	}
	r.settled(s, "resumed at 3")
	r.exec(s, "CHECKPOINT")
	r.close(e)
	e, s = r.open(2)
	if rec := e.flow.Job(r.viewOID(e)).Recovery(); !strings.Contains(rec.Rebuilt, "read by 3 readers and is now read by 2") {
		t.Fatalf("restarted at 2: the view resumed or said %q", rec.Rebuilt)
	}
	r.settled(s, "rebuilt at 2")
	r.close(e)
}

// TestPrunedSourceRestart: a windowed view at parallelism 1 over a
// nexmark source with a watermark reads the columns of its output, of its
// filter and of the watermark (the watermark rebound over them: the view
// reports one); a checkpoint records the reader's position and a restart
// resumes the reader, building the same columns, so the view ends equal
// to the batch query.
func TestPrunedSourceRestart(t *testing.T) {
	const q = "SELECT window_start, count(*) AS n, max(price) AS hi FROM TUMBLE(%s, date_time, INTERVAL '100 milliseconds') WHERE bidder %% 3 = 0 GROUP BY window_start"
	r := &restartRig{t: t, dir: t.TempDir(), view: fmt.Sprintf(q, "bid"), batch: fmt.Sprintf(q, "bidall")}
	e, s := r.openWithBids(1)
	plan := strings.Join(r.exec(s, "EXPLAIN CREATE MATERIALIZED VIEW v AS "+r.view), "\n")
	if !strings.Contains(plan, "StreamScan: source bid (append only) (columns: bidder, price, date_time) (watermark (bid.date_time - '00:00:04'::interval second))") {
		t.Fatalf("the source's scan does not read bidder, price and date_time:\n%s", plan)
	}
	r.resumesWithWatermark(e, s, 1)
}

// openWithBids starts the engine at parallelism n with two nexmark bid
// sources of 30,000 events: bidall unpaced, bid paced at 10,000 events/s
// (bidall's rate, so the event times are equal) with a watermark on
// date_time 4 s behind.
func (r *restartRig) openWithBids(n int) (*Engine, *Session) {
	r.t.Helper()
	const events = 30000
	cols := "auction bigint, bidder bigint, price bigint, channel varchar, url varchar, date_time timestamp, extra varchar"
	e, s := r.open(n)
	r.exec(s, fmt.Sprintf("CREATE SOURCE bidall WITH (connector = 'nexmark', table = 'bid', events = %d)", events))
	r.exec(s, fmt.Sprintf("CREATE SOURCE bid (%s, WATERMARK FOR date_time AS date_time - INTERVAL '4' SECOND) "+
		"WITH (connector = 'nexmark', table = 'bid', events = %d, events_per_second = 10000)", cols, events))
	return e, s
}

// resumesWithWatermark creates view v, checkpoints it once it has rows,
// restarts the engine at parallelism n and requires the view to resume
// (not rebuild), end equal to the batch query, and report a watermark
// and no row errors.
func (r *restartRig) resumesWithWatermark(e *Engine, s *Session, n int) {
	r.t.Helper()
	r.exec(s, "CREATE MATERIALIZED VIEW v AS "+r.view)
	r.started(s)
	r.exec(s, "CHECKPOINT")
	r.close(e)
	e, s = r.open(n)
	if rec := e.flow.Job(r.viewOID(e)).Recovery(); rec.Epoch == 0 || rec.Rebuilt != "" {
		r.t.Fatalf("restarted: the view did not resume: %+v", rec)
	}
	r.settled(s, "resumed")
	if wm := r.exec(s, "SELECT watermark IS NOT NULL, row_errors FROM streamsql_views WHERE viewname = 'v'"); len(wm) != 1 || wm[0] != "t|0" {
		r.t.Errorf("the resumed view reports no watermark, or row errors: %v", wm)
	}
	r.close(e)
}

package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
)

// A view over a window table function without aggregation expands the
// windows of each row and follows the table's updates and deletes; it
// equals the batch query before and after a restart.
func TestWindowExpansionView(t *testing.T) {
	dir := t.TempDir()
	e, s := open(t, dir)
	mustRun(t, s, "CREATE TABLE r (id int PRIMARY KEY, v int, ts timestamp)")
	mustRun(t, s, "INSERT INTO r VALUES (1, 10, '1969-12-31 23:59:58'), (2, 20, '2024-01-01 00:00:07'), (3, 30, NULL)")
	const q = "SELECT id, v, window_start, window_end FROM HOP(r, ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND)"
	mustRun(t, s, "CREATE MATERIALIZED VIEW hv AS "+q)
	check := func(when string) {
		t.Helper()
		mustRun(t, s, "FLUSH")
		got := strings.Join(mustRun(t, s, "SELECT * FROM hv ORDER BY 1, 3"), ",")
		want := strings.Join(mustRun(t, s, q+" ORDER BY 1, 3"), ",")
		if got != want || want == "" {
			t.Errorf("%s: view %q, batch query %q", when, got, want)
		}
	}
	check("after backfill")
	mustRun(t, s, "UPDATE r SET ts = ts + INTERVAL '3 seconds' WHERE id = 1; UPDATE r SET ts = '2000-01-01' WHERE id = 3; DELETE FROM r WHERE id = 2")
	check("after changes")
	e.Close()
	e, s = open(t, dir)
	defer e.Close()
	check("after restart")
}

// EXPLAIN shows the window and the EMIT clause; the EMIT clause is
// refused where nothing can honour it, at CREATE time.
func TestEmitClause(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE TABLE b (k int, v int, ts timestamp, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) APPEND ONLY")
	mustRun(t, s, "CREATE TABLE nowm (k int, ts timestamp)")
	plan := strings.Join(mustRun(t, s, "EXPLAIN CREATE MATERIALIZED VIEW w AS SELECT k, window_start, sum(v) FROM TUMBLE(b, ts, INTERVAL '10' SECOND) GROUP BY k, window_start EMIT ON WINDOW CLOSE WITH DELAY INTERVAL '2' SECOND"), "\n")
	if !strings.Contains(plan, "StreamWindowAgg: TUMBLE(size 10s, offset 0s) sum(b.v) GROUP BY b.k (emit on window close, delay 2s)") {
		t.Errorf("explain:\n%s", plan)
	}
	for q, code := range map[string]pgerr.Code{
		"CREATE MATERIALIZED VIEW x AS SELECT window_start, count(*) FROM TUMBLE(nowm, ts, INTERVAL '1' SECOND) GROUP BY 1 EMIT ON WINDOW CLOSE": pgerr.InvalidObjectDefinition,
		"CREATE MATERIALIZED VIEW x AS SELECT k, v FROM b EMIT FINAL":                                                                            pgerr.FeatureNotSupported,
		"CREATE MATERIALIZED VIEW x AS SELECT window_start, count(*) FROM TUMBLE(b, ts, INTERVAL '1' SECOND) GROUP BY 1 EMIT EVERY '0 s'":        pgerr.InvalidParameterValue,
		"CREATE MATERIALIZED VIEW x AS SELECT * FROM HOP(b, ts, INTERVAL '3' SECOND, INTERVAL '10' SECOND)":                                      pgerr.InvalidParameterValue,
		"SELECT * FROM b EMIT ON UPDATE": pgerr.FeatureNotSupported,
	} {
		if _, _, err := run(t, s, q); pgerr.CodeOf(err) != code {
			t.Errorf("%s: %v, want %s", q, err, code)
		}
	}
	if got := mustRun(t, s, "SHOW MATERIALIZED VIEWS"); len(got) != 0 {
		t.Errorf("views left behind: %v", got)
	}
	// SUBSCRIBE (query) plans its EMIT clause; a view's is its own.
	mustRun(t, s, "CREATE MATERIALIZED VIEW pv AS SELECT k FROM b")
	for q, code := range map[string]pgerr.Code{
		"SUBSCRIBE (SELECT k, v FROM b EMIT FINAL)":                                                        pgerr.FeatureNotSupported,
		"SUBSCRIBE (SELECT window_start FROM TUMBLE(nowm, ts, INTERVAL '1' SECOND) GROUP BY 1 EMIT FINAL)": pgerr.InvalidObjectDefinition,
		"SUBSCRIBE TO pv EMIT ON UPDATE":                                                                   pgerr.FeatureNotSupported,
	} {
		stmts, err := sql.Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Prepare(context.Background(), stmts[0], nil); pgerr.CodeOf(err) != code {
			t.Errorf("%s: %v, want %s", q, err, code)
		}
	}
}

// A view's EMIT clause is stored after its query and planned again at
// restart.
func TestEmitClauseStored(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE TABLE b (k int, v int, ts timestamp, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) APPEND ONLY")
	// Planning a stored definition (as a restart does).
	rel := &catalog.Relation{Name: "w", Schema: "public", Kind: catalog.KindMatView,
		ViewQuery: "SELECT window_start, count(*) FROM hop(b, ts, '00:00:02'::interval, '00:00:10'::interval) GROUP BY window_start EMIT ON WINDOW CLOSE WITH DELAY INTERVAL '1' SECOND LATE ROWS INTO \"Late\""}
	q, err := e.planView(rel)
	if err != nil {
		t.Fatal(err)
	}
	wa := findWindowAgg(q.Root)
	want := stream.EmitSpec{Mode: stream.EmitOnWindowClose, Delay: 1e6, LateRows: true}
	if wa == nil || wa.Emit != want || wa.Window.Kind != stream.Hop || wa.Window.Slide != 2e6 {
		t.Fatalf("stored view plans to %+v", wa)
	}
	// CREATE stores the clause (once windowed aggregation runs).
	_, _, err = run(t, s, "CREATE MATERIALIZED VIEW w AS SELECT window_start, count(*) FROM TUMBLE(b, ts, INTERVAL '10' SECOND) GROUP BY window_start EMIT ON WINDOW CLOSE WITH DELAY INTERVAL '1' SECOND")
	if err != nil && strings.Contains(err.Error(), "not implemented") {
		t.Skip("windowed aggregation does not run yet")
	}
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.cat.Resolve("", "w", []string{"public"})
	if err != nil || !strings.HasSuffix(r.ViewQuery, " EMIT ON WINDOW CLOSE WITH DELAY INTERVAL '1' SECOND") {
		t.Fatalf("stored definition %q (%v)", r.ViewQuery, err)
	}
}

func findWindowAgg(n stream.Node) *stream.WindowAgg {
	if wa, ok := n.(*stream.WindowAgg); ok {
		return wa
	}
	for _, in := range n.Inputs() {
		if wa := findWindowAgg(in); wa != nil {
			return wa
		}
	}
	return nil
}

// Windowed aggregation views (EMIT ON UPDATE, no watermark: no window is
// ever closed) equal the same queries run in batch, through inserts,
// updates that move rows between windows, deletes and a restart.
func TestWindowedAggregationViews(t *testing.T) {
	dir := t.TempDir()
	e, s := open(t, dir)
	mustRun(t, s, "CREATE TABLE r (id int PRIMARY KEY, k int, v int, ts timestamp)")
	mustRun(t, s, `INSERT INTO r VALUES (1, 1, 10, '1969-12-31 23:59:58'), (2, 1, 20, '1970-01-01 00:00:03'),
		(3, 2, 30, '1970-01-01 00:00:04'), (4, 1, 40, '1970-01-01 00:00:11'), (5, 2, 50, NULL)`)
	queries := map[string]string{
		"tw": "SELECT k, window_start, window_end, count(*), sum(v), max(v) FROM TUMBLE(r, ts, INTERVAL '5' SECOND) GROUP BY k, window_start, window_end",
		"hw": "SELECT window_start, window_end, count(*), min(v) FROM HOP(r, ts, INTERVAL '2' SECOND, INTERVAL '6' SECOND, INTERVAL '1' SECOND) GROUP BY window_start, window_end",
		"cw": "SELECT k, window_start, window_end, sum(v) FROM CUMULATE(r, ts, INTERVAL '4' SECOND, INTERVAL '12' SECOND) GROUP BY k, window_start, window_end",
		"sw": "SELECT k, window_start, window_end, count(*), avg(v) FROM SESSION(r, ts, INTERVAL '6' SECOND) GROUP BY k, window_start, window_end",
		"lw": "SELECT k, TUMBLE_START(ts, INTERVAL '10' SECOND) AS s, count(*) FROM r GROUP BY k, TUMBLE(ts, INTERVAL '10' SECOND)",
	}
	for name, q := range queries {
		mustRun(t, s, "CREATE MATERIALIZED VIEW "+name+" AS "+q)
	}
	check := func(when string) {
		t.Helper()
		mustRun(t, s, "FLUSH")
		for name, q := range queries {
			got := strings.Join(mustRun(t, s, "SELECT * FROM "+name+" ORDER BY 1, 2, 3"), ",")
			want := strings.Join(mustRun(t, s, q+" ORDER BY 1, 2, 3"), ",")
			if got != want {
				t.Errorf("%s: view %s\n got %q\nwant %q", when, name, got, want)
			}
		}
	}
	check("after backfill")
	mustRun(t, s, "INSERT INTO r VALUES (6, 2, 60, '1970-01-01 00:00:09'), (7, 1, 70, '1970-01-01 00:00:06')")
	check("after inserts")
	// id 7 bridges k=1's sessions; moving it back splits them again.
	mustRun(t, s, "UPDATE r SET ts = ts + INTERVAL '7 seconds' WHERE id = 2; DELETE FROM r WHERE id = 3; UPDATE r SET v = v + 1")
	check("after updates and deletes")
	mustRun(t, s, "UPDATE r SET ts = '1970-01-01 00:00:30' WHERE id = 7; UPDATE r SET ts = '1970-01-01 00:00:01' WHERE id = 5")
	check("after moving rows")
	e.Close()
	e, s = open(t, dir)
	defer e.Close()
	check("after restart")
}

// A join of two windowed aggregations closed with EMIT ON WINDOW CLOSE, on
// their window, frees each window's state once both sides passed it; the
// join's results are those of the batch query over the closed windows.
func TestWindowJoinFreesState(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE TABLE ev (k int, v int, ts timestamp, WATERMARK FOR ts AS ts) APPEND ONLY")
	const a = "SELECT k, window_end AS we, count(*) AS n FROM TUMBLE(ev, ts, INTERVAL '10' SECOND) GROUP BY k, window_end"
	const b = "SELECT window_end AS we, max(v) AS mx FROM TUMBLE(ev, ts, INTERVAL '10' SECOND) GROUP BY window_end"
	const q = "SELECT a.k, a.we, a.n, b.mx FROM (" + a + ") a JOIN (" + b + ") b ON a.we = b.we EMIT ON WINDOW CLOSE"
	plan := strings.Join(mustRun(t, s, "EXPLAIN CREATE MATERIALIZED VIEW j AS "+q), "\n")
	if !strings.Contains(plan, "state freed below the watermark of") {
		t.Fatalf("window join plan:\n%s", plan)
	}
	mustRun(t, s, "CREATE MATERIALIZED VIEW j AS "+q)
	for i := 0; i < 60; i++ { // 6 windows of 10 s, 2 keys
		mustRun(t, s, fmt.Sprintf("INSERT INTO ev VALUES (%d, %d, '2024-01-01 00:00:00'::timestamp + INTERVAL '%d second')", i%2, i*7%13, i))
	}
	mustRun(t, s, "FLUSH")
	got := strings.Join(mustRun(t, s, "SELECT * FROM j ORDER BY 1, 2"), ",")
	closed := "(SELECT * FROM (" + a + ") x WHERE we <= '2024-01-01 00:00:59') a JOIN (SELECT * FROM (" + b + ") y WHERE we <= '2024-01-01 00:00:59') b ON a.we = b.we"
	want := strings.Join(mustRun(t, s, "SELECT a.k, a.we, a.n, b.mx FROM "+closed+" ORDER BY 1, 2"), ",")
	if got != want || want == "" {
		t.Fatalf("window join = %q, batch = %q", got, want)
	}
}

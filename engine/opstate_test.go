package engine

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// opState reads an operator's state_bytes and busy_us from
// streamsql_operators, summed over its parallel instances ("NULL" state:
// it keeps none).
func opState(t *testing.T, s *Session, view, op string) (state string, busy int64) {
	t.Helper()
	rows := mustRun(t, s, fmt.Sprintf("SELECT coalesce(sum(state_bytes)::text, 'NULL') || ' ' || sum(busy_us) FROM streamsql_operators WHERE view_name = '%s' AND operator = '%s'", view, op))
	if len(rows) != 1 {
		all := mustRun(t, s, "SELECT view_name, operator, state_bytes FROM streamsql_operators")
		t.Fatalf("%s of %s: %q (operators: %q)", op, view, rows, all)
	}
	f := strings.Fields(rows[0])
	busy, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return f[0], busy
}

func stateBytes(t *testing.T, s *Session, view, op string) int64 {
	t.Helper()
	st, _ := opState(t, s, view, op)
	n, err := strconv.ParseInt(st, 10, 64)
	if err != nil {
		t.Fatalf("state_bytes of %s in %s: %q", op, view, st)
	}
	return n
}

// TestOperatorStateBytes: a stateful operator's state estimate grows as
// keys arrive and shrinks when a TUMBLE EOWC view's windows close; a
// stateless one has none (NULL); the operators that handled rows were
// busy; EXPLAIN ANALYZE MATERIALIZED VIEW shows both.
func TestOperatorStateBytes(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE TABLE b (k int, v int, ts timestamp, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) APPEND ONLY")
	mustRun(t, s, "CREATE MATERIALIZED VIEW w AS SELECT k, window_start, sum(v) AS s FROM TUMBLE(b, ts, INTERVAL '10' SECOND) GROUP BY k, window_start EMIT ON WINDOW CLOSE")
	mustRun(t, s, "CREATE MATERIALIZED VIEW g AS SELECT k, count(*) AS n FROM b WHERE v >= 0 GROUP BY k")
	mustRun(t, s, "FLUSH")
	plan := strings.Join(mustRun(t, s, "EXPLAIN MATERIALIZED VIEW w"), "\n")
	wop := "WindowAgg"
	if !strings.Contains(plan, "StreamWindowAgg") {
		t.Fatalf("plan of w:\n%s", plan)
	}

	insert := func(from, to int, ts string) {
		mustRun(t, s, fmt.Sprintf("INSERT INTO b SELECT g, g, TIMESTAMP '%s' FROM generate_series(%d, %d) g", ts, from, to))
		mustRun(t, s, "FLUSH")
	}
	insert(1, 100, "2024-01-01 00:00:01")
	w1, g1 := stateBytes(t, s, "w", wop), stateBytes(t, s, "g", "HashAgg")
	insert(101, 2000, "2024-01-01 00:00:02")
	w2, g2 := stateBytes(t, s, "w", wop), stateBytes(t, s, "g", "HashAgg")
	if w1 <= 0 || w2 <= w1 || g1 <= 0 || g2 <= g1 {
		t.Fatalf("state did not grow with the keys: window agg %d -> %d, hash agg %d -> %d", w1, w2, g1, g2)
	}
	if g2 < 1900*8 {
		t.Errorf("hash agg state of 2000 groups estimated at %d bytes", g2)
	}
	// The view keeps its rows: its state grows too.
	if v := stateBytes(t, s, "g", "Materialize"); v < 2000*8 {
		t.Errorf("view g's state %d bytes for 2000 rows", v)
	}
	// A later row moves the watermark past the window's end: it closes,
	// its 2000 groups are freed; only the new window's key is left.
	insert(1, 1, "2024-01-01 00:00:35")
	w3, g3 := stateBytes(t, s, "w", wop), stateBytes(t, s, "g", "HashAgg")
	if w3 >= w2/10 {
		t.Errorf("window agg state did not shrink when its window closed: %d -> %d", w2, w3)
	}
	if g3 != g2 {
		t.Errorf("hash agg state changed without new keys: %d -> %d", g2, g3)
	}
	if rows := mustRun(t, s, "SELECT count(*) FROM w"); len(rows) != 1 || rows[0] != "2000" {
		t.Errorf("w emitted %q rows", rows)
	}
	if st, _ := opState(t, s, "g", "Filter"); st != "NULL" {
		t.Errorf("a filter has state %s", st)
	}
	if _, busy := opState(t, s, "g", "HashAgg"); busy <= 0 {
		t.Errorf("hash agg busy %d µs after 2001 rows", busy)
	}

	text := strings.Join(mustRun(t, s, "EXPLAIN ANALYZE MATERIALIZED VIEW g"), "\n")
	t.Logf("EXPLAIN ANALYZE:\n%s", text)
	m := regexp.MustCompile(`StreamHashAgg.*busy=(\d+\.\d)%, backpressure=\d+\.\d%, state=(\d+) (bytes|kB)`).FindStringSubmatch(text)
	if m == nil || strings.Contains(regexp.MustCompile(`StreamFilter.*`).FindString(text), "state=") {
		t.Errorf("EXPLAIN ANALYZE without busy and state:\n%s", text)
	}
}

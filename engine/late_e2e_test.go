package engine

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// Late rows of a windowed view are counted in streamsql_views and stored
// with LATE ROWS INTO; a table of the wrong shape is refused at CREATE.
func TestLateRowsIntoEndToEnd(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE TABLE ev (k int, ts timestamp, WATERMARK FOR ts AS ts) APPEND ONLY")
	mustRun(t, s, "CREATE TABLE late (k int, ts timestamp, view_name text, watermark timestamptz)")
	mustRun(t, s, "CREATE TABLE wrong (k int, view_name text, watermark timestamptz)")
	if _, _, err := run(t, s, "CREATE MATERIALIZED VIEW w0 AS SELECT window_start, count(*) AS n FROM TUMBLE(ev, ts, INTERVAL '10' SECOND) GROUP BY window_start EMIT ON WINDOW CLOSE LATE ROWS INTO wrong"); err == nil ||
		!strings.Contains(err.Error(), `table "wrong" cannot receive this view's late rows`) {
		t.Fatalf("wrong shape: %v", err)
	}
	mustRun(t, s, "CREATE MATERIALIZED VIEW w AS SELECT window_start, count(*) AS n FROM TUMBLE(ev, ts, INTERVAL '10' SECOND) GROUP BY window_start EMIT ON WINDOW CLOSE LATE ROWS INTO late")
	mustRun(t, s, "INSERT INTO ev VALUES (1, '2024-01-01 00:00:01'), (2, '2024-01-01 00:00:15')")
	mustRun(t, s, "FLUSH")
	mustRun(t, s, "INSERT INTO ev VALUES (3, '2024-01-01 00:00:02')") // window [0, 10) closed at 15
	mustRun(t, s, "INSERT INTO ev VALUES (4, '2024-01-01 00:00:25')")
	mustRun(t, s, "FLUSH")
	if got := strings.Join(mustRun(t, s, "SELECT * FROM w ORDER BY 1"), ","); got != "2024-01-01 00:00:00|1,2024-01-01 00:00:10|1" {
		t.Fatalf("w: %s", got)
	}
	if got := strings.Join(mustRun(t, s, "SELECT late_rows, late_rows_lost FROM streamsql_views WHERE viewname = 'w'"), ","); got != "1|0" {
		t.Fatalf("counters: %s", got)
	}
	// FLUSH waited for the late rows to be stored.
	if got := strings.Join(mustRun(t, s, "SELECT k, ts, view_name FROM late"), ","); got != "3|2024-01-01 00:00:02|w" {
		t.Fatalf("late: %q", got)
	}
}

// With parallel instances, checkpoints every few milliseconds and late rows
// in most writes, LATE ROWS INTO stores each late row once: the table holds
// as many rows as the view counted late, no id twice, and every row of a
// closed window is either counted by the view or in the table.
func TestLateRowsIntoParallelCheckpoints(t *testing.T) {
	e, err := Open(Config{DataDir: t.TempDir(), CheckpointInterval: 3 * time.Millisecond, BarrierInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s, err := e.NewSession("tester", "db", nil)
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, s, "SET streaming_parallelism = 4")
	mustRun(t, s, "CREATE TABLE ev (id int, k int, ts timestamp, WATERMARK FOR ts AS ts) APPEND ONLY")
	mustRun(t, s, "CREATE TABLE late (id int, k int, ts timestamp, view_name text, watermark timestamptz)")
	mustRun(t, s, "CREATE MATERIALIZED VIEW w AS SELECT k, window_start, count(*) AS n FROM TUMBLE(ev, ts, INTERVAL '10' SECOND) GROUP BY k, window_start EMIT ON WINDOW CLOSE LATE ROWS INTO late")
	rng := rand.New(rand.NewPCG(1, 2))
	id := 0
	for w := 0; w < 200; w++ {
		var vals []string
		for n := 0; n < 20; n++ {
			id++
			ts := w*3 - rng.IntN(40) // about a third are late
			vals = append(vals, fmt.Sprintf("(%d, %d, TIMESTAMP '2024-01-01' + INTERVAL '%d second')", id, rng.IntN(8), ts+100))
		}
		mustRun(t, s, "INSERT INTO ev VALUES "+strings.Join(vals, ", "))
	}
	mustRun(t, s, "FLUSH")
	got := strings.Join(mustRun(t, s, "SELECT count(*), count(DISTINCT id) FROM late"), ",")
	counted := strings.Join(mustRun(t, s, "SELECT late_rows || '|' || late_rows FROM streamsql_views WHERE viewname = 'w'"), ",")
	if got != counted || got == "0|0" {
		t.Fatalf("late table (rows|ids) %s, late_rows %s", got, counted)
	}
	// The view's windows are closed below the watermark, the last write's max.
	want := `SELECT k, date_bin(INTERVAL '10 seconds', ts, TIMESTAMP '2024-01-01') AS ws, count(*) AS n FROM ev
		WHERE id NOT IN (SELECT id FROM late) GROUP BY 1, 2
		HAVING date_bin(INTERVAL '10 seconds', ts, TIMESTAMP '2024-01-01') + INTERVAL '10 seconds' <= (SELECT max(ts) FROM ev)`
	check := "SELECT count(*) FROM ((" + want + " EXCEPT SELECT k, window_start, n FROM w) UNION ALL (SELECT k, window_start, n FROM w EXCEPT " + want + ")) d"
	if d := mustRun(t, s, check); d[0] != "0" {
		t.Fatalf("%s windows differ from the rows not in the late table", d[0])
	}
	t.Logf("%s late rows (rows|ids)", got)
}

package engine

import (
	"strings"
	"testing"
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
	var got string
	for i := 0; i < 1000 && got == ""; i++ {
		got = strings.Join(mustRun(t, s, "SELECT k, ts, view_name FROM late"), ",")
	}
	if got != "3|2024-01-01 00:00:02|w" {
		t.Fatalf("late: %q", got)
	}
}

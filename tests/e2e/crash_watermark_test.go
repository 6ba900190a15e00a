package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// stop sends SIGTERM (a clean stop) and waits for the process to exit.
func (s *server) stop() {
	select {
	case <-s.exited:
		return
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(startTimeout):
		s.t.Fatalf("streamsqld did not stop on SIGTERM:\n%s", s.out.String())
	}
}

// wmInputs are the inputs of TestWatermarksSurviveRestart: every kind of
// watermark (plain, delayed, with and without idle_timeout) on tables and
// on datagen, nexmark and file sources. %s is the CSV file's path.
var wmInputs = []string{
	"CREATE TABLE t_idle (host text, ts timestamptz, WATERMARK FOR ts AS ts WITH (idle_timeout = '1h')) APPEND ONLY",
	"CREATE TABLE t_delay_idle (host text, ts timestamptz, WATERMARK FOR ts AS ts - INTERVAL '2 seconds' WITH (idle_timeout = '1h')) APPEND ONLY",
	"CREATE TABLE t_delay (host text, ts timestamptz, WATERMARK FOR ts AS ts - INTERVAL '2 seconds') APPEND ONLY",
	"CREATE SOURCE s_gen (id bigint, ts timestamptz, WATERMARK FOR ts AS ts - INTERVAL '1 second' WITH (idle_timeout = '1h')) " +
		"WITH (connector = 'datagen', rows = '40', fields.ts.kind = 'sequence', fields.ts.start = '2024-01-01 00:00:00+00', fields.ts.step = '1 second')",
	"CREATE SOURCE s_nex (auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, date_time TIMESTAMP, extra VARCHAR, " +
		"WATERMARK FOR date_time AS date_time - INTERVAL '4' SECOND WITH (idle_timeout = '1h')) WITH (connector = 'nexmark', table = 'bid', events = '2000')",
	"CREATE SOURCE s_file (id int, ts timestamptz, WATERMARK FOR ts AS ts WITH (idle_timeout = '1h')) WITH (connector = 'file', path = '%s') FORMAT CSV",
}

// wmViews are EMIT ON WINDOW CLOSE views over each input, and a view
// over a view.
var wmViews = []string{
	"CREATE MATERIALIZED VIEW w_idle AS SELECT window_start, count(*) AS n FROM TUMBLE(t_idle, ts, INTERVAL '5 seconds') GROUP BY window_start EMIT ON WINDOW CLOSE",
	"CREATE MATERIALIZED VIEW w_delay_idle AS SELECT window_start, count(*) AS n FROM TUMBLE(t_delay_idle, ts, INTERVAL '5 seconds') GROUP BY window_start EMIT ON WINDOW CLOSE",
	"CREATE MATERIALIZED VIEW w_delay AS SELECT window_start, count(*) AS n FROM TUMBLE(t_delay, ts, INTERVAL '5 seconds') GROUP BY window_start EMIT ON WINDOW CLOSE",
	"CREATE MATERIALIZED VIEW w_gen AS SELECT window_start, count(*) AS n FROM TUMBLE(s_gen, ts, INTERVAL '5 seconds') GROUP BY window_start EMIT ON WINDOW CLOSE",
	"CREATE MATERIALIZED VIEW w_nex AS SELECT window_start, count(*) AS n FROM TUMBLE(s_nex, date_time, INTERVAL '5 seconds') GROUP BY window_start EMIT ON WINDOW CLOSE",
	"CREATE MATERIALIZED VIEW w_file AS SELECT window_start, count(*) AS n FROM TUMBLE(s_file, ts, INTERVAL '5 seconds') GROUP BY window_start EMIT ON WINDOW CLOSE",
	"CREATE MATERIALIZED VIEW w_on_w AS SELECT window_start, n FROM w_idle",
}

// TestWatermarksSurviveRestart: after a kill -9 or a clean stop, on the
// wall and on the manual clock, every view's watermark is the one it had
// (an idle_timeout jumped it to 2262-04-11 23:47:16: every later row was
// late), rows after the restart are counted and close windows, and with
// the manual clock an idle timeout counts from the restart. A clean stop
// logs no view failure.
func TestWatermarksSurviveRestart(t *testing.T) {
	for _, clock := range []string{"wall", "manual"} {
		for _, kill := range []bool{true, false} {
			name := clock + "/stop"
			if kill {
				name = clock + "/kill"
			}
			t.Run(name, func(t *testing.T) { testWatermarkRestart(t, clock, kill) })
		}
	}
}

func testWatermarkRestart(t *testing.T, clock string, kill bool) {
	dir := t.TempDir()
	csv := filepath.Join(t.TempDir(), "ev.csv")
	var b strings.Builder
	for i := 0; i < 23; i++ {
		fmt.Fprintf(&b, "%d,2024-01-01 00:00:%02d+00\n", i, i)
	}
	if err := os.WriteFile(csv, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	flags := []string{"--clock", clock}
	s := startServer(t, dir, flags...)
	c := s.connect(ctx)
	for _, q := range wmInputs {
		if strings.Contains(q, "%s") {
			q = fmt.Sprintf(q, csv)
		}
		mustExec(t, ctx, c, q)
	}
	for _, q := range wmViews {
		mustExec(t, ctx, c, q)
	}
	for _, tbl := range []string{"t_idle", "t_delay_idle", "t_delay"} {
		mustExec(t, ctx, c, "INSERT INTO "+tbl+" VALUES ('a', '2024-01-01 00:00:01+00'), ('a', '2024-01-01 00:00:07+00')")
	}
	mustExec(t, ctx, c, "FLUSH")
	mustExec(t, ctx, c, "CHECKPOINT")
	before := viewWatermarks(t, ctx, c)
	for _, v := range []string{"w_idle", "w_delay_idle", "w_delay", "w_gen", "w_nex", "w_file"} {
		if before[v] == "" {
			t.Fatalf("%s has no watermark before the restart: %v", v, before)
		}
	}
	c.Close(ctx)
	if kill {
		s.kill()
	} else {
		s.stop()
		if out := s.out.String(); strings.Contains(out, "failed") {
			t.Errorf("a clean stop logged a failure:\n%s", out)
		}
	}

	s = startServer(t, dir, flags...)
	c = s.connect(ctx)
	mustExec(t, ctx, c, "FLUSH")
	if after := viewWatermarks(t, ctx, c); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("watermarks after the restart:\n%v\nbefore:\n%v", after, before)
	}
	if clock == "manual" {
		// The idle timeout counts from the restart.
		mustExec(t, ctx, c, "ADVANCE CLOCK BY INTERVAL '59 minutes'")
		if after := viewWatermarks(t, ctx, c); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Fatalf("watermarks 59 minutes after the restart:\n%v\nbefore:\n%v", after, before)
		}
		mustExec(t, ctx, c, "ADVANCE CLOCK BY INTERVAL '1 minute'")
		after := viewWatermarks(t, ctx, c)
		for _, v := range []string{"w_idle", "w_delay_idle", "w_gen", "w_file", "w_on_w"} {
			b, err := time.Parse("2006-01-02 15:04:05-07", before[v])
			if err != nil {
				t.Fatal(err)
			}
			if want := b.Add(time.Hour).UTC().Format("2006-01-02 15:04:05-07"); after[v] != want {
				t.Errorf("%s: watermark %s one hour idle after the restart, want %s", v, after[v], want)
			}
		}
		// No idle timeout: it stays.
		if after["w_delay"] != before["w_delay"] {
			t.Errorf("w_delay: watermark %s, want %s", after["w_delay"], before["w_delay"])
		}
		return
	}
	// Rows after the restart are on time and close the windows before them.
	for _, tbl := range []string{"t_idle", "t_delay_idle", "t_delay"} {
		mustExec(t, ctx, c, "INSERT INTO "+tbl+" VALUES ('a', '2024-01-01 00:00:20+00')")
	}
	mustExec(t, ctx, c, "FLUSH")
	for _, v := range []string{"w_idle", "w_delay_idle", "w_delay"} {
		var got string
		if err := c.QueryRow(ctx, "SELECT string_agg(to_char(window_start AT TIME ZONE 'UTC', 'SS') || ':' || n, ' ' ORDER BY window_start) FROM "+v).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != "00:1 05:1" {
			t.Errorf("%s = %q after the restart, want windows 00:1 05:1", v, got)
		}
	}
	var late int64
	if err := c.QueryRow(ctx, "SELECT sum(late_rows) FROM streamsql_views").Scan(&late); err != nil {
		t.Fatal(err)
	}
	if late != 0 {
		t.Errorf("%d late rows after the restart", late)
	}
	if kill {
		return
	}
	s.stop()
	if out := s.out.String(); strings.Contains(out, "failed") {
		t.Errorf("a clean stop logged a failure:\n%s", out)
	}
}

// viewWatermarks is every view's watermark as text ("" for none).
func viewWatermarks(t *testing.T, ctx context.Context, c *pgx.Conn) map[string]string {
	t.Helper()
	if _, err := c.Exec(ctx, "SET timezone = 'UTC'"); err != nil {
		t.Fatal(err)
	}
	rows, err := c.Query(ctx, "SELECT viewname, coalesce(watermark::text, '') FROM streamsql_views ORDER BY 1")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for rows.Next() {
		var v, w string
		if err := rows.Scan(&v, &w); err != nil {
			t.Fatal(err)
		}
		m[v] = w
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

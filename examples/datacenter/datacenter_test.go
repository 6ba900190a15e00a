// Package datacenter holds the datacenter example's test: it runs setup.sql
// against an in-process server on the manual clock and checks that every
// view finds the anomalies gen.awk injected into metrics.jsonl.
package datacenter

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/streamsql/streamsql/tests/harness"
)

// statements splits setup.sql into its statements: comment lines dropped,
// split at semicolons (setup.sql has none inside literals).
func statements(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "--") {
			lines = append(lines, l)
		}
	}
	var out []string
	for _, s := range strings.Split(strings.Join(lines, "\n"), ";") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func rows(t *testing.T, ctx context.Context, c *pgx.Conn, q string) [][]string {
	t.Helper()
	r, err := c.Query(ctx, q, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer r.Close()
	var out [][]string
	for r.Next() {
		vals := r.RawValues()
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = string(v)
		}
		out = append(out, row)
	}
	if err := r.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

func TestDatacenterExample(t *testing.T) {
	s := harness.Start(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, s.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	for _, q := range statements(t, "setup.sql") {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	// The file source is read in the background: end epochs until every row
	// has reached the views (rows_in counts them). FLUSH waits for an epoch,
	// so this loop does not spin.
	want := strings.Count(mustRead(t, "metrics.jsonl"), "\n")
	for {
		if _, err := c.Exec(ctx, "FLUSH"); err != nil {
			t.Fatal(err)
		}
		got := rows(t, ctx, c, "SELECT rows_in FROM streamsql_views WHERE viewname = 'heartbeats'")
		if len(got) == 1 && got[0][0] == itoa(want) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("heartbeats read %v of %d rows", got, want)
		}
	}

	// host_load: one row per host and closed window; web-3's runaway process
	// shows in the windows overlapping 00:01:30-00:02:00.
	hot := rows(t, ctx, c, "SELECT DISTINCT host FROM host_load WHERE max_cpu > 90")
	if len(hot) != 1 || hot[0][0] != "web-3" {
		t.Errorf("hosts with cpu above 90: %v, want [web-3]", hot)
	}

	// cpu_anomalies (a window join): only web-3, only windows containing part
	// of the spike.
	an := rows(t, ctx, c, "SELECT host, window_start, window_end FROM cpu_anomalies")
	if len(an) == 0 {
		t.Error("cpu_anomalies is empty")
	}
	for _, r := range an {
		if r[0] != "web-3" || r[2] <= "2024-01-01 00:01:30+00" || r[1] >= "2024-01-01 00:02:00+00" {
			t.Errorf("unexpected anomaly %v", r)
		}
	}

	// cpu_zscores: the same spike by standard deviations over the two
	// minutes before each window (PostgreSQL 15 gives these three rows
	// for the same windows computed with generate_series and joins).
	zs := rows(t, ctx, c, "SELECT host, window_end, avg_cpu, base_cpu, z FROM cpu_zscores ORDER BY window_end")
	wantZ := []string{
		"web-3 2024-01-01 00:01:40+00 49.8 27.5 5.4",
		"web-3 2024-01-01 00:01:50+00 73.9 26.9 11.2",
		"web-3 2024-01-01 00:02:00+00 94.7 27.5 15.4",
	}
	if len(zs) != len(wantZ) {
		t.Errorf("cpu_zscores %v, want %v", zs, wantZ)
	} else {
		for i, r := range zs {
			if got := strings.Join(r, " "); got != wantZ[i] {
				t.Errorf("cpu_zscores row %d: %s, want %s", i, got, wantZ[i])
			}
		}
	}

	// error_sessions: db-1's two error bursts, each one session.
	es := rows(t, ctx, c, "SELECT host, session_start FROM error_sessions ORDER BY session_start")
	if len(es) != 2 || es[0][0] != "db-1" || es[1][0] != "db-1" ||
		es[0][1] != "2024-01-01 00:00:40+00" || es[1][1] != "2024-01-01 00:02:10+00" {
		t.Errorf("error sessions %v, want db-1 at 00:00:40 and 00:02:10", es)
	}

	// silent_hosts: web-4, last seen in the window ending 00:01:00.
	sh := rows(t, ctx, c, "SELECT host, last_seen FROM silent_hosts")
	if len(sh) != 1 || sh[0][0] != "web-4" || sh[0][1] != "2024-01-01 00:01:00+00" {
		t.Errorf("silent hosts %v, want web-4 last seen 00:01:00", sh)
	}

	// The file has ended: the last window (ending 00:03:00) is still open
	// (watermark 00:02:56) until idle_timeout moves the watermark with the
	// clock.
	last := "SELECT max(window_end) FROM heartbeats"
	if got := rows(t, ctx, c, last)[0][0]; got != "2024-01-01 00:02:50+00" {
		t.Errorf("before idle_timeout the last closed window ends at %s, want 00:02:50", got)
	}
	if _, err := c.Exec(ctx, "ADVANCE CLOCK BY INTERVAL '10 seconds'"); err != nil {
		t.Fatal(err)
	}
	if got := rows(t, ctx, c, last)[0][0]; got != "2024-01-01 00:03:00+00" {
		t.Errorf("after idle_timeout the last closed window ends at %s, want 00:03:00", got)
	}
	checkRackLoad(t, ctx, c)
	late := rows(t, ctx, c, "SELECT coalesce(sum(late_rows), 0) FROM streamsql_views")
	if late[0][0] != "0" {
		t.Errorf("late rows %s, want 0 (the file is in time order)", late[0][0])
	}

	// Temporal filters: the manual clock started at 00:00:00 and is at
	// 00:00:10, so no report is 20 seconds old yet. At 00:01:20 web-4
	// (last report 00:00:58) is silent; at 00:03:20 every host and the whole
	// feed (last report 00:02:58) are.
	hostAlerts := "SELECT host, last_report FROM host_silence_alerts ORDER BY host"
	feedAlert := "SELECT last_report FROM feed_silence_alert"
	if got := rows(t, ctx, c, hostAlerts); len(got) != 0 {
		t.Errorf("silence alerts at 00:00:10: %v, want none", got)
	}
	advance := func(by string) {
		t.Helper()
		for _, q := range []string{"ADVANCE CLOCK BY INTERVAL '" + by + "'", "FLUSH"} {
			if _, err := c.Exec(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
	}
	advance("70 seconds")
	if got := rows(t, ctx, c, hostAlerts); len(got) != 1 || got[0][0] != "web-4" || got[0][1] != "2024-01-01 00:00:58+00" {
		t.Errorf("silence alerts at 00:01:20: %v, want web-4 last reporting at 00:00:58", got)
	}
	if got := rows(t, ctx, c, feedAlert); len(got) != 0 {
		t.Errorf("feed alert at 00:01:20: %v, want none", got)
	}
	advance("2 minutes")
	if got := rows(t, ctx, c, hostAlerts); len(got) != 5 {
		t.Errorf("silence alerts at 00:03:20: %v, want all 5 hosts", got)
	}
	if got := rows(t, ctx, c, feedAlert); len(got) != 1 || got[0][0] != "2024-01-01 00:02:58+00" {
		t.Errorf("feed alert at 00:03:20: %v, want the last report at 00:02:58", got)
	}
}

// checkRackLoad checks rack_load (metrics enriched with hosts through a
// temporal join, then windowed) once every window has closed: the reports
// of each rack (web-4 of rack-b went silent after 30 reports), web-3's
// spike in rack-b only, and that moving a host afterwards changes nothing
// already emitted.
func checkRackLoad(t *testing.T, ctx context.Context, c *pgx.Conn) {
	t.Helper()
	perRack := "SELECT rack, count(*), sum(reports) FROM rack_load GROUP BY rack ORDER BY rack"
	want := [][]string{{"rack-a", "6", "180"}, {"rack-b", "6", "120"}, {"rack-c", "6", "90"}}
	got := rows(t, ctx, c, perRack)
	if len(got) != len(want) {
		t.Fatalf("rack_load per rack %v, want %v", got, want)
	}
	for i := range want {
		if strings.Join(got[i], " ") != strings.Join(want[i], " ") {
			t.Errorf("rack_load per rack %v, want %v", got, want)
			break
		}
	}
	hot := rows(t, ctx, c, "SELECT rack, window_start FROM rack_load WHERE max_cpu > 90")
	if len(hot) != 1 || hot[0][0] != "rack-b" || hot[0][1] != "2024-01-01 00:01:30+00" {
		t.Errorf("rack_load windows above 90%% cpu: %v, want rack-b's from 00:01:30", hot)
	}
	for _, q := range []string{"UPDATE hosts SET rack = 'rack-z' WHERE host = 'web-3'", "FLUSH"} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if after := rows(t, ctx, c, perRack); len(after) != len(got) || strings.Join(after[1], " ") != strings.Join(got[1], " ") {
		t.Errorf("rack_load after moving web-3: %v, want it unchanged (%v)", after, got)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func itoa(n int) string { return strconv.Itoa(n) }

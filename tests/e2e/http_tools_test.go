package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestPrometheusScrapes runs a real Prometheus scraping streamsqld on
// loopback and asks its HTTP API for streamsql_operator_rows_out_total:
// the series must move when rows are written. promtool checks the
// exposition.
func TestPrometheusScrapes(t *testing.T) {
	prom := needTool(t, "prometheus", "prometheus")
	promtool := needTool(t, "promtool", "prometheus")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, base := startHTTPServer(t)
	c := s.connect(ctx)
	execAll(t, ctx, c,
		"CREATE TABLE t (k int, v int)",
		"CREATE MATERIALIZED VIEW v AS SELECT k, sum(v) AS s FROM t GROUP BY k",
		"INSERT INTO t SELECT g % 7, g FROM generate_series(1, 100) g",
		"FLUSH")

	// promtool lints the exposition format.
	_, body := httpGet(t, base+"/metrics", "", "")
	check := exec.CommandContext(ctx, promtool, "check", "metrics")
	check.Stdin = strings.NewReader(body)
	if out, err := check.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}

	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	promAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	dir := t.TempDir()
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: streamsqld\n    static_configs:\n      - targets: ['%s']\n",
		strings.TrimPrefix(base, "http://"))
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(prom, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+promAddr)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("prometheus output:\n%s", out.String())
		}
	})
	query := func() (float64, bool) {
		q := url.QueryEscape(`sum(streamsql_operator_rows_out_total{view="v",operator="Scan"})`)
		code, js := httpGetQuiet("http://" + promAddr + "/api/v1/query?query=" + q)
		if code != 200 {
			return 0, false
		}
		var r struct {
			Data struct {
				Result []struct {
					Value [2]any `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		if json.Unmarshal([]byte(js), &r) != nil || len(r.Data.Result) == 0 {
			return 0, false
		}
		sv, _ := r.Data.Result[0].Value[1].(string)
		f, err := strconv.ParseFloat(sv, 64)
		return f, err == nil
	}
	waitFor := func(what string, ok func(float64) bool) float64 {
		for {
			if v, got := query(); got && ok(v) {
				return v
			}
			select {
			case <-ctx.Done():
				t.Fatalf("Prometheus never saw %s", what)
			case <-time.After(200 * time.Millisecond): // polling Prometheus, which scrapes every second
			}
		}
	}
	first := waitFor("the scan's first 100 rows", func(v float64) bool { return v == 100 })
	execAll(t, ctx, c, "INSERT INTO t SELECT g % 7, g FROM generate_series(1, 250) g", "FLUSH")
	waitFor("the series move by 250", func(v float64) bool { return v == first+250 })
}

// httpGetQuiet is httpGet that reports failures as a status 0.
func httpGetQuiet(u string) (int, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "curl", "-s", "-w", "\n%{http_code}", u).Output()
	if err != nil {
		return 0, ""
	}
	s := strings.TrimRight(string(out), "\n")
	i := strings.LastIndexByte(s, '\n')
	code, _ := strconv.Atoi(s[i+1:])
	return code, s[:max(i, 0)]
}

// TestDashboardChromium loads the dashboard in headless Chromium twice,
// with rows written in between: the page lists the view and its
// operators, and its numbers change.
func TestDashboardChromium(t *testing.T) {
	chromium := needTool(t, "chromium", "chromium")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, base := startHTTPServer(t)
	c := s.connect(ctx)
	execAll(t, ctx, c,
		"CREATE TABLE t (k int, v int)",
		"CREATE MATERIALIZED VIEW dash_v AS SELECT k, count(*) AS n FROM t WHERE v > 0 GROUP BY k",
		"INSERT INTO t SELECT g % 7, g FROM generate_series(1, 1234) g",
		"FLUSH")
	load := func(page string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir="+t.TempDir(),
			"--virtual-time-budget=5000", "--dump-dom", base+page)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("chromium %s: %v", page, err)
		}
		return string(out)
	}
	dom := load("/")
	if !strings.Contains(dom, `href="#/view/dash_v"`) || !strings.Contains(dom, "running") {
		t.Fatalf("the overview does not list dash_v:\n%s", dom)
	}
	dom1 := load("/#/view/dash_v")
	for _, want := range []string{`<svg class="graph"`, `>Scan <tspan`, `>Filter <tspan`, `>HashAgg <tspan`, "StreamFilter: (t.v &gt; 0)", "1234", ">busy "} {
		if !strings.Contains(dom1, want) {
			t.Errorf("the view's page has no %q:\n%s", want, dom1)
		}
	}
	// The HashAgg's and the view's boxes show their state size; the
	// Filter's shows none.
	if n := len(regexp.MustCompile(`· state \d+(\.\d)? (B|kB)<`).FindAllString(dom1, -1)); n < 2 || !strings.Contains(dom1, "· state –<") {
		t.Errorf("the view's page shows %d state sizes:\n%s", n, dom1)
	}
	execAll(t, ctx, c, "INSERT INTO t SELECT g % 7, g FROM generate_series(1, 4321) g", "FLUSH")
	dom2 := load("/#/view/dash_v")
	if !strings.Contains(dom2, "5555") && !strings.Contains(dom2, "5.6k") {
		t.Errorf("the second load does not show the 5555 rows read:\n%s", dom2)
	}
	if dom1 == dom2 {
		t.Error("the page did not change between two loads")
	}
	// A backfill in progress shows as a progress bar on the overview.
	execAll(t, ctx, c, "INSERT INTO t SELECT g % 100000, g FROM generate_series(1, 1500000) g")
	created := make(chan error, 1)
	go func() {
		c2 := s.connect(ctx)
		defer c2.Close(ctx)
		_, err := c2.Exec(ctx, "CREATE MATERIALIZED VIEW dash_big AS SELECT k, count(DISTINCT v) AS n, max(v) AS m FROM t GROUP BY k")
		created <- err
	}()
	jobsRunning := func() bool {
		var n int
		if err := c.QueryRow(ctx, "SELECT count(*) FROM streamsql_jobs WHERE name = 'dash_big'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n > 0
	}
	for !jobsRunning() {
		select {
		case err := <-created:
			t.Fatalf("CREATE MATERIALIZED VIEW dash_big ended (%v) before streamsql_jobs listed it", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	domJobs := load("/")
	if still := jobsRunning(); still && (!strings.Contains(domJobs, "Running jobs") || !strings.Contains(domJobs, `<div class="bar"><div style="width:`)) {
		t.Errorf("the overview shows no progress bar for the running backfill:\n%s", domJobs)
	} else if !still {
		t.Logf("the backfill ended before the page loaded: its bar was not checked")
	}
	shotJobs := filepath.Join(t.TempDir(), "dashboard-jobs.png")
	if still := jobsRunning(); still {
		cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir="+t.TempDir(),
			"--window-size=1300,500", "--virtual-time-budget=3000", "--screenshot="+shotJobs, base+"/")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("chromium --screenshot: %v\n%s", err, out)
		}
		if dir := os.Getenv("STREAMSQL_SCREENSHOTS"); dir != "" { // docs/images
			if b, err := os.ReadFile(shotJobs); err == nil {
				_ = os.WriteFile(filepath.Join(dir, "dashboard-jobs.png"), b, 0o644)
			}
		}
	}
	if err := <-created; err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(t.TempDir(), "dashboard.png")
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir="+t.TempDir(),
		"--window-size=1300,800", "--virtual-time-budget=5000", "--screenshot="+shot, base+"/")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium --screenshot: %v\n%s", err, out)
	}
	if st, err := os.Stat(shot); err != nil || st.Size() < 5000 {
		t.Errorf("screenshot %v, %v", st, err)
	}
}

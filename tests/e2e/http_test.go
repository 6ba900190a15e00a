package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// startHTTPServer starts streamsqld with its HTTP endpoints on a free
// loopback port and returns the server and the endpoints' base URL.
func startHTTPServer(t *testing.T, flags ...string) (*server, string) {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	s := startServer(t, t.TempDir(), append([]string{"--http", addr}, flags...)...)
	return s, "http://" + addr
}

// httpGet fetches url (with basic credentials when user is set).
func httpGet(t *testing.T, url, user, password string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	c := &http.Client{Timeout: 20 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, string(b)
}

// metricValues returns the values of the series of metric name whose
// labels contain every one of with (`view="v"`), keyed by their labels.
func metricValues(t *testing.T, body, name string, with ...string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") {
			continue
		}
		labels, val, ok := strings.Cut(strings.TrimPrefix(line, name), " ")
		if !ok {
			continue
		}
		match := true
		for _, w := range with {
			match = match && strings.Contains(labels, w)
		}
		if !match {
			continue
		}
		f, err := strconv.ParseFloat(val, 64)
		if err != nil {
			t.Fatalf("bad sample %q: %v", line, err)
		}
		out[labels] = f
	}
	return out
}

// TestHTTPMetricsMove scrapes /metrics twice around more input and sees
// the operators' row counters move, by exactly the rows written.
func TestHTTPMetricsMove(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, base := startHTTPServer(t)
	c := s.connect(ctx)
	execAll(t, ctx, c,
		"CREATE TABLE t (k int, v int)",
		"CREATE MATERIALIZED VIEW v AS SELECT k, count(*) AS n FROM t WHERE v > 0 GROUP BY k",
		"INSERT INTO t SELECT g % 10, g FROM generate_series(1, 1000) g",
		"FLUSH")
	code, body := httpGet(t, base+"/metrics", "", "")
	if code != 200 {
		t.Fatalf("/metrics: %d %s", code, body)
	}
	scan1 := metricValues(t, body, "streamsql_operator_rows_out_total", `view="v"`, `operator="Scan"`)
	out1 := metricValues(t, body, "streamsql_operator_rows_out_total", `view="v"`)
	if len(scan1) != 1 || len(out1) < 3 {
		t.Fatalf("operators of v: %v\n%s", out1, body)
	}
	for _, v := range scan1 {
		if v != 1000 {
			t.Errorf("the scan counted %v rows, 1000 were written", v)
		}
	}
	execAll(t, ctx, c, "INSERT INTO t SELECT g % 10, -g FROM generate_series(1, 500) g", "FLUSH")
	_, body = httpGet(t, base+"/metrics", "", "")
	scan2 := metricValues(t, body, "streamsql_operator_rows_out_total", `view="v"`, `operator="Scan"`)
	for k, v := range scan2 {
		if v != scan1[k]+500 {
			t.Errorf("the scan counted %v rows after 500 more, %v before", v, scan1[k])
		}
	}
	// The same numbers in SQL.
	var sqlRows int64
	var bp int64
	if err := c.QueryRow(ctx, "SELECT rows_out, backpressure_us FROM streamsql_operators WHERE view_name = 'v' AND operator = 'Scan'").
		Scan(&sqlRows, &bp); err != nil || sqlRows != 1500 || bp < 0 {
		t.Errorf("streamsql_operators: scan rows_out %d, backpressure %v, %v", sqlRows, bp, err)
	}
	var ops int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM streamsql_operators WHERE view_name = 'v'").Scan(&ops); err != nil || ops != len(out1) {
		t.Errorf("streamsql_operators has %d operators of v, /metrics %d (%v)", ops, len(out1), err)
	}
	filt := metricValues(t, body, "streamsql_operator_rows_out_total", `view="v"`, `operator="Filter"`)
	for _, v := range filt {
		if v != 1000 { // the 500 new rows have v <= 0
			t.Errorf("the filter passed %v rows, want 1000", v)
		}
	}
	if v := metricValues(t, body, "streamsql_view_rows", `view="v"`); len(v) != 1 || v[`{view="v"}`] != 10 {
		t.Errorf("streamsql_view_rows = %v", v)
	}
	if h := metricValues(t, body, "streamsql_barrier_latency_seconds_count", `view="v"`); len(h) != 1 || h[`{view="v"}`] == 0 {
		t.Errorf("barrier latency histogram: %v", h)
	}
	for _, want := range []string{"go_goroutines ", "process_resident_memory_bytes ", "streamsql_sessions "} {
		if !strings.Contains(body, want) {
			t.Errorf("no %s in /metrics", want)
		}
	}
	// The JSON API and the dashboard.
	code, js := httpGet(t, base+"/api/v1/views/v", "", "")
	if code != 200 || !strings.Contains(js, `"StreamHashAgg`) || !strings.Contains(js, `"status": "running"`) {
		t.Errorf("/api/v1/views/v: %d %s", code, js)
	}
	if code, page := httpGet(t, base+"/", "", ""); code != 200 || !strings.Contains(page, "<script") {
		t.Errorf("/: %d %s", code, page)
	}
	if code, _ := httpGet(t, base+"/debug/pprof/heap?debug=1", "", ""); code != 200 {
		t.Errorf("pprof heap: %d", code)
	}
}

// TestHTTPAuth: under --auth password every endpoint asks for a role's
// password.
func TestHTTPAuth(t *testing.T) {
	_, base := startHTTPServer(t, "--password", "streamsql")
	for _, p := range []string{"/metrics", "/api/v1/overview", "/", "/debug/pprof/"} {
		if code, _ := httpGet(t, base+p, "", ""); code != 401 {
			t.Errorf("%s without credentials: %d", p, code)
		}
		if code, _ := httpGet(t, base+p, "streamsql", "wrong"); code != 401 {
			t.Errorf("%s with a wrong password: %d", p, code)
		}
		if code, body := httpGet(t, base+p, "streamsql", "streamsql"); code != 200 {
			t.Errorf("%s with the password: %d %s", p, code, body)
		}
	}
}

// TestHTTPRefusesTrustOnOpenAddress: trust authentication with the HTTP
// endpoints on a non-loopback address does not start.
func TestHTTPRefusesTrustOnOpenAddress(t *testing.T) {
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "--listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--http", fmt.Sprintf("0.0.0.0:%d", port))
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--http 0.0.0.0:") || !strings.Contains(string(out), "not a loopback address") {
		t.Fatalf("streamsqld started (%v):\n%s", err, out)
	}
}

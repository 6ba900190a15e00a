package web

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/exec/dataflow"
	"github.com/streamsql/streamsql/types"
)

// fakeEngine serves a fixed overview whose operator counter moves.
type fakeEngine struct {
	mu   sync.Mutex
	rows int64
	obs  engine.Observer
}

func (f *fakeEngine) SetObserver(o engine.Observer) { f.obs = o }

func (f *fakeEngine) Observe() engine.Overview {
	f.mu.Lock()
	f.rows += 100
	rows := f.rows
	f.mu.Unlock()
	now := time.Now()
	epoch := types.TimestampValue(now.Add(-2 * time.Second).UnixMicro())
	return engine.Overview{Time: now, Sessions: 3,
		Activity: []catalog.ActivityRow{{PID: 1001, User: "alice", ApplicationName: "psql", State: "active", Query: "SELECT secret"}},
		Views: []engine.ViewInfo{{OID: 1, Schema: "public", Name: "v", Definition: "SELECT ...",
			Status: catalog.StreamStatus{Status: "running", Epoch: epoch, RowsIn: rows, RowsOut: 7, ViewRows: 5,
				Watermark: types.TimestampValue(1_700_000_000_000_000), HasWatermark: true},
			Subscribers:   2,
			Subscriptions: []dataflow.SubLag{{ID: 7, RowsSent: rows, RowsRead: 10, LagRows: rows - 10}},
			Operators: []dataflow.OperatorStats{
				{ID: 0, Name: "Scan", Explain: "StreamScan: source bid", Relation: "bid", RelationKind: "source", RowsIn: rows, RowsOut: rows, Bytes: 8 * rows},
				{ID: 1, Name: "Filter", Inputs: []int{0}, RowsIn: rows, RowsOut: rows / 2, Backpressure: 1500 * time.Millisecond,
					Busy: 250 * time.Millisecond},
				{ID: 2, Name: "HashAgg", Inputs: []int{1}, RowsIn: rows / 2, RowsOut: 7, StateBytes: 4096 + rows, HasState: true},
				{ID: -1, Name: "Materialize", Inputs: []int{2}, RowsIn: 7, RowsOut: 7},
			}},
			{OID: 2, Schema: "public", Name: "k", Sink: true, Connector: "kafka",
				Status: catalog.StreamStatus{Status: "running"}, SinkStatus: catalog.SinkStatus{Status: "retrying: broker down", Rows: 42, Errors: 1}},
		},
		Sources: []engine.SourceInfo{{OID: 3, Schema: "public", Name: "bid", Connector: "kafka"}},
		Partitions: []catalog.SourceStatus{{Source: "bid", View: "v", Partition: 0, Offset: 10, HighWatermark: 15, Lag: 5, Rows: 10, Status: "running"},
			{Source: "bid", View: "v", Partition: 1, Offset: -1, HighWatermark: -1, Lag: -1, Status: "starting"}},
		HasCheckpoints: true, Checkpoint: catalog.CheckpointStatus{Bytes: 1234, Count: 9, Committed: epoch},
		Checkpoints: []engine.CheckpointEvent{{Committed: now, Duration: time.Second, Bytes: 1234, Views: 2}},
		Jobs:        []engine.JobInfo{{Name: "w", Kind: "materialized view", Job: "backfill", RowsDone: rows, RowsTotal: 1000, Started: now}},
	}
}

func get(t *testing.T, h http.Handler, path string, setup func(*http.Request)) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest("GET", path, nil)
	if setup != nil {
		setup(r)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestMetrics(t *testing.T) {
	f := &fakeEngine{}
	s := New(f, Options{})
	f.obs.EpochDone("v", 20*time.Millisecond)
	f.obs.CheckpointDone(engine.CheckpointEvent{Duration: time.Second})
	f.obs.CheckpointDone(engine.CheckpointEvent{Err: "disk full"})
	f.obs.(engine.SinkObserver).SinkCommitted("k", 3*time.Millisecond)
	w := get(t, s.Handler(), "/metrics", nil)
	if w.Code != 200 {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	body := w.Body.String()
	for _, want := range []string{
		`streamsql_operator_rows_out_total{instance="0",operator="Filter",operator_id="1",view="v"} 50`,
		`streamsql_operator_rows_in_total{instance="0",operator="Filter",operator_id="1",view="v"} 100`,
		`streamsql_operator_backpressure_seconds_total{instance="0",operator="Filter",operator_id="1",view="v"} 1.5`,
		`streamsql_operator_busy_seconds_total{instance="0",operator="Filter",operator_id="1",view="v"} 0.25`,
		`streamsql_operator_state_bytes{instance="0",operator="HashAgg",operator_id="2",view="v"} 4196`,
		`streamsql_source_rows_total{source="bid",view="v"} 100`,
		`streamsql_source_bytes_total{source="bid",view="v"} 800`,
		`streamsql_source_lag{partition="0",source="bid",view="v"} 5`,
		`streamsql_view_status{status="running",view="v"} 1`,
		`streamsql_view_status{status="retrying",view="k"} 1`,
		`streamsql_view_watermark_seconds{view="v"} 1.7e+09`,
		`streamsql_sink_rows_total{sink="k"} 42`,
		`streamsql_subscriptions{view="v"} 2`,
		`streamsql_subscription_lag_rows{subscription="7",view="v"} 90`,
		`streamsql_backfill_rows_done{view="w"} 100`,
		`streamsql_backfill_rows_total{view="w"} 1000`,
		`streamsql_sink_commit_duration_seconds_count{sink="k"} 1`,
		`streamsql_sessions 3`,
		`streamsql_checkpoint_bytes 1234`,
		`streamsql_checkpoint_failures_total 1`,
		`streamsql_checkpoint_duration_seconds_count 1`,
		`streamsql_barrier_latency_seconds_count{view="v"} 1`,
		`go_goroutines `,
		`process_cpu_seconds_total `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q in\n%s", want, body)
		}
	}
	if strings.Contains(body, `streamsql_operator_state_bytes{instance="0",operator="Filter"`) {
		t.Error("a stateless operator has a state size")
	}
	if strings.Contains(body, `streamsql_source_lag{partition="1"`) {
		t.Error("a partition of unknown lag has a lag")
	}
	// freshness is the age of the last epoch: about 2s.
	if !strings.Contains(body, `streamsql_view_freshness_seconds{view="v"} 2`) {
		t.Errorf("freshness not about 2s:\n%s", body)
	}
	// The registry is consistent (no duplicate or ill-formed series).
	if n, err := testutil.GatherAndCount(s.reg); err != nil || n == 0 {
		t.Fatalf("gather: %d, %v", n, err)
	}
	// Another scrape (the third Observe, after GatherAndCount's) reads the counters again.
	if body2 := get(t, s.Handler(), "/metrics", nil).Body.String(); !strings.Contains(body2,
		`streamsql_operator_rows_out_total{instance="0",operator="Filter",operator_id="1",view="v"} 150`) ||
		!strings.Contains(body2, `streamsql_subscription_lag_rows{subscription="7",view="v"} 290`) {
		t.Errorf("second scrape did not move:\n%s", body2)
	}
}

func TestAPI(t *testing.T) {
	s := New(&fakeEngine{}, Options{})
	var ov apiOverview
	w := get(t, s.Handler(), "/api/v1/overview", nil)
	if err := json.Unmarshal(w.Body.Bytes(), &ov); err != nil {
		t.Fatalf("%v: %s", err, w.Body)
	}
	if len(ov.Views) != 1 || len(ov.Sinks) != 1 || len(ov.Sources) != 1 || ov.Checkpoint == nil || len(ov.Checkpoints) != 1 {
		t.Fatalf("overview = %+v", ov)
	}
	v := ov.Views[0]
	if v.Name != "v" || len(v.Operators) != 4 || v.Operators[1].Backpressure != 1.5 || v.Freshness == nil || *v.Freshness < 1.5 {
		t.Errorf("view = %+v", v)
	}
	if o := v.Operators; o[1].Busy != 0.25 || o[1].StateBytes != nil || o[2].StateBytes == nil || *o[2].StateBytes != 4196 {
		t.Errorf("busy and state of operators = %+v", o)
	}
	if k := ov.Sinks[0]; k.Status != "retrying: broker down" || k.SinkRows != 42 {
		t.Errorf("sink = %+v", k)
	}
	src := ov.Sources[0]
	if len(src.Partitions) != 2 || *src.Partitions[0].Lag != 5 || src.Partitions[1].Lag != nil || len(src.Readers) != 1 || src.Readers[0].Rows != 100 {
		t.Errorf("source = %+v", src)
	}
	if w := get(t, s.Handler(), "/api/v1/views/v", nil); w.Code != 200 || !strings.Contains(w.Body.String(), `"StreamScan: source bid"`) {
		t.Errorf("views/v: %d %s", w.Code, w.Body)
	}
	if len(ov.Activity) != 1 || ov.Activity[0].PID != 1001 || ov.Activity[0].State != "active" {
		t.Errorf("activity = %+v", ov.Activity)
	}
	if strings.Contains(w.Body.String(), "SELECT secret") {
		t.Error("the API shows a session's query text")
	}
	if w := get(t, s.Handler(), "/api/v1/views/nope", nil); w.Code != 404 {
		t.Errorf("views/nope: %d", w.Code)
	}
	for _, p := range []string{"/api/v1/views", "/api/v1/sources", "/api/v1/sinks", "/api/v1/checkpoints", "/api/v1/sessions"} {
		if w := get(t, s.Handler(), p, nil); w.Code != 200 || w.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %s", p, w.Code, w.Body)
		}
	}
}

func TestDashboardAndPprof(t *testing.T) {
	s := New(&fakeEngine{}, Options{})
	w := get(t, s.Handler(), "/", nil)
	if w.Code != 200 || !strings.Contains(w.Body.String(), "<title>streamsqld") {
		t.Errorf("/: %d %s", w.Code, w.Body)
	}
	for _, p := range []string{"/app.js", "/style.css"} {
		if w := get(t, s.Handler(), p, nil); w.Code != 200 {
			t.Errorf("%s: %d", p, w.Code)
		}
	}
	if w := get(t, s.Handler(), "/debug/pprof/goroutine?debug=1", nil); w.Code != 200 || !strings.Contains(w.Body.String(), "goroutine profile") {
		t.Errorf("pprof: %d", w.Code)
	}
	r := httptest.NewRequest("POST", "/", strings.NewReader("x"))
	pw := httptest.NewRecorder()
	s.Handler().ServeHTTP(pw, r)
	if pw.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %d", pw.Code)
	}
}

func TestBasicAuth(t *testing.T) {
	var checks int
	s := New(&fakeEngine{}, Options{Authenticate: func(u, p string) bool {
		checks++
		return u == "alice" && p == "pw"
	}})
	h := s.Handler()
	for _, path := range []string{"/metrics", "/api/v1/overview", "/", "/debug/pprof/"} {
		if w := get(t, h, path, nil); w.Code != 401 || !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Basic") {
			t.Errorf("%s without credentials: %d", path, w.Code)
		}
		if w := get(t, h, path, func(r *http.Request) { r.SetBasicAuth("alice", "bad") }); w.Code != 401 {
			t.Errorf("%s with a wrong password: %d", path, w.Code)
		}
		w := get(t, h, path, func(r *http.Request) { r.SetBasicAuth("alice", "pw") })
		if w.Code != 200 {
			b, _ := io.ReadAll(w.Body)
			t.Errorf("%s with the password: %d %s", path, w.Code, b)
		}
	}
	if checks != 5 { // 4 wrong ones, then the good one once (remembered)
		t.Errorf("Authenticate ran %d times", checks)
	}
}

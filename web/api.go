package web

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/types"
)

// The JSON API under /api/v1/ (docs/observability.md). Times are RFC 3339
// strings (null: none), durations seconds, counters totals since the view
// started: a client computes rates from two reads (the dashboard does).

type apiOverview struct {
	Time     time.Time `json:"time"`
	Sessions int       `json:"sessions"`
	// Activity lists the sessions without their query text (which
	// pg_stat_activity shows to whom may see it).
	Activity    []apiSession    `json:"activity"`
	Views       []apiView       `json:"views"`
	Sources     []apiSource     `json:"sources"`
	Sinks       []apiView       `json:"sinks"`
	Checkpoint  *apiCheckpoint  `json:"checkpoint"` // null: checkpoints are off
	Checkpoints []apiCheckpoint `json:"checkpoints"`
	// Jobs are the running backfills with their progress.
	Jobs []apiJob `json:"jobs"`
}

type apiJob struct {
	Name      string   `json:"name"`
	Kind      string   `json:"kind"`
	Job       string   `json:"job"`
	RowsDone  int64    `json:"rows_done"`
	RowsTotal int64    `json:"rows_total"`
	Progress  float64  `json:"progress"`
	Elapsed   float64  `json:"elapsed_seconds"`
	Remaining *float64 `json:"remaining_seconds"` // null: no estimate yet
}

type apiSubscription struct {
	ID        int64 `json:"id"`
	LagRows   int64 `json:"lag_rows"`
	LagEpochs int64 `json:"lag_epochs"`
	RowsRead  int64 `json:"rows_read"`
}

type apiSession struct {
	PID             int32      `json:"pid"`
	User            string     `json:"user"`
	ApplicationName string     `json:"application_name"`
	State           string     `json:"state"`
	BackendStart    *time.Time `json:"backend_start"`
	StateChange     *time.Time `json:"state_change"`
}

type apiView struct {
	Name        string     `json:"name"`
	Schema      string     `json:"schema"`
	Kind        string     `json:"kind"` // "materialized view" or "sink"
	Status      string     `json:"status"`
	Recovery    string     `json:"recovery,omitempty"`
	LastError   string     `json:"last_error,omitempty"`
	Definition  string     `json:"definition"`
	Connector   string     `json:"connector,omitempty"`
	Epoch       *time.Time `json:"epoch_time"`
	Freshness   *float64   `json:"freshness_seconds"`
	Watermark   *time.Time `json:"watermark"`
	RowsIn      int64      `json:"rows_in"`
	RowsOut     int64      `json:"rows_out"`
	ViewRows    int64      `json:"view_rows"`
	RowErrors   int64      `json:"row_errors"`
	LateRows    int64      `json:"late_rows"`
	Subscribers int        `json:"subscribers"`
	// Subscriptions are its SUBSCRIBE clients with their lag.
	Subscriptions []apiSubscription `json:"subscriptions"`
	SinkRows      int64             `json:"sink_rows"`
	SinkErrors    int64             `json:"sink_errors"`
	OpenTxn       float64           `json:"open_transaction_seconds"`
	Operators     []apiOperator     `json:"operators"`
}

type apiOperator struct {
	ID           int        `json:"id"` // -1: the view (or sink) itself
	Name         string     `json:"name"`
	Explain      string     `json:"explain"`
	Inputs       []int      `json:"inputs"`
	Instance     int        `json:"instance"`
	RowsIn       int64      `json:"rows_in"`
	RowsOut      int64      `json:"rows_out"`
	Chunks       int64      `json:"chunks"`
	Bytes        int64      `json:"bytes,omitempty"`
	Backpressure float64    `json:"backpressure_seconds"`
	Busy         float64    `json:"busy_seconds"`
	StateBytes   *int64     `json:"state_bytes"` // null: keeps no state
	Watermark    *time.Time `json:"watermark"`
}

type apiSource struct {
	Name       string         `json:"name"`
	Schema     string         `json:"schema"`
	Connector  string         `json:"connector"`
	Partitions []apiPartition `json:"partitions"`
	// Readers are the views reading it, with the rows each read.
	Readers []apiReader `json:"readers"`
}

type apiReader struct {
	View  string `json:"view"`
	Rows  int64  `json:"rows"`
	Bytes int64  `json:"bytes"`
}

type apiPartition struct {
	View          string     `json:"view"`
	Partition     int32      `json:"partition"`
	Offset        *int64     `json:"offset"`
	HighWatermark *int64     `json:"high_watermark"`
	Lag           *int64     `json:"lag"`
	Watermark     *time.Time `json:"watermark"`
	Idle          bool       `json:"idle"`
	Rows          int64      `json:"rows"`
	BadRows       int64      `json:"bad_rows"`
	Status        string     `json:"status"`
	LastError     string     `json:"last_error,omitempty"`
}

type apiCheckpoint struct {
	Epoch      *time.Time `json:"epoch_time"`
	Committed  *time.Time `json:"committed_at"`
	Duration   float64    `json:"duration_seconds"`
	Bytes      int64      `json:"bytes"`
	ChainBytes int64      `json:"chain_bytes"`
	Full       bool       `json:"full"`
	Views      int64      `json:"views"`
	Count      int64      `json:"count"`
	Failures   int64      `json:"failures"`
	Error      string     `json:"error,omitempty"`
}

func (s *Server) routeAPI() {
	s.mux.HandleFunc("GET /api/v1/overview", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, overviewJSON(s.eng.Observe()))
	})
	s.mux.HandleFunc("GET /api/v1/views", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, overviewJSON(s.eng.Observe()).Views)
	})
	s.mux.HandleFunc("GET /api/v1/views/{name}", func(w http.ResponseWriter, r *http.Request) {
		ov := overviewJSON(s.eng.Observe())
		for _, v := range append(ov.Views, ov.Sinks...) {
			if v.Name == r.PathValue("name") {
				writeJSON(w, v)
				return
			}
		}
		http.Error(w, "no materialized view or sink "+r.PathValue("name"), http.StatusNotFound)
	})
	s.mux.HandleFunc("GET /api/v1/sources", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, overviewJSON(s.eng.Observe()).Sources)
	})
	s.mux.HandleFunc("GET /api/v1/sinks", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, overviewJSON(s.eng.Observe()).Sinks)
	})
	s.mux.HandleFunc("GET /api/v1/sessions", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, overviewJSON(s.eng.Observe()).Activity)
	})
	s.mux.HandleFunc("GET /api/v1/jobs", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, overviewJSON(s.eng.Observe()).Jobs)
	})
	s.mux.HandleFunc("GET /api/v1/checkpoints", func(w http.ResponseWriter, r *http.Request) {
		ov := overviewJSON(s.eng.Observe())
		writeJSON(w, map[string]any{"last": ov.Checkpoint, "history": ov.Checkpoints})
	})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	_ = enc.Encode(v) // a client gone away: nothing to do
}

func tsPtr(v types.TimestampValue) *time.Time {
	if v == 0 {
		return nil
	}
	t := time.UnixMicro(int64(v)).UTC()
	return &t
}

func known(v int64) *int64 {
	if v < 0 {
		return nil
	}
	return &v
}

func overviewJSON(ov engine.Overview) apiOverview {
	out := apiOverview{Time: ov.Time.UTC(), Sessions: ov.Sessions, Views: []apiView{}, Sources: []apiSource{}, Sinks: []apiView{},
		Checkpoints: []apiCheckpoint{}, Jobs: []apiJob{}}
	for _, j := range ov.Jobs {
		a := apiJob{Name: j.Name, Kind: j.Kind, Job: j.Job, RowsDone: j.RowsDone, RowsTotal: j.RowsTotal, Progress: j.Progress(),
			Elapsed: j.Elapsed.Seconds()}
		if j.HasEstimate {
			r := j.Remaining.Seconds()
			a.Remaining = &r
		}
		out.Jobs = append(out.Jobs, a)
	}
	out.Activity = []apiSession{}
	for _, a := range ov.Activity {
		out.Activity = append(out.Activity, apiSession{PID: a.PID, User: a.User, ApplicationName: a.ApplicationName,
			State: a.State, BackendStart: tsPtr(a.BackendStart), StateChange: tsPtr(a.StateChange)})
	}
	readers := map[string][]apiReader{}
	for _, v := range ov.Views {
		st := v.Status
		a := apiView{Name: v.Name, Schema: v.Schema, Kind: "materialized view", Status: st.Status, Recovery: st.Recovery,
			LastError: st.LastError, Definition: v.Definition, Epoch: tsPtr(st.Epoch), RowsIn: st.RowsIn, RowsOut: st.RowsOut,
			ViewRows: st.ViewRows, RowErrors: st.RowErrors, LateRows: st.LateRows, Subscribers: v.Subscribers,
			Operators: []apiOperator{}, Subscriptions: []apiSubscription{}}
		for _, sl := range v.Subscriptions {
			a.Subscriptions = append(a.Subscriptions, apiSubscription{ID: sl.ID, LagRows: sl.LagRows, LagEpochs: sl.LagEpochs, RowsRead: sl.RowsRead})
		}
		if st.HasWatermark {
			a.Watermark = tsPtr(st.Watermark)
		}
		if a.Epoch != nil {
			f := ov.Time.Sub(*a.Epoch).Seconds()
			a.Freshness = &f
		}
		for _, op := range v.Operators {
			o := apiOperator{ID: op.ID, Name: op.Name, Explain: op.Explain, Inputs: op.Inputs, Instance: op.Instance,
				RowsIn: op.RowsIn, RowsOut: op.RowsOut, Chunks: op.Chunks, Bytes: op.Bytes, Backpressure: op.Backpressure.Seconds(),
				Busy: op.Busy.Seconds()}
			if op.HasState {
				sb := op.StateBytes
				o.StateBytes = &sb
			}
			if o.Inputs == nil {
				o.Inputs = []int{}
			}
			if op.HasWatermark {
				o.Watermark = tsPtr(types.TimestampValue(op.Watermark))
			}
			a.Operators = append(a.Operators, o)
			if op.RelationKind == "source" {
				readers[op.Relation] = append(readers[op.Relation], apiReader{View: v.Name, Rows: op.RowsOut, Bytes: op.Bytes})
			}
		}
		if v.Sink {
			a.Kind, a.Connector = "sink", v.Connector
			if st.Status != "failed" && st.Status != "recovering" {
				a.Status = v.SinkStatus.Status
			}
			if v.SinkStatus.LastError != "" {
				a.LastError = v.SinkStatus.LastError
			}
			a.SinkRows, a.SinkErrors, a.OpenTxn = v.SinkStatus.Rows, v.SinkStatus.Errors, float64(v.SinkStatus.OpenTxnMicros)/1e6
			out.Sinks = append(out.Sinks, a)
		} else {
			out.Views = append(out.Views, a)
		}
	}
	for _, src := range ov.Sources {
		a := apiSource{Name: src.Name, Schema: src.Schema, Connector: src.Connector, Partitions: []apiPartition{}, Readers: readers[src.Name]}
		if a.Readers == nil {
			a.Readers = []apiReader{}
		}
		for _, p := range ov.Partitions {
			if p.Source != src.Name {
				continue
			}
			ap := apiPartition{View: p.View, Partition: p.Partition, Offset: known(p.Offset), HighWatermark: known(p.HighWatermark),
				Lag: known(p.Lag), Idle: p.Idle, Rows: p.Rows, BadRows: p.BadRows, Status: p.Status, LastError: p.LastError}
			if p.HasWatermark {
				ap.Watermark = tsPtr(p.Watermark)
			}
			a.Partitions = append(a.Partitions, ap)
		}
		out.Sources = append(out.Sources, a)
	}
	if ov.HasCheckpoints {
		c := ov.Checkpoint
		out.Checkpoint = &apiCheckpoint{Epoch: tsPtr(c.Epoch), Committed: tsPtr(c.Committed), Duration: float64(c.DurationUS) / 1e6,
			Bytes: c.Bytes, ChainBytes: c.ChainBytes, Full: c.Full, Views: c.Views, Count: c.Count, Failures: c.Failures, Error: c.LastError}
	}
	for _, c := range ov.Checkpoints {
		a := apiCheckpoint{Duration: c.Duration.Seconds(), Bytes: c.Bytes, Full: c.Full, Views: int64(c.Views), Error: c.Err}
		if !c.Epoch.IsZero() {
			e := c.Epoch.UTC()
			a.Epoch = &e
		}
		t := c.Committed.UTC()
		a.Committed = &t
		out.Checkpoints = append(out.Checkpoints, a)
	}
	return out
}

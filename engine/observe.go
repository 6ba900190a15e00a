package engine

import (
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/dataflow"
	"github.com/streamsql/streamsql/types"
)

// Observation: what the HTTP endpoints (package web) show of the running
// engine. Observe reads the same counters as the streamsql_* system views,
// without taking any lock the dataflow waits on (the runtime's job table
// and a job's subscriber list are held for a moment, as by a query of
// streamsql_views). Events that a scrape cannot read back (each epoch's
// barrier latency, each checkpoint) go to the Observer installed with
// SetObserver, and checkpoints to a short history.

// Observer receives the engine's events as they happen. Its methods are
// called from the dataflow's goroutines: they must be quick and must not
// block.
type Observer interface {
	// EpochDone: a view (or sink) completed an epoch, latency after its
	// barrier was injected.
	EpochDone(view string, latency time.Duration)
	// CheckpointDone: a checkpoint committed (Err "") or failed.
	CheckpointDone(c CheckpointEvent)
}

// CheckpointEvent is one checkpoint, committed or failed.
type CheckpointEvent struct {
	Epoch     time.Time     // its epoch's time (the last committed one's when it failed)
	Committed time.Time     // when it committed or failed
	Duration  time.Duration // from its barrier to its commit
	Bytes     int64         // what it wrote
	Full      bool          // it holds every operator's whole state
	Views     int           // jobs it holds
	Err       string        // why it failed ("" committed)
}

// checkpointHistory is how many checkpoints Observe reports.
const checkpointHistory = 60

// observation is the engine's observer and checkpoint history. Safe for
// concurrent use.
type observation struct {
	obs atomic.Pointer[Observer]

	mu      sync.Mutex
	history []CheckpointEvent // oldest first, at most checkpointHistory
}

// SetObserver installs o (nil: none) to receive the engine's events.
func (e *Engine) SetObserver(o Observer) {
	if o == nil {
		e.observed.obs.Store(nil)
		return
	}
	e.observed.obs.Store(&o)
}

// onEpoch is dataflow.Config.OnEpoch.
func (e *Engine) onEpoch(view string, latency time.Duration) {
	if p := e.observed.obs.Load(); p != nil {
		(*p).EpochDone(view, latency)
	}
}

// SinkObserver is an Observer that also wants each sink commit's duration
// (called from the sink's goroutine: quick, never blocking).
type SinkObserver interface {
	SinkCommitted(sink string, d time.Duration)
}

// onSinkCommit is dataflow.Config.OnSinkCommit.
func (e *Engine) onSinkCommit(sink string, d time.Duration) {
	if p := e.observed.obs.Load(); p != nil {
		if so, ok := (*p).(SinkObserver); ok {
			so.SinkCommitted(sink, d)
		}
	}
}

// onCheckpoint is dataflow.Config.OnCheckpoint.
func (e *Engine) onCheckpoint(st dataflow.CheckpointStats, err error) {
	if c := e.cfg.Cluster; c != nil && err == nil {
		epoch := st.Epoch
		c.CheckpointTaken(epoch, func() { e.flow.SinksDurable(epoch) }) // cluster_run.go
	}
	ev := CheckpointEvent{Committed: time.Now(), Duration: st.Duration, Bytes: st.Bytes, Full: st.Full, Views: st.Jobs}
	if st.Epoch != 0 {
		ev.Epoch = dataflow.EpochTime(st.Epoch)
	}
	if err != nil {
		ev.Err, ev.Duration, ev.Bytes = err.Error(), 0, 0
	} else if st.Duration >= slowCheckpoint { // failures are logged by the runtime
		e.cfg.Logf("checkpoint of epoch %s was slow: %s from its barrier to its commit (%d bytes, %d views)",
			dataflow.EpochTime(st.Epoch).UTC().Format("15:04:05.000"), st.Duration.Round(time.Millisecond), st.Bytes, st.Jobs)
	}
	o := &e.observed
	o.mu.Lock()
	if len(o.history) == checkpointHistory {
		copy(o.history, o.history[1:])
		o.history = o.history[:checkpointHistory-1]
	}
	o.history = append(o.history, ev)
	o.mu.Unlock()
	if p := o.obs.Load(); p != nil {
		(*p).CheckpointDone(ev)
	}
}

// Overview is the engine's state as Observe read it.
type Overview struct {
	Time  time.Time
	Views []ViewInfo // materialized views and sinks, by OID
	// Sources are the source relations, by OID.
	Sources []SourceInfo
	// Partitions are the partitions the running source readers report
	// (streamsql_sources).
	Partitions []catalog.SourceStatus
	// Checkpoint is the last checkpoint's figures (HasCheckpoints false:
	// checkpoints are off); Checkpoints the recent ones, oldest first.
	Checkpoint     catalog.CheckpointStatus
	HasCheckpoints bool
	Checkpoints    []CheckpointEvent
	Sessions       int // open sessions
	// Jobs are the running backfills (jobs.go).
	Jobs []JobInfo
	// Activity lists them (pg_stat_activity's rows, by pid).
	Activity []catalog.ActivityRow
}

// ViewInfo is one materialized view or sink.
type ViewInfo struct {
	OID          uint32
	Schema, Name string
	Sink         bool   // a sink (SinkStatus set), not a materialized view
	Definition   string // its query
	Connector    string // a sink's connector
	Status       catalog.StreamStatus
	SinkStatus   catalog.SinkStatus
	// Operators are the running job's counters (nil when it does not run,
	// or the runtime does not count).
	Operators   []dataflow.OperatorStats
	Subscribers int
	// Subscriptions are its SUBSCRIBE clients with their lag.
	Subscriptions []dataflow.SubLag
}

// SourceInfo is one source relation.
type SourceInfo struct {
	OID          uint32
	Schema, Name string
	Connector    string
}

// Observe reads the engine's state for the HTTP endpoints. Safe for
// concurrent use; it never waits for the dataflow.
func (e *Engine) Observe() Overview {
	ov := Overview{Time: time.Now()}
	for _, r := range e.matViews() {
		v := ViewInfo{OID: r.OID, Schema: r.Schema, Name: r.Name, Sink: r.Kind == catalog.KindSink,
			Definition: r.ViewQuery, Connector: r.Connector}
		if v.Sink {
			v.SinkStatus, _ = e.sinkStatus(r.OID)
			if v.SinkStatus.Status == "" {
				v.SinkStatus.Status = "not started"
			}
		}
		var ok bool
		if v.Status, ok = e.viewStatus(r.OID); !ok {
			v.Status.Status = "not started"
		}
		if j := e.flow.Job(r.OID); j != nil {
			v.Operators = j.Operators()
			v.Subscribers = j.Subscribers()
			v.Subscriptions = j.SubscriptionLags()
		}
		ov.Views = append(ov.Views, v)
	}
	for _, r := range e.cat.Relations() {
		if r.Kind == catalog.KindSource {
			ov.Sources = append(ov.Sources, SourceInfo{OID: r.OID, Schema: r.Schema, Name: r.Name, Connector: r.Connector})
		}
	}
	sort.Slice(ov.Sources, func(i, j int) bool { return ov.Sources[i].OID < ov.Sources[j].OID })
	ov.Partitions = e.sourceStatus()
	ov.Checkpoint, ov.HasCheckpoints = e.checkpointStatus()
	e.observed.mu.Lock()
	ov.Checkpoints = append([]CheckpointEvent(nil), e.observed.history...)
	e.observed.mu.Unlock()
	ov.Activity = e.activityRows() // activity.go
	ov.Jobs = e.Jobs()
	ov.Sessions = len(ov.Activity)
	return ov
}

// operatorStatus lists the running views' operators (streamsql_operators).
func (e *Engine) operatorStatus() []catalog.OperatorStatus {
	var out []catalog.OperatorStatus
	for _, r := range e.matViews() {
		j := e.flow.Job(r.OID)
		if j == nil {
			continue
		}
		for _, op := range j.Operators() {
			ins := make([]string, len(op.Inputs))
			for i, id := range op.Inputs {
				ins[i] = strconv.Itoa(id)
			}
			out = append(out, catalog.OperatorStatus{View: r.Name, ID: int32(op.ID), Name: op.Name, Explain: op.Explain,
				Inputs: strings.Join(ins, ","), RowsIn: op.RowsIn, RowsOut: op.RowsOut, Batches: op.Chunks,
				BackpressUS: op.Backpressure.Microseconds(), Watermark: types.TimestampValue(op.Watermark), HasWM: op.HasWatermark,
				BusyUS: op.Busy.Microseconds(), StateBytes: op.StateBytes, HasState: op.HasState})
		}
	}
	return out
}

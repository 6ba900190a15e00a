package web

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/streamsql/streamsql/engine"
)

// The metrics; docs/observability.md lists them with their meaning.
var (
	opLabels = []string{"view", "operator", "operator_id", "instance"}

	descSourceRows  = prometheus.NewDesc("streamsql_source_rows_total", "Rows a view read from a source (its Scan's rows).", []string{"source", "view"}, nil)
	descSourceBytes = prometheus.NewDesc("streamsql_source_bytes_total", "Bytes of the Arrow batches a view read from a source.", []string{"source", "view"}, nil)
	descSourceLag   = prometheus.NewDesc("streamsql_source_lag", "Messages of a source partition not read yet (high watermark minus offset), where the connector knows it.", []string{"source", "view", "partition"}, nil)
	descSourceBad   = prometheus.NewDesc("streamsql_source_bad_rows_total", "Input records of a source partition that were skipped as bad.", []string{"source", "view", "partition"}, nil)

	descOpIn    = prometheus.NewDesc("streamsql_operator_rows_in_total", "Rows an operator received from its inputs.", opLabels, nil)
	descOpOut   = prometheus.NewDesc("streamsql_operator_rows_out_total", "Rows an operator sent on (for the view itself: its net changes).", opLabels, nil)
	descOpBP    = prometheus.NewDesc("streamsql_operator_backpressure_seconds_total", "Time an operator waited to send because its consumer's queue was full.", opLabels, nil)
	descOpBusy  = prometheus.NewDesc("streamsql_operator_busy_seconds_total", "Time an operator spent handling messages (neither waiting for input nor blocked on its output).", opLabels, nil)
	descOpState = prometheus.NewDesc("streamsql_operator_state_bytes", "Estimated bytes of a stateful operator's state, as of its last barrier.", opLabels, nil)

	descViewStatus    = prometheus.NewDesc("streamsql_view_status", "1 for the view's (or sink's) current status.", []string{"view", "status"}, nil)
	descViewRowsIn    = prometheus.NewDesc("streamsql_view_rows_in_total", "Rows the view's inputs delivered (backfills included).", []string{"view"}, nil)
	descViewRowsOut   = prometheus.NewDesc("streamsql_view_rows_out_total", "Rows the view emitted (its net changes), or passed to its sink.", []string{"view"}, nil)
	descViewRows      = prometheus.NewDesc("streamsql_view_rows", "Rows in the materialized view now.", []string{"view"}, nil)
	descViewWM        = prometheus.NewDesc("streamsql_view_watermark_seconds", "The view's watermark, in seconds since the Unix epoch.", []string{"view"}, nil)
	descViewFreshness = prometheus.NewDesc("streamsql_view_freshness_seconds", "Wall clock minus the time of the view's last completed epoch.", []string{"view"}, nil)
	descLate          = prometheus.NewDesc("streamsql_late_rows_total", "Rows dropped as late (their window's state was freed).", []string{"view"}, nil)
	descRowErrors     = prometheus.NewDesc("streamsql_row_errors_total", "Rows that failed at run time (made NULL or dropped).", []string{"view"}, nil)
	descSubs          = prometheus.NewDesc("streamsql_subscriptions", "SUBSCRIBE clients of the view.", []string{"view"}, nil)
	descSubLag        = prometheus.NewDesc("streamsql_subscription_lag_rows", "Changed rows the view handed a subscription that its client has not read yet.", []string{"view", "subscription"}, nil)
	descJobDone       = prometheus.NewDesc("streamsql_backfill_rows_done", "Rows a running backfill has sent into its view or sink.", []string{"view"}, nil)
	descJobTotal      = prometheus.NewDesc("streamsql_backfill_rows_total", "Rows a running backfill sends in all.", []string{"view"}, nil)

	descSinkRows   = prometheus.NewDesc("streamsql_sink_rows_total", "Rows a sink committed (visible downstream).", []string{"sink"}, nil)
	descSinkErrors = prometheus.NewDesc("streamsql_sink_errors_total", "Write or commit errors of a sink (retried).", []string{"sink"}, nil)
	descSinkOpen   = prometheus.NewDesc("streamsql_sink_open_transaction_seconds", "Age of the sink's open transaction (0: none).", []string{"sink"}, nil)

	descCkptBytes = prometheus.NewDesc("streamsql_checkpoint_bytes", "Bytes the last checkpoint wrote.", nil, nil)
	descCkptChain = prometheus.NewDesc("streamsql_checkpoint_chain_bytes", "Bytes a recovery from the last checkpoint reads.", nil, nil)
	descCkptCount = prometheus.NewDesc("streamsql_checkpoints_total", "Checkpoints committed since the start.", nil, nil)
	descCkptAge   = prometheus.NewDesc("streamsql_checkpoint_age_seconds", "Wall clock minus the commit time of the last checkpoint.", nil, nil)
	descSessions  = prometheus.NewDesc("streamsql_sessions", "Open client sessions.", nil, nil)
)

// engineCollector reads the engine's counters at each scrape.
type engineCollector struct{ s *Server }

// Describe implements prometheus.Collector.
func (c *engineCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descSourceRows, descSourceBytes, descSourceLag, descSourceBad, descOpIn, descOpOut, descOpBP, descOpBusy, descOpState,
		descViewStatus, descViewRowsIn, descViewRowsOut, descViewRows, descViewWM, descViewFreshness, descLate, descRowErrors, descSubs, descSubLag, descJobDone, descJobTotal,
		descSinkRows, descSinkErrors, descSinkOpen, descCkptBytes, descCkptChain, descCkptCount, descCkptAge, descSessions} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *engineCollector) Collect(ch chan<- prometheus.Metric) {
	ov := c.s.eng.Observe()
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, v := range ov.Views {
		name := v.Name
		status := v.Status.Status
		if v.Sink {
			status = v.SinkStatus.Status
			if v.Status.Status == "failed" || v.Status.Status == "recovering" {
				status = v.Status.Status
			}
		}
		gauge(descViewStatus, 1, name, statusClass(status))
		counter(descViewRowsIn, float64(v.Status.RowsIn), name)
		counter(descViewRowsOut, float64(v.Status.RowsOut), name)
		counter(descLate, float64(v.Status.LateRows), name)
		counter(descRowErrors, float64(v.Status.RowErrors), name)
		if !v.Sink {
			gauge(descViewRows, float64(v.Status.ViewRows), name)
			gauge(descSubs, float64(v.Subscribers), name)
			for _, sl := range v.Subscriptions {
				gauge(descSubLag, float64(sl.LagRows), name, strconv.FormatInt(sl.ID, 10))
			}
		}
		if v.Status.HasWatermark {
			gauge(descViewWM, float64(v.Status.Watermark)/1e6, name)
		}
		if v.Status.Epoch != 0 {
			gauge(descViewFreshness, ov.Time.Sub(time.UnixMicro(int64(v.Status.Epoch))).Seconds(), name)
		}
		if v.Sink {
			counter(descSinkRows, float64(v.SinkStatus.Rows), name)
			counter(descSinkErrors, float64(v.SinkStatus.Errors), name)
			gauge(descSinkOpen, float64(v.SinkStatus.OpenTxnMicros)/1e6, name)
		}
		for _, op := range v.Operators {
			ls := []string{name, op.Name, strconv.Itoa(op.ID), strconv.Itoa(op.Instance)}
			counter(descOpIn, float64(op.RowsIn), ls...)
			counter(descOpOut, float64(op.RowsOut), ls...)
			counter(descOpBP, op.Backpressure.Seconds(), ls...)
			counter(descOpBusy, op.Busy.Seconds(), ls...)
			if op.HasState {
				gauge(descOpState, float64(op.StateBytes), ls...)
			}
			if op.RelationKind == "source" {
				counter(descSourceRows, float64(op.RowsOut), op.Relation, name)
				counter(descSourceBytes, float64(op.Bytes), op.Relation, name)
			}
		}
	}
	for _, p := range ov.Partitions {
		part := strconv.Itoa(int(p.Partition))
		if p.Lag >= 0 {
			gauge(descSourceLag, float64(p.Lag), p.Source, p.View, part)
		}
		counter(descSourceBad, float64(p.BadRows), p.Source, p.View, part)
	}
	if ov.HasCheckpoints {
		gauge(descCkptBytes, float64(ov.Checkpoint.Bytes))
		gauge(descCkptChain, float64(ov.Checkpoint.ChainBytes))
		counter(descCkptCount, float64(ov.Checkpoint.Count))
		if ov.Checkpoint.Committed != 0 {
			gauge(descCkptAge, ov.Time.Sub(time.UnixMicro(int64(ov.Checkpoint.Committed))).Seconds())
		}
	}
	gauge(descSessions, float64(ov.Sessions))
	for _, j := range ov.Jobs {
		gauge(descJobDone, float64(j.RowsDone), j.Name)
		gauge(descJobTotal, float64(j.RowsTotal), j.Name)
	}
}

// statusClass folds statuses that carry details ("retrying: ...") to
// their first word, so that the status label has few values.
func statusClass(s string) string {
	for i, r := range s {
		if r == ':' || r == ' ' {
			return s[:i]
		}
	}
	return s
}

// eventMetrics are the histograms and counters fed by engine events.
type eventMetrics struct {
	barrier  *prometheus.HistogramVec
	ckptDur  prometheus.Histogram
	ckptFail prometheus.Counter
	sinkDur  *prometheus.HistogramVec
}

func newEventMetrics() *eventMetrics {
	return &eventMetrics{
		barrier: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "streamsql_barrier_latency_seconds",
			Help:    "Time from an epoch's barrier injection until the view (or sink) completed the epoch.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 12)}, []string{"view"}),
		ckptDur: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "streamsql_checkpoint_duration_seconds",
			Help:    "Time from a checkpoint's barrier to its commit.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 12)}),
		ckptFail: prometheus.NewCounter(prometheus.CounterOpts{Name: "streamsql_checkpoint_failures_total",
			Help: "Checkpoints that failed since the start."}),
		sinkDur: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "streamsql_sink_commit_duration_seconds",
			Help:    "Time a sink's writer took to commit an epoch (its transaction, its files, its rows).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2.5, 12)}, []string{"sink"}),
	}
}

// EpochDone implements engine.Observer.
func (m *eventMetrics) EpochDone(view string, latency time.Duration) {
	m.barrier.WithLabelValues(view).Observe(latency.Seconds())
}

// CheckpointDone implements engine.Observer.
func (m *eventMetrics) CheckpointDone(c engine.CheckpointEvent) {
	if c.Err != "" {
		m.ckptFail.Inc()
		return
	}
	m.ckptDur.Observe(c.Duration.Seconds())
}

// SinkCommitted implements engine.SinkObserver.
func (m *eventMetrics) SinkCommitted(sink string, d time.Duration) {
	m.sinkDur.WithLabelValues(sink).Observe(d.Seconds())
}

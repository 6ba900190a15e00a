package engine

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Running jobs (SHOW JOBS and pg_catalog.streamsql_jobs,
// docs/observability.md): the backfills of the views and sinks that run,
// with their progress, read from the jobs' atomics (dataflow.Job.Backfill)
// without waiting for them. A job is listed while it backfills, from its
// start until its backfilled rows are in the view.

// JobInfo is one running job's progress.
type JobInfo struct {
	OID         uint32
	Name        string // the view or sink
	Kind        string // "materialized view" or "sink"
	Job         string // "backfill"
	RowsDone    int64
	RowsTotal   int64
	Started     time.Time
	Elapsed     time.Duration
	Remaining   time.Duration // estimate at the rate so far; valid when HasEstimate
	HasEstimate bool
}

// Progress is RowsDone / RowsTotal (0..1).
func (j JobInfo) Progress() float64 {
	if j.RowsTotal == 0 {
		return 1
	}
	return float64(j.RowsDone) / float64(j.RowsTotal)
}

// Jobs lists the running backfills, oldest first. Safe for concurrent use.
func (e *Engine) Jobs() []JobInfo {
	var out []JobInfo
	now := time.Now()
	for _, r := range e.cat.Relations() {
		if r.Kind != catalog.KindMatView && r.Kind != catalog.KindSink {
			continue
		}
		j := e.flow.Job(r.OID)
		if j == nil {
			continue
		}
		p, ok := j.Backfill()
		if !ok || !p.Backfilling {
			continue
		}
		info := JobInfo{OID: r.OID, Name: r.Name, Kind: "materialized view", Job: "backfill", RowsDone: p.RowsDone,
			RowsTotal: p.RowsTotal, Started: p.Started, Elapsed: now.Sub(p.Started)}
		if r.Kind == catalog.KindSink {
			info.Kind = "sink"
		}
		if p.RowsDone > 0 && p.RowsDone < p.RowsTotal {
			per := info.Elapsed.Seconds() / float64(p.RowsDone)
			info.Remaining, info.HasEstimate = time.Duration(per*float64(p.RowsTotal-p.RowsDone)*float64(time.Second)), true
		}
		out = append(out, info)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Started.Before(out[b].Started) })
	return out
}

// showJobsColumns are SHOW JOBS' result columns.
var showJobsColumns = []types.Column{{Name: "Name", Type: types.TText}, {Name: "Kind", Type: types.TText},
	{Name: "Job", Type: types.TText}, {Name: "Rows Done", Type: types.TText}, {Name: "Rows Total", Type: types.TText},
	{Name: "Progress", Type: types.TText}, {Name: "Elapsed", Type: types.TText}, {Name: "Remaining", Type: types.TText}}

// showJobs runs SHOW JOBS.
func (s *Session) showJobs() *Result {
	var rows [][]string
	for _, j := range s.eng.Jobs() {
		rem := ""
		if j.HasEstimate {
			rem = j.Remaining.Round(time.Second).String()
		}
		rows = append(rows, []string{j.Name, j.Kind, j.Job, strconv.FormatInt(j.RowsDone, 10), strconv.FormatInt(j.RowsTotal, 10),
			fmt.Sprintf("%.1f%%", 100*j.Progress()), j.Elapsed.Round(time.Millisecond).String(), rem})
	}
	return tableRows("SHOW", showJobsColumns, rows)
}

// jobStatus lists the running jobs for streamsql_jobs.
func (e *Engine) jobStatus() []catalog.JobStatus {
	var out []catalog.JobStatus
	for _, j := range e.Jobs() {
		out = append(out, catalog.JobStatus{Name: j.Name, Kind: j.Kind, Job: j.Job, RowsDone: j.RowsDone, RowsTotal: j.RowsTotal,
			Progress: j.Progress(), Started: types.TimestampValue(j.Started.UnixMicro()), Elapsed: j.Elapsed.Seconds(),
			Remaining: j.Remaining.Seconds(), HasEstimate: j.HasEstimate})
	}
	return out
}

// progressEvery is how often waitBackfill sends a progress NOTICE.
var progressEvery = time.Second

// waitBackfill waits until the job of created (just started) completed
// its first epoch, so its backfill is in the view (FLUSH). With
// streaming_progress_notices on, it sends a NOTICE with the backfill's
// progress every progressEvery meanwhile, and one when it is done.
func (s *Session) waitBackfill(ctx context.Context, created *catalog.Relation) error {
	send := noticeSender(ctx)
	if on, _ := s.set.get("streaming_progress_notices"); on != "on" || send == nil {
		return s.eng.flow.Flush(ctx)
	}
	done := make(chan error, 1)
	go func() { done <- s.eng.flow.Flush(ctx) }()
	t := time.NewTicker(progressEvery)
	defer t.Stop()
	what := "materialized view"
	if created.Kind == catalog.KindSink {
		what = "sink"
	}
	for {
		select {
		case err := <-done:
			if err == nil {
				if j := s.eng.flow.Job(created.OID); j != nil {
					if p, ok := j.Backfill(); ok {
						send(progressNotice(fmt.Sprintf("%s %s: backfill done, %d rows in %s", what, created.Name, p.RowsTotal,
							time.Since(p.Started).Round(time.Millisecond))))
					}
				}
			}
			return err
		case <-t.C:
			j := s.eng.flow.Job(created.OID)
			if j == nil {
				continue
			}
			p, ok := j.Backfill()
			if !ok || !p.Backfilling {
				continue
			}
			msg := fmt.Sprintf("%s %s: backfill %d of %d rows (%.1f%%), %s elapsed", what, created.Name, p.RowsDone, p.RowsTotal,
				100*float64(p.RowsDone)/float64(p.RowsTotal), time.Since(p.Started).Round(time.Second))
			if p.RowsDone > 0 && p.RowsDone < p.RowsTotal {
				left := time.Duration(float64(time.Since(p.Started)) / float64(p.RowsDone) * float64(p.RowsTotal-p.RowsDone))
				msg += fmt.Sprintf(", about %s left", left.Round(time.Second))
			}
			send(progressNotice(msg))
		}
	}
}

// progressNotice is a NOTICE with text msg (SQLSTATE 00000).
func progressNotice(msg string) *pgerr.Error {
	n := pgerr.New(pgerr.SuccessfulCompletion, "%s", msg)
	n.Severity = pgerr.SevNotice
	return n
}

// subscriptionStatus lists the SUBSCRIBE clients of the running views
// with their lag (streamsql_subscriptions).
func (e *Engine) subscriptionStatus() []catalog.SubscriptionStatus {
	var out []catalog.SubscriptionStatus
	for _, r := range e.matViews() {
		j := e.flow.Job(r.OID)
		if j == nil || r.Kind != catalog.KindMatView {
			continue
		}
		for _, l := range j.SubscriptionLags() {
			out = append(out, catalog.SubscriptionStatus{View: r.Name, ID: l.ID, Started: types.TimestampValue(l.Started.UnixMicro()),
				RowsSent: l.RowsSent, RowsRead: l.RowsRead, LagRows: l.LagRows, LagEpochs: l.LagEpochs})
		}
	}
	return out
}

// logCreated logs a view or sink that was just created and has completed
// its first epoch (its backfill, if any, done).
func (e *Engine) logCreated(r *catalog.Relation, what string) {
	msg := fmt.Sprintf("%s %s created", what, r.Name)
	if j := e.flow.Job(r.OID); j != nil {
		if p, ok := j.Backfill(); ok {
			msg += fmt.Sprintf(", backfilled %d rows in %s", p.RowsTotal, time.Since(p.Started).Round(time.Millisecond))
		}
	}
	if r.Parallelism > 1 {
		msg += fmt.Sprintf(", parallelism %d", r.Parallelism)
	}
	e.cfg.Logf("%s", msg)
}

// slowCheckpoint is how long a checkpoint may take before it is logged.
const slowCheckpoint = 10 * time.Second

package engine

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/streamsql/streamsql/catalog"
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

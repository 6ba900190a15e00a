package dataflow

import (
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/stream"
)

// Backfill progress (SHOW JOBS, streamsql_jobs, a view's `backfilling`
// status; docs/observability.md). A job that starts without a checkpoint
// to resume from first sends each table's rows as of its start (the
// backfill), then the table's changes. The rows to send are known when the
// job starts (StartJob holds them all before any reader runs), so the
// total is exact; the readers count the rows they have handed on. Handed
// on is not yet in the view: the backfill is over once an epoch completes
// whose barrier followed the last backfill row on every input. A view
// reading another view gets that view's rows through its subscription and
// counts no backfill.

// backfill is a job's backfill counters: written by StartJob (total,
// pending, while rt.mu is held and before the readers run) and by the
// table readers (done, pending, endMark); read by anyone.
type backfill struct {
	total   atomic.Int64
	done    atomic.Int64
	pending atomic.Int32 // table readers still sending their initial rows
	// endMark is one more than the job's completed epoch when the last
	// reader finished (0: not finished): the backfill is in the view
	// once the job completed an epoch >= endMark.
	endMark atomic.Uint64
}

// add records a table reader's initial rows (StartJob, before it runs).
func (b *backfill) add(rows []arrow.RecordBatch) {
	var n int64
	for _, r := range rows {
		if r != nil {
			n += r.NumRows()
		}
	}
	if n == 0 {
		return
	}
	b.total.Add(n)
	b.pending.Add(1)
}

// sendBackfill sends a table's initial rows batch by batch, counting them.
func (j *Job) sendBackfill(out chan<- stream.Message, rows []arrow.RecordBatch, w *wmTracker) bool {
	var n int64
	for _, r := range rows {
		if r != nil {
			n += r.NumRows()
		}
	}
	if n == 0 {
		return j.sendWM(out, w)
	}
	// One batch at a time, for the progress count, but with the one
	// watermark after all of them, as sendNew would send it: the table's
	// rows are one snapshot, none of them late for another.
	for _, rec := range rows {
		if !j.sendRows(out, []arrow.RecordBatch{rec}, stream.Insert) {
			return false
		}
		w.observe(rec)
		if rec != nil {
			j.bf.done.Add(rec.NumRows())
		}
	}
	if !j.sendWM(out, w) {
		return false
	}
	if j.bf.pending.Add(-1) == 0 {
		j.bf.endMark.Store(j.done.Load() + 1)
	}
	return true
}

// Progress is a job's backfill progress (a snapshot).
type Progress struct {
	RowsDone, RowsTotal int64
	Started             time.Time // when the job started
	// Backfilling is true until the backfilled rows are in the view.
	Backfilling bool
}

// Backfill reports the job's backfill; ok is false when it had none (it
// resumed from a checkpoint, or read only empty tables, sources and views).
// Safe for concurrent use; never blocks the dataflow.
func (j *Job) Backfill() (p Progress, ok bool) {
	total := j.bf.total.Load()
	if total == 0 {
		return Progress{}, false
	}
	p = Progress{RowsDone: j.bf.done.Load(), RowsTotal: total, Started: j.started}
	mark := j.bf.endMark.Load()
	p.Backfilling = mark == 0 || j.done.Load() < mark
	return p, true
}

// Started is when the job started (wall clock).
func (j *Job) Started() time.Time { return j.started }

package dataflow

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// Late rows (stream.Env.OnLate) are counted per job and, with
// JobSpec.LateRows (LATE ROWS INTO), stored by a goroutine of the job fed
// by a bounded queue: operators never wait for the store. FLUSH and
// ADVANCE CLOCK wait until the late rows of the epoch they complete are
// stored, so what follows them sees those rows.

// lateQueue bounds the late-row batches waiting for JobSpec.LateRows.
const lateQueue = 64

type lateBatch struct {
	rows arrow.RecordBatch
	mark int64
}

// lateWriter is a job's queue of late rows to store.
type lateWriter struct {
	ch      chan lateBatch
	lastLog atomic.Int64 // unix seconds of the last lost-late-rows log line

	mu      sync.Mutex
	pending int           // batches queued or being stored
	drained chan struct{} // closed when pending falls back to 0
}

// add counts a queued batch; mu is not held.
func (w *lateWriter) add() {
	w.mu.Lock()
	if w.pending == 0 {
		w.drained = make(chan struct{})
	}
	w.pending++
	w.mu.Unlock()
}

// done uncounts a stored (or failed) batch.
func (w *lateWriter) done() {
	w.mu.Lock()
	if w.pending--; w.pending == 0 {
		close(w.drained)
	}
	w.mu.Unlock()
}

// onLate counts the rows an operator dropped as late and queues them for
// LateRows (see stream.Env.OnLate). It never blocks.
func (j *Job) onLate(rows arrow.RecordBatch) {
	if rows == nil || rows.NumRows() == 0 {
		return
	}
	n := rows.NumRows()
	j.lateRows.Add(n)
	if j.late == nil {
		return
	}
	settle(rows)
	mark, ok := j.Watermark()
	if !ok {
		mark = math.MinInt64
	}
	j.late.add()
	select {
	case j.late.ch <- lateBatch{rows: rows, mark: mark}:
	default:
		j.late.done()
		j.lostLate(n, errors.New("the late-row queue is full"))
	}
}

// writeLate stores queued late rows until the job ends.
func (j *Job) writeLate() {
	defer j.wg.Done()
	for {
		select {
		case b := <-j.late.ch:
			if err := j.spec.LateRows(b.rows, b.mark); err != nil {
				j.lostLate(b.rows.NumRows(), err)
			}
			j.late.done()
		case <-j.env.Ctx.Done():
			return
		}
	}
}

// waitLate waits until the late rows queued so far are stored (or the
// job ends, or ctx does).
func (j *Job) waitLate(ctx context.Context) error {
	if j.late == nil {
		return nil
	}
	j.late.mu.Lock()
	if j.late.pending == 0 {
		j.late.mu.Unlock()
		return nil
	}
	ch := j.late.drained
	j.late.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-j.env.Ctx.Done():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// lostLate counts late rows that could not be stored, with a log line.
func (j *Job) lostLate(n int64, err error) {
	total := j.lateLost.Add(n)
	now := time.Now().Unix()
	if last := j.late.lastLog.Load(); now <= last || !j.late.lastLog.CompareAndSwap(last, now) {
		return
	}
	j.rt.cfg.Logf("materialized view %s: %d late rows not stored (%d so far): %v", j.spec.Name, n, total, err)
}

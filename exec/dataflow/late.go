package dataflow

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// Late rows (stream.Env.OnLate) are counted per job and, with
// JobSpec.LateRows (LATE ROWS INTO), stored by a goroutine of the job:
// operators never wait for the store.
//
// With checkpoints the store is exactly-once, as a sink's output is
// (sinkjob.go): a late row waits in the job until the first checkpoint
// whose barrier the dropping operator passed after dropping it (OnLate's
// after) is durable, goes into that checkpoint with the job's state, and
// is then stored in one write that also records the checkpoint's epoch in
// the table (LateStore.Stored). A resume from a checkpoint stores the late
// rows it holds that the table does not (the crash came before their
// write), and the replay after it drops the later ones again, so no late
// row is stored twice or lost. FLUSH and ADVANCE CLOCK take a checkpoint
// when late rows wait for one, and return once they are stored.
//
// Without checkpoints (or for a plan that cannot resume) the rows are
// stored at once through a bounded queue, as a job rebuilt at restart
// replays everything anyway; FLUSH and ADVANCE CLOCK wait until the late
// rows of the epoch they complete are stored.

// LateStore is where a view's late rows go (JobSpec.LateRows). Its
// methods are called from one goroutine of the job at a time.
type LateStore interface {
	// Store appends rows in one durable write, each batch with the
	// view's watermark when its rows were dropped (µs; math.MinInt64:
	// none yet). With epoch > 0 the same write records epoch as the last
	// checkpoint whose late rows the table holds (Stored).
	Store(rows []arrow.RecordBatch, marks []int64, epoch uint64) error
	// Stored is the last epoch a Store recorded (0: none).
	Stored() (uint64, error)
}

// lateQueue bounds the late-row batches waiting for the store without
// checkpoints; lateMaxHeld the late rows waiting for a checkpoint. Rows
// beyond are counted in LateLost.
const (
	lateQueue   = 64
	lateMaxHeld = 1 << 20
)

type lateBatch struct {
	rows  arrow.RecordBatch
	mark  int64
	after uint64 // OnLate's: the dropping operator's last checkpoint
	ckpt  uint64 // the first checkpoint that holds it (0: none yet)
	// storing: being stored (storeLate), still held until that is done
	storing bool
}

// lateWriter is a job's late rows on their way to JobSpec.LateRows.
type lateWriter struct {
	twoPhase bool           // stored once a checkpoint holding them is durable
	ch       chan lateBatch // without twoPhase: the queue
	lastLog  atomic.Int64   // unix seconds of the last lost-late-rows log line

	mu      sync.Mutex
	pending int           // without twoPhase: batches queued or being stored
	drained chan struct{} // closed when pending falls back to 0

	// With twoPhase, under mu: the rows not stored yet, in the order
	// dropped (those a resumed checkpoint holds first), and the last
	// durable checkpoint.
	held     []lateBatch
	heldRows int64
	durable  uint64
	resumed  bool      // held starts with a resumed checkpoint's rows
	stored   atomicU64 // the last durable checkpoint whose rows are stored (or counted lost)
	wake     chan struct{}
}

func newLateWriter(twoPhase bool) *lateWriter {
	if twoPhase {
		return &lateWriter{twoPhase: true, wake: make(chan struct{}, 1)}
	}
	return &lateWriter{ch: make(chan lateBatch, lateQueue)}
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

// hold keeps b until a checkpoint holding it is durable; false when too
// many rows wait already.
func (w *lateWriter) hold(b lateBatch) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := b.rows.NumRows()
	if w.heldRows+n > lateMaxHeld {
		return false
	}
	w.held = append(w.held, b)
	w.heldRows += n
	return true
}

// cut assigns the held rows dropped before checkpoint epoch's barrier to
// it and returns every held batch a checkpoint holds: the job's part of
// checkpoint epoch (finishCheckpoint, once every operator passed the
// barrier, so that every row dropped before it was handed over). The
// batches' rows are retained (the writer may store and release them
// meanwhile): the caller releases them.
func (w *lateWriter) cut(epoch uint64) []lateBatch {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []lateBatch
	for i := range w.held {
		b := &w.held[i]
		if b.ckpt == 0 && b.after < epoch {
			b.ckpt = epoch
		}
		if b.ckpt != 0 {
			b.rows.Retain()
			out = append(out, *b)
		}
	}
	return out
}

// drop releases the held batches gone reports true for and returns
// their rows.
func (w *lateWriter) drop(gone func(lateBatch) bool) (rows int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var keep []lateBatch
	for _, b := range w.held {
		if !gone(b) {
			keep = append(keep, b)
			continue
		}
		rows += b.rows.NumRows()
		b.rows.Release()
	}
	w.held, w.heldRows = keep, w.heldRows-rows
	return rows
}

// need reports whether held rows are in no durable checkpoint yet (one
// must be taken), else the durable checkpoint the writer has yet to store
// up to (0: none).
func (w *lateWriter) need() (ckpt bool, store uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, b := range w.held {
		if b.ckpt == 0 || b.ckpt > w.durable {
			return true, 0
		}
	}
	if w.stored.Load() < w.durable {
		return false, w.durable
	}
	return false, 0
}

// lateDurable tells the job that checkpoint epoch, which holds it, is
// durable: the late rows it holds can be stored.
func (j *Job) lateDurable(epoch uint64) {
	w := j.late
	if w == nil || !w.twoPhase {
		return
	}
	w.mu.Lock()
	w.durable = max(w.durable, epoch)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// onLate counts the rows an operator dropped as late and queues or holds
// them for LateRows (see stream.Env.OnLate). It never blocks.
func (j *Job) onLate(rows arrow.RecordBatch, after uint64) {
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
	if j.late.twoPhase {
		rows.Retain()
		if !j.late.hold(lateBatch{rows: rows, mark: mark, after: after}) {
			rows.Release()
			j.lostLate(n, fmt.Errorf("more than %d late rows wait for a checkpoint", lateMaxHeld))
		}
		return
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
	if j.late.twoPhase {
		j.storeLate()
		return
	}
	for {
		select {
		case b := <-j.late.ch:
			if err := j.spec.LateRows.Store([]arrow.RecordBatch{b.rows}, []int64{b.mark}, 0); err != nil {
				j.lostLate(b.rows.NumRows(), err)
			}
			j.late.done()
		case <-j.env.Ctx.Done():
			return
		}
	}
}

// storeLate (twoPhase) stores the rows of each durable checkpoint until
// the job ends, first those of the checkpoint it resumed from that the
// table does not hold.
func (j *Job) storeLate() {
	w := j.late
	if w.resumed {
		// stored before the restart (or unknown: counted lost)
		stored, err := j.spec.LateRows.Stored()
		n := w.drop(func(b lateBatch) bool { return b.ckpt != 0 && (err != nil || b.ckpt <= stored) })
		if err != nil && n > 0 {
			j.lostLate(n, err)
		}
	}
	for {
		// The due rows stay held (and so in the checkpoints cut
		// meanwhile) until they are stored.
		w.mu.Lock()
		d := w.durable
		var recs []arrow.RecordBatch
		var marks []int64
		var n int64
		for i := range w.held {
			if b := &w.held[i]; b.ckpt != 0 && b.ckpt <= d {
				b.storing = true
				recs, marks = append(recs, b.rows), append(marks, b.mark)
				n += b.rows.NumRows()
			}
		}
		w.mu.Unlock()
		if len(recs) > 0 {
			if err := j.spec.LateRows.Store(recs, marks, d); err != nil {
				j.lostLate(n, err)
			}
			w.drop(func(b lateBatch) bool { return b.storing })
		}
		if d > w.stored.Load() {
			w.stored.Max(d)
			j.rt.progressed()
		}
		select {
		case <-w.wake:
		case <-j.env.Ctx.Done():
			return
		}
	}
}

// waitLate waits until the late rows queued so far are stored (or the
// job ends, or ctx does); with twoPhase, Runtime.commitLate does.
func (j *Job) waitLate(ctx context.Context) error {
	if j.late == nil || j.late.twoPhase {
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

// resumeLate holds the late rows of the checkpoint the job resumes from,
// which is durable: storeLate stores those the table does not hold.
func (j *Job) resumeLate(ri *resumeInputs) {
	w := j.late
	held, err := restoredLate(ri.rec, j.spec.ID)
	if err != nil {
		j.rt.cfg.Logf("materialized view %s: the late rows of checkpoint %d are not stored: %v", j.spec.Name, ri.epoch, err)
		return
	}
	for _, b := range held {
		w.heldRows += b.rows.NumRows()
	}
	w.held, w.resumed, w.durable = held, true, ri.epoch
}

// commitLate takes a checkpoint when late rows wait for one (twoPhase),
// and waits until the late rows are stored.
func (rt *Runtime) commitLate(ctx context.Context) error {
	until := map[*Job]uint64{}
	var needers []*Job
	for _, j := range rt.Jobs() {
		if j.late == nil || !j.late.twoPhase || j.Err() != nil {
			continue
		}
		if ckpt, store := j.late.need(); ckpt {
			needers = append(needers, j)
		} else if store > 0 {
			until[j] = store
		}
	}
	if len(needers) > 0 && rt.ck != nil {
		e, err := rt.Checkpoint(ctx)
		if err != nil {
			return err
		}
		for _, j := range needers {
			until[j] = e
		}
	}
	return rt.waitProgress(ctx, func() bool {
		for j, e := range until {
			// (a resumed job waits for its checkpoint's rows too, though
			// its first epoch is after that checkpoint)
			if j.late.stored.Load() < e && j.Err() == nil && !j.stopped.Load() && rt.Job(j.spec.ID) == j {
				return false
			}
		}
		return true
	})
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

package dataflow

import (
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	"github.com/streamsql/streamsql/connector/sink"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/storage/checkpoint"
)

// A sink job (JobSpec.Sink) writes its output to a sink.Writer with the
// two-phase protocol of connector/sink (docs/contributing/sinks.md):
//
//   - every chunk goes to Write, on the job's last goroutine;
//   - at a checkpoint barrier the writer's PreCommit returns its pending
//     bytes, which the checkpoint stores (writeSinkPending); at other
//     barriers Barrier;
//   - when a checkpoint that holds the job is durable, finishCheckpoint
//     wakes the job, which calls Commit for every pre-committed epoch up to
//     it, in epoch order, on the same goroutine;
//   - a job resumed from a checkpoint opens its writer with Recover(epoch,
//     pending), others with NewWriter;
//   - a writer call that fails is retried in place (sinkretry.go).
//
// Without checkpoints (no data directory), or for a plan whose operators do
// not checkpoint, every barrier is PreCommit then Commit at once: output is
// visible per epoch, and after a restart the sink starts from its inputs.

// sinkState is a sink job's writer and commit bookkeeping.
type sinkState struct {
	w         atomic.Pointer[writerBox] // the open writer (Status reads it)
	twoPhase  bool                      // commits wait for durable checkpoints
	wake      chan struct{}             // a checkpoint holding the job became durable (cap 1)
	durable   atomicU64                 // the last durable checkpoint holding the job
	committed atomicU64                 // the last epoch committed
	pend      []pendingEpoch            // pre-committed, not committed; sink goroutine only
	// base is the epoch a writer reopened after a failure recovers to
	// (Recover(base, basePending)): the last durable checkpoint holding
	// the job (or, without checkpoints, the last epoch committed); 0 with
	// nothing committed. replay holds the output after it (sinkretry.go).
	base        uint64
	basePending []byte
	baseRows    int64 // the rows the sink had made visible as of the base (see writerBox.rows)
	hasBase     bool  // Recover (not NewWriter) reopens the writer
	replay      replayLog
	retry       retryStatus
}

// writerBox holds a writer for an atomic.Pointer. rows is what earlier
// writers (before a restart or a reopen) made visible up to the base
// this one recovered to: the sink's row count is rows plus the writer's
// own, so it does not start over when the writer does.
type writerBox struct {
	w    sink.Writer
	rows int64
}

// pendingEpoch is an epoch pre-committed and not yet committed; rows is
// the sink's row count right after its PreCommit (what a writer
// recovering to it starts from: Recover counts the rows it commits).
type pendingEpoch struct {
	epoch   uint64
	pending []byte
	rows    int64
}

// sinkCkpt is a sink job's part of a checkpoint.
type sinkCkpt struct {
	pending []byte
	rows    int64
}

func newSinkState(j *Job, ri *resumeInputs) *sinkState {
	s := &sinkState{wake: make(chan struct{}, 1),
		twoPhase: j.env.Checkpoints != nil && stream.Checkpointable(j.spec.Plan)}
	if ri != nil {
		s.basePending, s.baseRows = restoredSinkPending(ri.rec, j.spec.ID)
		s.base, s.hasBase = ri.epoch, true
		s.committed.Store(ri.epoch)
		s.durable.Store(ri.epoch)
	}
	return s
}

// SinkStatus returns a sink job's writer status and the last epoch it
// committed; ok is false for a job that is not a sink or whose writer is
// not open yet.
func (j *Job) SinkStatus() (st sink.Status, committed uint64, ok bool) {
	if j.sink == nil {
		return st, 0, false
	}
	b := j.sink.w.Load()
	if b == nil {
		return st, j.sink.committed.Load(), false
	}
	st = b.w.Status()
	st.Rows += b.rows
	j.sink.retry.apply(&st)
	return st, j.sink.committed.Load(), true
}

// SinkCommitted is the last epoch a sink job committed (0: none).
func (j *Job) SinkCommitted() uint64 {
	if j.sink == nil {
		return 0
	}
	return j.sink.committed.Load()
}

// checkpointSinks tells the sink jobs of checkpoint run, just committed
// here, and the jobs with LATE ROWS INTO (late.go), that it is durable;
// with Config.DeferSinkCommits it keeps them until SinksDurable names the
// epoch instead.
func (rt *Runtime) checkpointSinks(run *ckptRun, jobs []jobMeta) {
	var sinks []*Job
	for _, jm := range jobs {
		if j := run.jobs[jm.ID]; j.sink != nil || j.late != nil {
			sinks = append(sinks, j)
		}
	}
	if !rt.cfg.DeferSinkCommits {
		for _, j := range sinks {
			j.sinkDurable(run.epoch)
			j.lateDurable(run.epoch)
		}
		return
	}
	c := rt.ck
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.deferred == nil {
		c.deferred = map[uint64][]*Job{}
	}
	c.deferred[run.epoch] = sinks
	if len(c.deferred) > maxDeferred { // commits elsewhere fail: the oldest go (a later one covers them)
		delete(c.deferred, slices.Min(slices.Collect(maps.Keys(c.deferred))))
	}
}

// maxDeferred bounds the checkpoints whose sinks wait for SinksDurable.
const maxDeferred = 64

// SinksDurable (Config.DeferSinkCommits) says that checkpoint epoch,
// committed here before, is durable where it counts (a cluster's
// committed pointer names it): the sink jobs it holds commit every epoch
// up to it. Earlier checkpoints are covered by it and forgotten.
func (rt *Runtime) SinksDurable(epoch uint64) {
	if rt.ck == nil {
		return
	}
	c := rt.ck
	c.mu.Lock()
	sinks := c.deferred[epoch]
	for e := range c.deferred {
		if e <= epoch {
			delete(c.deferred, e)
		}
	}
	c.mu.Unlock()
	for _, j := range sinks {
		j.sinkDurable(epoch)
		j.lateDurable(epoch)
	}
}

// sinkDurable tells a sink job that checkpoint epoch, which holds it, is
// durable (finishCheckpoint's goroutine).
func (j *Job) sinkDurable(epoch uint64) {
	if j.sink == nil || !j.sink.twoPhase {
		return
	}
	j.sink.durable.Max(epoch)
	select {
	case j.sink.wake <- struct{}{}:
	default:
	}
}

// runSink opens the writer, then passes the job's output to it until the
// input closes or the job stops, completing an epoch at each barrier. It
// returns the job's failure (nil if none), as View.Run does.
func (j *Job) runSink(in <-chan stream.Message) error {
	s, ctx := j.sink, j.env.Ctx
	w, err := j.reopenWriter(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { s.w.Load().w.Close() }()
	var pend pendingMarks
	for {
		var m stream.Message
		var ok bool
		select {
		case m, ok = <-in:
		case <-s.wake:
			if err := j.commitDurable(ctx, w); err != nil {
				if w, err = j.reopenWriter(ctx, err); err != nil {
					return err
				}
			}
			continue
		case <-ctx.Done():
			if err := j.env.Err(); err != nil {
				return err
			}
			return ctx.Err()
		}
		if !ok {
			return j.env.Err()
		}
		switch m.Kind {
		case stream.KindChunk:
			j.rowsOut.Add(int64(m.Chunk.Len()))
			s.replay.addChunk(m.Chunk)
			if err := w.Write(ctx, m.Chunk.Rec, m.Chunk.Ops); err != nil {
				if w, err = j.reopenWriter(ctx, err); err != nil {
					return err
				}
			}
		case stream.KindWatermark:
			pend.note(m.Watermark)
		case stream.KindBarrier:
			e := m.Barrier.Epoch
			ckpt := s.twoPhase && j.inCheckpoint(e)
			s.replay.addBarrier(e, ckpt)
			if err := j.sinkBarrier(ctx, w, e, ckpt); err != nil {
				if w, err = j.reopenWriter(ctx, fmt.Errorf("epoch %d: %w", e, err)); err != nil {
					return err
				}
			}
			j.marks.queue(e, pend)
			pend = nil
			j.onEpoch(e, nil)
		}
	}
}

// sinkBarrier ends epoch e at the writer; ckpt: e is the checkpoint in
// flight and the job takes part in it.
func (j *Job) sinkBarrier(ctx context.Context, w sink.Writer, e uint64, ckpt bool) error {
	s := j.sink
	if !s.twoPhase {
		p, err := w.PreCommit(ctx, e)
		if err != nil {
			return err
		}
		t := time.Now()
		if err := w.Commit(ctx, e, p); err != nil {
			return err
		}
		j.sinkCommitted(time.Since(t))
		s.committed.Store(e)
		s.setBase(e, p, s.w.Load().rows+w.Status().Rows)
		return nil
	}
	if !ckpt {
		return w.Barrier(ctx, e)
	}
	p, err := w.PreCommit(ctx, e)
	if err != nil {
		return err
	}
	j.preCommitted(pendingEpoch{e, p, s.w.Load().rows + w.Status().Rows})
	return nil
}

// preCommitted notes epoch p.epoch pre-committed: it waits for its
// checkpoint to become durable, which stores it if still in flight.
func (j *Job) preCommitted(p pendingEpoch) {
	j.sink.pend = append(j.sink.pend, p)
	j.recordPending(p)
}

// inCheckpoint reports whether barrier e is the checkpoint in flight and
// the job takes part in it.
func (j *Job) inCheckpoint(e uint64) bool {
	run := j.rt.ck.current()
	return run != nil && run.epoch == e && run.jobs[j.spec.ID] == j
}

// recordPending stores the job's pending bytes and row count in
// checkpoint p.epoch, if it is still in flight.
func (j *Job) recordPending(p pendingEpoch) {
	run := j.rt.ck.current()
	if run == nil || run.epoch != p.epoch || run.jobs[j.spec.ID] != j {
		return
	}
	run.mu.Lock()
	if run.sinkPending == nil {
		run.sinkPending = map[uint32]sinkCkpt{}
	}
	run.sinkPending[j.spec.ID] = sinkCkpt{p.pending, p.rows}
	run.mu.Unlock()
}

// commitDurable commits the pre-committed epochs up to the last durable
// checkpoint, in order.
func (j *Job) commitDurable(ctx context.Context, w sink.Writer) error {
	s := j.sink
	d := s.durable.Load()
	n := 0
	for _, p := range s.pend {
		if p.epoch > d {
			break
		}
		if p.epoch == d { // a reopened writer recovers to d from now on
			s.setBase(d, p.pending, p.rows)
		}
		t := time.Now()
		if err := w.Commit(ctx, p.epoch, p.pending); err != nil {
			return fmt.Errorf("commit of epoch %d: %w", p.epoch, err)
		}
		j.sinkCommitted(time.Since(t))
		s.committed.Store(p.epoch)
		n++
	}
	s.pend = s.pend[n:]
	if n > 0 {
		j.rt.progressed()
	}
	return nil
}

// CommitSinks makes what every sink job received so far visible: with
// checkpoints it takes one and waits until each two-phase sink job in it
// has committed it (or failed or stopped); otherwise sinks commit at every
// barrier and there is nothing to wait for after a Flush. FLUSH calls it
// after Flush.
func (rt *Runtime) CommitSinks(ctx context.Context) error {
	var sinks []*Job
	for _, j := range rt.Jobs() {
		if j.sink != nil && j.sink.twoPhase && j.Err() == nil {
			sinks = append(sinks, j)
		}
	}
	if len(sinks) == 0 || rt.ck == nil {
		return nil
	}
	e, err := rt.Checkpoint(ctx)
	if err != nil {
		return err
	}
	return rt.waitProgress(ctx, func() bool {
		for _, j := range sinks {
			if j.sink.committed.Load() < e && j.Err() == nil && !j.stopped.Load() && rt.Job(j.spec.ID) == j && j.first <= e {
				return false
			}
		}
		return true
	})
}

// atomicU64 is an atomic.Uint64 that can only grow.
type atomicU64 struct{ v atomic.Uint64 }

func (a *atomicU64) Load() uint64   { return a.v.Load() }
func (a *atomicU64) Store(x uint64) { a.v.Store(x) }

// Max raises the value to x if x is larger.
func (a *atomicU64) Max(x uint64) {
	for {
		cur := a.v.Load()
		if x <= cur || a.v.CompareAndSwap(cur, x) {
			return
		}
	}
}

// A sink job's pending bytes of a checkpoint are the state of a pseudo
// operator "<job id>/sink" (one record, key "p"), written at the commit of
// the checkpoint (they may be large: a Kafka writer's epoch of records),
// not in the manifest's runtime record.

func sinkOpID(id uint32) string { return fmt.Sprintf("%d/sink", id) }

var (
	sinkPendingKey = []byte("p")
	sinkRowsKey    = []byte("r") // uvarint; absent in checkpoints of earlier versions (0)
)

// writeSinkPending stores job id's part in run's checkpoint (replacing
// what earlier checkpoints of the chain hold).
func writeSinkPending(run *ckptRun, id uint32, sp sinkCkpt) error {
	ow := run.w.Op(sinkOpID(id))
	ow.Reset()
	if len(sp.pending) > 0 {
		ow.Put(sinkPendingKey, sp.pending)
	}
	if sp.rows > 0 {
		ow.Put(sinkRowsKey, binary.AppendUvarint(nil, uint64(sp.rows)))
	}
	if err := ow.Close(); err != nil {
		return fmt.Errorf("sink %d: pending of checkpoint %d: %w", id, run.epoch, err)
	}
	return nil
}

// restoredSinkPending is job id's pending bytes (nil: none) and row
// count in the checkpoint rec it resumes from (the recovered one, or its
// parked part: RESUME, a cluster's restart).
func restoredSinkPending(rec *checkpoint.Checkpoint, id uint32) (pending []byte, rows int64) {
	op := rec.Op(sinkOpID(id))
	if v, ok := op.Get(sinkRowsKey); ok {
		if n, w := binary.Uvarint(v); w > 0 {
			rows = int64(n)
		}
	}
	if v, ok := op.Get(sinkPendingKey); ok {
		pending = append([]byte(nil), v...)
	}
	return pending, rows
}

// sinkCommitted reports a commit's duration (Config.OnSinkCommit).
func (j *Job) sinkCommitted(d time.Duration) {
	if f := j.rt.cfg.OnSinkCommit; f != nil {
		f(j.spec.Name, d)
	}
}

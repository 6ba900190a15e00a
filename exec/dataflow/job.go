package dataflow

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// JobSpec describes a job: a continuous query whose output a Materialize
// keeps (or, with Sink, a sink consumes). It is immutable.
type JobSpec struct {
	ID   uint32 // the view's OID, or a private id for a SUBSCRIBE (query)
	Name string
	Plan stream.Node    // the query; its leaves are *stream.Scan
	Key  []int          // the output's stream key (nil: rows are a multiset)
	Cols []types.Column // the output columns
	// Sink, if set, replaces the Materialize: it receives every output
	// chunk (changes, with their ops) and the job keeps no view, so
	// Snapshot fails and subscribers are refused. It runs on the job's
	// last goroutine, one call at a time, and must not block for long (the
	// whole job waits for it); the chunk is immutable and may be kept.
	// Epochs still complete: epoch e is complete once every chunk before
	// e's barrier was passed to Sink. Watermarks are dropped. A counting
	// Sink is Nexmark's blackhole sink (see bench/).
	Sink func(c *stream.Chunk)
}

// Job is one running job. Its methods are safe for concurrent use.
type Job struct {
	rt    *Runtime
	spec  JobSpec
	first uint64 // the first epoch the job takes part in
	env   *stream.Env
	view  *stream.View
	roots []*root // barrier injection targets (table and source readers)
	wg    sync.WaitGroup

	done    atomic.Uint64 // the last completed epoch
	failure atomic.Pointer[error]
	stopped atomic.Bool

	rowErrors atomic.Int64
	lastError atomic.Pointer[string]
	lastLog   atomic.Int64 // unix seconds of the last row-error log line

	subMu     sync.Mutex
	delivered uint64 // the last epoch handed to subscribers
	subs      []*changeSub
}

// Spec returns the job's description.
func (j *Job) Spec() JobSpec { return j.spec }

// Err is the job's failure, or nil while it runs (or after a clean stop).
func (j *Job) Err() error {
	if p := j.failure.Load(); p != nil {
		return *p
	}
	return nil
}

// Epoch is the last epoch the job completed (0: none yet).
func (j *Job) Epoch() uint64 { return j.done.Load() }

// RowErrors returns how many rows failed at run time and the last error.
func (j *Job) RowErrors() (int64, string) {
	n := j.rowErrors.Load()
	if p := j.lastError.Load(); p != nil {
		return n, *p
	}
	return n, ""
}

// Snapshot returns the view's rows as of its last completed epoch. The
// batches are shared and immutable.
func (j *Job) Snapshot() (uint64, []arrow.RecordBatch, error) {
	if err := j.Err(); err != nil {
		return 0, nil, err
	}
	if j.view == nil {
		return 0, nil, errNoView
	}
	return j.view.SnapshotEpoch()
}

// StartJob plans the inputs of spec's leaves and starts the job. Its first
// epoch is the next one injected.
func (rt *Runtime) StartJob(spec JobSpec) (*Job, error) {
	ctx, cancel := context.WithCancel(context.Background())
	j := &Job{rt: rt, spec: spec, env: stream.NewEnv(ctx, rt.cfg.Eval)}
	_ = cancel // the env's own cancel (Fail) and stop() end the job
	j.env.OnRowError = j.rowError
	if spec.Sink == nil {
		m := &stream.Materialize{Input: spec.Plan, Key: spec.Key, Cols: spec.Cols, OnEpoch: j.onEpoch}
		j.view = m.NewView()
	}

	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.closed {
		cancel()
		return nil, errClosed
	}
	if rt.jobs[spec.ID] != nil {
		cancel()
		return nil, errJobExists
	}
	j.first = rt.epoch + 1
	j.delivered = rt.epoch
	out, err := j.startTree(spec.Plan)
	if err != nil {
		cancel()
		j.env.Fail(err)
		j.wg.Wait()
		return nil, err
	}
	rt.jobs[spec.ID] = j
	j.wg.Add(1)
	go func() {
		defer j.wg.Done()
		defer cancel()
		var err error
		if j.view != nil {
			err = j.view.Run(j.env, out)
		} else {
			err = j.runSink(out)
		}
		if err != nil && !j.stopped.Load() {
			j.fail(err)
		}
	}()
	return j, nil
}

// runSink passes the job's output to spec.Sink until the input closes or
// the job stops, completing an epoch at each barrier. It returns the job's
// failure (nil if none), as View.Run does.
func (j *Job) runSink(in <-chan stream.Message) error {
	for {
		var m stream.Message
		var ok bool
		select {
		case m, ok = <-in:
		case <-j.env.Ctx.Done():
			if err := j.env.Err(); err != nil {
				return err
			}
			return j.env.Ctx.Err()
		}
		if !ok {
			return j.env.Err()
		}
		switch m.Kind {
		case stream.KindChunk:
			j.spec.Sink(m.Chunk)
		case stream.KindBarrier:
			j.onEpoch(m.Barrier.Epoch, nil)
		}
	}
}

var errNoView = pgerr.New(pgerr.ObjectNotInPrerequisiteState, "this job writes to a sink and keeps no rows")

// startTree starts n's operators, feeding its leaves; rt.mu is held.
func (j *Job) startTree(n stream.Node) (<-chan stream.Message, error) {
	if s, ok := n.(*stream.Scan); ok {
		ch, err := j.startLeaf(s)
		if err != nil {
			return nil, err
		}
		return s.Start(j.env, []<-chan stream.Message{ch}), nil
	}
	var ins []<-chan stream.Message
	for _, c := range n.Inputs() {
		ch, err := j.startTree(c)
		if err != nil {
			return nil, err
		}
		ins = append(ins, ch)
	}
	return n.Start(j.env, ins), nil
}

// fail records the job's first failure and wakes Flush waiters.
func (j *Job) fail(err error) {
	if j.failure.CompareAndSwap(nil, &err) {
		j.rt.cfg.Logf("materialized view %s failed: %v", j.spec.Name, err)
		j.env.Fail(err)
	}
	j.endSubs(err)
	j.rt.progressed()
}

// stop ends the job without failing it.
func (j *Job) stop() {
	j.stopped.Store(true)
	j.env.Fail(errStopped)
	j.endSubs(errStopped)
	j.wg.Wait()
}

var errStopped = errors.New("dataflow: job stopped")

// rowError counts a row that failed at run time (see stream.Env.OnRowError).
func (j *Job) rowError(err error) {
	j.rowErrors.Add(1)
	msg := err.Error()
	j.lastError.Store(&msg)
	now := time.Now().Unix()
	if last := j.lastLog.Load(); now > last && j.lastLog.CompareAndSwap(last, now) {
		j.rt.cfg.Logf("materialized view %s: row error (%d so far): %v", j.spec.Name, j.rowErrors.Load(), err)
	}
}

// onEpoch runs on the view's goroutine once epoch e is published: it hands
// the epoch's changes to the subscribers, starts the ones waiting for e, and
// marks e complete.
func (j *Job) onEpoch(e uint64, changes *stream.Chunk) {
	if changes != nil {
		settle(changes.Rec)
	}
	j.subMu.Lock()
	live := j.subs[:0]
	for _, s := range j.subs {
		if s.dead || (s.active && !s.deliver(j, subItem{epoch: e, changes: changes})) {
			continue // ended
		}
		live = append(live, s)
	}
	j.subs = live
	j.delivered = e
	for _, s := range j.subs {
		if !s.active && !s.dead && s.after <= e {
			j.activate(s)
		}
	}
	j.subMu.Unlock()
	j.done.Store(e)
	j.rt.progressed()
}

package dataflow

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/connector/sink"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// JobSpec describes a job: a continuous query whose output a Materialize
// keeps (or, with Sink, a sink consumes). It is immutable.
type JobSpec struct {
	ID   uint32 // the view's OID, or a private id for a SUBSCRIBE (query)
	Name string
	Plan stream.Node // the query; its leaves are *stream.Scan
	Key  []int       // the output's stream key (nil: rows are a multiset)
	// AppendOnly says the output never retracts (planner.StreamQuery):
	// queries reading the view may rely on it (a sink's FORMAT JSON).
	AppendOnly bool
	Cols       []types.Column // the output columns
	// Sink, if set, replaces the Materialize: the job's output goes to a
	// writer of this sink with the two-phase protocol of connector/sink
	// (sinkjob.go), and the job keeps no view, so Snapshot fails and
	// subscribers are refused. Epoch e is complete once every chunk before
	// e's barrier was written and the barrier passed to the writer.
	// Watermarks are dropped. The blackhole sink is Nexmark's (bench/).
	Sink sink.Sink
	// LateRows, if set, stores the rows operators drop as late
	// (stream.Env.OnLate: LATE ROWS INTO), with the view's watermark at
	// the time, from a goroutine of the job (late.go): with checkpoints
	// each once a checkpoint holding it is durable, else at once through
	// a bounded queue. Rows that find no room (too many wait) are counted
	// as lost instead of stored (the operators never wait for it); an
	// error is logged and counted as lost rows.
	LateRows LateStore
	// Changelog keeps the view's published changes in a durable log when
	// the runtime has Config.Changelogs (a materialized view's job):
	// subscribers can then resume after an epoch (SubscribeSince).
	Changelog bool
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
	// stopReason is why a stopped job stopped (errStopped, or Dropped):
	// what its subscribers and downstream jobs are told.
	stopReason atomic.Pointer[error]
	resumed    bool // started from the recovered checkpoint (set before it runs)
	recovery   Recovery

	rowErrors atomic.Int64
	lastError atomic.Pointer[string]
	lastLog   atomic.Int64 // unix seconds of the last row-error log line

	rowsIn    atomic.Int64 // rows the leaves read (backfills included)
	viewMeter stream.Meter // the view's own (opstats.go); unused without meters
	rowsOut   atomic.Int64 // rows of the view's net changes (or sent to the sink)
	viewRows  atomic.Int64 // rows in the view
	lateRows  atomic.Int64 // rows dropped as late (Env.OnLate)
	lateLost  atomic.Int64 // late rows LateRows could not store
	late      *lateWriter  // nil without JobSpec.LateRows
	sink      *sinkState   // nil without JobSpec.Sink

	marks markState // the view's watermarks (marks.go)
	// started is when StartJob started the job (wall clock); fixed.
	started time.Time
	bf      backfill // the table readers' initial rows (progress.go)
	// outMeters are the ids of the meters of the output startTree last
	// started (one, or one per instance of a parallel operator); used
	// while starting only.
	outMeters []int
	exchanges int // hash exchanges started so far (relay.go); while starting only
	frags     int // fragments numbered so far (labels.go); while starting only
	// routes are the routings of the split source scans whose readers
	// route their rows for the exchange reading them (route.go); while
	// starting only.
	routes map[*stream.Scan]scanRoute
	// shared are the shared reads of sources (share.go), by share; while
	// starting only.
	shared map[*stream.ScanShare]*sharedRead
	// leads are the alignments of the lead scans that another scan is
	// kept behind (splitalign.go); while starting only.
	leads map[*stream.ScanLead]*splitAlign
	// subplans are the started groups of Shared subtrees (share.go);
	// while starting only.
	subplans map[*stream.SharedGroup]*teed
	outFrag  int // the fragment of the job's output: the last gather, the writer
	// rootMeters are outMeters of the plan's root, set with meters.
	rootMeters []int
	// meters count each operator's rows (opstats.go); set while the job
	// starts, fixed once it runs.
	meters []*opMeter

	subMu     sync.Mutex
	delivered uint64 // the last epoch handed to subscribers
	subs      []*changeSub
	clog      *viewLog // the view's changelog (nil: none); guarded by subMu
}

// Recovery is how a job started while the runtime was recovering (fixed
// when StartJob returns).
type Recovery struct {
	// Epoch is the checkpoint the job resumed from (0: it was not resumed:
	// a new job, or one rebuilt from its inputs).
	Epoch uint64
	// Bytes is the size of the state the job restored; Rows the rows of
	// its view then.
	Bytes, Rows int64
	// Rebuilt says why a job the checkpoint had was rebuilt from its
	// inputs instead ("" if it was not).
	Rebuilt string
	// RescaledFrom is the parallelism of the checkpoint when the job
	// resumed with another one (its keyed state redistributed by vnode;
	// 0: it did not).
	RescaledFrom int
}

// Recovery reports how the job started (see Recovery).
func (j *Job) Recovery() Recovery { return j.recovery }

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

// Counters are a job's running totals (streamsql_views).
type Counters struct {
	RowsIn   int64 // rows its leaves read (backfills included)
	RowsOut  int64 // rows it emitted: the view's net changes per epoch, or the rows passed to its sink
	ViewRows int64 // rows in the view now (0 for a sink)
	LateRows int64 // rows operators dropped as late
	LateLost int64 // late rows that LATE ROWS INTO could not store
}

// Counters returns the job's counters.
func (j *Job) Counters() Counters {
	return Counters{RowsIn: j.rowsIn.Load(), RowsOut: j.rowsOut.Load(), ViewRows: j.viewRows.Load(),
		LateRows: j.lateRows.Load(), LateLost: j.lateLost.Load()}
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

// LastRows returns the view's rows as of its last completed epoch even when
// the job has failed (a failed view keeps the rows it had; see ReadViews).
func (j *Job) LastRows() (uint64, []arrow.RecordBatch, error) {
	if j.view == nil {
		return 0, nil, errNoView
	}
	return j.view.SnapshotEpoch()
}

// StartJob plans the inputs of spec's leaves and starts the job. Its first
// epoch is the next one injected.
func (rt *Runtime) StartJob(spec JobSpec) (*Job, error) {
	ctx, cancel := context.WithCancel(context.Background())
	j := &Job{rt: rt, spec: spec, env: stream.NewEnv(ctx, rt.cfg.Eval), started: time.Now()}
	_ = cancel // the env's own cancel (Fail) and stop() end the job
	j.env.OnRowError = j.rowError
	j.env.Clock = rt.cfg.Clock
	j.env.OnLate = j.onLate
	if spec.LateRows != nil {
		j.late = newLateWriter(rt.ck != nil && stream.Checkpointable(spec.Plan))
	}
	var m *stream.Materialize
	if spec.Sink == nil {
		m = &stream.Materialize{Input: spec.Plan, Key: spec.Key, Cols: spec.Cols, OnEpoch: j.onEpoch}
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
	j.noteRoutes(spec.Plan)
	var ri *resumeInputs
	if rt.ck != nil {
		var view stream.Node
		if m != nil {
			view = m
		}
		ck := newJobCkpt(rt, j, view)
		j.env.Checkpoints = ck
		if ri = rt.prepareResume(j); ri != nil {
			ck.resume, ck.rec, ck.scale = true, ri.rec, ri.scale
			// a parked job's state is in no later checkpoint, and a
			// rescaled one's is under other ids: the first snapshots are
			// full
			if ri.parked || ri.scale != nil {
				ck.fullNext = map[string]*atomic.Bool{}
				for _, id := range ck.allIDs() {
					ck.fullNext[id] = new(atomic.Bool)
					ck.fullNext[id].Store(true)
				}
			}
			if err := j.restoreView(ck, m, ri.epoch); err != nil {
				ri.close()
				rt.cfg.Logf("materialized view %s is rebuilt from its inputs instead of resuming: %v", spec.Name, err)
				ri, ck.resume = nil, false
				j.view = m.NewView()
				j.recovery = Recovery{Rebuilt: err.Error()}
			} else {
				j.recovery = Recovery{Epoch: ri.epoch, Bytes: ck.restoredBytes(), Rows: j.viewRows.Load()}
				if ri.scale != nil {
					j.recovery.RescaledFrom = ri.scale.from
				}
			}
		}
	}
	if spec.Sink != nil {
		j.sink = newSinkState(j, ri)
	}
	if ri != nil && j.late != nil && j.late.twoPhase {
		j.resumeLate(ri)
	}
	j.first = rt.epoch + 1
	j.delivered = rt.epoch
	if ri != nil {
		j.resumed = true
		j.marks.restore(ri.meta.Marks)
		j.done.Store(ri.epoch)
		j.delivered = ri.epoch
	}
	if rt.cl != nil && spec.Changelog && j.view != nil {
		var from uint64
		if ri != nil && !ri.parked { // a parked job's log went on without it
			from = ri.epoch
		}
		rt.openViewLog(j, from)
	}
	out, err := j.startTree(spec.Plan, ri)
	j.rootMeters = j.outMeters
	if err != nil {
		cancel()
		j.env.Fail(err)
		j.wg.Wait()
		return nil, err
	}
	if j.view != nil && carriesWatermarks(spec.Plan) {
		j.labeled(j.outFrag, 0, 1, RoleWriter, "", func() { out = j.tap(out) })
	}
	if j.late != nil {
		j.wg.Add(1)
		j.labeled(j.outFrag, 0, 1, RoleWriter, "", func() { go j.writeLate() })
	}
	rt.jobs[spec.ID] = j
	if rt.ck != nil {
		rt.ck.unpark(spec.ID) // resumed from it, or rebuilt: newer either way
	}
	j.wg.Add(1)
	j.labeled(j.outFrag, 0, 1, RoleWriter, "", func() { go j.write(out, cancel) })
	return j, nil
}

// write runs the job's view writer (or sink) over out until it ends; it
// ends the job's context then.
func (j *Job) write(out <-chan stream.Message, cancel context.CancelFunc) {
	defer j.wg.Done()
	defer cancel()
	var err error
	if j.view != nil {
		env := j.env
		if j.meters != nil {
			env = env.WithMeter(&j.viewMeter)
		}
		err = j.view.Run(env, out)
	} else {
		err = j.runSink(out)
	}
	if err != nil && !j.stopped.Load() {
		j.fail(err)
	}
}

var errNoView = pgerr.New(pgerr.ObjectNotInPrerequisiteState, "this job writes to a sink and keeps no rows")

// restoreView loads the view's rows from the checkpoint (published as of
// its epoch).
func (j *Job) restoreView(ck *jobCkpt, m *stream.Materialize, epoch uint64) error {
	if m == nil {
		return nil
	}
	if r := ck.Restored(m); r != nil {
		if err := j.view.RestoreAt(r, epoch); err != nil {
			return err
		}
	} else if err := j.view.RestoreAt(emptyState{}, epoch); err != nil {
		return err
	}
	j.viewRows.Store(j.view.Rows())
	return nil
}

// emptyState is an operator state with nothing in it.
type emptyState struct{}

func (emptyState) Len() int                                  { return 0 }
func (emptyState) Range(func(key, value []byte) error) error { return nil }

// startTree starts n's operators, feeding its leaves, and returns their
// output as one stream (the instances of its fragment gathered,
// fragments.go); rt.mu is held.
func (j *Job) startTree(n stream.Node, ri *resumeInputs) (<-chan stream.Message, error) {
	f, err := j.startFlow(n, ri)
	if err != nil {
		return nil, err
	}
	j.outMeters = f.meters
	j.outFrag = j.newFragment()
	return j.gather(f, j.outFrag, 0, 1), nil
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

// stop ends the job without failing it; reason (errStopped or Dropped) is
// what its subscribers are told.
func (j *Job) stop(reason error) {
	j.stopReason.Store(&reason)
	j.stopped.Store(true)
	j.env.Fail(errStopped)
	j.endSubs(reason)
	j.wg.Wait()
	j.subMu.Lock()
	if j.clog != nil && j.clog.log != nil {
		j.clog.log.Close()
	}
	j.subMu.Unlock()
}

var errStopped = errors.New("dataflow: job stopped")

// stopErr is why the job stopped: its failure, else the reason it was
// stopped for (errStopped by default).
func (j *Job) stopErr() error {
	if err := j.Err(); err != nil {
		return err
	}
	if p := j.stopReason.Load(); p != nil {
		return *p
	}
	return errStopped
}

// DroppedError is the reason a job or its input ended because a relation
// was dropped: subscribers are told "subscription ended: <kind> "<name>"
// was dropped" (55000, as PostgreSQL reports objects that went away under
// a statement).
type DroppedError struct{ Kind, Name string }

func (e *DroppedError) Error() string { return fmt.Sprintf("%s \"%s\" was dropped", e.Kind, e.Name) }

// PlanScans returns the leaves of a job's plan: what it reads.
func PlanScans(n stream.Node) []*stream.Scan {
	if s, ok := n.(*stream.Scan); ok {
		return []*stream.Scan{s}
	}
	var out []*stream.Scan
	for _, c := range n.Inputs() {
		out = append(out, PlanScans(c)...)
	}
	return out
}

// Dropped is the error for relation name of kind ("table", "materialized
// view") dropped under a job or subscription.
func Dropped(kind, name string) error { return &DroppedError{Kind: kind, Name: name} }

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
		j.rowsOut.Add(int64(changes.Len()))
		if j.view != nil {
			var d int64
			for i := 0; i < changes.Len(); i++ {
				d += changes.Op(i).Sign()
			}
			j.viewRows.Add(d)
		}
	}
	marks := j.marks.commit(e)
	if j.rt.isCheckpoint(e) {
		j.rt.recordMarks(e, j.spec.ID, j.marks.all())
	}
	j.subMu.Lock()
	clientChanges, toClients := j.logEpoch(e, changes)
	live := j.subs[:0]
	for _, s := range j.subs {
		if s.dead {
			continue
		}
		if s.active {
			it := subItem{epoch: e, changes: changes, marks: marks}
			if s.client != nil {
				it.changes = clientChanges
			}
			if (s.client == nil || toClients) && !s.deliver(j, it) {
				continue // ended
			}
		}
		live = append(live, s)
	}
	j.subs = live
	j.delivered = e
	for _, s := range j.subs {
		if !s.active && !s.dead && s.after <= e && j.mayActivate(s) {
			j.activate(s)
		}
	}
	j.subMu.Unlock()
	j.done.Store(e)
	if f := j.rt.cfg.OnEpoch; f != nil {
		f(j.spec.Name, time.Since(EpochTime(e)))
	}
	j.rt.progressed()
}

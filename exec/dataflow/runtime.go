package dataflow

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/storage/checkpoint"
)

// DefaultBarrierInterval is the epoch length unless Config says otherwise.
const DefaultBarrierInterval = 100 * time.Millisecond

// The bounds of subscribers' unread changes unless Config says otherwise.
const (
	DefaultSubscribeBufferBytes int64 = 32 << 20  // one subscriber, in memory
	DefaultSubscribeMemoryLimit int64 = 256 << 20 // all subscribers, in memory
	DefaultSubscribeSpillBytes  int64 = 1 << 30   // one subscriber's spill file
)

// Config configures a Runtime.
type Config struct {
	// BarrierInterval is the time between injected barriers; 0 means
	// DefaultBarrierInterval, a negative value injects only on Flush (tests).
	BarrierInterval time.Duration
	// Eval is the expression context template of every job.
	Eval expr.Context
	// Logf receives operational messages; nil discards them.
	Logf func(format string, args ...any)
	// SubscribeBufferBytes bounds the changes one subscriber leaves unread
	// in memory, as the size of their Arrow buffers (0:
	// DefaultSubscribeBufferBytes). Past it, a view's subscriber reads on
	// from the view's changelog, any other spills to SubscribeSpill.
	SubscribeBufferBytes int64
	// SubscribeMemoryLimit bounds the unread changes of all subscribers
	// together (0: DefaultSubscribeMemoryLimit): a subscriber whose next
	// update would pass it goes to its changelog or spills, as above.
	SubscribeMemoryLimit int64
	// SubscribeSpill is the directory of the spill files of subscribers
	// without a usable changelog (subscriptions to tables and queries).
	// New empties it (files of a previous run). "": no spilling; such a
	// subscriber ends with 53400 at the bound.
	SubscribeSpill string
	// SubscribeSpillBytes bounds one subscriber's spill file (0:
	// DefaultSubscribeSpillBytes); past it the subscription ends (53400).
	SubscribeSpillBytes int64
	// Clock is processing time for every job (stream.Env.Clock): idle
	// watermarks, EARLY EVERY, EMIT EVERY, PROCTIME(). Nil: the wall clock;
	// a *ManualClock makes AdvanceClock work. Barriers stay on wall time.
	Clock stream.Clock
	// Checkpoints, if set, receives a checkpoint of every job's state every
	// CheckpointInterval (checkpoint.go).
	Checkpoints *checkpoint.Store
	// CheckpointInterval is the time between checkpoints; 0 means
	// DefaultCheckpointInterval, a negative value checkpoints only when
	// Checkpoint is called.
	CheckpointInterval time.Duration
	// Recovered is the checkpoint that jobs started before EndRecovery
	// resume from, when their plan is the same (nil: none).
	Recovered *checkpoint.Checkpoint
	// RecoveryPending says that the checkpoint is given later, by
	// Recover (the engine reads it in the background while it serves
	// tables): until EndRecovery the ticker injects no barrier and no
	// checkpoint begins (Checkpoint waits), as while jobs resume.
	RecoveryPending bool
	// Changelogs, if set, is the directory of the views' changelogs
	// (changelog.go): subscribers resume with SubscribeSince, also after
	// a restart.
	Changelogs string
	// ChangelogRetention is how long changes stay in a changelog; 0 means
	// DefaultChangelogRetention.
	ChangelogRetention time.Duration
	// NoOperatorStats turns per-operator counting off (opstats.go; for
	// measuring its cost): Job.Operators is then nil.
	NoOperatorStats bool
	// OnEpoch, if set, is called when a job completes an epoch, with the
	// time since the epoch's barrier was injected (the barrier latency).
	// Called from the job's goroutine: it must not block.
	OnEpoch func(job string, latency time.Duration)
	// OnCheckpoint, if set, is called once a checkpoint committed (err
	// nil, stats of it) or failed. Must not block.
	OnCheckpoint func(stats CheckpointStats, err error)
	// OnSinkCommit, if set, is called after a sink's writer committed an
	// epoch, with how long Commit took. Called from the sink job's
	// goroutine: it must not block.
	OnSinkCommit func(sink string, d time.Duration)
	// Relay, if set, carries the outputs of hash exchanges (relay.go):
	// the network exchange of a cluster. Nil: in-process channels.
	Relay Relay
	// Placement, if set, may run instances of parallel operators on
	// other nodes (remote.go). Nil: every instance runs here.
	Placement Placement
	// PlacedCheckpoints says that the instances the Placement runs
	// elsewhere checkpoint themselves (a cluster's workers, to object
	// storage: cluster/dist): a job with placed instances may then run
	// with Checkpoints, whose checkpoints hold only this process's part.
	// Without it such a job is refused (0A000).
	PlacedCheckpoints bool
	// DeferSinkCommits holds sinks' commits back after a checkpoint is
	// committed here until SinksDurable names it (a cluster: the
	// checkpoint is whole only once the cluster committed it; sinkjob.go).
	DeferSinkCommits bool
}

// Delta is one committed write to a table, in commit order: the rows it
// removed, then the rows it added. For an UPDATE (Update set), row i of
// Deleted became row i of Inserted.
type Delta struct {
	Deleted  []arrow.RecordBatch
	Inserted []arrow.RecordBatch
	Update   bool
}

// Position is a point in a table's changelog (storage.Position, opaque
// here): the place of an epoch's barrier in the table's writes.
type Position any

// Feed is a table's change feed after a snapshot (storage.Feed, adapted).
type Feed interface {
	// PollTo returns the deltas up to position p (from
	// Inputs.TablePosition), or the error that ended the feed (the table
	// was altered or dropped).
	PollTo(p Position) ([]Delta, error)
	// Close detaches the feed.
	Close()
}

// RunFunc reads a source from its start, sending batches to emit until the
// input ends (nil), ctx ends, or an error (see connector.Reader.Run).
type RunFunc func(ctx context.Context, emit func(arrow.RecordBatch) error) error

// Inputs resolves the leaves of plans; the engine implements it.
type Inputs interface {
	// SubscribeTable returns a table's live rows now and the feed of its
	// later changes, atomically.
	SubscribeTable(oid uint32) ([]arrow.RecordBatch, Feed, error)
	// TablePosition returns the table's position now: the point after its
	// last durable write.
	TablePosition(oid uint32) Position
	// OpenSource returns a fresh reader of a source, and whether the source
	// is finite (ends by itself without waiting for time or input: FLUSH
	// then waits for its end). onError receives the input records the
	// reader skipped.
	OpenSource(oid uint32, onError func(error)) (run RunFunc, finite bool, err error)
}

// Runtime runs the jobs of one engine. Safe for concurrent use.
type Runtime struct {
	cfg Config
	in  Inputs

	// holdMu is held by every injection of an epoch (before mu) and by
	// HoldEpochs: while it is held no epoch starts.
	holdMu sync.Mutex
	mu     sync.Mutex // registration and injection; guards the fields below
	epoch  uint64     // the last epoch injected
	jobs   map[uint32]*Job
	closed bool

	ck *ckptState // nil without checkpoints
	// pending is set from New to EndRecovery with Config.RecoveryPending.
	pending atomic.Bool
	cl      *clState // nil without changelogs

	// subMem is the size of every subscriber's unread changes in memory
	// (Config.SubscribeMemoryLimit bounds it).
	subMem atomic.Int64

	progMu sync.Mutex
	prog   chan struct{} // closed (and replaced) when any job completes an epoch

	stop chan struct{}
	wg   sync.WaitGroup
}

// New starts a runtime; Close stops it.
func New(cfg Config, in Inputs) *Runtime {
	if cfg.BarrierInterval == 0 {
		cfg.BarrierInterval = DefaultBarrierInterval
	}
	if cfg.SubscribeBufferBytes <= 0 {
		cfg.SubscribeBufferBytes = DefaultSubscribeBufferBytes
	}
	if cfg.SubscribeMemoryLimit <= 0 {
		cfg.SubscribeMemoryLimit = DefaultSubscribeMemoryLimit
	}
	if cfg.SubscribeSpillBytes <= 0 {
		cfg.SubscribeSpillBytes = DefaultSubscribeSpillBytes
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.Clock == nil {
		cfg.Clock = stream.WallClock{}
	}
	ck, err := newCkptState(cfg)
	if err != nil {
		cfg.Logf("%v: views are rebuilt from their inputs", err)
		cfg.Recovered = nil
		ck, _ = newCkptState(cfg)
	}
	if cfg.SubscribeSpill != "" {
		clearSpills(cfg.SubscribeSpill, cfg.Logf)
	}
	rt := &Runtime{cfg: cfg, in: in, jobs: map[uint32]*Job{}, prog: make(chan struct{}), stop: make(chan struct{}), ck: ck, cl: newCLState(cfg)}
	if ck != nil && cfg.Recovered != nil {
		rt.epoch = cfg.Recovered.Manifest.Epoch // later epochs come after it
	}
	rt.pending.Store(cfg.RecoveryPending)
	if cfg.BarrierInterval > 0 {
		rt.wg.Add(1)
		coordinatorLabeled(func() { go rt.tick() })
	}
	return rt
}

// maxTicksInFlight bounds the epochs the ticker starts ahead of the
// slowest job: while the epoch it injected maxTicksInFlight ticks ago is
// not complete, ticks are skipped. Otherwise barriers pile up in front of
// a job slower than the interval, and FLUSH waits behind all of them
// (FLUSH and CREATE still inject at once).
const maxTicksInFlight = 4

// tick injects a barrier every interval, unless jobs are behind.
func (rt *Runtime) tick() {
	defer rt.wg.Done()
	t := time.NewTicker(rt.cfg.BarrierInterval)
	defer t.Stop()
	var inFlight []uint64 // epochs this ticker injected, oldest first
	var lastCkpt time.Time
	for {
		select {
		case <-rt.stop:
			return
		case <-t.C:
			for len(inFlight) > 0 && rt.completed(inFlight[0]) {
				inFlight = inFlight[1:]
			}
			if rt.recovering() {
				continue // resumed jobs must all start at the checkpoint's epoch
			}
			if len(inFlight) < maxTicksInFlight {
				ckpt := rt.ck != nil && rt.ck.interval > 0 && time.Since(lastCkpt) >= rt.ck.interval
				e, started := rt.inject(ckpt)
				if started {
					lastCkpt = time.Now()
				}
				inFlight = append(inFlight, e)
			}
		}
	}
}

// inject starts an epoch, marked as a checkpoint when ckpt is set and no
// checkpoint is in flight (started reports whether it was).
func (rt *Runtime) inject(ckpt bool) (epoch uint64, started bool) {
	rt.holdMu.Lock()
	defer rt.holdMu.Unlock()
	rt.mu.Lock()
	defer rt.mu.Unlock()
	var run *ckptRun
	if ckpt {
		var err error
		if run, err = rt.beginCheckpointLocked(); err != nil {
			rt.cfg.Logf("checkpoint: %v", err)
		}
	}
	return rt.injectLocked(false, run), run != nil
}

// Inject starts a new epoch: every root reader of every job sends a barrier
// after what it has read so far. It returns the epoch.
func (rt *Runtime) Inject() uint64 {
	rt.holdMu.Lock()
	defer rt.holdMu.Unlock()
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.injectLocked(false, nil)
}

// injectLocked starts an epoch; with flush, finite sources send its barrier
// only once read to their end; with run, the epoch is that checkpoint's
// (its barrier is marked Checkpoint). rt.mu is held.
func (rt *Runtime) injectLocked(flush bool, run *ckptRun) uint64 {
	if run != nil {
		rt.epoch = run.epoch
	} else {
		rt.epoch = nextEpoch(rt.epoch, time.Now())
	}
	// One cut per table: every job reading a table places the barrier at
	// the same write, so views over one table agree at every epoch.
	cuts := map[uint32]Position{}
	for _, j := range rt.jobs {
		for _, r := range j.roots {
			req := barrierReq{epoch: rt.epoch, flush: flush, ckpt: run != nil}
			if r.table != 0 {
				c, ok := cuts[r.table]
				if !ok {
					c = rt.in.TablePosition(r.table)
					cuts[r.table] = c
				}
				req.cut = c
			}
			r.request(req)
		}
	}
	return rt.epoch
}

// HoldEpochs keeps every epoch from starting (the ticker's, FLUSH's,
// CHECKPOINT's injections wait) until release is called: jobs started
// meanwhile, resumed from one checkpoint, all start at its epoch, so a
// view resumed over a view resumed with it takes its changes from there
// (the cluster's restart of views over views,
// docs/contributing/cluster.md). release must be called once; the
// caller must not inject (Flush, Inject) before it.
func (rt *Runtime) HoldEpochs() (release func()) {
	rt.holdMu.Lock()
	var once sync.Once
	return func() { once.Do(rt.holdMu.Unlock) }
}

// Flush injects a barrier and waits until every job that existed then has
// completed that epoch (failed jobs excepted): every change committed before
// the call has then reached every view and subscriber.
func (rt *Runtime) Flush(ctx context.Context) error {
	rt.holdMu.Lock()
	rt.mu.Lock()
	e := rt.injectLocked(true, nil)
	rt.mu.Unlock()
	rt.holdMu.Unlock()
	return rt.settle(ctx, e)
}

// settle waits for epoch e (WaitEpoch), then until the late rows the jobs
// dropped by then are stored (LATE ROWS INTO; with checkpoints it takes
// one, late.go).
func (rt *Runtime) settle(ctx context.Context, e uint64) error {
	if err := rt.WaitEpoch(ctx, e); err != nil {
		return err
	}
	for _, j := range rt.Jobs() {
		if err := j.waitLate(ctx); err != nil {
			return err
		}
	}
	return rt.commitLate(ctx)
}

// WaitEpoch waits until every job that existed when epoch e was injected
// has completed it or failed.
func (rt *Runtime) WaitEpoch(ctx context.Context, e uint64) error {
	return rt.waitProgress(ctx, func() bool { return rt.completed(e) })
}

// waitProgress waits until done holds, checking it again each time a job
// completes an epoch or a checkpoint ends (progressed); it returns ctx's
// error, or errClosed when the runtime closes, if those come first.
func (rt *Runtime) waitProgress(ctx context.Context, done func() bool) error {
	for {
		rt.progMu.Lock()
		ch := rt.prog
		rt.progMu.Unlock()
		if done() {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-rt.stop:
			return errClosed
		}
	}
}

var errClosed = pgerr.New(pgerr.AdminShutdown, "the streaming runtime is shutting down")

func (rt *Runtime) completed(e uint64) bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for _, j := range rt.jobs {
		if j.first <= e && j.done.Load() < e && j.Err() == nil {
			return false
		}
	}
	return true
}

// progressed wakes WaitEpoch callers.
func (rt *Runtime) progressed() {
	rt.progMu.Lock()
	close(rt.prog)
	rt.prog = make(chan struct{})
	rt.progMu.Unlock()
}

// Job returns a running job by id, or nil.
func (rt *Runtime) Job(id uint32) *Job {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.jobs[id]
}

// Jobs returns the running jobs (in no particular order).
func (rt *Runtime) Jobs() []*Job {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	out := make([]*Job, 0, len(rt.jobs))
	for _, j := range rt.jobs {
		out = append(out, j)
	}
	return out
}

// StopJob stops and forgets a job; its subscribers and downstream jobs see
// their input end. Unknown ids are ignored.
func (rt *Runtime) StopJob(id uint32) { rt.StopJobFor(id, errStopped) }

// StopJobFor is StopJob telling the subscribers why (e.g. Dropped).
func (rt *Runtime) StopJobFor(id uint32, reason error) {
	rt.mu.Lock()
	j := rt.jobs[id]
	delete(rt.jobs, id)
	rt.mu.Unlock()
	if j != nil {
		j.stop(reason)
	}
	rt.progressed()
}

// Close stops every job and the barrier ticker.
func (rt *Runtime) Close() {
	rt.mu.Lock()
	if rt.closed {
		rt.mu.Unlock()
		return
	}
	rt.closed = true
	jobs := rt.jobs
	rt.jobs = map[uint32]*Job{}
	rt.mu.Unlock()
	close(rt.stop)
	// Every job is marked stopped before any stops: a view over a view
	// whose upstream stops first must not take that for a failure.
	for _, j := range jobs {
		j.stopped.Store(true)
	}
	for _, j := range jobs {
		j.stop(errStopped)
	}
	rt.wg.Wait()
}

// errJobExists is returned by StartJob for an id already running.
var errJobExists = errors.New("dataflow: job already running")

func internalf(format string, args ...any) error {
	return pgerr.Internal("%s", fmt.Sprintf(format, args...))
}

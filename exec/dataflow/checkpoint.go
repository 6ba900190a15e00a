package dataflow

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/storage/checkpoint"
)

// Checkpoints (design: docs/contributing/checkpoints.md). Every
// Config.CheckpointInterval the ticker marks the barrier it injects as a
// checkpoint; root readers record their positions at the cut, operators
// write their state through the job's Checkpointer as the barrier passes,
// and once every job of the checkpoint has completed the epoch the runtime
// commits it with the positions as metadata.

// DefaultCheckpointInterval is the time between checkpoints unless Config
// says otherwise.
const DefaultCheckpointInterval = time.Second

// TableResumer is implemented by Inputs whose tables can be read from a
// position after a restart (the engine's); SourceResumer by those whose
// sources can. Without them checkpoints still hold the operators' state,
// but jobs reading such inputs cannot resume from them.
type TableResumer interface {
	// PositionLSN is the durable sequence number of a table position
	// (from TablePosition).
	PositionLSN(p Position) uint64
	// TableFeedFrom returns a feed of the table's writes after lsn (no
	// snapshot); an error when they are no longer kept.
	TableFeedFrom(oid uint32, lsn uint64) (Feed, error)
	// RetainTable says that the writes after lsn must stay readable by
	// TableFeedFrom (a checkpoint that cut the table there committed).
	RetainTable(oid uint32, lsn uint64)
	// ReleaseTable says that no checkpoint needs the table's writes any
	// more (no job of the last checkpoint reads it).
	ReleaseTable(oid uint32)
}

// SourceResumer: see TableResumer.
type SourceResumer interface {
	// OpenSourceAt is OpenSource starting at pos (nil: the start); position,
	// if not nil, returns the reader's position after the last batch it
	// passed to emit and is called from within emit.
	OpenSourceAt(oid uint32, pos []byte, onError func(error)) (run RunFunc, position func() []byte, finite bool, err error)
}

// SourceReader is an opened source reader (PartitionedResumer).
type SourceReader struct {
	Run RunFunc
	// Position: see SourceResumer (nil: the reader cannot resume).
	Position func() []byte
	// Partition, when not nil, is the partition of the batch being
	// emitted (called from within emit): the reader is partitioned
	// (connector.Partitioned) and its watermark is kept per partition.
	Partition func() int32
	// Partitions are the partitions the reader reads now, nil while it
	// does not know them yet; safe from any goroutine.
	Partitions func() []int32
	// Marks, if not nil, is told the partitions' watermarks at each
	// barrier (streamsql_sources), on the reader's runtime goroutine.
	Marks  func([]PartMark)
	Finite bool
	// InputEnd, when not nil, is where the reader's unbounded input ends
	// now (connector.Ender): FLUSH holds its barrier until the reader's
	// Position has reached it. Such a reader may emit nil: its position
	// moved without rows.
	InputEnd func(ctx context.Context) ([]byte, error)
	// RunParts, when not nil, runs a reader that routes its rows
	// (connector.PartsReader; route.go) instead of Run.
	RunParts func(ctx context.Context, emit func(parts []arrow.RecordBatch) error) error
	// Recycle, when not nil, takes back the buffers of a batch Run or
	// RunParts emitted (connector.Recycler); the runtime hands it to the
	// batch's chunk (stream.Chunk.Recycle).
	Recycle func(arrow.RecordBatch)
}

// PartMark is one partition's watermark as a partitioned reader's tracker
// has it.
type PartMark struct {
	Partition int32
	WM        int64 // µs, when Has
	Has       bool
	Idle      bool // idle_timeout passed without rows: it does not hold the watermark
}

// PartitionedResumer is a SourceResumer whose readers may be partitioned;
// the runtime opens sources with OpenSourceReader when the inputs have it.
type PartitionedResumer interface {
	// OpenSourceReader opens a reader of source oid for the job (the
	// view's OID) at pos (nil: the start).
	OpenSourceReader(job, oid uint32, pos []byte, onError func(error)) (SourceReader, error)
}

// openSourceAt opens a source reader at pos through res (a
// PartitionedResumer when it is one).
func openSourceAt(res SourceResumer, job, oid uint32, pos []byte, onError func(error)) (sourceRun, error) {
	if pr, ok := res.(PartitionedResumer); ok {
		sr, err := pr.OpenSourceReader(job, oid, pos, onError)
		return readerRun(sr, pos, false), err
	}
	run, position, finite, err := res.OpenSourceAt(oid, pos, onError)
	return sourceRun{run: run, position: position, finite: finite, start: pos}, err
}

// ckptMeta is a checkpoint's runtime record (the manifest's Meta).
type ckptMeta struct {
	Epoch uint64    `json:"epoch"`
	Jobs  []jobMeta `json:"jobs"`
}

// jobMeta is one job in a checkpoint.
type jobMeta struct {
	ID          uint32 `json:"id"`
	Name        string `json:"name"`
	Fingerprint string `json:"fingerprint"`
	// Resumable is false when a root could not record a position (a
	// source without positions): the job is then rebuilt at recovery.
	Resumable bool       `json:"resumable"`
	Roots     []rootMeta `json:"roots"`
	// Marks are the view's output watermarks as of the checkpoint's
	// epoch: a resumed view reports them (streamsql_views) and hands them
	// to the views that read it, as before the restart.
	Marks []stream.Watermark `json:"marks,omitempty"`
	// Parallelism is the largest number of instances of an operator of
	// the job (parallel.go; 0 in checkpoints written before it: 1).
	Parallelism int `json:"parallelism,omitempty"`
	// Shape is the fingerprint of the plan without its Parallel nodes and
	// Par where those were (rescale.go): a job restarted with another
	// parallelism has the same shape ("" in checkpoints written before).
	Shape string    `json:"shape,omitempty"`
	Par   []parMeta `json:"par,omitempty"`
}

// rootMeta is a root reader's position at the cut, in the job's root order.
type rootMeta struct {
	Table  uint32 `json:"table,omitempty"`
	LSN    uint64 `json:"lsn,omitempty"`
	Source uint32 `json:"source,omitempty"`
	Pos    []byte `json:"pos,omitempty"`
	// Resumable: the position was recorded (a table's LSN, a source
	// reader's position; Pos nil is the source's start).
	Resumable bool `json:"resumable"`
	// WM is the reader's watermark (µs), sent again after a resume.
	WM   int64 `json:"wm"`
	HasW bool  `json:"has_wm,omitempty"`
	// Parts are a partitioned source reader's watermarks per partition
	// (the partitions that have one).
	Parts map[int32]int64 `json:"parts,omitempty"`
	// Split and Splits: the root is reader Split of Splits of a split
	// source (split.go; Splits 0: the source's only reader).
	Split  int `json:"split,omitempty"`
	Splits int `json:"splits,omitempty"`
	// Values: the root sends a plan's constant rows (stream.ScanValues);
	// it has no position, and sends nothing after a resume.
	Values bool `json:"values,omitempty"`
}

// CheckpointStats describe the last checkpoint (streamsql_checkpoints).
type CheckpointStats struct {
	Epoch      uint64        // the last committed checkpoint's epoch (0: none)
	Time       time.Time     // when it committed
	Bytes      int64         // what it wrote
	ChainBytes int64         // what a recovery reads
	Full       bool          // it holds every operator's whole state
	Duration   time.Duration // from the barrier's injection to the commit
	Jobs       int           // jobs it holds
	Count      int64         // checkpoints committed since start
	Failures   int64         // checkpoints that failed since start
	LastError  string        // the last failure's error
}

// ckptState is the runtime's checkpoint bookkeeping.
type ckptState struct {
	store    *checkpoint.Store
	interval time.Duration

	mu    sync.Mutex
	cur   *ckptRun
	stats CheckpointStats

	// Recovery: the checkpoint jobs may resume from, until EndRecovery.
	rec    *checkpoint.Checkpoint
	resume map[uint32]*jobMeta

	// parked are the jobs of the recovered checkpoint that could not start
	// at recovery (Park): a later StartJob of one resumes from its state.
	parked map[uint32]*parkedJob

	// prev is the epoch of the checkpoint committed before the last one:
	// recovery may fall back to it, so changelogs keep what follows it.
	prev uint64

	// retained are the tables the last committed checkpoint told to keep
	// their writes (owned by the committing goroutine, one at a time).
	retained map[uint32]bool

	// deferred are, with Config.DeferSinkCommits, the sink jobs of each
	// checkpoint committed here and not yet named by SinksDurable.
	deferred map[uint64][]*Job
}

// ckptRun is one checkpoint in flight.
type ckptRun struct {
	epoch uint64
	w     *checkpoint.Writer
	start time.Time
	jobs  map[uint32]*Job

	mu    sync.Mutex
	roots map[*root]rootMeta
	marks map[uint32][]stream.Watermark // per job, at the epoch
	// sinkPending is each sink job's PreCommit at the epoch.
	sinkPending map[uint32]sinkCkpt
	failed      error
}

func (r *ckptRun) fail(err error) {
	r.mu.Lock()
	if r.failed == nil {
		r.failed = err
	}
	r.mu.Unlock()
}

// newCkptState reads the recovered checkpoint's record; nil without a store.
func newCkptState(cfg Config) (*ckptState, error) {
	if cfg.Checkpoints == nil {
		return nil, nil
	}
	c := &ckptState{store: cfg.Checkpoints, interval: cfg.CheckpointInterval}
	if c.interval == 0 {
		c.interval = DefaultCheckpointInterval
	}
	if err := c.setRecovered(cfg.Recovered); err != nil {
		return nil, err
	}
	return c, nil
}

// setRecovered installs cp (nil: none) as the checkpoint jobs resume from
// and takes the last checkpoint's figures from the store.
func (c *ckptState) setRecovered(cp *checkpoint.Checkpoint) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m := c.store.Last(); m != nil {
		c.stats = CheckpointStats{Epoch: m.Epoch, Time: m.Time, Bytes: m.Bytes(), ChainBytes: m.ChainBytes(), Full: m.Full(), Duration: m.Duration}
	}
	if cp == nil {
		return nil
	}
	var meta ckptMeta
	if err := json.Unmarshal(cp.Manifest.Meta, &meta); err != nil {
		return fmt.Errorf("dataflow: checkpoint %d: bad runtime record: %w", cp.Manifest.Epoch, err)
	}
	c.rec = cp
	c.resume = map[uint32]*jobMeta{}
	c.retained = map[uint32]bool{}
	for i := range meta.Jobs {
		c.resume[meta.Jobs[i].ID] = &meta.Jobs[i]
		for _, r := range meta.Jobs[i].Roots {
			if r.Table != 0 {
				c.retained[r.Table] = true
			}
		}
	}
	c.stats.Jobs = len(meta.Jobs)
	return nil
}

// CheckpointStats returns the last checkpoint's figures.
func (rt *Runtime) CheckpointStats() (CheckpointStats, bool) {
	if rt.ck == nil {
		return CheckpointStats{}, false
	}
	rt.ck.mu.Lock()
	defer rt.ck.mu.Unlock()
	return rt.ck.stats, true
}

// Checkpoint injects a checkpoint barrier and waits until the checkpoint is
// committed (or failed). It returns the checkpoint's epoch.
func (rt *Runtime) Checkpoint(ctx context.Context) (uint64, error) {
	if rt.ck == nil {
		return 0, fmt.Errorf("dataflow: checkpoints are off")
	}
	for {
		rt.holdMu.Lock()
		rt.mu.Lock()
		run, err := rt.beginCheckpointLocked()
		if err != nil {
			rt.mu.Unlock()
			rt.holdMu.Unlock()
			return 0, err
		}
		if run != nil {
			rt.injectLocked(false, run)
			rt.mu.Unlock()
			rt.holdMu.Unlock()
			return run.epoch, rt.waitCheckpoint(ctx, run)
		}
		cur, closed := rt.ck.current(), rt.closed
		rt.mu.Unlock()
		rt.holdMu.Unlock()
		if closed {
			return 0, errClosed
		}
		if cur == nil && rt.recovering() {
			// Jobs are still resuming: no checkpoint until they all have.
			if err := rt.waitProgress(ctx, func() bool { return !rt.recovering() }); err != nil {
				return 0, err
			}
			continue
		}
		if cur == nil && rt.cl.isHolding() {
			// Views hold their changes after a restart: no checkpoint
			// until they have caught up.
			if err := rt.waitProgress(ctx, func() bool { return !rt.cl.isHolding() }); err != nil {
				return 0, err
			}
			continue
		}
		// Another checkpoint is in flight: take the next one after it.
		if err := rt.waitCheckpoint(ctx, cur); err != nil && (ctx.Err() != nil || errors.Is(err, errClosed)) {
			return 0, err
		}
	}
}

// oldestKept is the oldest checkpoint epoch recovery may use (0: not
// known: keep everything).
func (c *ckptState) oldestKept() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.prev
}

func (c *ckptState) current() *ckptRun {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur
}

// waitCheckpoint waits until run (nil: none) is committed or failed and
// returns its failure, or ctx's error or errClosed if those come first.
func (rt *Runtime) waitCheckpoint(ctx context.Context, run *ckptRun) error {
	if err := rt.waitProgress(ctx, func() bool { return rt.ck.current() != run }); err != nil {
		return err
	}
	if run == nil {
		return nil
	}
	run.mu.Lock()
	defer run.mu.Unlock()
	return run.failed
}

// beginCheckpointLocked opens the next checkpoint, or returns nil when one
// is still in flight; rt.mu is held. The epoch is the one injectLocked
// will use next.
func (rt *Runtime) beginCheckpointLocked() (*ckptRun, error) {
	c := rt.ck
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur != nil || rt.closed || rt.cl.isHolding() || rt.pending.Load() || c.rec != nil {
		return nil, nil
	}
	epoch := nextEpoch(rt.epoch, time.Now())
	w, err := c.store.Begin(epoch)
	if err != nil {
		c.stats.Failures++
		c.stats.LastError = err.Error()
		return nil, err
	}
	run := &ckptRun{epoch: epoch, w: w, start: time.Now(), jobs: map[uint32]*Job{}, roots: map[*root]rootMeta{}}
	for id, j := range rt.jobs {
		if j.Err() == nil && stream.Checkpointable(j.spec.Plan) {
			run.jobs[id] = j
		}
	}
	c.cur = run
	rt.wg.Add(1) // Close waits for the commit: nothing writes after it
	coordinatorLabeled(func() {
		go func() {
			defer rt.wg.Done()
			rt.finishCheckpoint(run)
		}()
	})
	return run, nil
}

// testHookCkptKept, when set by a test, runs in finishCheckpoint once the
// jobs kept are decided, before the checkpoint is written.
var testHookCkptKept func(*Runtime)

// finishCheckpoint waits until every job of run completed its epoch (or
// failed or stopped), then commits it.
func (rt *Runtime) finishCheckpoint(run *ckptRun) {
	if err := rt.waitProgress(context.Background(), func() bool { return rt.checkpointReady(run) }); err != nil {
		run.w.Abort() // the runtime is closing
		return
	}
	// The jobs kept are decided under rt.mu: a job stopped since the
	// barrier (dropped, or restarted by an ALTER) or failed is left out and
	// rebuilt at recovery. Close marks every job stopped after it set
	// closed, so a job is never left out for a stop that is only the
	// runtime closing: a runtime that began closing unregisters every job,
	// and its checkpoint is not committed (the previous one stays the last).
	rt.mu.Lock()
	closing := rt.closed
	kept := map[uint32]bool{}
	for id, j := range run.jobs {
		kept[id] = rt.jobs[id] == j && j.Err() == nil && !j.stopped.Load()
	}
	rt.mu.Unlock()
	if closing {
		run.w.Abort()
		return
	}
	if testHookCkptKept != nil {
		testHookCkptKept(rt)
	}
	meta := ckptMeta{Epoch: run.epoch}
	retain := map[uint32]uint64{}
	run.mu.Lock()
	err := run.failed
	for id, j := range run.jobs {
		if !kept[id] {
			continue // left out: rebuilt at recovery
		}
		jm := jobMeta{ID: id, Name: j.spec.Name, Fingerprint: fingerprint(j.spec.Plan), Resumable: true, Parallelism: planParallelism(j.spec.Plan)}
		jm.Shape, jm.Par = shapeOf(j.spec.Plan)
		for _, r := range j.roots {
			rm, ok := run.roots[r]
			if !ok || !rm.Resumable {
				jm.Resumable = false
			}
			if rm.Table != 0 {
				retain[rm.Table] = rm.LSN
			}
			jm.Roots = append(jm.Roots, rm)
		}
		jm.Marks = run.marks[id]
		meta.Jobs = append(meta.Jobs, jm)
		if j.sink != nil && err == nil {
			err = writeSinkPending(run, id, run.sinkPending[id])
		}
		if j.late != nil && j.late.twoPhase && err == nil {
			err = writeLatePending(run, id, j.late.cut(run.epoch))
		}
	}
	run.mu.Unlock()
	var m checkpoint.Manifest
	if err == nil {
		var data []byte
		if data, err = json.Marshal(meta); err == nil {
			m, err = run.w.Commit(data)
		} else {
			run.w.Abort()
		}
	} else {
		run.w.Abort()
	}
	c := rt.ck
	if err == nil {
		if res, ok := rt.in.(TableResumer); ok {
			for oid, lsn := range retain {
				res.RetainTable(oid, lsn)
			}
			for oid := range c.retained {
				if _, still := retain[oid]; !still {
					res.ReleaseTable(oid)
				}
			}
			c.retained = map[uint32]bool{}
			for oid := range retain {
				c.retained[oid] = true
			}
		}
	}
	c.mu.Lock()
	if err != nil {
		run.fail(err)
		c.stats.Failures++
		c.stats.LastError = err.Error()
		rt.cfg.Logf("checkpoint %d failed (views go on; the next one is tried at the next interval): %v", run.epoch, err)
	} else {
		c.prev = c.stats.Epoch
		c.stats.Epoch, c.stats.Time, c.stats.Bytes, c.stats.ChainBytes = m.Epoch, m.Time, m.Bytes(), m.ChainBytes()
		c.stats.Full, c.stats.Duration, c.stats.Jobs = m.Full(), time.Since(run.start), len(meta.Jobs)
		c.stats.Count++
	}
	c.cur = nil
	stats := c.stats
	c.mu.Unlock()
	if err == nil && rt.cfg.DeferSinkCommits { // before OnCheckpoint, which may lead to SinksDurable
		rt.checkpointSinks(run, meta.Jobs)
	}
	if f := rt.cfg.OnCheckpoint; f != nil {
		f(stats, err)
	}
	if err == nil && !rt.cfg.DeferSinkCommits { // sinks commit what this checkpoint holds (sinkjob.go)
		rt.checkpointSinks(run, meta.Jobs)
	}
	rt.progressed()
}

// checkpointReady reports whether every job of run is past its epoch.
func (rt *Runtime) checkpointReady(run *ckptRun) bool {
	for id, j := range run.jobs {
		if (j.done.Load() < run.epoch || !j.reportedAll(run.epoch)) && j.Err() == nil && !j.stopped.Load() && rt.Job(id) == j {
			return false
		}
	}
	return true
}

// isCheckpoint reports whether epoch is the checkpoint in flight (a view's
// downstream jobs forward its barriers, which carry no flag).
func (rt *Runtime) isCheckpoint(epoch uint64) bool {
	if rt.ck == nil {
		return false
	}
	run := rt.ck.current()
	return run != nil && run.epoch == epoch
}

// recordRoot notes a root reader's position at checkpoint epoch's cut.
func (rt *Runtime) recordRoot(epoch uint64, r *root, rm rootMeta) {
	if rt.ck == nil {
		return
	}
	run := rt.ck.current()
	if run == nil || run.epoch != epoch {
		return
	}
	run.mu.Lock()
	run.roots[r] = rm
	run.mu.Unlock()
}

// recordMarks notes a job's output watermarks as of checkpoint epoch.
func (rt *Runtime) recordMarks(epoch uint64, id uint32, marks []stream.Watermark) {
	if rt.ck == nil || len(marks) == 0 {
		return
	}
	run := rt.ck.current()
	if run == nil || run.epoch != epoch {
		return
	}
	run.mu.Lock()
	if run.marks == nil {
		run.marks = map[uint32][]stream.Watermark{}
	}
	run.marks[id] = marks
	run.mu.Unlock()
}

// fingerprint identifies a plan's shape: its operators' EXPLAIN lines in
// preorder with their depth. A job resumes only into the same plan. A scan
// is identified by its relation's OID, not its name, so that renaming a
// table, source or materialized view (ALTER ... RENAME TO) does not make the
// views reading it start over.
func fingerprint(n stream.Node) string {
	var b strings.Builder
	var walk func(n stream.Node, depth int)
	walk = func(n stream.Node, depth int) {
		fmt.Fprintf(&b, "%d %T %s\n", depth, n, fingerprintLine(n))
		for _, in := range n.Inputs() {
			walk(in, depth+1)
		}
	}
	walk(n, 0)
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:12])
}

// fingerprintLine is n's line in a fingerprint: its EXPLAIN, a scan's
// with its relation's OID for its name.
func fingerprintLine(n stream.Node) string {
	if s, ok := n.(*stream.Scan); ok {
		byOID := *s
		byOID.Name = fmt.Sprintf("oid %d", s.Rel)
		return byOID.Explain()
	}
	return n.Explain()
}

// jobCkpt is a job's stream.Checkpointer: operator ids are the job's id
// and the operator's preorder index in the plan ("v" for the view).
type jobCkpt struct {
	rt     *Runtime
	j      *Job
	ids    map[stream.Node]string
	resume bool                   // restore operators from rec
	rec    *checkpoint.Checkpoint // the checkpoint resumed from
	// fullNext marks the operators whose next snapshot must be full: a
	// job resumed from a parked state, which later checkpoints do not
	// hold, so that their deltas would have no base.
	fullNext map[string]*atomic.Bool
	// inst are the ids of the instances of parallel operators
	// (instanceID), which hold those operators' state.
	inst []string
	// scale, when the job resumes from a checkpoint written at another
	// parallelism, finds each operator's state there (rescale.go).
	scale *rescalePlan
}

func newJobCkpt(rt *Runtime, j *Job, view stream.Node) *jobCkpt {
	c := &jobCkpt{rt: rt, j: j, ids: map[stream.Node]string{}}
	i := 0
	var walk func(n stream.Node)
	walk = func(n stream.Node) {
		c.ids[n] = fmt.Sprintf("%d/%d", j.spec.ID, i)
		i++
		if p, ok := n.(*stream.Parallel); ok && p.N > 1 {
			for k := range p.N {
				c.inst = append(c.inst, instanceID(fmt.Sprintf("%d/%d", j.spec.ID, i), k))
			}
		}
		for _, in := range n.Inputs() {
			walk(in)
		}
	}
	walk(j.spec.Plan)
	if view != nil {
		c.ids[view] = fmt.Sprintf("%d/v", j.spec.ID)
	}
	return c
}

// Restored implements stream.Checkpointer.
func (c *jobCkpt) Restored(n stream.Node) stream.StateReader {
	if c.scale != nil && c.resume && c.ids[n] != fmt.Sprintf("%d/v", c.j.spec.ID) {
		// an operator that runs single now (a Parallel's of N = 1 too)
		return c.scale.oldState(c.rec, n, nil, 0, 1)
	}
	return c.restoredID(c.ids[n])
}

// restoredID is the state of operator id in the checkpoint resumed from.
func (c *jobCkpt) restoredID(id string) stream.StateReader {
	if !c.resume {
		return nil
	}
	if st := c.rec.Op(id); st != nil {
		return st
	}
	return nil
}

// allIDs are the ids of every operator and instance of the job.
func (c *jobCkpt) allIDs() []string {
	out := make([]string, 0, len(c.ids)+len(c.inst))
	for _, id := range c.ids {
		out = append(out, id)
	}
	return append(out, c.inst...)
}

// restoredBytes is the size of the job's state in the recovered
// checkpoint.
func (c *jobCkpt) restoredBytes() int64 {
	var n int64
	if c.scale != nil {
		n += c.scale.restoredBytes(c.rec)
		if c.j.view != nil {
			n += c.rec.Op(fmt.Sprintf("%d/v", c.j.spec.ID)).Bytes()
		}
		return n
	}
	for _, id := range c.allIDs() {
		n += c.rec.Op(id).Bytes()
	}
	return n
}

// Snapshot implements stream.Checkpointer. Write errors (a full disk) fail
// the checkpoint, not the job.
func (c *jobCkpt) Snapshot(n stream.Node, b stream.Barrier, st stream.Stateful) error {
	id, ok := c.ids[n]
	if !ok {
		id = ""
	}
	return c.snapshotID(id, n, b, st)
}

// snapshotID writes st, the state of n, as operator id ("": n has none,
// which fails the checkpoint).
func (c *jobCkpt) snapshotID(id string, n stream.Node, b stream.Barrier, st stream.Stateful) error {
	run := c.rt.ck.current()
	if run == nil || run.epoch != b.Epoch || run.jobs[c.j.spec.ID] != c.j {
		return nil
	}
	if id == "" {
		run.fail(fmt.Errorf("operator %s of %s has no checkpoint id", n.Explain(), c.j.spec.Name))
		return nil
	}
	ow := run.w.Op(id)
	full := run.w.Full()
	if f := c.fullNext[id]; f != nil && f.Swap(false) {
		full = true
	}
	err := st.Snapshot(ow, full)
	if cerr := ow.Close(); cerr != nil {
		run.fail(cerr)
	}
	if err != nil {
		run.fail(fmt.Errorf("%s: %w", c.j.spec.Name, err))
	}
	return nil
}

// CheckpointHasJob says whether checkpoint cp holds job id (its record).
func CheckpointHasJob(cp *checkpoint.Checkpoint, id uint32) bool {
	if cp == nil {
		return false
	}
	for _, j := range CheckpointJobs(&cp.Manifest) {
		if j == id {
			return true
		}
	}
	return false
}

// CheckpointJobs are the jobs checkpoint manifest m holds (none when its
// runtime record cannot be read).
func CheckpointJobs(m *checkpoint.Manifest) []uint32 {
	var meta ckptMeta
	if json.Unmarshal(m.Meta, &meta) != nil {
		return nil
	}
	out := make([]uint32, len(meta.Jobs))
	for i, j := range meta.Jobs {
		out[i] = j.ID
	}
	return out
}

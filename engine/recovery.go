package engine

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/dataflow"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/storage/checkpoint"
)

// Recovery of the materialized views at start (docs/streaming.md,
// "Restarts"; docs/contributing/checkpoints.md, "Recovery at start").
// Open replays the tables' logs and opens the catalog; then, on a goroutine
// of its own with Config.RecoverViewsInBackground (streamsqld), else before
// Open returns, recoverViews reads the last checkpoint, starts every view's
// job in creation order (a resumed view's rows are the checkpoint's as soon
// as its job is registered), waits for every view's first epoch (the
// replay of its inputs after the checkpoint) and ends the runtime's
// recovery. Meanwhile:
//
//   - tables are read and written as usual;
//   - a read of a view waits until its job is registered (the checkpoint is
//     read, its rows restored), then returns the checkpoint's rows with a
//     NOTICE saying it is recovering; a view rebuilt from its inputs (no
//     usable checkpoint) is read once its first epoch is complete;
//   - FLUSH, CHECKPOINT, ADVANCE CLOCK, SUBSCRIBE and the DDL that starts or
//     stops jobs (CREATE, DROP and ALTER of views, tables, sources, RESUME)
//     wait until every view has recovered (waitsForViews);
//   - streamsql_views reports status "recovering" and what it is doing.
//
// Every step is logged: the checkpoint read (epoch, bytes, time), each view
// restored (rows, bytes, time) or rebuilt (why), the replay's progress
// every recoveryLogEvery, each view caught up, and a summary.

// recoveryLogEvery is how often a long replay logs its progress.
var recoveryLogEvery = 5 * time.Second

// recovery is the state of the views' recovery. Its fields are guarded by
// mu; done is closed once every view has recovered or failed.
type recovery struct {
	done  chan struct{}
	start time.Time

	mu     sync.Mutex
	epoch  uint64 // the checkpoint views resume from (0: none, or not read yet)
	loaded bool   // the checkpoint was read
	views  map[uint32]*viewRecovery
}

// viewRecovery is one view's recovery.
type viewRecovery struct {
	name    string
	what    string        // "materialized view" or "sink", for the log
	phase   string        // phaseWaiting ... (guarded by recovery.mu)
	started chan struct{} // closed once its job is registered or failed to start
	since   time.Time     // when its job was started
}

const (
	phaseWaiting    = "waiting for the checkpoint to be read"
	phaseReplaying  = "replaying its input"
	phaseRebuilding = "rebuilding from its inputs"
)

// newRecovery lists the views to recover.
func newRecovery(views []*catalog.Relation, start time.Time) *recovery {
	r := &recovery{done: make(chan struct{}), start: start, views: map[uint32]*viewRecovery{}}
	for _, v := range views {
		r.views[v.OID] = &viewRecovery{name: v.Name, what: relKindWord(v.Kind), phase: phaseWaiting, started: make(chan struct{})}
	}
	return r
}

// relKindWord names a recovered relation's kind in the log.
func relKindWord(k catalog.RelKind) string {
	if k == catalog.KindSink {
		return "sink"
	}
	return "materialized view"
}

// countRecovered says how many materialized views (and sinks, if any) rels
// holds, for the log: "3 materialized views", "2 materialized views and 1
// sinks".
func countRecovered(rels []*catalog.Relation) string {
	sinks := 0
	for _, r := range rels {
		if r.Kind == catalog.KindSink {
			sinks++
		}
	}
	if sinks == 0 {
		return fmt.Sprintf("%d materialized views", len(rels))
	}
	return fmt.Sprintf("%d materialized views and %d sinks", len(rels)-sinks, sinks)
}

// matViews returns the catalog's materialized views and sinks in creation
// order (what a view or sink reads starts first).
func (e *Engine) matViews() []*catalog.Relation {
	var views []*catalog.Relation
	for _, r := range e.cat.Relations() {
		if r.Kind == catalog.KindMatView || r.Kind == catalog.KindSink {
			views = append(views, r)
		}
	}
	sort.Slice(views, func(i, j int) bool { return views[i].OID < views[j].OID })
	return views
}

// recoverViews runs the recovery (see above); cks is nil without
// checkpoints. It returns once every view has recovered or failed, or the
// engine closes.
func (e *Engine) recoverViews(cks *checkpoint.Store, views []*catalog.Relation) {
	rec := e.recov
	defer close(rec.done)
	logf := e.cfg.Logf
	var cp *checkpoint.Checkpoint
	if cks != nil && cks.Newest() != 0 {
		t0 := time.Now()
		cp = cks.Recover()
		if cp != nil {
			m := cp.Manifest
			logf("recovery: read checkpoint %d (taken %s; %s in %d segments) in %s", m.Epoch,
				dataflow.EpochTime(m.Epoch).UTC().Format("2006-01-02 15:04:05.000 UTC"), byteSize(m.ChainBytes()), len(m.Segments), roundDur(time.Since(t0)))
		}
	}
	if err := e.flow.Recover(cp); err != nil {
		logf("recovery: %v: views are rebuilt from their inputs", err)
		cp = nil
	}
	epoch := e.flow.RecoveredEpoch()
	e.recovered.Store(epoch)
	rec.mu.Lock()
	rec.epoch, rec.loaded = epoch, true
	rec.mu.Unlock()

	var jobs []*dataflow.Job
	resumed, rebuilt, failed := 0, 0, 0
	for _, r := range views {
		vr := rec.views[r.OID]
		if e.isClosed() { // a stop during the recovery: nothing failed
			close(vr.started)
			continue
		}
		vr.since = time.Now()
		start, what := e.startView, vr.what
		if r.Kind == catalog.KindSink {
			start = e.startSink
		}
		err := start(r)
		if err != nil {
			logf("%s %s did not start: %v", what, r.Name, err)
			e.viewErrs.Store(r.OID, err)
			if r.Kind == catalog.KindMatView {
				e.keepCheckpointedRows(r) // failedviews.go
				e.flow.Park(r.OID)        // RESUME starts it from the checkpoint
			}
			failed++
		}
		j := e.flow.Job(r.OID)
		rec.mu.Lock()
		switch {
		case j == nil:
			vr.phase = "" // failed: not recovering any more
		case j.Recovery().Epoch != 0:
			vr.phase = phaseReplaying
			resumed++
			jr := j.Recovery()
			logf("recovery: %s %s: restored from checkpoint %d: %d rows, %s of state, in %s; %s",
				what, r.Name, jr.Epoch, jr.Rows, byteSize(jr.Bytes), roundDur(time.Since(vr.since)), phaseReplaying)
		default:
			vr.phase = phaseRebuilding
			rebuilt++
			why := "the checkpoint does not have it"
			if cp == nil {
				why = "no checkpoint"
			}
			if jr := j.Recovery(); jr.Rebuilt != "" {
				why = jr.Rebuilt
			}
			logf("recovery: %s %s: %s (%s)", what, r.Name, phaseRebuilding, why)
		}
		rec.mu.Unlock()
		if j != nil {
			jobs = append(jobs, j)
		}
		close(vr.started)
	}
	if len(views) > 0 && e.cfg.RecoveryGate != nil {
		e.cfg.RecoveryGate(e.closing)
	}
	if len(jobs) > 0 && !e.isClosed() {
		e.awaitFirstEpoch(jobs)
	}
	e.flow.EndRecovery()
	if e.isClosed() {
		return
	}
	e.flow.PruneChangelogs(func(id uint32) bool {
		r := e.cat.Relation(id)
		return r != nil && r.Kind == catalog.KindMatView
	})
	e.startRetry()
	e.startIngests() // Kafka tables (ingest.go): after the views, as before
	if len(views) > 0 {
		from := "no checkpoint"
		if epoch != 0 {
			from = fmt.Sprintf("checkpoint %d", epoch)
		}
		failures := "" // (a clean log has no "failed" in it)
		if n := failed + countFailed(jobs); n > 0 {
			failures = fmt.Sprintf("; %d failed, see above", n)
		}
		logf("recovery: all %s ready in %s (from %s: %d resumed, %d rebuilt%s)",
			countRecovered(views), roundDur(time.Since(rec.start)), from, resumed, rebuilt, failures)
	}
}

// awaitFirstEpoch injects the first epoch after the restart and waits
// until every job has completed it (or failed), logging each view that
// caught up and, every recoveryLogEvery, the ones still replaying.
func (e *Engine) awaitFirstEpoch(jobs []*dataflow.Job) {
	rec := e.recov
	first := e.flow.Inject()
	pending := append([]*dataflow.Job(nil), jobs...)
	lastLog := time.Now()
	for len(pending) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := e.flow.WaitJobs(ctx, pending, first)
		cancel()
		if err != nil && ctx.Err() == nil {
			if !e.isClosed() {
				e.cfg.Logf("materialized views did not complete their first epoch: %v", err)
			}
			return // closing
		}
		rest := pending[:0]
		for _, j := range pending {
			if j.Epoch() < first && j.Err() == nil {
				rest = append(rest, j)
				continue
			}
			rec.mu.Lock()
			vr := rec.views[j.Spec().ID]
			vr.phase = ""
			rec.mu.Unlock()
			if err := j.Err(); err != nil {
				continue // logged by the runtime
			}
			e.cfg.Logf("recovery: %s %s: ready in %s (%d rows; %d input rows replayed)",
				vr.what, j.Spec().Name, roundDur(time.Since(vr.since)), j.Counters().ViewRows, j.Counters().RowsIn)
		}
		pending = rest
		if len(pending) > 0 && time.Since(lastLog) >= recoveryLogEvery {
			lastLog = time.Now()
			for _, j := range pending {
				rec.mu.Lock()
				vr := rec.views[j.Spec().ID]
				phase, since := vr.phase, vr.since
				rec.mu.Unlock()
				e.cfg.Logf("recovery: %s %s: still %s after %s (%d input rows so far)",
					vr.what, j.Spec().Name, phase, roundDur(time.Since(since)), j.Counters().RowsIn)
			}
		}
	}
}

func countFailed(jobs []*dataflow.Job) int {
	n := 0
	for _, j := range jobs {
		if j.Err() != nil {
			n++
		}
	}
	return n
}

// recovering returns what view oid is doing while it recovers ("" once it
// has recovered, or if it was not being recovered).
func (e *Engine) recovering(oid uint32) string {
	rec := e.recov
	if rec == nil {
		return ""
	}
	select {
	case <-rec.done:
		return ""
	default:
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	vr := rec.views[oid]
	if vr == nil || vr.phase == "" {
		return ""
	}
	if rec.epoch != 0 && vr.phase == phaseReplaying {
		return fmt.Sprintf("recovering from checkpoint %d: %s", rec.epoch, vr.phase)
	}
	return "recovering: " + vr.phase
}

// recoveryNotices returns a NOTICE for each of views oids that is still
// recovering: its rows are the checkpoint's.
func (e *Engine) recoveryNotices(oids []uint32) []*pgerr.Error {
	var out []*pgerr.Error
	for _, oid := range oids {
		what := e.recovering(oid)
		if what == "" {
			continue
		}
		name := fmt.Sprint(oid)
		if r := e.cat.Relation(oid); r != nil {
			name = r.Name
		}
		n := pgerr.New(pgerr.Code("00000"), "materialized view \"%s\" is %s", name, what).
			WithDetail("Its rows are those of the checkpoint the server restarted from; changes after it appear once its input is replayed.").
			WithHint("FLUSH waits until every view has recovered.")
		n.Severity = pgerr.SevNotice
		out = append(out, n)
	}
	return out
}

// waitRecovered waits until every view has recovered (or failed), or ctx
// ends.
func (e *Engine) waitRecovered(ctx context.Context) error {
	if e.recov == nil {
		return nil
	}
	select {
	case <-e.recov.done:
		return nil
	default:
	}
	select {
	case <-e.recov.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// WaitRecovered waits until every materialized view has recovered from the
// restart (its first epoch is complete) or failed, or ctx ends.
func (e *Engine) WaitRecovered(ctx context.Context) error { return e.waitRecovered(ctx) }

// waitViewsStarted waits until each of views oids has its job registered
// (its checkpointed rows restored) or failed to start; a view being
// rebuilt from its inputs is waited for until its first epoch (it has no
// rows to show before).
func (e *Engine) waitViewsStarted(ctx context.Context, oids []uint32) error {
	rec := e.recov
	if rec == nil || len(oids) == 0 {
		return nil
	}
	select {
	case <-rec.done:
		return nil
	default:
	}
	for _, oid := range oids {
		rec.mu.Lock()
		vr := rec.views[oid]
		rec.mu.Unlock()
		if vr == nil {
			continue
		}
		select {
		case <-vr.started:
		case <-rec.done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
		rec.mu.Lock()
		rebuilding := vr.phase == phaseRebuilding
		rec.mu.Unlock()
		if rebuilding {
			if j := e.flow.Job(oid); j != nil {
				if err := e.flow.WaitJobs(ctx, []*dataflow.Job{j}, 1); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// waitsForViews reports whether statement p must wait until the views
// have recovered: it injects epochs, takes a checkpoint, subscribes, or
// starts or stops jobs (DDL over tables, views and sources).
func waitsForViews(p *Prepared, pl *plan) bool {
	if pl.kind == kindSubscribe {
		return true
	}
	if pl.kind != kindUtility {
		return false
	}
	if x := p.Stmt.Ext; x != nil {
		switch x.Kind {
		case sql.KindFlush, sql.KindAdvanceClock, sql.KindResume, sql.KindDropSource, sql.KindAlterSource, sql.KindCreateSink, sql.KindDropSink:
			return true
		}
		return false
	}
	if p.Stmt.AST == nil {
		return false
	}
	n := p.Stmt.AST
	return n.GetCreateTableAsStmt() != nil || n.GetDropStmt() != nil || n.GetAlterTableStmt() != nil ||
		n.GetRenameStmt() != nil || n.GetCheckPointStmt() != nil || n.GetAlterObjectSchemaStmt() != nil ||
		n.GetDropOwnedStmt() != nil || n.GetDropRoleStmt() != nil
}

// byteSize renders n bytes for a log line.
func byteSize(n int64) string {
	switch {
	case n >= 10<<30:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 10<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 10<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// roundDur rounds a duration for a log line.
func roundDur(d time.Duration) time.Duration {
	switch {
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond)
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(100 * time.Microsecond)
}

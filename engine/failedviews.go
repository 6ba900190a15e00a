package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/dataflow"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// Failed materialized views (docs/streaming.md, "Failed views"). A view
// whose job failed (its source could not be read, an internal error) keeps
// its last rows: reads (SELECT, cursors, COPY) return them with a WARNING
// naming the failure, and ALTER MATERIALIZED VIEW v RESUME starts it again,
// rebuilt from its inputs. A view that did not start at all after a
// restart serves the rows of the checkpoint it would have resumed from
// (frozen), or, without one, cannot be read until it is resumed.

// frozenRows are a view's rows from the recovered checkpoint, kept for a
// view whose job could not start (Engine.frozen).
type frozenRows struct {
	epoch uint64
	rows  []arrow.RecordBatch
	n     int64
}

// keepCheckpointedRows keeps the checkpointed rows of view r, whose job
// could not start at recovery, as its last rows.
func (e *Engine) keepCheckpointedRows(r *catalog.Relation) {
	cols := make([]types.Column, len(r.Columns))
	for i, c := range r.Columns {
		cols[i] = types.Column{Name: c.Name, Type: c.Type}
	}
	epoch, rows, ok, err := e.flow.CheckpointedRows(r.OID, cols)
	if err != nil {
		e.cfg.Logf("materialized view %s: its checkpointed rows cannot be read: %v", r.Name, err)
		return
	}
	if !ok {
		return
	}
	var n int64
	for _, b := range rows {
		n += b.NumRows()
	}
	e.frozen.Store(r.OID, &frozenRows{epoch: epoch, rows: rows, n: n})
	e.cfg.Logf("materialized view %s: serving the %d rows of checkpoint %d until it runs again", r.Name, n, epoch)
}

// frozenOf returns the checkpointed rows kept for view oid, or nil.
func (e *Engine) frozenOf(oid uint32) *frozenRows {
	if f, ok := e.frozen.Load(oid); ok {
		return f.(*frozenRows)
	}
	return nil
}

// viewNotices returns the notices a read of views oids sends before its
// rows: a WARNING for each failed view, a NOTICE for each view still
// recovering from a restart (recovery.go).
func (e *Engine) viewNotices(oids []uint32) []*pgerr.Error {
	return append(e.failedViewNotices(oids), e.recoveryNotices(oids)...)
}

// failedViewNotices returns a WARNING for each of the views oids whose job
// has failed, or did not start; the session sends them before the rows.
func (e *Engine) failedViewNotices(oids []uint32) []*pgerr.Error {
	var out []*pgerr.Error
	for _, oid := range oids {
		j := e.flow.Job(oid)
		if j == nil {
			if err, ok := e.viewErrs.Load(oid); ok {
				if f := e.frozenOf(oid); f != nil {
					name := fmt.Sprint(oid)
					if r := e.cat.Relation(oid); r != nil {
						name = r.Name
					}
					w := pgerr.New(pgerr.Warning, "materialized view \"%s\" did not start: %v", name, err).
						WithDetail("Its rows are those of the checkpoint the server restarted from (%s); they do not change until it runs again.", dataflow.EpochTime(f.epoch).UTC().Format("2006-01-02 15:04:05.000000Z07")).
						WithHint("Fix the cause, then run ALTER MATERIALIZED VIEW %s RESUME.", quoteIdent(name))
					w.Severity = pgerr.SevWarning
					out = append(out, w)
				}
			}
			continue
		}
		if j.Err() == nil {
			continue
		}
		name := j.Spec().Name
		w := pgerr.New(pgerr.Warning, "materialized view \"%s\" failed: %v", name, j.Err()).
			WithDetail("Its rows are those it had when it failed; they do not change until it runs again.").
			WithHint("Fix the cause, then run ALTER MATERIALIZED VIEW %s RESUME.", quoteIdent(name))
		w.Severity = pgerr.SevWarning
		out = append(out, w)
	}
	return out
}

// execResume runs ALTER MATERIALIZED VIEW [IF EXISTS] v RESUME: the view
// (and the views that read it) are stopped and started again from their
// inputs, as CREATE builds a view, and it waits for their first epoch. A
// view that is running is restarted the same way. A view whose source
// cannot be opened yet is left as it is (55000). Only its owner may.
func (s *Session) execResume(ctx context.Context, d *sql.Drop) (*Result, error) {
	if s.tx != 'I' {
		return nil, pgerr.New(pgerr.ActiveSQLTransaction, "ALTER MATERIALIZED VIEW ... RESUME cannot run inside a transaction block")
	}
	schema, name := "", d.Name
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		schema, name = name[:i], name[i+1:]
	}
	rel, err := s.eng.cat.Resolve(schema, name, s.set.searchPath())
	if err != nil || rel == nil {
		if d.IfExists && pgerr.CodeOf(err) == pgerr.UndefinedTable {
			n := pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist, skipping", d.Name)
			n.Severity = pgerr.SevNotice
			return &Result{Tag: "ALTER MATERIALIZED VIEW", Notices: []*pgerr.Error{n}}, nil
		}
		if err == nil {
			err = pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", d.Name)
		}
		return nil, err
	}
	if rel.Kind != catalog.KindMatView {
		return nil, pgerr.New(pgerr.WrongObjectType, "\"%s\" is not a materialized view", rel.Name)
	}
	if err := s.checkOwner(rel); err != nil { // grant.go
		return nil, err
	}
	if err := s.eng.resumeView(rel); err != nil {
		return nil, err
	}
	s.eng.cfg.Logf("materialized view %s: restarted by RESUME, %s", rel.Name, s.eng.howStarted(rel.OID))
	return &Result{Tag: "ALTER MATERIALIZED VIEW"}, nil
}

// sourcesOpen reports why a source rel reads cannot be opened now, or nil.
func (e *Engine) sourcesOpen(rel *catalog.Relation) error {
	for _, oid := range rel.DependsOn {
		if src := e.cat.Relation(oid); src != nil && src.Kind == catalog.KindSource {
			if _, err := e.openConnector(src); err != nil {
				return err
			}
		}
	}
	return nil
}

// resumeView restarts rel and the views reading it, rebuilt from their
// inputs, unless a source of rel cannot be opened (55000: the view stays as
// it is, with its last rows). It reports a view that failed again.
func (e *Engine) resumeView(rel *catalog.Relation) error {
	e.resumeMu.Lock()
	defer e.resumeMu.Unlock()
	if err := e.sourcesOpen(rel); err != nil {
		pe := pgerr.New(pgerr.ObjectNotInPrerequisiteState, "materialized view \"%s\" cannot resume: %v", rel.Name, err)
		if c := pgerr.As(err); c != nil {
			pe.Detail, pe.Hint = c.Detail, c.Hint
		}
		return pe
	}
	views := e.stopViewsOn(rel.OID) // the views reading it, downstream first
	e.flow.StopJob(rel.OID)
	e.restartViews(append([]*catalog.Relation{rel}, views...))
	if err, ok := e.viewErrs.Load(rel.OID); ok {
		return pgerr.New(pgerr.ObjectNotInPrerequisiteState, "materialized view \"%s\" did not start: %v", rel.Name, err)
	}
	if j := e.flow.Job(rel.OID); j != nil && j.Err() != nil {
		return pgerr.New(pgerr.ObjectNotInPrerequisiteState, "materialized view \"%s\" failed again: %v", rel.Name, j.Err())
	}
	return nil
}

// howStarted says how view oid's job started: from a checkpoint, or
// rebuilt from its inputs.
func (e *Engine) howStarted(oid uint32) string {
	if j := e.flow.Job(oid); j != nil {
		if ep := j.Recovery().Epoch; ep != 0 {
			return fmt.Sprintf("resumed from checkpoint %d", ep)
		}
	}
	return "rebuilt from its inputs"
}

// failed reports whether view oid has failed (its job, or its start).
func (e *Engine) failed(oid uint32) bool {
	if j := e.flow.Job(oid); j != nil {
		return j.Err() != nil
	}
	_, ok := e.viewErrs.Load(oid)
	return ok
}

// retryFailedViews restarts, in creation order, each failed view that
// reads a source whose sources open again; a view that reads no source
// (an internal failure) waits for RESUME. It returns the views restarted.
func (e *Engine) retryFailedViews() []string {
	if e.cfg.Cluster != nil {
		return nil // the coordinator restarts them from the cluster's checkpoint (cluster_run.go)
	}
	var views []*catalog.Relation
	for _, r := range e.cat.Relations() {
		if r.Kind == catalog.KindMatView && e.failed(r.OID) {
			views = append(views, r)
		}
	}
	sort.Slice(views, func(i, j int) bool { return views[i].OID < views[j].OID })
	var out []string
	for _, r := range views {
		readsSource := false
		for _, oid := range r.DependsOn {
			if src := e.cat.Relation(oid); src != nil && src.Kind == catalog.KindSource {
				readsSource = true
			}
		}
		if !readsSource || !e.failed(r.OID) || e.sourcesOpen(r) != nil {
			continue
		}
		if err := e.resumeView(r); err != nil {
			e.cfg.Logf("materialized view %s: restart after its failure: %v", r.Name, err)
			continue
		}
		e.cfg.Logf("materialized view %s: its input works again; restarted, %s", r.Name, e.howStarted(r.OID))
		out = append(out, r.Name)
	}
	return out
}

// startRetry starts the loop that calls retryFailedViews every
// Config.ViewRetryInterval.
func (e *Engine) startRetry() {
	d := e.cfg.ViewRetryInterval
	if d < 0 {
		return
	}
	if d == 0 {
		d = 10 * time.Second
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	stop, done := make(chan struct{}), make(chan struct{})
	e.stopRetry, e.retryDone = stop, done
	go func() {
		defer close(done)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				e.retryFailedViews()
			}
		}
	}()
}

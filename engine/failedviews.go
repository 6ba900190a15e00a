package engine

import (
	"context"
	"strings"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
)

// Failed materialized views (docs/streaming.md, "Failed views"). A view
// whose job failed (its source could not be read, an internal error) keeps
// its last rows: reads return them with a WARNING naming the failure, and
// ALTER MATERIALIZED VIEW v RESUME starts it again, rebuilt from its
// inputs. A view that did not start at all (after a restart) has no rows to
// show: reading it is an error until it is resumed.

// failedViewNotices returns a WARNING for each of the views oids whose job
// has failed; the session sends them before the rows.
func (e *Engine) failedViewNotices(oids []uint32) []*pgerr.Error {
	var out []*pgerr.Error
	for _, oid := range oids {
		j := e.flow.Job(oid)
		if j == nil || j.Err() == nil {
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
	e := s.eng
	// Its sources must open now, or the view would lose its last rows for
	// nothing: it stays as it is and RESUME says why.
	for _, oid := range rel.DependsOn {
		if src := e.cat.Relation(oid); src != nil && src.Kind == catalog.KindSource {
			if _, err := e.openConnector(src); err != nil {
				e := pgerr.New(pgerr.ObjectNotInPrerequisiteState, "materialized view \"%s\" cannot resume: %v", rel.Name, err)
				if pe := pgerr.As(err); pe != nil {
					e.Detail, e.Hint = pe.Detail, pe.Hint
				}
				return nil, e
			}
		}
	}
	views := e.stopViewsOn(rel.OID) // the views reading it, downstream first
	e.flow.StopJob(rel.OID)
	e.restartViews(append([]*catalog.Relation{rel}, views...))
	if err, ok := e.viewErrs.Load(rel.OID); ok {
		return nil, pgerr.New(pgerr.ObjectNotInPrerequisiteState, "materialized view \"%s\" did not start: %v", rel.Name, err)
	}
	if j := e.flow.Job(rel.OID); j != nil && j.Err() != nil {
		return nil, pgerr.New(pgerr.ObjectNotInPrerequisiteState, "materialized view \"%s\" failed again: %v", rel.Name, j.Err())
	}
	return &Result{Tag: "ALTER MATERIALIZED VIEW"}, nil
}

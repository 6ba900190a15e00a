package engine

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/types"
)

// alterCatalog is the part of *catalog.Catalog that ALTER TABLE uses.
type alterCatalog interface {
	AlterTable(ctx context.Context, spec catalog.AlterSpec) (*catalog.Relation, error)
}

// generationCatalog is the part of *catalog.Catalog that tells whether a
// prepared plan is stale (any DDL since it was planned).
type generationCatalog interface {
	Generation() any
}

// execAlter runs ALTER TABLE / ALTER VIEW (AlterTableStmt) and their RENAME
// forms (RenameStmt): the planner computes the new definition and the row
// conversion, the catalog rewrites the table and publishes the relation.
// The change is not part of an open transaction block: it is applied (and
// durable) when the statement returns, as CREATE TABLE is.
func (s *Session) execAlter(ctx context.Context, env *planner.Env, node *pg.Node) (*Result, error) {
	var a *planner.Alter
	var err error
	tag := "ALTER TABLE"
	switch n := node.Node.(type) {
	case *pg.Node_AlterTableStmt:
		if n.AlterTableStmt.Objtype == pg.ObjectType_OBJECT_VIEW {
			tag = "ALTER VIEW"
		} else if n.AlterTableStmt.Objtype == pg.ObjectType_OBJECT_SEQUENCE {
			return nil, pgerr.Unsupported("this form of ALTER SEQUENCE is not supported: only its sequence options, RESTART, OWNED BY and OWNER TO are")
		} else if n.AlterTableStmt.Objtype != pg.ObjectType_OBJECT_TABLE {
			return nil, pgerr.Unsupported("ALTER %s is not supported", n.AlterTableStmt.Objtype.String()[len("OBJECT_"):])
		}
		a, err = planner.PlanAlterTable(env, n.AlterTableStmt)
	case *pg.Node_RenameStmt:
		r := n.RenameStmt
		if r.RenameType == pg.ObjectType_OBJECT_VIEW || (r.RenameType == pg.ObjectType_OBJECT_COLUMN && r.RelationType == pg.ObjectType_OBJECT_VIEW) {
			tag = "ALTER VIEW"
		}
		switch r.RenameType {
		case pg.ObjectType_OBJECT_MATVIEW:
			tag = "ALTER MATERIALIZED VIEW"
		case pg.ObjectType_OBJECT_FOREIGN_TABLE:
			tag = "ALTER FOREIGN TABLE"
		}
		a, err = planner.PlanRename(env, r)
	default:
		return nil, fmt.Errorf("engine: execAlter of %T", node.Node)
	}
	if err != nil {
		return nil, err
	}
	res := &Result{Tag: tag, Notices: a.Notices}
	if a.Old == nil { // IF EXISTS found nothing
		return res, nil
	}
	if err := s.checkOwner(a.Old); err != nil { // grant.go
		return nil, err
	}
	if err := refuseConnectorAlter(a); err != nil { // ingest_ddl.go
		return nil, err
	}
	cat, ok := s.eng.cat.(alterCatalog)
	if !ok {
		return nil, pgerr.Unsupported("ALTER TABLE is not supported by this catalog")
	}
	spec := catalog.AlterSpec{Old: a.Old, New: a.New, From: a.From, Views: a.Views, DropViews: a.DropViews, ViewQueries: a.ViewQueries}
	if a.Exprs != nil {
		schema := types.ArrowSchema(a.New.ColumnTypes())
		ectx := s.evalContext(ctx, nil)
		spec.Convert = func(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
			cols := make([]arrow.Array, len(a.Exprs))
			for i, e := range a.Exprs {
				c, err := e.Eval(ectx, rec)
				if err != nil {
					return nil, err
				}
				cols[i] = c
			}
			return array.NewRecordBatch(schema, cols, rec.NumRows()), nil
		}
	}
	if a.Validate != nil { // new or validated CHECK constraints (constraints.go)
		spec.Check = s.validatingCheck(ctx, a.Validate)
	}
	if err := s.validateForeignKeys(ctx, a.New, a.ValidateFKs); err != nil {
		return nil, err
	}
	if a.Old.Kind == catalog.KindTable || a.Exprs != nil {
		// A table's feeds end when its log is rewritten; the materialized
		// views reading it are rebuilt. A view, materialized view or source
		// only renamed keeps its jobs (by OID) running.
		stopped := s.eng.stopViewsOn(a.Old.OID)
		defer s.eng.restartViews(stopped)
	}
	s.eng.layout.Lock()
	_, err = cat.AlterTable(ctx, spec)
	if err == nil {
		s.eng.alters.Add(1)
	}
	s.eng.layout.Unlock()
	if err != nil {
		return nil, err
	}
	return res, nil
}

// generation is the catalog version plans are made against (nil if the
// catalog cannot tell).
func (s *Session) generation() any {
	if g, ok := s.eng.cat.(generationCatalog); ok {
		return g.Generation()
	}
	return nil
}

// lockPlan makes sure p's plan matches the current catalog and keeps it so
// until the returned function is called (at the end of Execute: a SELECT's
// scans have taken their snapshots by then, a DML statement has written).
// ALTER TABLE changes a table's stored layout and publishes the new
// relation under the exclusive lock, so a plan checked under the shared lock
// never meets the other layout.
//
// It also returns the count of ALTERs applied so far, for guardRows.
func (s *Session) lockPlan(ctx context.Context, p *Prepared) (func(), uint64, error) {
	pl, _ := p.plan.(*plan)
	if pl == nil || pl.kind == kindUtility || pl.kind == kindShow {
		return func() {}, 0, nil
	}
	s.eng.layout.RLock()
	if err := s.replanIfStale(ctx, p); err != nil {
		s.eng.layout.RUnlock()
		return nil, 0, err
	}
	return s.eng.layout.RUnlock, s.eng.alters.Load(), nil
}

// guardRows protects a SELECT's open cursor from ALTER TABLE. Scans opened
// by Execute read the layout the plan was made for; but some are opened
// later, while rows are fetched (uncorrelated subqueries), and would meet a
// layout an ALTER changed meanwhile. So each fetch runs under the shared
// layout lock, and once any ALTER has been applied since Execute the cursor
// fails with 40001 (retry the statement) instead of reading a table through
// a stale plan.
func (s *Session) guardRows(res *Result, alters uint64) *Result {
	if res == nil || res.Rows == nil {
		return res
	}
	res.Rows = &layoutIter{Iterator: res.Rows, eng: s.eng, alters: alters}
	return res
}

// layoutIter is a cursor checked against concurrent ALTERs (see guardRows).
type layoutIter struct {
	exec.Iterator
	eng    *Engine
	alters uint64
}

func (l *layoutIter) Next() (arrow.RecordBatch, error) {
	l.eng.layout.RLock()
	defer l.eng.layout.RUnlock()
	if l.eng.alters.Load() != l.alters {
		return nil, pgerr.New(pgerr.Code("40001"), "could not continue the query: a table was altered by a concurrent ALTER TABLE").
			WithHint("Run the statement again.")
	}
	return l.Iterator.Next()
}

// replanIfStale plans p again when DDL has been published since it was
// planned, so that no plan runs against a relation's old definition. As in
// PostgreSQL, a statement whose result columns would change fails with
// 0A000 `cached plan must not change result type`.
func (s *Session) replanIfStale(ctx context.Context, p *Prepared) error {
	pl, _ := p.plan.(*plan)
	if pl == nil || pl.kind == kindUtility || pl.kind == kindShow {
		return nil
	}
	gen := s.generation()
	if (gen == nil || pl.gen == gen) && pl.user == s.user {
		return nil
	}
	oids := make([]uint32, len(p.ParamTypes))
	for i, t := range p.ParamTypes {
		oids[i] = t.OID()
	}
	np, err := s.Prepare(ctx, p.Stmt, oids)
	if err != nil {
		return err
	}
	if !sameColumns(np.Columns, p.Columns) || !sameTypes(np.ParamTypes, p.ParamTypes) {
		return pgerr.New(pgerr.FeatureNotSupported, "cached plan must not change result type")
	}
	p.plan = np.plan
	return nil
}

func sameColumns(a, b []types.Column) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || !a[i].Type.Equal(b[i].Type) {
			return false
		}
	}
	return true
}

func sameTypes(a, b []types.T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

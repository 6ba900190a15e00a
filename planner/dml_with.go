package planner

import (
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
)

// ModifyingCTE is a data-modifying statement in WITH (INSERT, UPDATE or
// DELETE; exactly one of the three is set). As in PostgreSQL it runs
// exactly once whether or not it is read, and it and the statement around
// it read the tables as they were before the statement: the engine
// computes its rows first, applies nothing until the main statement's rows
// are computed too, then applies every write in order. Its RETURNING rows
// are what the main statement reads under its name (SetRows, per
// execution).
//
// A ModifyingCTE belongs to its plan, which several executions may run at
// once: the rows are kept per execution (keyed by its expr.Context) under
// mu.
type ModifyingCTE struct {
	Name   string
	Insert *Insert
	Update *Update
	Delete *Delete

	mu   sync.Mutex
	rows map[*expr.Context][]arrow.RecordBatch
}

// SetRows gives execution ctx's RETURNING rows to the main statement's
// reads of the query.
func (m *ModifyingCTE) SetRows(ctx *exec.Context, rows []arrow.RecordBatch) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rows == nil {
		m.rows = map[*expr.Context][]arrow.RecordBatch{}
	}
	m.rows[ctx.Eval] = rows
}

// Done forgets execution ctx's rows.
func (m *ModifyingCTE) Done(ctx *exec.Context) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.rows, ctx.Eval)
}

func (m *ModifyingCTE) read(ctx *exec.Context) ([]arrow.RecordBatch, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	rows, ok := m.rows[ctx.Eval]
	if !ok {
		return nil, pgerr.Internal("WITH query %s read before it ran", m.Name)
	}
	for _, r := range rows {
		r.Retain()
	}
	return rows, nil
}

// returning is the statement's RETURNING list (nil without one).
func (m *ModifyingCTE) returning() *Returning {
	switch {
	case m.Insert != nil:
		return m.Insert.Returning
	case m.Update != nil:
		return m.Update.Returning
	}
	return m.Delete.Returning
}

// modifyingCTE plans the data-modifying statement of WITH query c, which
// sees the WITH queries before it (l's). Only the outermost statement's
// WITH may hold one (0A000 elsewhere, as in PostgreSQL).
func (b *binder) modifyingCTE(l *level, w *pg.WithClause, c *pg.CommonTableExpr) (*ModifyingCTE, error) {
	if w != b.topWith {
		return nil, b.newErr(pgerr.FeatureNotSupported, c.Location, "WITH clause containing a data-modifying statement must be at the top level")
	}
	if w.Recursive && mentionsRelation(c.Ctequery.ProtoReflect(), c.Ctename) {
		return nil, b.newErr(pgerr.FeatureNotSupported, c.Location, "recursive query \"%s\" must not contain data-modifying statements", c.Ctename)
	}
	outer := &level{ctes: map[string]*cteDef{}}
	for k, v := range l.ctes {
		outer.ctes[k] = v
	}
	m := &ModifyingCTE{Name: c.Ctename}
	var err error
	switch q := c.Ctequery.Node.(type) {
	case *pg.Node_InsertStmt:
		m.Insert, err = planInsertIn(b.env, q.InsertStmt, outer)
	case *pg.Node_UpdateStmt:
		m.Update, err = planUpdateIn(b.env, q.UpdateStmt, outer, false)
	case *pg.Node_DeleteStmt:
		m.Delete, err = planDeleteIn(b.env, q.DeleteStmt, outer, false)
	default:
		return nil, b.newErr(pgerr.FeatureNotSupported, c.Location, "%s in WITH is not supported", nodeKind(c.Ctequery))
	}
	if err != nil {
		return nil, err
	}
	b.modifying = append(b.modifying, m)
	return m, nil
}

// modifyingRef binds a reference to a data-modifying WITH query: a scan of
// the RETURNING rows of the running execution.
func (b *binder) modifyingRef(cte *cteDef, alias string, rv *pg.RangeVar) (lnode, []*nsItem, error) {
	m := cte.mod
	ret := m.returning()
	if ret == nil {
		return nil, nil, b.newErr(pgerr.FeatureNotSupported, rv.Location, "WITH query \"%s\" does not have a RETURNING clause", cte.name)
	}
	if len(cte.colNames) > len(ret.Columns) {
		return nil, nil, b.newErr(pgerr.InvalidColumnReference, cte.loc, "WITH query \"%s\" has %d columns available but %d columns specified", cte.name, len(ret.Columns), len(cte.colNames))
	}
	ids := make([]int, len(ret.Columns))
	for i, c := range ret.Columns {
		name := c.Name
		if i < len(cte.colNames) {
			name = cte.colNames[i]
		}
		ids[i] = b.newCol(name, cte.name, c.Type)
	}
	produce := func(ctx *exec.Context) ([]arrow.RecordBatch, error) { return m.read(ctx) }
	plan := &lFunc{name: cte.name, scan: "CTE Scan", ids: ids, produce: func([]expr.Expr) func(*exec.Context) ([]arrow.RecordBatch, error) { return produce }}
	return b.aliased(plan, alias, rv.Alias)
}

// dmlWith binds the WITH clause of an INSERT, UPDATE or DELETE as a level
// its queries see (nil without one); outer holds the WITH queries of an
// enclosing statement when the statement is itself a WITH query.
func (b *binder) dmlWith(w *pg.WithClause, outer *level) (*level, error) {
	if w == nil {
		return outer, nil
	}
	l := &level{parent: outer}
	if err := b.with(l, w); err != nil {
		return nil, err
	}
	return l, nil
}

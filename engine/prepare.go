package engine

import (
	"context"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// SQL-level prepared statements: PREPARE name [(types)] AS stmt,
// EXECUTE name [(args)], DEALLOCATE [PREPARE] name | ALL. They live in the
// session; the protocol's named statements (Parse messages) are the wire's.

// prepareSQL runs PREPARE.
func (s *Session) prepareSQL(ctx context.Context, p *pg.PrepareStmt, stmt sql.Statement) (*Result, error) {
	if _, dup := s.prepared[p.Name]; dup {
		return nil, pgerr.New(pgerr.DuplicatePreparedStatement, "prepared statement %q already exists", p.Name)
	}
	oids := make([]uint32, len(p.Argtypes))
	for i, a := range p.Argtypes {
		t, err := planner.BindType(a.GetTypeName())
		if err != nil {
			return nil, err
		}
		oids[i] = t.OID()
	}
	inner := stmt
	inner.AST = p.Query
	prep, err := s.Prepare(ctx, inner, oids)
	if err != nil {
		return nil, err
	}
	if s.prepared == nil {
		s.prepared = map[string]*Prepared{}
	}
	s.prepared[p.Name] = prep
	return &Result{Tag: "PREPARE"}, nil
}

// lookupPrepared finds a PREPAREd statement for EXECUTE.
func (s *Session) lookupPrepared(name string) (*Prepared, error) {
	p, ok := s.prepared[name]
	if !ok {
		return nil, pgerr.New(pgerr.InvalidSQLStatementName, "prepared statement %q does not exist", name)
	}
	return p, nil
}

// executeSQL runs EXECUTE: it evaluates the arguments, converts them to the
// statement's parameter types and runs the statement.
func (s *Session) executeSQL(ctx context.Context, e *pg.ExecuteStmt) (*Result, error) {
	p, err := s.lookupPrepared(e.Name)
	if err != nil {
		return nil, err
	}
	params, err := s.executeArgs(ctx, e, p)
	if err != nil {
		return nil, err
	}
	return s.Execute(ctx, p, params)
}

// executeArity checks that EXECUTE gives p as many arguments as it has
// parameters (42601 otherwise, as PostgreSQL).
func executeArity(e *pg.ExecuteStmt, p *Prepared) error {
	if len(e.Params) != len(p.ParamTypes) {
		return pgerr.New(pgerr.SyntaxError, "wrong number of parameters for prepared statement %q", e.Name).
			WithDetail("Expected %d parameters but got %d.", len(p.ParamTypes), len(e.Params))
	}
	return nil
}

// executeArgs evaluates EXECUTE's arguments and converts them to p's
// parameter types.
func (s *Session) executeArgs(ctx context.Context, e *pg.ExecuteStmt, p *Prepared) ([]types.Value, error) {
	if err := executeArity(e, p); err != nil {
		return nil, err
	}
	params := make([]types.Value, len(e.Params))
	if len(e.Params) == 0 {
		return params, nil
	}
	targets := make([]*pg.Node, len(e.Params))
	for i, a := range e.Params {
		targets[i] = &pg.Node{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{Val: a}}}
	}
	sel := &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: &pg.SelectStmt{TargetList: targets}}}
	q, err := planner.PlanSelect(s.env(ctx, nil), sel)
	if err != nil {
		return nil, err
	}
	ectx := s.execContext(ctx, nil)
	rec, err := collect(ectx, q.Root, q.Columns)
	closeBudget(ectx)
	if err != nil {
		return nil, err
	}
	f := s.set.format()
	for i, col := range q.Columns {
		v := types.ValueAt(rec.Column(i), 0, col.Type)
		want := p.ParamTypes[i]
		if v != nil && !col.Type.Equal(want) {
			// Convert through text, as an assignment of a literal would.
			if v, err = types.ParseText(types.FormatText(v, col.Type, &f), want, &f); err != nil {
				return nil, err
			}
		}
		params[i] = v
	}
	return params, nil
}

// deallocate runs DEALLOCATE.
func (s *Session) deallocate(d *pg.DeallocateStmt) (*Result, error) {
	if d.Isall || d.Name == "" {
		s.prepared = nil
		return &Result{Tag: "DEALLOCATE ALL"}, nil
	}
	if _, err := s.lookupPrepared(d.Name); err != nil {
		return nil, err
	}
	delete(s.prepared, d.Name)
	return &Result{Tag: "DEALLOCATE"}, nil
}

package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
)

// A set-returning SQL function in a select list (SELECT f(42), SELECT x,
// f(x) FROM t), as PostgreSQL allows it: the function's inlined body
// (inlineSet) is joined with the query's rows where the select list's
// set-returning functions run (after grouping and window functions), so
// each row is repeated once per row the function returns, and dropped
// when it returns none, as PostgreSQL's ProjectSet does for one such
// function. Over constant arguments the body is computed once and
// cross-joined; arguments that read the row run it once per row (an
// lApply, as a LATERAL subquery), except above GROUP BY or aggregates,
// whose rows those columns are not. Alone in its select list, of one
// column (SETOF t): next to another set-returning function PostgreSQL
// runs them in lockstep, which a join is not.

// selectSetFunction binds fc as a select-list call of a set-returning SQL
// function; ok is false when fc does not name one (every function of its
// name, none built in, returns a set).
func (b *binder) selectSetFunction(l *level, fc *pg.FuncCall, name string) (expr.Expr, bool, error) {
	if b.env == nil || fc.Over != nil || expr.IsBuiltin(name) || exec.IsAggregate(name) || isSRF(name) {
		return nil, false, nil
	}
	fns := b.lookupFunctions(fc)
	if len(fns) == 0 {
		return nil, false, nil
	}
	for _, fn := range fns {
		if !fn.SetOf {
			return nil, false, nil
		}
	}
	if l.clause != inSelect || l.inAgg || l.inWinArg {
		return nil, true, b.newErr(pgerr.FeatureNotSupported, fc.Location, "set-returning functions are not allowed in %s", l.clause)
	}
	plan, _, err := b.userSetFunction(l, fc, false)
	if err != nil {
		return nil, true, err
	}
	ids := plan.outIDs()
	if len(ids) != 1 {
		return nil, true, b.errAt(pgerr.New(pgerr.FeatureNotSupported, "set-returning SQL function %s of several columns in a select list is not supported", name).
			WithHint("Write SELECT ... FROM %s(...).", name), fc.Location)
	}
	l.srfs = append(l.srfs, srfItem{id: ids[0], set: plan})
	return b.colRef(ids[0]), true, nil
}

// setFunctionJoin cross-joins plan with the select list's set-returning
// SQL function, or refuses it next to other set-returning functions.
func (b *binder) setFunctionJoin(l *level, plan lnode) (lnode, error) {
	var set lnode
	for _, f := range l.srfs {
		if f.set != nil {
			set = f.set
		}
	}
	if set == nil {
		return plan, nil
	}
	if len(l.srfs) > 1 {
		return nil, pgerr.Unsupported("a set-returning SQL function next to other set-returning functions in a select list is not supported")
	}
	if len(freeColumns(set)) == 0 {
		return &lJoin{left: plan, right: set, kind: exec.InnerJoin}, nil
	}
	if _, aggregated := aggOf(plan); aggregated {
		return nil, pgerr.Unsupported("a set-returning SQL function whose arguments read columns above GROUP BY or aggregates is not supported")
	}
	return &lApply{left: plan, right: set, kind: exec.InnerJoin}, nil
}

// freeColumns are the column ids n's expressions read that no node of n
// produces: the arguments' columns of the query's row, for an inlined
// set-returning function's body.
func freeColumns(n lnode) map[int]bool {
	produced, read := map[int]bool{}, map[int]bool{}
	var walk func(n lnode)
	walk = func(n lnode) {
		for _, id := range n.outIDs() {
			produced[id] = true
		}
		for _, e := range nodeExprs(n) {
			for id := range refsOf(e) {
				read[id] = true
			}
		}
		for _, c := range nodeChildren(n) {
			walk(c)
		}
	}
	walk(n)
	for id := range produced {
		delete(read, id)
	}
	return read
}

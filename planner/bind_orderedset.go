package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
)

// orderedSetAggs are the ordered-set aggregates exec implements
// (exec/agg_ordered.go): f(direct args) WITHIN GROUP (ORDER BY x).
var orderedSetAggs = map[string]bool{"percentile_cont": true, "percentile_disc": true, "mode": true}

// hypotheticalAggs are PostgreSQL's hypothetical-set aggregates, which
// only exist WITHIN GROUP (not implemented).
var hypotheticalAggs = map[string]bool{"rank": true, "dense_rank": true, "percent_rank": true, "cume_dist": true}

// orderedSetCall binds an aggregate call with WITHIN GROUP, or an
// ordered-set aggregate without it (42809, as PostgreSQL). The call is
// passed to exec as its direct arguments followed by the ordered value,
// with that value's sort key as ORDER BY (exec's calling convention).
func (b *binder) orderedSetCall(l *level, fc *pg.FuncCall, name string) (expr.Expr, error) {
	if !fc.AggWithinGroup {
		return nil, b.newErr(pgerr.WrongObjectType, fc.Location, "WITHIN GROUP is required for ordered-set aggregate %s", name)
	}
	if hypotheticalAggs[name] {
		return nil, b.newErr(pgerr.FeatureNotSupported, fc.Location, "hypothetical-set aggregate %s is not supported", name)
	}
	if fc.AggDistinct {
		return nil, b.newErr(pgerr.SyntaxError, fc.Location, "cannot use DISTINCT with WITHIN GROUP")
	}
	if err := b.aggAllowed(l, fc.Location); err != nil {
		return nil, err
	}
	l.inAgg = true
	defer func() { l.inAgg = false }()
	args, err := b.args(l, fc.Args)
	if err != nil {
		return nil, err
	}
	if len(fc.AggOrder) != 1 {
		return nil, b.newErr(pgerr.UndefinedFunction, fc.Location, "function %s does not exist", name)
	}
	k, err := b.sortKey(l, fc.AggOrder[0].GetSortBy())
	if err != nil {
		return nil, err
	}
	args = append(args, k.E)
	// as PostgreSQL, a function of all the arguments is looked up first
	fn, err := exec.ResolveAggregate(name, argTypes(args), false)
	if err != nil {
		return nil, b.errAt(err, fc.Location)
	}
	if !orderedSetAggs[name] {
		return nil, b.newErr(pgerr.WrongObjectType, fc.Location, "%s is not an ordered-set aggregate, so it cannot have WITHIN GROUP", name)
	}
	if err := b.castArgs(args, fn.Args, fc.Location); err != nil {
		return nil, err
	}
	k.E = args[len(args)-1]
	call := exec.AggCall{Fn: fn, Args: args, OrderBy: []exec.SortKey{k}}
	if fc.AggFilter != nil {
		f, err := b.expr(l, fc.AggFilter)
		if err != nil {
			return nil, err
		}
		if call.Filter, err = b.boolArg(f, "FILTER", nodeLoc(fc.AggFilter)); err != nil {
			return nil, err
		}
	}
	id := b.newCol(name, "", fn.Return)
	l.aggs = append(l.aggs, aggItem{id: id, call: call})
	return b.colRef(id), nil
}

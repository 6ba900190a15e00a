package planner

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
)

// orderedSetAggs are the ordered-set aggregates exec implements
// (exec/agg_ordered.go): f(direct args) WITHIN GROUP (ORDER BY x).
var orderedSetAggs = map[string]bool{"percentile_cont": true, "percentile_disc": true, "mode": true}

// orderedSetCall binds an aggregate call with WITHIN GROUP, or an
// ordered-set aggregate without it (42809, as PostgreSQL). The call is
// passed to exec as its direct arguments followed by the ordered value,
// with that value's sort key as ORDER BY (exec's calling convention).
func (b *binder) orderedSetCall(l *level, fc *pg.FuncCall, name string) (expr.Expr, error) {
	if !fc.AggWithinGroup {
		return nil, b.newErr(pgerr.WrongObjectType, fc.Location, "WITHIN GROUP is required for ordered-set aggregate %s", name)
	}
	if fc.AggDistinct {
		return nil, b.newErr(pgerr.SyntaxError, fc.Location, "cannot use DISTINCT with WITHIN GROUP")
	}
	if exec.IsHypothetical(name) {
		return b.hypotheticalCall(l, fc, name)
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
	return b.addOrderedSet(l, fc, name, exec.AggCall{Fn: fn, Args: args, OrderBy: []exec.SortKey{k}}, len(args)-1)
}

// addOrderedSet binds the FILTER of an ordered-set call and adds it to the
// level's aggregates; its first direct arguments are the direct ones.
func (b *binder) addOrderedSet(l *level, fc *pg.FuncCall, name string, call exec.AggCall, direct int) (expr.Expr, error) {
	fn := call.Fn
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
	l.aggs = append(l.aggs, aggItem{id: id, call: call, direct: direct})
	return b.colRef(id), nil
}

// hypotheticalCall binds rank, dense_rank, percent_rank or cume_dist (h1,
// ..., hn) WITHIN GROUP (ORDER BY x1, ..., xn): as PostgreSQL, n direct
// arguments for n ORDER BY values, each pair unified to one type ("WITHIN
// GROUP types text and integer cannot be matched"). exec gets h1..hn then
// x1..xn, the x keys as ORDER BY (exec/agg_hypothetical.go).
func (b *binder) hypotheticalCall(l *level, fc *pg.FuncCall, name string) (expr.Expr, error) {
	if err := b.aggAllowed(l, fc.Location); err != nil {
		return nil, err
	}
	l.inAgg = true
	defer func() { l.inAgg = false }()
	direct, err := b.args(l, fc.Args)
	if err != nil {
		return nil, err
	}
	keys := make([]exec.SortKey, len(fc.AggOrder))
	for i, o := range fc.AggOrder {
		if keys[i], err = b.sortKey(l, o.GetSortBy()); err != nil {
			return nil, err
		}
	}
	if len(direct) != len(keys) {
		sig := make([]string, 0, len(direct)+len(keys))
		for _, e := range direct {
			sig = append(sig, e.Type().String())
		}
		for _, k := range keys {
			sig = append(sig, k.E.Type().String())
		}
		e := pgerr.New(pgerr.UndefinedFunction, "function %s(%s) does not exist", name, strings.Join(sig, ", ")).
			WithHint("To use the hypothetical-set aggregate %s, the number of hypothetical direct arguments (here %d) must match the number of ordering columns (here %d).", name, len(direct), len(keys))
		e.Position = b.pos(fc.Location)
		return nil, e
	}
	args := make([]expr.Expr, 2*len(keys))
	for i := range keys {
		loc := nodeLoc(fc.Args[i])
		_, pair, err := b.unify([]expr.Expr{keys[i].E, direct[i]}, "WITHIN GROUP", loc)
		if err != nil {
			return nil, err
		}
		keys[i].E, args[i], args[len(keys)+i] = pair[0], pair[1], pair[0]
	}
	fn, err := exec.ResolveHypothetical(name, argTypes(args))
	if err != nil {
		return nil, b.errAt(err, fc.Location)
	}
	return b.addOrderedSet(l, fc, name, exec.AggCall{Fn: fn, Args: args, OrderBy: keys}, len(keys))
}

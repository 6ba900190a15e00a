package planner

import (
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// EXISTS and IN under OR in a materialized view's WHERE:
//
//	WHERE a.k = 1 OR EXISTS (SELECT 1 FROM b WHERE b.k = a.k)
//	WHERE a.g = 'x' OR a.k IN (SELECT k FROM b WHERE v > 3)
//
// A semi join cannot keep a row for one branch of an OR, so each such
// subquery becomes a left join of the rows with the subquery's distinct
// join keys, and the subquery a test of the match: `key IS NOT NULL` (a
// row has at most one match, the keys being distinct). For EXISTS the
// keys are the inner sides of its correlation equalities; without any,
// the subquery is its count, one row, cross-joined (`count > 0`). For IN
// (uncorrelated, `=`) they are the subquery's columns.
//
// The subquery's value becomes false where PostgreSQL's IN would be NULL
// (a NULL on either side and no match): a WHERE keeps the same rows,
// since the subqueries replaced are reached only through AND and OR, under
// which a NULL and a false make a true result alike. Under NOT, in a CASE
// or a comparison they stay subqueries, refused as before.

// markJoins rewrites the IN and EXISTS subqueries of the WHERE condition
// c that are reached through AND and OR only, joining in to what each
// needs; ok is false when c has none.
func (s *streamPlanner) markJoins(in lnode, c expr.Expr) (lnode, expr.Expr, bool, error) {
	var rerr error
	done := false
	var rewrite func(e expr.Expr) expr.Expr
	rewrite = func(e expr.Expr) expr.Expr {
		switch x := e.(type) {
		case *expr.And:
			out := &expr.And{Args: make([]expr.Expr, len(x.Args))}
			for i, a := range x.Args {
				out.Args[i] = rewrite(a)
			}
			return out
		case *expr.Or:
			out := &expr.Or{Args: make([]expr.Expr, len(x.Args))}
			for i, a := range x.Args {
				out.Args[i] = rewrite(a)
			}
			return out
		case *sublink:
			if rerr != nil {
				return e
			}
			j, mark, ok, err := s.markJoin(in, x)
			if err != nil {
				rerr = err
				return e
			}
			if !ok {
				return e
			}
			in, done = j, true
			return mark
		}
		return e
	}
	out := rewrite(c)
	if rerr != nil || !done {
		return nil, nil, false, rerr
	}
	return in, out, true, nil
}

// markJoin joins in with what sublink sl needs and returns the test that
// replaces it (ok false: not a subquery markJoins takes).
func (s *streamPlanner) markJoin(in lnode, sl *sublink) (lnode, expr.Expr, bool, error) {
	switch sl.kind {
	case expr.AnySubquery:
		if _, ok := semiJoinable(sl); !ok {
			return nil, nil, false, nil
		}
		inner := []int{sl.outID}
		if sl.rowLHS != nil {
			inner = sl.rowIDs
		}
		plan, err := s.subqueryJoins(sl.plan)
		if err != nil {
			return nil, nil, false, err
		}
		p := &lProject{in: plan, ids: inner}
		for _, id := range inner {
			p.exprs = append(p.exprs, s.b.colRef(id))
		}
		j := &lJoin{left: in, right: &lDistinct{in: p}, kind: exec.LeftJoin, conds: semiConds(sl)}
		return j, &expr.IsNull{E: s.b.colRef(inner[0]), Not: true}, true, nil
	case expr.ExistsSubquery:
		if len(sl.outer) == 0 && !hasOuterRefs(sl.plan) {
			return s.existsCount(in, sl)
		}
		return s.existsKeys(in, sl)
	}
	return nil, nil, false, nil
}

// existsCount is an uncorrelated EXISTS: the subquery's count, one row.
func (s *streamPlanner) existsCount(in lnode, sl *sublink) (lnode, expr.Expr, bool, error) {
	plan, err := s.subqueryJoins(sl.plan)
	if err != nil {
		return nil, nil, false, err
	}
	count, err := exec.ResolveAggregate("count", nil, true)
	if err != nil {
		return nil, nil, false, err
	}
	id := s.b.newCol("exists", "", types.TInt8)
	agg := &lAgg{in: plan, aggIDs: []int{id}, aggs: []exec.AggCall{{Fn: count}}}
	some, err := expr.NewBinary(">", s.b.colRef(id), &expr.Const{V: int64(0), T: types.TInt8})
	if err != nil {
		return nil, nil, false, err
	}
	return &lJoin{left: in, right: agg, kind: exec.LeftJoin}, some, true, nil
}

// existsKeys is an EXISTS correlated by equalities only (existsJoin's
// shape): the distinct inner sides of its correlations.
func (s *streamPlanner) existsKeys(in lnode, sl *sublink) (lnode, expr.Expr, bool, error) {
	p, ok := sl.plan.(*lProject)
	if !ok {
		return nil, nil, false, nil
	}
	f, ok := p.in.(*lFilter)
	if !ok || hasOuterRefs(f.in) {
		return nil, nil, false, nil
	}
	outer := idSet(in.outIDs())
	innerIDs := idSet(f.in.outIDs())
	var local []expr.Expr
	keys := &lProject{}
	var conds []expr.Expr
	for _, cond := range f.conds {
		depth, ok := outerDepth(cond)
		switch {
		case !ok || depth > 1:
			return nil, nil, false, nil
		case depth == 0:
			local = append(local, cond)
			continue
		}
		a, b, ok := joinEquality(lowerOuter(cond))
		if !ok {
			return nil, nil, false, nil
		}
		if onlyReads(a, outer) {
			a, b = b, a
		}
		if !onlyReads(a, innerIDs) || !onlyReads(b, outer) {
			return nil, nil, false, nil
		}
		id := s.b.newCol("exists_key", "", a.Type())
		keys.ids, keys.exprs = append(keys.ids, id), append(keys.exprs, a)
		c, err := expr.NewBinary("=", b, s.b.colRef(id))
		if err != nil {
			return nil, nil, false, err
		}
		conds = append(conds, c)
	}
	if len(conds) == 0 {
		return nil, nil, false, nil
	}
	base, err := s.subqueryJoins(filterOver(f.in, local))
	if err != nil {
		return nil, nil, false, err
	}
	keys.in = base
	j := &lJoin{left: in, right: &lDistinct{in: keys}, kind: exec.LeftJoin, conds: conds}
	return j, &expr.IsNull{E: s.b.colRef(keys.ids[0]), Not: true}, true, nil
}

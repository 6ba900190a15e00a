package planner

import (
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// EXISTS and IN subqueries inside expressions of a materialized view
// (under OR, under NOT, in the select list):
//
//	WHERE a.k = 1 OR EXISTS (SELECT 1 FROM b WHERE b.k = a.k)
//	WHERE a.g = 'x' OR a.k IN (SELECT k FROM b WHERE v > 3)
//	SELECT h.host, EXISTS (SELECT 1 FROM alerts x WHERE x.host = h.host) AS alerting FROM hosts h
//
// A semi join cannot keep a row for one branch of an OR, nor give a
// value, so each such subquery becomes a left join of the rows with the
// subquery's distinct join keys, and the subquery a test of the match:
// `key IS NOT NULL` (a row has at most one match, the keys being
// distinct). For EXISTS the keys are the inner sides of its correlation
// equalities; without any, the subquery is its count, one row,
// cross-joined (`count > 0`). EXISTS is never NULL, so the test is its
// value wherever it stands.
//
// For IN (`=`) the keys are the subquery's columns (and, correlated by
// equalities, the inner sides of its correlations: stream_corrin.go). Its
// value is NULL, not false, when nothing matches and the left side or a
// subquery row is NULL. Reached through AND and OR only from a WHERE
// condition (positive), a NULL and a false keep the same rows, and the
// match test is enough; elsewhere (under NOT, in the select list) a
// one-column IN also gets the subquery's count and NULL count, one row
// cross-joined (per correlation key, left-joined), and its value is
// PostgreSQL's:
//
//	CASE WHEN key IS NOT NULL THEN true WHEN count = 0 THEN false
//	     WHEN lhs IS NULL OR nulls > 0 THEN NULL ELSE false END
//
// A row IN there stays a subquery (refused).

// markJoins rewrites the IN and EXISTS subqueries of e (a WHERE condition
// when positive, else a value), joining in to what each needs; ok is
// false when e has none.
func (s *streamPlanner) markJoins(in lnode, e expr.Expr, positive bool) (lnode, expr.Expr, bool, error) {
	var rerr error
	done := false
	var rewrite func(e expr.Expr, pos bool) expr.Expr
	rewrite = func(e expr.Expr, pos bool) expr.Expr {
		if rerr != nil {
			return e
		}
		switch x := e.(type) {
		case *expr.And:
			out := &expr.And{Args: make([]expr.Expr, len(x.Args))}
			for i, a := range x.Args {
				out.Args[i] = rewrite(a, pos)
			}
			return out
		case *expr.Or:
			out := &expr.Or{Args: make([]expr.Expr, len(x.Args))}
			for i, a := range x.Args {
				out.Args[i] = rewrite(a, pos)
			}
			return out
		case *sublink:
			j, mark, ok, err := s.markJoin(in, x, pos)
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
		kids := children(e)
		if len(kids) == 0 {
			return e
		}
		nk := make([]expr.Expr, len(kids))
		changed := false
		for i, k := range kids {
			nk[i] = rewrite(k, false)
			changed = changed || nk[i] != k
		}
		if !changed {
			return e
		}
		return withChildren(e, nk)
	}
	out := rewrite(e, positive)
	if rerr != nil || !done {
		return nil, nil, false, rerr
	}
	return in, out, true, nil
}

// markJoin joins in with what sublink sl needs and returns the expression
// that replaces it (ok false: not a subquery markJoins takes). pos says
// that only its truth matters (markJoins).
func (s *streamPlanner) markJoin(in lnode, sl *sublink, pos bool) (lnode, expr.Expr, bool, error) {
	switch sl.kind {
	case expr.AnySubquery:
		if len(sl.outer) > 0 {
			return s.correlatedInMark(in, sl, pos) // stream_corrin.go
		}
		if _, ok := semiJoinable(sl); !ok || !pos && sl.rowLHS != nil {
			return nil, nil, false, nil
		}
		if !pos {
			return s.inValue(in, sl)
		}
		inner := []int{sl.outID}
		if sl.rowLHS != nil {
			inner = sl.rowIDs
		}
		plan, err := s.subqueryJoins(sl.plan)
		if err != nil {
			return nil, nil, false, err
		}
		return s.inKeys(in, plan, sl, inner), &expr.IsNull{E: s.b.colRef(inner[0]), Not: true}, true, nil
	case expr.ExistsSubquery:
		if len(sl.outer) == 0 && !hasOuterRefs(sl.plan) {
			return s.existsCount(in, sl)
		}
		return s.existsKeys(in, sl)
	}
	return nil, nil, false, nil
}

// inValue is a one-column uncorrelated IN as a value: the match, and the
// subquery's count and NULL count (the subquery read once, lShared).
func (s *streamPlanner) inValue(in lnode, sl *sublink) (lnode, expr.Expr, bool, error) {
	shared, agg, err := s.subqueryCounts(sl.plan, sl.outID) // stream_notin.go
	if err != nil {
		return nil, nil, false, err
	}
	j := s.inKeys(in, shared, sl, []int{sl.outID})
	match := &expr.IsNull{E: s.b.colRef(sl.outID), Not: true}
	val, err := inValueOf(sl.lhs, match, s.b.colRef(agg.aggIDs[0]), s.b.colRef(agg.aggIDs[1]))
	if err != nil {
		return nil, nil, false, err
	}
	return &lJoin{left: j, right: agg, kind: exec.LeftJoin}, val, true, nil
}

// inValueOf is IN's value from whether a subquery row matched, the
// subquery's row count and its count of NULLs: true on a match, false
// over no rows, NULL when the left side or a row is NULL, else false.
func inValueOf(lhs, match, count, nulls expr.Expr) (expr.Expr, error) {
	zero := &expr.Const{V: int64(0), T: types.TInt8}
	empty, err := expr.NewBinary("=", count, zero)
	if err != nil {
		return nil, err
	}
	hasNull, err := expr.NewBinary(">", nulls, zero)
	if err != nil {
		return nil, err
	}
	return &expr.Case{T: types.TBool, Whens: []expr.When{
		{Cond: match, Result: &expr.Const{V: true, T: types.TBool}},
		{Cond: empty, Result: &expr.Const{V: false, T: types.TBool}},
		{Cond: &expr.Or{Args: []expr.Expr{&expr.IsNull{E: lhs}, hasNull}}, Result: &expr.Const{V: nil, T: types.TBool}},
	}, Else: &expr.Const{V: false, T: types.TBool}}, nil
}

// inKeys left-joins in with the distinct rows of the columns inner of
// plan, IN's subquery sl, on IN's equalities.
func (s *streamPlanner) inKeys(in, plan lnode, sl *sublink, inner []int) *lJoin {
	p := &lProject{in: plan, ids: inner}
	for _, id := range inner {
		p.exprs = append(p.exprs, s.b.colRef(id))
	}
	return &lJoin{left: in, right: &lDistinct{in: p}, kind: exec.LeftJoin, conds: semiConds(sl)}
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
	f, local, inner, outer, ok := correlatedFilter(p.in) // stream_corrin.go
	if !ok {
		return nil, nil, false, nil
	}
	keys := &lProject{}
	var conds []expr.Expr
	for i, a := range inner {
		id := s.b.newCol("exists_key", "", a.Type())
		keys.ids, keys.exprs = append(keys.ids, id), append(keys.exprs, a)
		c, err := expr.NewBinary("=", outer[i], s.b.colRef(id))
		if err != nil {
			return nil, nil, false, err
		}
		conds = append(conds, c)
	}
	base, err := s.subqueryJoins(filterOver(f.in, local))
	if err != nil {
		return nil, nil, false, err
	}
	keys.in = base
	j := &lJoin{left: in, right: &lDistinct{in: keys}, kind: exec.LeftJoin, conds: conds}
	return j, &expr.IsNull{E: s.b.colRef(keys.ids[0]), Not: true}, true, nil
}

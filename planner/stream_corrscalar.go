package planner

import (
	"slices"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// Correlated scalar subqueries in materialized views. A subquery
//
//	(SELECT f(agg(x), ...) FROM r WHERE r.k = outer.k AND <local conditions>)
//
// (one aggregate level without GROUP BY or HAVING, correlated only by
// equalities between an expression of r and one of the outer query) is
// the aggregate grouped by r.k, left-joined to the outer rows on
// outer.k = r.k: a group has at most one row, so each outer row keeps its
// multiplicity, and an outer row without rows in r (or with a NULL key,
// which no r row equals) reads the aggregate over no rows, as PostgreSQL
// evaluates it: NULL, except count's 0 (count's column is coalesced to 0
// before f applies). Everything else stays refused.

// correlatedScalar returns in left-joined with sl's decorrelated aggregate
// and the expression standing for sl's value over the join, or ok false
// when sl does not have the shape above.
func (s *streamPlanner) correlatedScalar(in lnode, sl *sublink) (lnode, expr.Expr, bool, error) {
	p, ok := sl.plan.(*lProject)
	if !ok {
		return nil, nil, false, nil
	}
	var val expr.Expr
	for i, id := range p.ids {
		if id == sl.outID {
			val = p.exprs[i]
		}
	}
	a, ok := p.in.(*lAgg)
	if !ok || val == nil || len(a.groups) > 0 || len(a.aggs) == 0 {
		return nil, nil, false, nil
	}
	f, ok := a.in.(*lFilter)
	if !ok || hasOuterRefs(f.in) {
		return nil, nil, false, nil
	}
	for _, e := range append(append([]expr.Expr(nil), p.exprs...), nodeExprs(a)...) {
		if d, ok := outerDepth(e); !ok || d > 0 {
			return nil, nil, false, nil
		}
	}
	local, inner, outer, ok := correlations(f.conds)
	if !ok || len(inner) == 0 {
		return nil, nil, false, nil
	}
	g := &lAgg{in: filterOver(f.in, local), groups: inner, aggIDs: a.aggIDs, aggs: a.aggs}
	var conds []expr.Expr
	for i, k := range inner {
		id := s.b.newCol("?column?", "", k.Type())
		g.groupIDs = append(g.groupIDs, id)
		c, err := expr.NewBinary("=", outer[i], s.b.colRef(id))
		if err != nil {
			return nil, nil, false, err
		}
		conds = append(conds, c)
	}
	right, err := s.subqueryJoins(g)
	if err != nil {
		return nil, nil, false, err
	}
	val, err = zeroOverNoRows(val, countIDs(a, "count"))
	if err != nil {
		return nil, nil, false, err
	}
	return &lJoin{left: in, right: right, kind: exec.LeftJoin, conds: conds}, val, true, nil
}

// correlations splits the conditions of a correlated subquery's filter
// into its local ones and its correlations, equalities between an
// expression of the subquery's rows (inner) and one of the outer row
// (outer, its outer references made columns); ok is false when a
// condition is neither.
func correlations(conds []expr.Expr) (local, inner, outer []expr.Expr, ok bool) {
	for _, c := range conds {
		depth, ok := outerDepth(c)
		switch {
		case !ok || depth > 1:
			return nil, nil, nil, false
		case depth == 0:
			local = append(local, c)
			continue
		}
		l, r, ok := joinEquality(c)
		if !ok {
			return nil, nil, nil, false
		}
		if onlyOuter(l) {
			l, r = r, l
		}
		if d, ok := outerDepth(l); !ok || d > 0 || len(refsOf(l)) == 0 || !onlyOuter(r) {
			return nil, nil, nil, false
		}
		inner, outer = append(inner, l), append(outer, lowerOuter(r))
	}
	return local, inner, outer, true
}

// onlyOuter reports whether e reads depth-1 outer references and no
// columns of its own query.
func onlyOuter(e expr.Expr) bool {
	d, ok := outerDepth(e)
	return ok && d == 1 && len(refsOf(e)) == 0
}

// countIDs are the output ids of a's aggregates named names (those that
// are 0, not NULL, over no rows).
func countIDs(a *lAgg, names ...string) map[int]bool {
	ids := map[int]bool{}
	for i, c := range a.aggs {
		if c.Fn != nil && slices.Contains(names, c.Fn.Name) {
			ids[a.aggIDs[i]] = true
		}
	}
	return ids
}

// zeroOverNoRows coalesces e's references to the counts to 0: a
// left-joined aggregation's row that no group matched reads them NULL.
func zeroOverNoRows(e expr.Expr, counts map[int]bool) (expr.Expr, error) {
	return transform(e, func(x expr.Expr) (expr.Expr, bool, error) {
		r, ok := x.(*expr.ColRef)
		if !ok || !counts[r.Idx] {
			return x, false, nil
		}
		c, err := expr.NewCoalesce([]expr.Expr{r, &expr.Const{V: int64(0), T: types.TInt8}})
		return c, true, err
	})
}

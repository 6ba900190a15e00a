package planner

import (
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// NOT IN (subquery) in materialized views, with SQL's NULL semantics: the
// condition `x NOT IN (SELECT y FROM s)` keeps a row exactly when s is
// empty, or when x is not NULL, no y equals x and no y is NULL. In WHERE
// (where unknown drops the row) that is
//
//	(outer × (count(*), count(*) FILTER (WHERE y IS NULL)) of s)
//	  anti join s on x = y,
//	filtered by count = 0 OR (x IS NOT NULL AND nulls = 0)
//
// (the anti join keeps a NULL x, which equals nothing). The global
// aggregate has exactly one row, so the cross join keeps the outer rows'
// multiplicities. The subquery is planned twice (lShared with twice set).
//
// A subquery correlated by equalities (`x NOT IN (SELECT y FROM s WHERE
// s.k = outer.k AND <local conditions>)`, correlatedNotIn) is the same per
// correlation key: the counts are grouped by s.k and left-joined on
// outer.k = s.k (at most one row per key, so multiplicities stay; an outer
// row whose key no s row has, a NULL key included, reads no counts: the
// subquery is empty for it), and the anti join matches on x = y and the
// keys.

// notInJoin returns the plan for the WHERE condition c over in when c is
// NOT (x IN (uncorrelated single-column subquery)); ok false otherwise.
func (s *streamPlanner) notInJoin(in lnode, c expr.Expr) (lnode, bool, error) {
	not, ok := c.(*expr.Not)
	if !ok {
		return nil, false, nil
	}
	if sl, ok := not.E.(*sublink); ok {
		if j, ok, err := s.correlatedNotIn(in, sl); err != nil || ok {
			return j, ok, err
		}
	}
	sl, ok := semiJoinable(not.E)
	if !ok || sl.rowLHS != nil || hasOuterRefs(sl.plan) {
		return nil, false, nil
	}
	shared, agg, err := s.subqueryCounts(sl.plan, sl.outID)
	if err != nil {
		return nil, false, err
	}
	cntID, nullID := agg.aggIDs[0], agg.aggIDs[1]
	cross := &lJoin{left: in, right: agg, kind: exec.InnerJoin}
	anti := &lJoin{left: cross, right: shared, kind: exec.AntiJoin, conds: semiConds(sl)}
	keep, err := notInKeep(sl.lhs, s.b.colRef(cntID), s.b.colRef(nullID))
	if err != nil {
		return nil, false, err
	}
	return &lFilter{in: anti, conds: []expr.Expr{keep}}, true, nil
}

// subqueryCounts plans an IN or NOT IN subquery (plan, its value column
// y) to be read twice, and the aggregate over it of count(*) and count(*)
// FILTER (WHERE y IS NULL), in that order (a global one: add groups for
// keys).
func (s *streamPlanner) subqueryCounts(plan lnode, y int) (*lShared, *lAgg, error) {
	right, err := s.subqueryJoins(plan)
	if err != nil {
		return nil, nil, err
	}
	shared := &lShared{in: optimize(right), twice: true}
	count, err := exec.ResolveAggregate("count", nil, true)
	if err != nil {
		return nil, nil, err
	}
	cntID := s.b.newCol("count", "", types.TInt8)
	nullID := s.b.newCol("nulls", "", types.TInt8)
	agg := &lAgg{in: shared, aggIDs: []int{cntID, nullID}, aggs: []exec.AggCall{
		{Fn: count}, {Fn: count, Filter: &expr.IsNull{E: s.b.colRef(y)}}}}
	return shared, agg, nil
}

// notInKeep is the condition that keeps a row of NOT IN's anti join: its
// subquery is empty (count 0), or x is not NULL and the subquery has no
// NULL (nulls 0).
func notInKeep(x, count, nulls expr.Expr) (expr.Expr, error) {
	zero := &expr.Const{V: int64(0), T: types.TInt8}
	empty, err := expr.NewBinary("=", count, zero)
	if err != nil {
		return nil, err
	}
	noNulls, err := expr.NewBinary("=", nulls, zero)
	if err != nil {
		return nil, err
	}
	return &expr.Or{Args: []expr.Expr{empty, &expr.And{Args: []expr.Expr{&expr.IsNull{E: x, Not: true}, noNulls}}}}, nil
}

// correlatedNotIn is notInJoin for NOT (x IN (subquery)) over a subquery
// correlated by equalities only (see above); ok false for other shapes.
func (s *streamPlanner) correlatedNotIn(in lnode, sl *sublink) (lnode, bool, error) {
	c, ok := s.correlatedIn(sl) // stream_corrin.go
	if !ok {
		return nil, false, nil
	}
	shared, agg, err := s.subqueryCounts(c.rows, sl.outID)
	if err != nil {
		return nil, false, err
	}
	counted, err := c.countsByKey(s, in, agg)
	if err != nil {
		return nil, false, err
	}
	antiConds, err := c.matchConds(s, sl)
	if err != nil {
		return nil, false, err
	}
	anti := &lJoin{left: counted, right: shared, kind: exec.AntiJoin, conds: antiConds}
	cnt, nulls, err := c.counts(s, agg)
	if err != nil {
		return nil, false, err
	}
	keep, err := notInKeep(sl.lhs, cnt, nulls)
	if err != nil {
		return nil, false, err
	}
	return &lFilter{in: anti, conds: []expr.Expr{keep}}, true, nil
}

// keyName names a correlation key's column for EXPLAIN: the column it
// is, else ?column?.
func (s *streamPlanner) keyName(k expr.Expr) string {
	if r, ok := k.(*expr.ColRef); ok {
		return s.b.cols[r.Idx].name
	}
	return "?column?"
}

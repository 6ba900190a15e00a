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

// notInJoin returns the plan for the WHERE condition c over in when c is
// NOT (x IN (uncorrelated single-column subquery)); ok false otherwise.
func (s *streamPlanner) notInJoin(in lnode, c expr.Expr) (lnode, bool, error) {
	not, ok := c.(*expr.Not)
	if !ok {
		return nil, false, nil
	}
	sl, ok := semiJoinable(not.E)
	if !ok || sl.rowLHS != nil || hasOuterRefs(sl.plan) {
		return nil, false, nil
	}
	right, err := s.subqueryJoins(sl.plan)
	if err != nil {
		return nil, false, err
	}
	shared := &lShared{in: optimize(right), twice: true}
	count, err := exec.ResolveAggregate("count", nil, true)
	if err != nil {
		return nil, false, err
	}
	cntID := s.b.newCol("count", "", types.TInt8)
	nullID := s.b.newCol("nulls", "", types.TInt8)
	agg := &lAgg{in: shared, aggIDs: []int{cntID, nullID}, aggs: []exec.AggCall{
		{Fn: count}, {Fn: count, Filter: &expr.IsNull{E: s.b.colRef(sl.outID)}}}}
	cross := &lJoin{left: in, right: agg, kind: exec.InnerJoin}
	anti := &lJoin{left: cross, right: shared, kind: exec.AntiJoin, conds: semiConds(sl)}
	zero := &expr.Const{V: int64(0), T: types.TInt8}
	empty, err := expr.NewBinary("=", s.b.colRef(cntID), zero)
	if err != nil {
		return nil, false, err
	}
	noNulls, err := expr.NewBinary("=", s.b.colRef(nullID), zero)
	if err != nil {
		return nil, false, err
	}
	keep := &expr.Or{Args: []expr.Expr{empty, &expr.And{Args: []expr.Expr{&expr.IsNull{E: sl.lhs, Not: true}, noNulls}}}}
	return &lFilter{in: anti, conds: []expr.Expr{keep}}, true, nil
}

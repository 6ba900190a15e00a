package planner

import (
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// IN over a subquery correlated by equalities, in materialized views:
// `x IN (SELECT y FROM s WHERE s.k = o.k AND <local conditions>)`. The
// subquery's rows are read as (y, s.k) without the correlations (rows),
// and each outer row meets the rows of its key: NOT IN in WHERE as an
// anti join with the key's counts (stream_notin.go), IN under OR, NOT or
// in the select list as a mark join (markJoin, stream_markjoin.go): a
// left join with the distinct (y, k) on x = y and the keys, plus, where
// its value matters, the key's count and NULL count, grouped by k and
// left-joined (an outer row whose key, NULL included, has no rows reads
// none: an empty subquery).

// corrIn is a correlated IN's subquery, decomposed.
type corrIn struct {
	rows  *lProject   // y (the sublink's outID) and the keys, over the uncorrelated rows
	keys  []int       // the key columns of rows
	inner []expr.Expr // the keys' expressions (of the subquery's rows)
	outer []expr.Expr // what each key equals in the outer row
}

// correlatedIn decomposes sl, `x = ANY (subquery)` of one column over a
// subquery correlated by equalities only; ok false for other shapes.
func (s *streamPlanner) correlatedIn(sl *sublink) (corrIn, bool) {
	var c corrIn
	if sl.kind != expr.AnySubquery || sl.array != nil || sl.rowLHS != nil || sl.op == nil || sl.op.Name != "=" ||
		len(refsOf(sl.lhs)) == 0 || hasSubquery(sl.lhs) || len(sl.outer) == 0 {
		return c, false
	}
	p, ok := sl.plan.(*lProject)
	if !ok {
		return c, false
	}
	var y expr.Expr
	for i, id := range p.ids {
		if id == sl.outID {
			y = p.exprs[i]
		}
	}
	if y == nil {
		return c, false
	}
	if d, ok := outerDepth(y); !ok || d > 0 {
		return c, false
	}
	f, local, inner, outer, ok := correlatedFilter(p.in)
	if !ok {
		return c, false
	}
	c.rows = &lProject{in: filterOver(f.in, local), ids: []int{sl.outID}, exprs: []expr.Expr{y}}
	c.inner, c.outer = inner, outer
	for _, k := range inner {
		id := s.b.newCol(s.keyName(k), "", k.Type())
		c.keys = append(c.keys, id)
		c.rows.ids, c.rows.exprs = append(c.rows.ids, id), append(c.rows.exprs, k)
	}
	return c, true
}

// correlatedFilter splits n, a correlated subquery's rows under its
// select list, into a filter over uncorrelated input and its conditions:
// the local ones and the correlation equalities (inner = outer, at least
// one: correlations, stream_corrscalar.go); ok false for other shapes.
func correlatedFilter(n lnode) (f *lFilter, local, inner, outer []expr.Expr, ok bool) {
	f, ok = n.(*lFilter)
	if !ok || hasOuterRefs(f.in) {
		return nil, nil, nil, nil, false
	}
	local, inner, outer, ok = correlations(f.conds)
	if !ok || len(inner) == 0 {
		return nil, nil, nil, nil, false
	}
	return f, local, inner, outer, true
}

// matchConds are the conditions of an outer row meeting a subquery row
// of its key with y = x.
func (c corrIn) matchConds(s *streamPlanner, sl *sublink) ([]expr.Expr, error) {
	conds := semiConds(sl)
	for i, k := range c.keys {
		e, err := expr.NewBinary("=", c.outer[i], s.b.colRef(k))
		if err != nil {
			return nil, err
		}
		conds = append(conds, e)
	}
	return conds, nil
}

// countsByKey groups agg (the counts over c.rows) by the keys and
// left-joins in to it on the keys.
func (c corrIn) countsByKey(s *streamPlanner, in lnode, agg *lAgg) (lnode, error) {
	var conds []expr.Expr
	for i, k := range c.keys {
		id := s.b.newCol(s.keyName(c.inner[i]), "", c.inner[i].Type())
		agg.groups, agg.groupIDs = append(agg.groups, s.b.colRef(k)), append(agg.groupIDs, id)
		e, err := expr.NewBinary("=", c.outer[i], s.b.colRef(id))
		if err != nil {
			return nil, err
		}
		conds = append(conds, e)
	}
	return &lJoin{left: in, right: agg, kind: exec.LeftJoin, conds: conds}, nil
}

// counts reads agg's count and NULL count after countsByKey: 0 for an
// outer row whose key has no rows.
func (c corrIn) counts(s *streamPlanner, agg *lAgg) (cnt, nulls expr.Expr, err error) {
	zero := &expr.Const{V: int64(0), T: types.TInt8}
	if cnt, err = expr.NewCoalesce([]expr.Expr{s.b.colRef(agg.aggIDs[0]), zero}); err != nil {
		return nil, nil, err
	}
	nulls, err = expr.NewCoalesce([]expr.Expr{s.b.colRef(agg.aggIDs[1]), zero})
	return cnt, nulls, err
}

// correlatedInMark is markJoin for a correlated IN (pos: only its truth
// matters): the distinct (y, keys) left-joined on the match, and where
// the value matters the key's counts (inValue's CASE over them).
func (s *streamPlanner) correlatedInMark(in lnode, sl *sublink, pos bool) (lnode, expr.Expr, bool, error) {
	c, ok := s.correlatedIn(sl)
	if !ok {
		return nil, nil, false, nil
	}
	conds, err := c.matchConds(s, sl)
	if err != nil {
		return nil, nil, false, err
	}
	match := &expr.IsNull{E: s.b.colRef(sl.outID), Not: true}
	if pos {
		right, err := s.subqueryJoins(c.rows)
		if err != nil {
			return nil, nil, false, err
		}
		return &lJoin{left: in, right: &lDistinct{in: right}, kind: exec.LeftJoin, conds: conds}, match, true, nil
	}
	shared, agg, err := s.subqueryCounts(c.rows, sl.outID) // stream_notin.go
	if err != nil {
		return nil, nil, false, err
	}
	j := &lJoin{left: in, right: &lDistinct{in: shared}, kind: exec.LeftJoin, conds: conds}
	counted, err := c.countsByKey(s, j, agg)
	if err != nil {
		return nil, nil, false, err
	}
	cnt, nulls, err := c.counts(s, agg)
	if err != nil {
		return nil, nil, false, err
	}
	val, err := inValueOf(sl.lhs, match, cnt, nulls)
	if err != nil {
		return nil, nil, false, err
	}
	return counted, val, true, nil
}

package planner

import (
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/types"
)

// A WHERE between a SESSION window and its aggregation,
//
//	SELECT host, window_start, window_end, count(*)
//	FROM SESSION(logs, ts, INTERVAL '5' MINUTE) WHERE level = 'error'
//	GROUP BY host, window_start, window_end
//
// filters after the sessions are made, as SQL evaluates FROM before WHERE
// (and as the batch engine does): the rows it drops still shape the
// sessions, so it cannot move below the window as it does under TUMBLE or
// HOP. A continuous query computes it inside the windowed aggregation:
// every aggregate takes the condition as a FILTER, a hidden count of the
// rows that pass it drops the sessions without any (the WHERE would have
// left them no row to group), and the sessions themselves see every row.

// sessionFilter rewrites x, an aggregation over a WHERE over a SESSION
// window (through projections), as described above; ok is false when x
// has another shape. A condition that reads window_start or window_end
// (a row's session, only known once its key's rows are) holds alike for
// every row of a group when it reads nothing but the GROUP BY's columns:
// it then filters the aggregation's rows (splitSessionConds); another is
// refused.
func (s *streamPlanner) sessionFilter(x *lAgg) (lnode, bool, error) {
	var path []*lProject // the projections between x and the filter, top first
	var f *lFilter
	n := x.in
	for f == nil {
		switch p := n.(type) {
		case *lProject:
			path = append(path, p)
			n = p.in
		case *lFilter:
			f = p
		default:
			return nil, false, nil
		}
	}
	tw := sessionBelow(f.in)
	if tw == nil {
		return nil, false, nil
	}
	rowConds, bounds, err := s.splitSessionConds(x, path, f, tw)
	if err != nil {
		return nil, true, err
	}
	if len(rowConds) == 0 { // only conditions on the sessions: the aggregation as it was, without the WHERE
		var in lnode = f.in
		for i := len(path) - 1; i >= 0; i-- {
			in = &lProject{in: in, ids: path[i].ids, exprs: path[i].exprs}
		}
		agg := &lAgg{in: in, groupIDs: x.groupIDs, groups: x.groups, aggIDs: x.aggIDs, aggs: x.aggs}
		return s.filteredAgg(agg, bounds, x.outIDs()), true, nil
	}
	cond := andOf(rowConds)
	// keep = the condition, as a column computed over the filter's input
	// and passed up through the projections.
	keepID := s.b.newCol("keep", "", types.TBool)
	keep := &lProject{in: f.in}
	for _, id := range f.in.outIDs() {
		keep.ids, keep.exprs = append(keep.ids, id), append(keep.exprs, s.b.colRef(id))
	}
	keep.ids, keep.exprs = append(keep.ids, keepID), append(keep.exprs, cond)
	var in lnode = keep
	for i := len(path) - 1; i >= 0; i-- {
		p := path[i]
		in = &lProject{in: in, ids: append(append([]int(nil), p.ids...), keepID),
			exprs: append(append([]expr.Expr(nil), p.exprs...), s.b.colRef(keepID))}
	}
	keepRef := s.b.colRef(keepID)
	agg := &lAgg{in: in, groupIDs: x.groupIDs, groups: x.groups, aggIDs: append([]int(nil), x.aggIDs...)}
	for _, a := range x.aggs {
		var cs []expr.Expr
		if a.Filter != nil {
			cs = conjuncts(a.Filter, nil)
		}
		a.Filter = andOf(append(cs, keepRef))
		agg.aggs = append(agg.aggs, a)
	}
	kept := -1 // a count(*) of the query's own counts the kept rows
	for i, a := range x.aggs {
		if a.Fn.Name == "count" && len(a.Args) == 0 && a.Filter == nil {
			kept = x.aggIDs[i]
			break
		}
	}
	if kept < 0 {
		count, err := exec.ResolveAggregate("count", nil, true)
		if err != nil {
			return nil, false, err
		}
		kept = s.b.newCol("kept", "", types.TInt8)
		agg.aggIDs, agg.aggs = append(agg.aggIDs, kept), append(agg.aggs, exec.AggCall{Fn: count, Filter: keepRef})
	}
	some, err := expr.NewBinary(">", s.b.colRef(kept), &expr.Const{V: int64(0), T: types.TInt8})
	if err != nil {
		return nil, false, err
	}
	return s.filteredAgg(agg, append([]expr.Expr{some}, bounds...), x.outIDs()), true, nil
}

// filteredAgg is agg filtered by conds, its columns ids (the rewritten
// aggregation's, without its hidden ones).
func (s *streamPlanner) filteredAgg(agg *lAgg, conds []expr.Expr, ids []int) lnode {
	out := &lProject{in: &lFilter{in: agg, conds: conds}, ids: ids}
	for _, id := range ids {
		out.exprs = append(out.exprs, s.b.colRef(id))
	}
	return out
}

// sessionBelow returns the SESSION window n reads through projections
// (nil: none).
func sessionBelow(n lnode) *lTimeWindow {
	for {
		switch p := n.(type) {
		case *lProject:
			n = p.in
		case *lTimeWindow:
			if p.spec.Kind == stream.Session {
				return p
			}
			return nil
		default:
			return nil
		}
	}
}

// splitSessionConds splits f's conditions into those on the rows and
// those that read the session's window_start or window_end, the latter
// rewritten over x's group columns (they read only columns x groups by,
// through the projections path between x and f, top first).
func (s *streamPlanner) splitSessionConds(x *lAgg, path []*lProject, f *lFilter, tw *lTimeWindow) (rows, bounds []expr.Expr, err error) {
	// up: an id below the projections -> the id that carries it above them
	up := map[int]int{}
	for _, id := range f.in.outIDs() {
		up[id] = id
	}
	for i := len(path) - 1; i >= 0; i-- {
		next := map[int]int{}
		for k, e := range path[i].exprs {
			if c, ok := e.(*expr.ColRef); ok {
				for orig, cur := range up {
					if _, seen := next[orig]; !seen && cur == c.Idx {
						next[orig] = path[i].ids[k]
					}
				}
			}
		}
		up = next
	}
	group := map[int]int{} // a column above the projections -> its group column
	for i, g := range x.groups {
		if c, ok := g.(*expr.ColRef); ok {
			group[c.Idx] = x.groupIDs[i]
		}
	}
	for _, c := range conjuncts(andOf(f.conds), nil) {
		ids := refsOf(c)
		if !ids[tw.startID] && !ids[tw.endID] {
			rows = append(rows, c)
			continue
		}
		out, err := transform(c, func(e expr.Expr) (expr.Expr, bool, error) {
			switch r := e.(type) {
			case *expr.ColRef:
				above, ok := up[r.Idx]
				gid, grouped := group[above]
				if !ok || !grouped {
					return nil, true, notInMV("a WHERE condition on the window_start or window_end of SESSION that reads a column the GROUP BY does not group by").
						WithHint("The sessions are made before WHERE filters their rows: a condition on a session can read window_start, window_end and the GROUP BY's columns when the GROUP BY has them; or select sessions in a query or a view over this view.")
				}
				return s.b.colRef(gid), true, nil
			case *sublink:
				return nil, true, notInMV("a subquery in a WHERE condition on the window_start or window_end of SESSION")
			}
			return e, false, nil
		})
		if err != nil {
			return nil, nil, err
		}
		bounds = append(bounds, out)
	}
	return rows, bounds, nil
}

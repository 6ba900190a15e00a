package planner

import (
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
)

// [NOT] EXISTS (SELECT ... FROM x WHERE x.k = outer.k AND ...) in WHERE is
// a semi (anti) join of the outer rows with x on the correlated conditions:
// EXISTS is never NULL, so unlike NOT IN the anti join is exact. Column ids
// are statement-wide, so an outer reference becomes a plain column
// reference of the join.

// existsJoin returns the semi or anti join for a WHERE condition, or nil.
func existsJoin(in lnode, c expr.Expr) *lJoin {
	kind := exec.SemiJoin
	if n, ok := c.(*expr.Not); ok {
		c, kind = n.E, exec.AntiJoin
	}
	s, ok := c.(*sublink)
	if !ok || s.kind != expr.ExistsSubquery || len(s.outer) == 0 {
		return nil
	}
	// The subquery must be a plain filtered FROM: its select list does not
	// matter to EXISTS, but grouping, limits and the like do.
	p, ok := s.plan.(*lProject)
	if !ok {
		return nil
	}
	f, ok := p.in.(*lFilter)
	if !ok || hasOuterRefs(f.in) {
		return nil
	}
	var corr, local []expr.Expr
	for _, cond := range f.conds {
		depth, ok := outerDepth(cond)
		switch {
		case !ok:
			return nil
		case depth == 0:
			local = append(local, cond)
		case depth == 1:
			corr = append(corr, lowerOuter(cond))
		default:
			return nil
		}
	}
	if len(corr) == 0 {
		return nil
	}
	return &lJoin{left: in, right: filterOver(f.in, local), kind: kind, conds: corr}
}

// outerDepth returns the largest depth of e's outer references (0: none);
// ok is false when e holds a subquery (whose references would need
// renumbering).
func outerDepth(e expr.Expr) (int, bool) {
	depth, ok := 0, true
	walk(e, func(n expr.Expr) bool {
		switch x := n.(type) {
		case *expr.OuterRef:
			depth = max(depth, x.Depth)
		case *sublink:
			ok = false
		}
		return ok
	})
	return depth, ok
}

// lowerOuter turns depth-1 outer references into column references.
func lowerOuter(e expr.Expr) expr.Expr {
	out, _ := transform(e, func(n expr.Expr) (expr.Expr, bool, error) {
		if o, ok := n.(*expr.OuterRef); ok && o.Depth == 1 {
			return &expr.ColRef{Idx: o.Idx, T: o.T, Name: o.Name}, true, nil
		}
		return n, false, nil
	})
	return out
}

// hasOuterRefs reports whether a plan reads enclosing queries anywhere.
func hasOuterRefs(n lnode) bool {
	found := false
	for _, e := range nodeExprs(n) {
		walk(e, func(x expr.Expr) bool {
			switch s := x.(type) {
			case *expr.OuterRef:
				found = true
			case *sublink:
				found = found || len(s.outer) > 0
			}
			return !found
		})
	}
	if found {
		return true
	}
	for _, c := range nodeChildren(n) {
		if hasOuterRefs(c) {
			return true
		}
	}
	return false
}

// nodeChildren returns a logical node's inputs.
func nodeChildren(n lnode) []lnode {
	switch x := n.(type) {
	case *lFilter:
		return []lnode{x.in}
	case *lProject:
		return []lnode{x.in}
	case *lJoin:
		return []lnode{x.left, x.right}
	case *lApply:
		return []lnode{x.left, x.right}
	case *lAgg:
		return []lnode{x.in}
	case *lWindow:
		return []lnode{x.in}
	case *lSort:
		return []lnode{x.in}
	case *lLimit:
		return []lnode{x.in}
	case *lDistinct:
		return []lnode{x.in}
	case *lSetOp:
		return []lnode{x.left, x.right}
	case *lRecursive:
		return []lnode{x.left, x.right}
	case *lProjectSet:
		return []lnode{x.in}
	case *lShared:
		return []lnode{x.in}
	case *lTimeWindow:
		return []lnode{x.in}
	}
	return nil
}

// nodeExprs returns the expressions a logical node evaluates itself.
func nodeExprs(n lnode) []expr.Expr {
	var out []expr.Expr
	keys := func(ks []exec.SortKey) {
		for _, k := range ks {
			out = append(out, k.E)
		}
	}
	switch x := n.(type) {
	case *lScan:
		out = append(out, x.filter...)
	case *lFunc:
		out = append(out, x.args...)
	case *lLateralFunc:
		for _, c := range x.calls {
			out = append(out, c.args...)
		}
	case *lValues:
		for _, r := range x.rows {
			out = append(out, r...)
		}
	case *lFilter:
		out = append(out, x.conds...)
	case *lProject:
		out = append(out, x.exprs...)
	case *lJoin:
		out = append(out, x.conds...)
	case *lApply:
		out = append(out, x.conds...)
	case *lAgg:
		out = append(out, x.groups...)
		for _, a := range x.aggs {
			out = append(out, a.Args...)
			out = append(out, a.Filter)
			keys(a.OrderBy)
		}
	case *lWindow:
		for _, c := range x.calls {
			out = append(out, c.Args...)
			out = append(out, c.PartitionBy...)
			out = append(out, c.Filter, c.Frame.Start.Offset, c.Frame.End.Offset)
			keys(c.OrderBy)
		}
	case *lSort:
		keys(x.keys)
	case *lLimit:
		out = append(out, x.limit, x.offset)
	case *lDistinct:
		out = append(out, x.on...)
	case *lProjectSet:
		for _, a := range x.args {
			out = append(out, a...)
		}
		out = append(out, x.keep...)
	case *lTimeWindow:
		out = append(out, x.part...)
	}
	return out
}

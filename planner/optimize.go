package planner

import (
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
)

// optimize applies the rewrite rules to a bound plan: predicate pushdown
// (into scans, through projections, into join sides) and, for chains of
// inner joins, a join order that follows the equality conditions so that
// `FROM a, b, c WHERE a.x = c.x AND b.y = c.y` never builds a cross product.
// It rewrites the tree in place and returns the new root.
func optimize(n lnode) lnode {
	switch x := n.(type) {
	case *lFilter:
		in := optimize(x.in)
		var rest []expr.Expr
		for _, c := range x.conds {
			if s, ok := semiJoinable(c); ok {
				in = &lJoin{left: in, right: optimize(s.plan), kind: exec.SemiJoin, conds: semiConds(s)}
				continue
			}
			if j := existsJoin(in, c); j != nil {
				j.right = optimize(j.right)
				in = j
				continue
			}
			if s, ok := rowNotIn(c); ok {
				in = &lJoin{left: in, right: optimize(s.plan), kind: exec.AntiJoin, conds: rowNotInConds(s)}
				continue
			}
			rest = append(rest, c)
		}
		return push(in, rest)
	case *lJoin:
		x.left, x.right = optimize(x.left), optimize(x.right)
		if x.temporal {
			return optimizeLookup(x)
		}
		switch x.kind {
		case exec.InnerJoin:
			conds := x.conds
			x.conds = nil
			return innerJoins(x, conds)
		case exec.LeftJoin, exec.SemiJoin, exec.AntiJoin:
			x.conds, x.right = pushSide(x.conds, x.right)
		case exec.RightJoin:
			x.conds, x.left = pushSide(x.conds, x.left)
		}
		return x
	case *lProject:
		x.in = optimize(x.in)
	case *lAgg:
		x.in = optimize(x.in)
	case *lWindow:
		x.in = optimize(x.in)
	case *lSort:
		x.in = optimize(x.in)
	case *lLimit:
		x.in = optimize(x.in)
	case *lDistinct:
		x.in = optimize(x.in)
	case *lSetOp:
		x.left, x.right = optimize(x.left), optimize(x.right)
	case *lApply:
		x.left, x.right = optimize(x.left), optimize(x.right)
	case *lRecursive:
		x.left, x.right = optimize(x.left), optimize(x.right)
	case *lProjectSet:
		x.in = optimize(x.in)
	case *lTimeWindow:
		x.in = optimize(x.in)
	}
	return n
}

// pushSide pushes the conditions of an outer join's ON clause that read
// only its nullable side into that side.
func pushSide(conds []expr.Expr, side lnode) ([]expr.Expr, lnode) {
	avail := idSet(side.outIDs())
	var keep, down []expr.Expr
	for _, c := range conds {
		if len(refsOf(c)) > 0 && within(c, avail) {
			down = append(down, c)
		} else {
			keep = append(keep, c)
		}
	}
	return keep, push(side, down)
}

func idSet(ids []int) map[int]bool {
	m := make(map[int]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// push places filter conditions as deep in n as they can go.
func push(n lnode, conds []expr.Expr) lnode {
	if len(conds) == 0 {
		return n
	}
	switch x := n.(type) {
	case *lScan:
		x.filter = append(x.filter, conds...)
		return x
	case *lFilter:
		return push(x.in, append(x.conds, conds...))
	case *lJoin:
		if k := reduceOuter(x, conds); k != x.kind { // outer_reduce.go
			x.kind = k
			if k == exec.InnerJoin {
				all := append(append([]expr.Expr(nil), x.conds...), conds...)
				x.conds = nil
				return innerJoins(x, all)
			}
			// a full join made left or right: its ON conditions on the
			// side that is now nullable can go into that side
			if k == exec.LeftJoin {
				x.conds, x.right = pushSide(x.conds, x.right)
			} else {
				x.conds, x.left = pushSide(x.conds, x.left)
			}
		}
		switch {
		case x.temporal:
			return pushLookup(x, conds)
		case x.kind == exec.InnerJoin:
			return innerJoins(x, conds)
		case x.kind == exec.LeftJoin || x.kind == exec.SemiJoin || x.kind == exec.AntiJoin:
			var keep, down []expr.Expr
			avail := idSet(x.left.outIDs())
			for _, c := range conds {
				if within(c, avail) {
					down = append(down, c)
				} else {
					keep = append(keep, c)
				}
			}
			x.left = push(x.left, down)
			return filterOver(x, keep)
		case x.kind == exec.RightJoin:
			var keep, down []expr.Expr
			avail := idSet(x.right.outIDs())
			for _, c := range conds {
				if within(c, avail) {
					down = append(down, c)
				} else {
					keep = append(keep, c)
				}
			}
			x.right = push(x.right, down)
			return filterOver(x, keep)
		}
	case *lAgg:
		// A condition on group keys only (a view's or subquery's grouped
		// columns filtered from outside) can filter the input instead.
		keys := map[int]expr.Expr{}
		for i, id := range x.groupIDs {
			keys[id] = x.groups[i]
		}
		var keep, down []expr.Expr
		for _, c := range conds {
			ok := len(refsOf(c)) > 0 && !hasSubquery(c)
			for id := range refsOf(c) {
				if _, isKey := keys[id]; !isKey {
					ok = false
				}
			}
			if !ok {
				keep = append(keep, c)
				continue
			}
			d, _ := transform(c, func(e expr.Expr) (expr.Expr, bool, error) {
				if r, isRef := e.(*expr.ColRef); isRef {
					return keys[r.Idx], true, nil
				}
				return e, false, nil
			})
			down = append(down, d)
		}
		x.in = push(x.in, down)
		return filterOver(x, keep)
	case *lSort:
		x.in = push(x.in, conds)
		return x
	case *lProject:
		// Conditions on columns that the projection merely renames (or sets
		// to constants) are rewritten to its input and pushed below it.
		simple := map[int]expr.Expr{}
		for i, e := range x.exprs {
			switch e.(type) {
			case *expr.ColRef, *expr.Const:
				simple[x.ids[i]] = e
			}
		}
		var keep, down []expr.Expr
		for _, c := range conds {
			ok := true
			for id := range refsOf(c) {
				if _, s := simple[id]; !s {
					ok = false
				}
			}
			if !ok || hasSubquery(c) {
				keep = append(keep, c)
				continue
			}
			d, _ := transform(c, func(e expr.Expr) (expr.Expr, bool, error) {
				if r, isRef := e.(*expr.ColRef); isRef {
					return simple[r.Idx], true, nil
				}
				return e, false, nil
			})
			down = append(down, d)
		}
		x.in = push(x.in, down)
		return filterOver(x, keep)
	case *lTimeWindow:
		return pushTimeWindow(x, conds)
	case *lProjectSet:
		// Conditions on the input's columns alone hold before the
		// functions run: a row they drop is never expanded (PostgreSQL
		// does not call jsonb_each(t.j) for a row of t that WHERE drops,
		// nor fail on its value). A volatile one stays above, evaluated
		// once per output row, as PostgreSQL does.
		var keep, down []expr.Expr
		avail := idSet(x.in.outIDs())
		for _, c := range conds {
			if within(c, avail) && !hasSubquery(c) && !callsVolatileExpr(c) {
				down = append(down, c)
			} else {
				keep = append(keep, c)
			}
		}
		x.in = push(x.in, down)
		return filterOver(x, keep)
	}
	return filterOver(n, conds)
}

func filterOver(n lnode, conds []expr.Expr) lnode {
	if len(conds) == 0 {
		return n
	}
	return &lFilter{in: n, conds: conds}
}

// flattenInner collects the inputs and conditions of a tree of inner joins.
func flattenInner(n lnode, leaves []lnode, conds []expr.Expr) ([]lnode, []expr.Expr) {
	if j, ok := n.(*lJoin); ok && j.kind == exec.InnerJoin && !j.temporal {
		leaves, conds = flattenInner(j.left, leaves, conds)
		leaves, conds = flattenInner(j.right, leaves, conds)
		return leaves, append(conds, j.conds...)
	}
	return append(leaves, n), conds
}

// innerJoins rebuilds a tree of inner joins with extra conditions: each
// input gets the conditions on it alone, inputs are joined in an order that
// follows equality conditions, and every other condition sits on the lowest
// join that sees all its columns.
func innerJoins(j *lJoin, extra []expr.Expr) lnode {
	leaves, conds := flattenInner(j, nil, nil)
	conds = append(conds, extra...)
	sets := make([]map[int]bool, len(leaves))
	for i, l := range leaves {
		sets[i] = idSet(l.outIDs())
	}
	var rest []expr.Expr
	local := make([][]expr.Expr, len(leaves))
	for _, c := range conds {
		r := refsOf(c)
		placed := false
		for i := range leaves {
			if len(r) > 0 && within(c, sets[i]) {
				local[i] = append(local[i], c)
				placed = true
				break
			}
		}
		if !placed {
			rest = append(rest, c)
		}
	}
	for i := range leaves {
		leaves[i] = push(leaves[i], local[i])
	}
	used := make([]bool, len(leaves))
	used[0] = true
	plan := leaves[0]
	avail := map[int]bool{}
	for id := range sets[0] {
		avail[id] = true
	}
	for n := 1; n < len(leaves); n++ {
		pick := -1
		for i := range leaves {
			if !used[i] && connects(rest, avail, sets[i]) {
				pick = i
				break
			}
		}
		if pick < 0 {
			for i := range leaves {
				if !used[i] {
					pick = i
					break
				}
			}
		}
		used[pick] = true
		for id := range sets[pick] {
			avail[id] = true
		}
		join := &lJoin{left: plan, right: leaves[pick], kind: exec.InnerJoin}
		var left []expr.Expr
		for _, c := range rest {
			if within(c, avail) {
				join.conds = append(join.conds, c)
			} else {
				left = append(left, c)
			}
		}
		rest = left
		plan = join
	}
	return filterOver(plan, rest)
}

// connects reports whether some condition is an equality between a column
// set already joined and the candidate input.
func connects(conds []expr.Expr, avail, cand map[int]bool) bool {
	for _, c := range conds {
		l, r, ok := equality(c)
		if !ok {
			continue
		}
		lr, rr := refsOf(l), refsOf(r)
		if len(lr) == 0 || len(rr) == 0 {
			continue
		}
		if (within(l, avail) && within(r, cand)) || (within(l, cand) && within(r, avail)) {
			return true
		}
	}
	return false
}

// equality splits `a = b` (same type on both sides, so it can be a hash key).
func equality(c expr.Expr) (expr.Expr, expr.Expr, bool) {
	call, ok := c.(*expr.Call)
	if !ok || call.Fn == nil || call.Fn.Name != "=" || len(call.Args) != 2 {
		return nil, nil, false
	}
	l, r := call.Args[0], call.Args[1]
	if !l.Type().SameKind(r.Type()) || hasSubquery(c) {
		return nil, nil, false
	}
	return l, r, true
}

// semiJoinable reports whether a WHERE condition is `x IN (subquery)` (or
// `x = ANY (subquery)`) over an uncorrelated subquery: such a condition
// keeps exactly the rows a semi join on x = column keeps (a NULL x or no
// match drops the row either way). NOT IN is not an anti join (NULLs in the
// subquery make it unknown), so it stays a subquery.
func semiJoinable(c expr.Expr) (*sublink, bool) {
	s, ok := c.(*sublink)
	if !ok || s.kind != expr.AnySubquery || s.array != nil || len(s.outer) > 0 {
		return nil, false
	}
	if s.rowLHS != nil {
		return s, true
	}
	if s.op == nil || s.op.Name != "=" {
		return nil, false
	}
	if len(refsOf(s.lhs)) == 0 || hasSubquery(s.lhs) || !s.lhs.Type().SameKind(s.op.Args[1]) {
		return nil, false
	}
	return s, true
}

// rowNotIn reports whether a WHERE condition is `(a, b) NOT IN
// (subquery)` over an uncorrelated subquery. WHERE keeps a row only when
// the condition is true: when every subquery row compares false, that is,
// when no subquery row has each column pair compare true or unknown: an
// anti join on `(a = x) IS NOT FALSE AND (b = y) IS NOT FALSE`
// (rowNotInConds). NULLs behave as in PostgreSQL: an empty subquery keeps
// every row, a row of NULLs is dropped by any subquery row.
func rowNotIn(c expr.Expr) (*sublink, bool) {
	n, ok := c.(*expr.Not)
	if !ok {
		return nil, false
	}
	s, ok := n.E.(*sublink)
	if !ok || s.kind != expr.AnySubquery || s.rowLHS == nil || s.array != nil || len(s.outer) > 0 || hasOuterRefs(s.plan) {
		return nil, false
	}
	for _, x := range s.rowLHS {
		if hasSubquery(x) {
			return nil, false
		}
	}
	return s, true
}

// rowNotInConds are rowNotIn's anti join conditions.
func rowNotInConds(s *sublink) []expr.Expr {
	f := false
	out := make([]expr.Expr, len(s.rowLHS))
	for i, c := range semiConds(s) {
		out[i] = &expr.IsBool{E: c, Value: &f, Not: true}
	}
	return out
}

// semiConds are the join conditions of a semi-joined IN subquery.
func semiConds(s *sublink) []expr.Expr {
	if s.rowLHS != nil {
		out := make([]expr.Expr, len(s.rowLHS))
		for i, x := range s.rowLHS {
			out[i] = &expr.Call{Fn: s.rowOps[i], Args: []expr.Expr{x, &expr.ColRef{Idx: s.rowIDs[i], T: s.rowOps[i].Args[1]}}}
		}
		return out
	}
	return []expr.Expr{&expr.Call{Fn: s.op, Args: []expr.Expr{s.lhs, &expr.ColRef{Idx: s.outID, T: s.op.Args[1], Name: s.outName}}}}
}

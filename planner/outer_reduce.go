package planner

import (
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
)

// Outer joins reduced by the WHERE above them, as PostgreSQL's
// reduce_outer_joins: a condition that cannot be true for a row whose
// nullable side's columns are all NULL (a strict comparison or function of
// one of them, IS NOT NULL of one) removes every row the join pads with
// NULLs, so the join is an inner one (a full join a left or right one) and
// the condition can go below it. Besides the smaller plan, this is where
// PostgreSQL evaluates such a condition: on the side's rows before the
// join, so an operand that fails fails for rows the join would drop.

// reduceOuter returns the join kind that j's kind becomes under conds:
// conds reject the NULLs of the right side (left and full joins) or of
// the left side (right and full joins).
func reduceOuter(j *lJoin, conds []expr.Expr) exec.JoinKind {
	if j.temporal {
		return j.kind
	}
	rejects := func(side lnode) bool {
		ids := idSet(side.outIDs())
		for _, c := range conds {
			if rejectsNulls(c, ids) {
				return true
			}
		}
		return false
	}
	switch j.kind {
	case exec.LeftJoin:
		if rejects(j.right) {
			return exec.InnerJoin
		}
	case exec.RightJoin:
		if rejects(j.left) {
			return exec.InnerJoin
		}
	case exec.FullJoin:
		l, r := rejects(j.left), rejects(j.right)
		switch {
		case l && r:
			return exec.InnerJoin
		case r: // no left rows padded on the right: the right side's rows all stay
			return exec.RightJoin
		case l:
			return exec.LeftJoin
		}
	}
	return j.kind
}

// rejectsNulls reports whether c is false or NULL for every row whose
// columns ids are all NULL.
func rejectsNulls(c expr.Expr, ids map[int]bool) bool {
	if hasSubquery(c) {
		return false
	}
	switch x := c.(type) {
	case *expr.And:
		for _, a := range x.Args {
			if rejectsNulls(a, ids) {
				return true
			}
		}
		return false
	case *expr.Or:
		for _, a := range x.Args {
			if !rejectsNulls(a, ids) {
				return false
			}
		}
		return len(x.Args) > 0
	case *expr.IsNull:
		return x.Not && nullWhenNull(x.E, ids)
	}
	return nullWhenNull(c, ids)
}

// nullWhenNull reports whether e is NULL whenever the columns ids are.
func nullWhenNull(e expr.Expr, ids map[int]bool) bool {
	switch x := e.(type) {
	case *expr.ColRef:
		return ids[x.Idx]
	case *expr.Call:
		if !x.Fn.Strict {
			return false
		}
		for _, a := range x.Args {
			if nullWhenNull(a, ids) {
				return true
			}
		}
	case *expr.Cast:
		return nullWhenNull(x.E, ids)
	case *expr.Not:
		return nullWhenNull(x.E, ids)
	case *expr.Like:
		return nullWhenNull(x.E, ids) || nullWhenNull(x.Pattern, ids)
	case *expr.InList:
		return nullWhenNull(x.E, ids)
	}
	return false
}

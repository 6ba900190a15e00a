package planner

import (
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
)

// LATERAL: a subquery or function in FROM that reads columns of the items
// before it. Column ids are statement-wide, so such a reference is an
// ordinary column reference; the planner removes the dependency by
// rewriting the item into a join:
//
//   - a function (functions in FROM are implicitly lateral) becomes a
//     ProjectSet over the left input;
//   - a subquery made of projections and filters over inputs that do not
//     themselves read the left side becomes a join whose conditions are the
//     subquery's filters, with the projections computed above the join.
//
// Other shapes (grouping, LIMIT, set operations... in the subquery) run the
// subquery once per left row (lApply, lateral_apply.go).

// lLateralFunc stands for a set-returning function whose arguments read
// the left side; lateralJoin replaces it by a ProjectSet over the left
// side, or, under a subquery run once per left row (lApply), it is fn: the
// function in FROM, its arguments then outer references.
type lLateralFunc struct {
	calls []*srfCall // one, or several side by side (ROWS FROM, unnest(a, b))
	ids   []int      // their columns (several: jsonb_each's key and value)
	ord   int        // WITH ORDINALITY's column, or -1
	fn    *lFunc
}

func (n *lLateralFunc) outIDs() []int {
	if n.ord >= 0 {
		return append(append([]int(nil), n.ids...), n.ord)
	}
	return n.ids
}

// outerFuncChain reports whether a LEFT JOIN LATERAL of a set-returning
// function is one an outer ProjectSet computes: conditions that are all
// the constant true, and above the function only plain column references
// (its alias's renames).
func outerFuncChain(chain []lnode, conds []expr.Expr) bool {
	for _, c := range conds {
		if k, ok := c.(*expr.Const); !ok || k.V != true {
			return false
		}
	}
	for _, n := range chain {
		p, ok := n.(*lProject)
		if !ok {
			return false
		}
		for _, e := range p.exprs {
			if _, ok := e.(*expr.ColRef); !ok {
				return false
			}
		}
	}
	return true
}

// isLateralFunc reports whether n is a set-returning function in FROM
// that becomes a ProjectSet over the items before it (an lLateralFunc
// under the projections and filters of its alias).
func isLateralFunc(n lnode) bool { return lateralFuncOf(n) != nil }

// lateralFuncOf is the lLateralFunc under n's projections and filters
// (nil: none).
func lateralFuncOf(n lnode) *lLateralFunc {
	for {
		switch x := n.(type) {
		case *lProject:
			n = x.in
		case *lFilter:
			n = x.in
		case *lLateralFunc:
			return x
		default:
			return nil
		}
	}
}

// readsApplied reports whether n, a set-returning function first in its
// FROM list (isLateralFunc), reads columns: those of the row the LATERAL
// subquery around it runs for, as nothing precedes it in its own FROM.
func readsApplied(n lnode) bool {
	if f := lateralFuncOf(n); f != nil {
		for _, c := range f.calls {
			if len(refsOf(c.args...)) > 0 {
				return true
			}
		}
	}
	return false
}

// readsAny reports whether a plan reads any of ids.
func readsAny(n lnode, ids map[int]bool) bool {
	for _, e := range nodeExprs(n) {
		for id := range refsOf(e) {
			if ids[id] {
				return true
			}
		}
	}
	for _, c := range nodeChildren(n) {
		if readsAny(c, ids) {
			return true
		}
	}
	return false
}

// lateralJoin joins left with a right item that reads left's columns.
func (b *binder) lateralJoin(left, right lnode, kind exec.JoinKind, conds []expr.Expr) (lnode, error) {
	if kind != exec.InnerJoin && kind != exec.LeftJoin {
		return nil, pgerr.Unsupported("LATERAL is only supported in inner, cross and left joins")
	}
	leftIDs := left.outIDs()
	leftSet := idSet(leftIDs)
	var chain []lnode
	n := right
	for {
		switch x := n.(type) {
		case *lProject:
			chain = append(chain, x)
			n = x.in
			continue
		case *lFilter:
			chain = append(chain, x)
			n = x.in
			continue
		}
		break
	}
	var cur lnode
	var join *lJoin
	if f, ok := n.(*lLateralFunc); ok {
		ps := &lProjectSet{in: left, calls: f.calls, ids: f.outIDs(), ordinality: f.ord >= 0}
		for _, c := range f.calls {
			ps.args = append(ps.args, c.args)
		}
		if kind == exec.LeftJoin {
			// LEFT JOIN LATERAL f(...) ON true: a row f gives nothing for
			// is kept once, f's column NULL (an outer ProjectSet). Other
			// conditions, filters and computed columns over f run the
			// function once per left row (lApply).
			if !outerFuncChain(chain, conds) {
				return &lApply{left: left, right: right, kind: kind, conds: conds}, nil
			}
			ps.outer = true
			kind = exec.InnerJoin
		}
		cur = ps
	} else {
		if readsAny(n, leftSet) {
			return &lApply{left: left, right: right, kind: kind, conds: conds}, nil // lateral_apply.go
		}
		join = &lJoin{left: left, right: n, kind: kind}
		cur = join
	}
	// For a left join, every filter becomes a join condition and the
	// projections may only rename (a computed value would not be NULL on
	// the rows without a match); subst maps renamed ids to their source.
	subst := map[int]expr.Expr{}
	rename := func(e expr.Expr) expr.Expr {
		out, _ := transform(e, func(x expr.Expr) (expr.Expr, bool, error) {
			if r, ok := x.(*expr.ColRef); ok && subst[r.Idx] != nil {
				return subst[r.Idx], true, nil
			}
			return x, false, nil
		})
		return out
	}
	for i := len(chain) - 1; i >= 0; i-- {
		switch x := chain[i].(type) {
		case *lFilter:
			if kind == exec.LeftJoin {
				for _, c := range x.conds {
					join.conds = append(join.conds, rename(c))
				}
				continue
			}
			cur = &lFilter{in: cur, conds: x.conds}
		case *lProject:
			p := &lProject{in: cur}
			for _, id := range leftIDs {
				p.ids = append(p.ids, id)
				p.exprs = append(p.exprs, b.colRef(id))
			}
			for k, e := range x.exprs {
				if kind == exec.LeftJoin {
					// A column of the left side is no NULL on the rows
					// without a match: only a renamed right column moves up.
					r, ok := e.(*expr.ColRef)
					if !ok || leftSet[r.Idx] {
						return &lApply{left: left, right: right, kind: kind, conds: conds}, nil
					}
					subst[x.ids[k]] = rename(r)
				}
				p.ids = append(p.ids, x.ids[k])
				p.exprs = append(p.exprs, e)
			}
			cur = p
		}
	}
	if kind == exec.LeftJoin {
		for _, c := range conds {
			join.conds = append(join.conds, rename(c))
		}
		return cur, nil
	}
	return filterOver(cur, conds), nil
}

package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
)

// Outer-level aggregates. As in PostgreSQL, an aggregate belongs to the
// innermost query level whose columns its arguments (with FILTER and
// ORDER BY) read: in
//
//	SELECT (SELECT max(o.a)) FROM o
//
// max reads only o, so it aggregates the outer query (one row for all of
// o), and the subquery reads its result as an outer reference. An
// aggregate reading no columns at all belongs to its own level.

// outerAgg binds fc when it belongs to a level enclosing l: it reports
// moved=false (and no error) when the aggregate is l's own, leaving the
// binding to aggCall. The call is bound once tentatively at l to learn the
// levels it reads; the correlations that binding recorded are undone.
func (b *binder) outerAgg(l *level, fc *pg.FuncCall, name string) (e expr.Expr, moved bool, err error) {
	if l.sub == nil && !hasOuterLevel(l) && !inLateral(l) {
		return nil, false, nil
	}
	saved := map[*sublink]int{}
	for x := l; x != nil; x = x.parent {
		if x.sub != nil {
			saved[x.sub] = len(x.sub.outer)
		}
	}
	target, ok := b.aggLevel(l, fc)
	for s, n := range saved {
		s.outer = s.outer[:n]
	}
	if !ok || target == l {
		return nil, false, nil
	}
	if target.bindingLateral {
		return nil, true, b.newErr(pgerr.GroupingError, fc.Location, "aggregate functions are not allowed in FROM clause of their own query level")
	}
	// the subqueries crossed on the way out, as resolveColumn counts them
	var crossed []*sublink
	for x := l; x != target; x = x.parent {
		if x.sub != nil {
			crossed = append(crossed, x.sub)
		}
	}
	depth := len(crossed)
	inner, err := b.aggCall(target, fc, name)
	if err != nil {
		return nil, true, err
	}
	ref, isRef := inner.(*expr.ColRef)
	if !isRef {
		return inner, true, nil // not reached: aggCall returns a reference
	}
	for _, s := range crossed {
		s.outer = append(s.outer, ref.Idx)
	}
	return &expr.OuterRef{Depth: depth, Idx: ref.Idx, T: ref.T, Name: ref.Name}, true, nil
}

// hasOuterLevel reports whether a subquery boundary encloses l.
func hasOuterLevel(l *level) bool {
	for x := l; x != nil; x = x.parent {
		if x.sub != nil {
			return true
		}
	}
	return false
}

// inLateral reports whether l is inside a LATERAL subquery of an
// enclosing level's FROM.
func inLateral(l *level) bool {
	for x := l.parent; x != nil; x = x.parent {
		if x.bindingLateral {
			return true
		}
	}
	return false
}

// aggLevel binds fc's arguments, FILTER and ORDER BY at l and returns the
// innermost level, l or one enclosing it, whose columns they read (l when
// they read none); ok is false when they do not bind (aggCall then
// reports the error).
func (b *binder) aggLevel(l *level, fc *pg.FuncCall) (*level, bool) {
	was := l.inAgg
	l.inAgg = true
	defer func() { l.inAgg = was }()
	var es []expr.Expr
	for _, a := range fc.Args {
		if a.GetNamedArgExpr() != nil {
			return nil, false
		}
		e, err := b.expr(l, a)
		if err != nil {
			return nil, false
		}
		es = append(es, e)
	}
	if fc.AggFilter != nil {
		e, err := b.expr(l, fc.AggFilter)
		if err != nil {
			return nil, false
		}
		es = append(es, e)
	}
	for _, s := range fc.AggOrder {
		e, err := b.expr(l, s.GetSortBy().GetNode())
		if err != nil {
			return nil, false
		}
		es = append(es, e)
	}
	lateral := inLateral(l)
	// rank counts the levels from l outward; the smallest found wins
	best := -1
	note := func(id int) {
		r := 0
		for x := l; x != nil; x, r = x.parent, r+1 {
			if best >= 0 && r >= best {
				return
			}
			if ownsColumn(x, id) {
				best = r
				return
			}
		}
	}
	for _, e := range es {
		walk(e, func(n expr.Expr) bool {
			switch x := n.(type) {
			case *expr.ColRef:
				if lateral && !ownsColumn(l, x.Idx) {
					note(x.Idx) // a LATERAL reference to an enclosing FROM item
				} else {
					best = 0
				}
			case *expr.OuterRef:
				note(x.Idx)
			case *sublink:
				for _, id := range x.outer {
					note(id)
				}
			}
			return true
		})
	}
	target := l
	for r := 0; r < best; r++ {
		target = target.parent
	}
	return target, true
}

// ownsColumn reports whether one of l's FROM items provides column id.
func ownsColumn(l *level, id int) bool {
	for _, it := range l.ns {
		for _, c := range it.cols {
			if c.id == id {
				return true
			}
		}
	}
	return false
}

package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// GROUP BY, grouping sets, GROUPING() and the rewriting of grouped
// expressions.

// groupBy binds GROUP BY items: input columns first, then output column
// names and ordinals, then expressions.
func (b *binder) groupBy(l *level, items []*pg.Node, tl []target) ([]expr.Expr, [][]int, error) {
	l.clause = inGroupBy
	var out []expr.Expr
	last := -1
	add := func(e expr.Expr) {
		for i, g := range out {
			if equalExpr(g, e) {
				last = i
				return
			}
		}
		out = append(out, e)
		last = len(out) - 1
	}
	fromTarget := func(t target, loc int32) error {
		agg, win := false, false
		walk(t.e, func(e expr.Expr) bool {
			if c, ok := e.(*expr.ColRef); ok {
				for _, a := range l.aggs {
					agg = agg || a.id == c.Idx
				}
				for _, w := range l.wins {
					win = win || w.id == c.Idx
				}
			}
			return true
		})
		if t.loc >= 0 && (agg || win) {
			loc = t.loc // as PostgreSQL, the select list's call is shown
		}
		if agg {
			return b.newErr(pgerr.GroupingError, loc, "aggregate functions are not allowed in GROUP BY")
		}
		if win {
			return b.newErr(pgerr.WindowingError, loc, "window functions are not allowed in GROUP BY")
		}
		add(t.e)
		return nil
	}
	// item binds one grouping expression and returns its index in out.
	item := func(n *pg.Node) (int, error) {
		if c := n.GetAConst(); c != nil && c.GetIval() != nil {
			k := int(c.GetIval().Ival)
			if k < 1 || k > len(tl) {
				return 0, b.newErr(pgerr.InvalidColumnReference, c.Location, "GROUP BY position %d is not in select list", k)
			}
			if err := fromTarget(tl[k-1], c.Location); err != nil {
				return 0, err
			}
			return last, nil
		}
		if cr := n.GetColumnRef(); cr != nil && len(cr.Fields) == 1 && cr.Fields[0].GetString_() != nil {
			name := cr.Fields[0].GetString_().Sval
			if _, found, err := b.lookupIn(l, []string{name}, cr.Location); err != nil || !found {
				if err != nil {
					return 0, err
				}
				for _, t := range tl {
					if t.name == name {
						if err := fromTarget(t, cr.Location); err != nil {
							return 0, err
						}
						return last, nil
					}
				}
			}
		}
		e, err := b.expr(l, n)
		if err != nil {
			return 0, err
		}
		add(e)
		return last, nil
	}
	// Each item contributes grouping sets; the query's sets are their cross
	// product (a plain item is the one set {item}).
	sets := [][]int{{}}
	grouping := false
	for _, n := range items {
		var mine [][]int
		if gs := n.GetGroupingSet(); gs != nil {
			grouping = true
			var err error
			if mine, err = b.groupingSets(gs, item); err != nil {
				return nil, nil, err
			}
		} else if w := l.timeWin; w != nil && w.node == n {
			add(b.colRef(w.tw.startID)) // a group window: its start and end
			start := last
			add(b.colRef(w.tw.endID))
			mine = [][]int{{start, last}}
		} else {
			i, err := item(n)
			if err != nil {
				return nil, nil, err
			}
			mine = [][]int{{i}}
		}
		var next [][]int
		for _, a := range sets {
			for _, m := range mine {
				next = append(next, append(append([]int(nil), a...), m...))
			}
		}
		if len(next) > 4096 {
			return nil, nil, b.newErr(pgerr.ProgramLimitExceeded, gsLoc(n), "too many grouping sets present (maximum 4096)")
		}
		sets = next
	}
	if !grouping {
		sets = nil
	}
	return out, sets, nil
}

func gsLoc(n *pg.Node) int32 {
	if gs := n.GetGroupingSet(); gs != nil {
		return gs.Location
	}
	return nodeLoc(n)
}

// groupingSets expands GROUPING SETS, ROLLUP and CUBE into sets of group
// expression indexes.
func (b *binder) groupingSets(gs *pg.GroupingSet, item func(*pg.Node) (int, error)) ([][]int, error) {
	// elems are the content's elements; a parenthesized list is one element.
	elem := func(n *pg.Node) ([]int, error) {
		if r := n.GetRowExpr(); r != nil {
			var out []int
			for _, a := range r.Args {
				i, err := item(a)
				if err != nil {
					return nil, err
				}
				out = append(out, i)
			}
			return out, nil
		}
		i, err := item(n)
		return []int{i}, err
	}
	switch gs.Kind {
	case pg.GroupingSetKind_GROUPING_SET_EMPTY:
		return [][]int{{}}, nil
	case pg.GroupingSetKind_GROUPING_SET_SETS:
		var out [][]int
		for _, c := range gs.Content {
			if sub := c.GetGroupingSet(); sub != nil {
				more, err := b.groupingSets(sub, item)
				if err != nil {
					return nil, err
				}
				out = append(out, more...)
				continue
			}
			e, err := elem(c)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		return out, nil
	}
	var elems [][]int
	for _, c := range gs.Content {
		e, err := elem(c)
		if err != nil {
			return nil, err
		}
		elems = append(elems, e)
	}
	var out [][]int
	switch gs.Kind {
	case pg.GroupingSetKind_GROUPING_SET_ROLLUP:
		for k := len(elems); k >= 0; k-- {
			var set []int
			for _, e := range elems[:k] {
				set = append(set, e...)
			}
			out = append(out, set)
		}
	case pg.GroupingSetKind_GROUPING_SET_CUBE:
		if len(elems) > 12 {
			return nil, b.newErr(pgerr.ProgramLimitExceeded, gs.Location, "CUBE is limited to 12 elements")
		}
		for mask := (1 << len(elems)) - 1; mask >= 0; mask-- {
			var set []int
			for i, e := range elems {
				if mask&(1<<i) != 0 {
					set = append(set, e...)
				}
			}
			out = append(out, set)
		}
	default: // SIMPLE
		var set []int
		for _, e := range elems {
			set = append(set, e...)
		}
		out = append(out, set)
	}
	return out, nil
}

// groupRewriter returns a function that rewrites an expression computed
// above an aggregation: group expressions become references to the group
// keys; other input columns are grouping errors.
func (b *binder) groupRewriter(l *level, agg *lAgg) func(expr.Expr) (expr.Expr, error) {
	above := map[int]bool{}
	for _, id := range agg.aggIDs {
		above[id] = true
	}
	for _, w := range l.wins {
		above[w.id] = true
	}
	for _, f := range l.srfs {
		above[f.id] = true
	}
	for _, g := range l.groupings {
		above[g.id] = true
	}
	// Columns of a table whose primary key is grouped on are functionally
	// dependent on the groups: PostgreSQL allows them, and so do we by
	// adding them to the group keys (which leaves the groups unchanged).
	grouped := map[int]bool{}
	for _, g := range agg.groups {
		if c, ok := g.(*expr.ColRef); ok {
			grouped[c.Idx] = true
		}
	}
	dependent := map[int]bool{}
	for _, s := range l.scans {
		if len(s.rel.PrimaryKey) == 0 {
			continue
		}
		all := true
		for _, k := range s.rel.PrimaryKey {
			all = all && grouped[s.ids[k]]
		}
		if all {
			for _, id := range s.ids {
				dependent[id] = true
			}
		}
	}
	lateral := inLateral(l)
	return func(e expr.Expr) (expr.Expr, error) {
		return transform(e, func(n expr.Expr) (expr.Expr, bool, error) {
			for i, g := range agg.groups {
				if equalExpr(g, n) {
					return b.colRef(agg.groupIDs[i]), true, nil
				}
			}
			if c, ok := n.(*expr.ColRef); ok {
				if above[c.Idx] || lateral && !ownsColumn(l, c.Idx) {
					// a LATERAL reference to an enclosing FROM item is a
					// constant of each evaluation, as an outer reference
					return n, true, nil
				}
				if dependent[c.Idx] {
					agg.groups = append(agg.groups, n)
					id := b.newCol(b.cols[c.Idx].name, "", c.T)
					agg.groupIDs = append(agg.groupIDs, id)
					return b.colRef(id), true, nil
				}
				info := b.cols[c.Idx]
				name := info.name
				if info.table != "" {
					name = info.table + "." + info.name
				}
				loc, ok := b.loc[n]
				if !ok {
					loc = -1
				}
				return nil, true, b.newErr(pgerr.GroupingError, loc, "column \"%s\" must appear in the GROUP BY clause or be used in an aggregate function", name)
			}
			return n, false, nil
		})
	}
}

func rewriteWindow(c *exec.WindowCall, rw func(expr.Expr) (expr.Expr, error)) error {
	var err error
	for i := range c.Args {
		if c.Args[i], err = rw(c.Args[i]); err != nil {
			return err
		}
	}
	for i := range c.PartitionBy {
		if c.PartitionBy[i], err = rw(c.PartitionBy[i]); err != nil {
			return err
		}
	}
	for i := range c.OrderBy {
		if c.OrderBy[i].E, err = rw(c.OrderBy[i].E); err != nil {
			return err
		}
	}
	if c.Filter, err = rw(c.Filter); err != nil {
		return err
	}
	return nil
}

// aggOf finds the aggregation a select list is computed over (below its
// HAVING filter and windows), if any.
func aggOf(n lnode) (*lAgg, bool) {
	for {
		switch x := n.(type) {
		case *lAgg:
			return x, true
		case *lFilter:
			n = x.in
		case *lWindow:
			n = x.in
		default:
			return nil, false
		}
	}
}

// groupingUnion computes an aggregation once per grouping set and appends
// the results; the group keys a set does not have are NULL. The output has
// agg's ids, so everything above reads it like agg itself.
func (b *binder) groupingUnion(l *level, agg *lAgg, sets [][]int) (lnode, error) {
	// GROUPING(a, b) is a bit mask of the arguments a set does not group by.
	args := make([][]int, len(l.groupings))
	for k, g := range l.groupings {
		for _, a := range g.args {
			found := -1
			for i, e := range agg.groups {
				if equalExpr(e, a) {
					found = i
				}
			}
			if found < 0 {
				return nil, b.newErr(pgerr.GroupingError, g.loc, "arguments to GROUPING must be grouping expressions of the associated query level")
			}
			args[k] = append(args[k], found)
		}
	}
	in := &lShared{in: optimize(agg.in)}
	var acc lnode
	for _, set := range sets {
		member := map[int]bool{}
		for _, g := range set {
			member[g] = true
		}
		a := &lAgg{in: in, aggs: agg.aggs}
		for g, e := range agg.groups {
			if member[g] {
				a.groups = append(a.groups, e)
				a.groupIDs = append(a.groupIDs, b.newCol(b.cols[agg.groupIDs[g]].name, "", e.Type()))
			}
		}
		for _, id := range agg.aggIDs {
			a.aggIDs = append(a.aggIDs, b.newCol(b.cols[id].name, "", b.cols[id].t))
		}
		p := &lProject{in: a}
		k := 0
		for g, id := range agg.groupIDs {
			var e expr.Expr = &expr.Const{V: nil, T: b.cols[id].t}
			if member[g] {
				e = b.colRef(a.groupIDs[k])
				k++
			}
			p.ids = append(p.ids, b.newCol(b.cols[id].name, "", b.cols[id].t))
			p.exprs = append(p.exprs, e)
		}
		for i, id := range agg.aggIDs {
			p.ids = append(p.ids, b.newCol(b.cols[id].name, "", b.cols[id].t))
			p.exprs = append(p.exprs, b.colRef(a.aggIDs[i]))
		}
		for k := range l.groupings {
			mask := int64(0)
			for _, g := range args[k] {
				mask <<= 1
				if !member[g] {
					mask |= 1
				}
			}
			p.ids = append(p.ids, b.newCol("grouping", "", types.TInt4))
			p.exprs = append(p.exprs, &expr.Const{V: mask, T: types.TInt4})
		}
		if acc == nil {
			acc = p
			continue
		}
		op := &lSetOp{kind: exec.Union, all: true, left: acc, right: p}
		for _, id := range p.ids {
			op.ids = append(op.ids, b.newCol(b.cols[id].name, "", b.cols[id].t))
		}
		acc = op
	}
	out := agg.outIDs()
	for _, g := range l.groupings {
		out = append(out, g.id)
	}
	switch x := acc.(type) {
	case *lSetOp:
		x.ids = out
	case *lProject:
		x.ids = out
	}
	return acc, nil
}

// groupingFunc binds GROUPING(args): a placeholder column that the grouping
// union fills in per set.
func (b *binder) groupingFunc(l *level, g *pg.GroupingFunc) (expr.Expr, error) {
	if l.clause != inSelect && l.clause != inHaving && l.clause != inOrderBy {
		return nil, b.newErr(pgerr.GroupingError, g.Location, "grouping operations are not allowed in %s", l.clause)
	}
	args, err := b.args(l, g.Args)
	if err != nil {
		return nil, err
	}
	if len(args) > 31 {
		return nil, b.newErr(pgerr.ProgramLimitExceeded, g.Location, "GROUPING must have fewer than 32 arguments")
	}
	id := b.newCol("grouping", "", types.TInt4)
	l.groupings = append(l.groupings, groupingItem{id: id, args: args, loc: g.Location})
	return b.colRef(id), nil
}

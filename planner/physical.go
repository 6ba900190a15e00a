package planner

import (
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// physical translates a logical plan into exec nodes. Each node is asked for
// the ids its parent needs (projection pushdown: scans read only those) and
// returns its exec node plus the ids of that node's output columns in order
// (its layout); expressions are then rewritten from ids to positions.
type physical struct {
	b *binder
	// outer holds the layouts of the enclosing queries' batches while a
	// subquery's plan is translated, innermost last.
	outer [][]int
	// applied marks the entries of outer that LATERAL applies pushed
	// (lateral.go): the binder's depths do not count them.
	applied map[int]bool
}

// root translates a whole query: the output is exactly n's columns.
func (p *physical) root(n lnode) (exec.Node, error) {
	ids := n.outIDs()
	node, lay, err := p.node(n, idSet(ids))
	if err != nil {
		return nil, err
	}
	return p.reorder(node, lay, ids)
}

// reorder projects node (with layout lay) to exactly ids.
func (p *physical) reorder(node exec.Node, lay, ids []int) (exec.Node, error) {
	if equalInts(lay, ids) {
		return node, nil
	}
	pr := &exec.Project{Input: node}
	for _, id := range ids {
		e, err := p.expr(p.b.colRef(id), lay)
		if err != nil {
			return nil, err
		}
		pr.Exprs = append(pr.Exprs, e)
		pr.Cols = append(pr.Cols, p.col(id))
	}
	return pr, nil
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (p *physical) col(id int) types.Column {
	c := p.b.cols[id]
	return types.Column{Name: c.name, Type: c.t}
}

func (p *physical) cols(ids []int) []types.Column {
	out := make([]types.Column, len(ids))
	for i, id := range ids {
		out[i] = p.col(id)
	}
	return out
}

func union(a map[int]bool, es ...expr.Expr) map[int]bool {
	m := make(map[int]bool, len(a))
	for k := range a {
		m[k] = true
	}
	for _, e := range es {
		refs(e, m)
	}
	return m
}

func (p *physical) node(n lnode, need map[int]bool) (exec.Node, []int, error) {
	switch x := n.(type) {
	case *lScan:
		return p.scan(x, need)
	case *lLateralFunc: // under an lApply's right side (lateral.go)
		return p.node(x.fn, need)
	case *lFunc:
		args, err := p.exprs(x.args, nil)
		if err != nil {
			return nil, nil, err
		}
		fs := &exec.FuncScan{Name: x.name, Scan: x.scan, Cols: p.cols(x.ids)}
		if x.stream != nil {
			fs.Stream = x.stream(args)
		} else {
			fs.Produce = x.produce(args)
		}
		return fs, x.ids, nil
	case *lValues:
		v := &exec.Values{Cols: p.cols(x.ids)}
		for _, row := range x.rows {
			r := make([]expr.Expr, len(row))
			for i, e := range row {
				var err error
				if r[i], err = p.expr(e, nil); err != nil {
					return nil, nil, err
				}
			}
			v.Rows = append(v.Rows, r)
		}
		if len(v.Rows) > 1 && len(v.Cols) > 0 {
			if f := constValues(v); f != nil {
				return f, x.ids, nil
			}
		}
		return v, x.ids, nil
	case *lFilter:
		in, lay, err := p.node(x.in, union(need, x.conds...))
		if err != nil {
			return nil, nil, err
		}
		cond, err := p.expr(andOf(x.conds), lay)
		if err != nil {
			return nil, nil, err
		}
		if fn, ok := x.in.(*lFunc); ok && fn.lookup != nil { // a point query on a view
			if fs, ok := in.(*exec.FuncScan); ok {
				if key := exec.EqualityKey(cond, fn.keyCol, fs.Cols[fn.keyCol].Type); key != nil {
					fs.Produce, fs.Name = fn.lookup(key), fs.Name+" (key: "+key.String()+")"
				}
			}
		}
		return &exec.Filter{Input: in, Cond: cond}, lay, nil
	case *lProject:
		var keep []int
		for i, id := range x.ids {
			if need[id] {
				keep = append(keep, i)
			}
		}
		sub := map[int]bool{}
		for _, i := range keep {
			refs(x.exprs[i], sub)
		}
		in, lay, err := p.node(x.in, sub)
		if err != nil {
			return nil, nil, err
		}
		pr := &exec.Project{Input: in}
		var out []int
		for _, i := range keep {
			e, err := p.expr(x.exprs[i], lay)
			if err != nil {
				return nil, nil, err
			}
			pr.Exprs = append(pr.Exprs, e)
			pr.Cols = append(pr.Cols, p.col(x.ids[i]))
			out = append(out, x.ids[i])
		}
		if isIdentity(pr.Exprs, len(lay)) {
			// A pure renaming: the input's positions now carry these ids.
			return in, out, nil
		}
		return pr, out, nil
	case *lJoin:
		return p.join(x, need)
	case *lApply:
		return p.apply(x) // lateral.go
	case *lAgg:
		sub := union(nil, x.groups...)
		for _, a := range x.aggs {
			sub = union(sub, a.Args...)
			sub = union(sub, a.Filter)
			for _, k := range a.OrderBy {
				sub = union(sub, k.E)
			}
		}
		in, lay, err := p.node(x.in, sub)
		if err != nil {
			return nil, nil, err
		}
		h := &exec.HashAgg{Input: in, Cols: p.cols(x.outIDs())}
		if h.GroupBy, err = p.exprs(x.groups, lay); err != nil {
			return nil, nil, err
		}
		for _, a := range x.aggs {
			c := a
			if c.Args, err = p.exprs(a.Args, lay); err != nil {
				return nil, nil, err
			}
			if c.Filter, err = p.expr(a.Filter, lay); err != nil {
				return nil, nil, err
			}
			if c.OrderBy, err = p.keys(a.OrderBy, lay); err != nil {
				return nil, nil, err
			}
			h.Aggs = append(h.Aggs, c)
		}
		return h, x.outIDs(), nil
	case *lWindow:
		sub := need
		for _, c := range x.calls {
			sub = union(sub, c.Args...)
			sub = union(sub, c.PartitionBy...)
			sub = union(sub, c.Filter)
			for _, k := range c.OrderBy {
				sub = union(sub, k.E)
			}
			if c.Frame.Start.Offset != nil || c.Frame.End.Offset != nil {
				sub = union(sub, c.Frame.Start.Offset, c.Frame.End.Offset)
			}
		}
		in, lay, err := p.node(x.in, sub)
		if err != nil {
			return nil, nil, err
		}
		w := &exec.Window{Input: in}
		for _, c := range x.calls {
			wc := c
			if wc.Args, err = p.exprs(c.Args, lay); err != nil {
				return nil, nil, err
			}
			if wc.PartitionBy, err = p.exprs(c.PartitionBy, lay); err != nil {
				return nil, nil, err
			}
			if wc.OrderBy, err = p.keys(c.OrderBy, lay); err != nil {
				return nil, nil, err
			}
			if wc.Filter, err = p.expr(c.Filter, lay); err != nil {
				return nil, nil, err
			}
			if wc.Frame.Start.Offset, err = p.expr(c.Frame.Start.Offset, lay); err != nil {
				return nil, nil, err
			}
			if wc.Frame.End.Offset, err = p.expr(c.Frame.End.Offset, lay); err != nil {
				return nil, nil, err
			}
			w.Calls = append(w.Calls, wc)
		}
		out := append(append([]int(nil), lay...), x.ids...)
		w.Cols = p.cols(out)
		return w, out, nil
	case *lSort:
		sub := need
		for _, k := range x.keys {
			sub = union(sub, k.E)
		}
		in, lay, err := p.node(x.in, sub)
		if err != nil {
			return nil, nil, err
		}
		keys, err := p.keys(x.keys, lay)
		if err != nil {
			return nil, nil, err
		}
		return &exec.Sort{Input: in, Keys: keys}, lay, nil
	case *lLimit:
		sub := need
		for _, k := range x.ties {
			sub = union(sub, k.E)
		}
		in, lay, err := p.node(x.in, sub)
		if err != nil {
			return nil, nil, err
		}
		ties, err := p.keys(x.ties, lay)
		if err != nil {
			return nil, nil, err
		}
		lim, err := p.expr(x.limit, nil)
		if err != nil {
			return nil, nil, err
		}
		off, err := p.expr(x.offset, nil)
		if err != nil {
			return nil, nil, err
		}
		return &exec.Limit{Input: in, Limit: lim, Offset: off, WithTies: ties}, lay, nil
	case *lDistinct:
		// DISTINCT compares whole rows: the input must produce exactly its columns.
		ids := x.in.outIDs()
		in, lay, err := p.node(x.in, union(idSet(ids), x.on...))
		if err != nil {
			return nil, nil, err
		}
		if x.on == nil {
			if in, err = p.reorder(in, lay, ids); err != nil {
				return nil, nil, err
			}
			lay = ids
		}
		on, err := p.exprs(x.on, lay)
		if err != nil {
			return nil, nil, err
		}
		return &exec.Distinct{Input: in, On: on}, lay, nil
	case *lRecursive:
		n, err := p.recursive(x)
		return n, x.ids, err
	case *lShared:
		if x.key != nil {
			// Every scan's input must lay out the same columns: whichever
			// runs feeds the others.
			all := map[int]bool{}
			for _, id := range x.in.outIDs() {
				all[id] = true
			}
			in, lay, err := p.node(x.in, all)
			if err != nil {
				return nil, nil, err
			}
			return &exec.SharedScan{Input: in, Key: x.key}, lay, nil
		}
		return p.node(x.in, need)
	case *lTimeWindow:
		return p.timeWindow(x, need)
	case *lProjectSet:
		if len(x.keep) > 0 {
			return nil, nil, pgerr.Internal("planner: a ProjectSet with conditions outside a continuous query")
		}
		sub := need
		for _, a := range x.args {
			sub = union(sub, a...)
		}
		in, lay, err := p.node(x.in, sub)
		if err != nil {
			return nil, nil, err
		}
		ps := &exec.ProjectSet{Input: in, Outer: x.outer, Ordinality: x.ordinality}
		for i, c := range x.calls {
			args, err := p.exprs(x.args[i], lay)
			if err != nil {
				return nil, nil, err
			}
			ps.Funcs = append(ps.Funcs, c.setFunc(args))
		}
		out := append(append([]int(nil), lay...), x.ids...)
		ps.Cols = p.cols(out)
		return ps, out, nil
	case *lSetOp:
		l, err := p.root(x.left)
		if err != nil {
			return nil, nil, err
		}
		r, err := p.root(x.right)
		if err != nil {
			return nil, nil, err
		}
		cols := p.cols(x.ids)
		if x.kind == exec.Union && x.all {
			return &exec.Append{Inputs: []exec.Node{l, r}, Cols: cols}, x.ids, nil
		}
		return &exec.SetOp{Kind: x.kind, All: x.all, Left: l, Right: r, Cols: cols}, x.ids, nil
	}
	return nil, nil, pgerr.Internal("unknown logical node %T", n)
}

// isIdentity reports whether exprs are ColRef 0..n-1 in order.
func isIdentity(es []expr.Expr, n int) bool {
	if len(es) != n {
		return false
	}
	for i, e := range es {
		c, ok := e.(*expr.ColRef)
		if !ok || c.Idx != i {
			return false
		}
	}
	return true
}

func (p *physical) scan(x *lScan, need map[int]bool) (exec.Node, []int, error) {
	need = union(need, x.filter...)
	s := &exec.Scan{Table: x.table, Name: x.alias, WithRowID: x.rowID >= 0}
	if x.alias != x.rel.Name {
		s.Name = x.rel.Name + " " + x.alias
	}
	var lay []int
	for i, id := range x.ids {
		if need[id] {
			s.Proj = append(s.Proj, i)
			lay = append(lay, id)
		}
	}
	if len(lay) == 0 && len(x.ids) > 0 {
		// Nothing is read, but the rows still count: read the first column.
		s.Proj, lay = []int{0}, []int{x.ids[0]}
	}
	s.Cols = p.cols(lay)
	var err error
	if len(x.filter) > 0 {
		if s.Filter, err = p.expr(andOf(x.filter), lay); err != nil {
			return nil, nil, err
		}
		s.Key = s.KeyLookup(x.rel.PrimaryKey)
	}
	if x.rowID >= 0 {
		lay = append(lay, x.rowID)
	}
	return s, lay, nil
}

func (p *physical) join(x *lJoin, need map[int]bool) (exec.Node, []int, error) {
	if x.kind == exec.InnerJoin && estimate(x.left) < estimate(x.right) {
		// The hash table is built from the right input: make it the smaller.
		// Columns are found by id, so the swap changes nothing above.
		x = &lJoin{left: x.right, right: x.left, kind: x.kind, conds: x.conds}
	}
	sub := union(need, x.conds...)
	l, llay, err := p.node(x.left, sub)
	if err != nil {
		return nil, nil, err
	}
	r, rlay, err := p.node(x.right, sub)
	if err != nil {
		return nil, nil, err
	}
	lset, rset := idSet(llay), idSet(rlay)
	all := append(append([]int(nil), llay...), rlay...)
	out := all
	if x.kind == exec.SemiJoin || x.kind == exec.AntiJoin {
		out = llay
	}
	var lk, rk, residual []expr.Expr
	for _, c := range x.conds {
		a, b, ok := equality(c)
		if ok && len(refsOf(a)) > 0 && len(refsOf(b)) > 0 {
			if within(a, lset) && within(b, rset) {
				lk, rk = append(lk, a), append(rk, b)
				continue
			}
			if within(b, lset) && within(a, rset) {
				lk, rk = append(lk, b), append(rk, a)
				continue
			}
		}
		residual = append(residual, c)
	}
	res, err := p.expr(andOf(residual), all)
	if err != nil {
		return nil, nil, err
	}
	cols := p.cols(out)
	if len(lk) == 0 {
		return &exec.NestedLoopJoin{Left: l, Right: r, Kind: x.kind, Cond: res, Cols: cols}, out, nil
	}
	hj := &exec.HashJoin{Left: l, Right: r, Kind: x.kind, Residual: res, Cols: cols}
	if hj.LeftKeys, err = p.exprs(lk, llay); err != nil {
		return nil, nil, err
	}
	if hj.RightKeys, err = p.exprs(rk, rlay); err != nil {
		return nil, nil, err
	}
	return hj, out, nil
}

func (p *physical) exprs(es []expr.Expr, lay []int) ([]expr.Expr, error) {
	if es == nil {
		return nil, nil
	}
	out := make([]expr.Expr, len(es))
	for i, e := range es {
		var err error
		if out[i], err = p.expr(e, lay); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (p *physical) keys(ks []exec.SortKey, lay []int) ([]exec.SortKey, error) {
	if ks == nil {
		return nil, nil
	}
	out := make([]exec.SortKey, len(ks))
	for i, k := range ks {
		out[i] = k
		var err error
		if out[i].E, err = p.expr(k.E, lay); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func position(lay []int, id int) int {
	for i, x := range lay {
		if x == id {
			return i
		}
	}
	return -1
}

// expr rewrites a bound expression from ids to positions in a batch with
// layout lay, plans its subqueries, and folds constant subtrees.
func (p *physical) expr(e expr.Expr, lay []int) (expr.Expr, error) {
	if e == nil {
		return nil, nil
	}
	out, err := transform(e, func(n expr.Expr) (expr.Expr, bool, error) {
		switch x := n.(type) {
		case *expr.ColRef:
			i := position(lay, x.Idx)
			if i < 0 {
				if r := p.appliedRef(x); r != nil {
					return r, true, nil
				}
				return nil, true, pgerr.Unsupported("column %s cannot be referenced here", x.Name)
			}
			return &expr.ColRef{Idx: i, T: x.T, Name: x.Name}, true, nil
		case *expr.OuterRef:
			k, depth, ok := p.outerIndex(x.Depth)
			if !ok {
				return nil, true, pgerr.Internal("outer reference %s too deep", x.Name)
			}
			lay := p.outer[k]
			i := position(lay, x.Idx)
			if g, ok := p.b.grouped[x.Idx]; ok && i < 0 {
				i = position(lay, g)
			}
			if i < 0 {
				// a LATERAL reference of the level it names (a plain
				// column there), read from the apply's row around it
				if r := p.appliedAbove(x, k); r != nil {
					return r, true, nil
				}
				return nil, true, pgerr.Unsupported("outer reference to %s is not supported here", x.Name)
			}
			return &expr.OuterRef{Depth: depth, Idx: i, T: x.T, Name: x.Name}, true, nil
		case *expr.Param:
			return n, true, p.b.noteParam(x)
		case *sublink:
			s, err := p.subquery(x, lay)
			return s, true, err
		}
		return n, false, nil
	})
	if err != nil {
		return nil, err
	}
	return p.fold(out), nil
}

func (p *physical) subquery(x *sublink, lay []int) (expr.Expr, error) {
	if x.array != nil {
		return p.arrayPlan(x, lay)
	}
	if x.rowLHS != nil {
		return nil, pgerr.Unsupported("(row) IN (subquery) is only supported as a condition of WHERE over an uncorrelated subquery")
	}
	s := &expr.Subquery{Kind: x.kind, Correlated: len(x.outer) > 0, Op: x.op, T: x.t}
	if x.lhs != nil {
		var err error
		if s.LHS, err = p.expr(x.lhs, lay); err != nil {
			return nil, err
		}
	}
	p.outer = append(p.outer, lay)
	defer func() { p.outer = p.outer[:len(p.outer)-1] }()
	ids := x.plan.outIDs()
	if x.kind != expr.ExistsSubquery {
		ids = []int{x.outID}
	}
	node, lay2, err := p.node(optimize(x.plan), idSet(ids))
	if err != nil {
		return nil, err
	}
	if x.kind != expr.ExistsSubquery && (len(lay2) == 0 || lay2[0] != x.outID) {
		if node, err = p.reorder(node, lay2, []int{x.outID}); err != nil {
			return nil, err
		}
	}
	s.Plan = exec.NewSubPlan(node)
	return s, nil
}

// fold evaluates constant subtrees once (expr.Fold decides what is
// constant); a subtree whose evaluation fails is left for run time, when it
// may never be reached (CASE branches). Conditional and strict expressions
// with some constant arguments are simplified as PostgreSQL does
// (simplify).
func (p *physical) fold(e expr.Expr) expr.Expr {
	if p.b.env == nil || p.b.env.Eval == nil {
		return e
	}
	kids := children(e)
	if len(kids) == 0 {
		return e
	}
	changed := false
	nk := make([]expr.Expr, len(kids))
	allConst := true
	for i, k := range kids {
		nk[i] = p.fold(k)
		changed = changed || nk[i] != k
		if _, ok := nk[i].(*expr.Const); !ok {
			allConst = false
		}
	}
	if changed {
		e = withChildren(e, nk)
	}
	if s := simplify(e); s != e {
		return s
	}
	if !allConst {
		return e
	}
	switch e.(type) {
	case *sublink, *expr.Subquery:
		return e
	}
	f, err := expr.Fold(p.b.env.Eval, e)
	if err != nil {
		return e
	}
	return f
}

// noteParam records the type context gave a parameter; two contexts that
// disagree are an error, as in PostgreSQL.
func (b *binder) noteParam(x *expr.Param) error {
	for len(b.params) <= x.Idx {
		b.params = append(b.params, types.TUnknown)
	}
	switch old := b.params[x.Idx]; {
	case x.T.Kind == types.Unknown:
	case old.Kind == types.Unknown:
		b.params[x.Idx] = x.T
	case !old.SameKind(x.T):
		return pgerr.New(pgerr.AmbiguousParameter, "inconsistent types deduced for parameter $%d", x.Idx+1).
			WithDetail("%s versus %s", old, x.T)
	}
	return nil
}

// paramTypes returns the final parameter types: unconstrained ones are text.
func (b *binder) paramTypes() []types.T {
	out := make([]types.T, len(b.params))
	for i, t := range b.params {
		if t.Kind == types.Unknown {
			t = types.TText
		}
		out[i] = t
	}
	return out
}

package planner

import (
	"slices"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// LATERAL subqueries in materialized views. A LATERAL subquery correlated
// only by equalities between its rows and the row before it,
//
//	left, LATERAL (SELECT ... FROM r WHERE r.k = left.k AND <local>
//	               [ORDER BY o LIMIT n [OFFSET m]]) x
//
// is a join on those keys: with an aggregate, of the aggregate grouped by
// the keys (and by its GROUP BY, then filtered by its HAVING: lateralAgg);
// with LIMIT, of the rows numbered m+1 to m+n per
// key in the order o (row_number() OVER (PARTITION BY r.k ORDER BY o),
// which the streaming planner makes a top-N per key); without, of r's
// rows. A LEFT JOIN LATERAL ... ON c is the left join on the keys and c.
// The subquery's select list is computed over the join (it may read the
// left row's columns, except in a LEFT JOIN, where a left row without
// matches must read NULLs). SELECT DISTINCT is a GROUP BY of its columns.
// DISTINCT ON, windows or set operations inside, and correlations other
// than equalities, stay refused.

// keyPair is one correlation r.k = left.k: the inner side computed as
// column id of the rewritten subquery, and the outer expression.
type keyPair struct {
	id    int
	outer expr.Expr
}

// lateralJoin returns x as a join, or ok false when x does not have the
// shape above.
func (s *streamPlanner) lateralJoin(x *lApply) (lnode, bool, error) {
	if x.kind != exec.InnerJoin && x.kind != exec.LeftJoin {
		return nil, false, nil
	}
	if j, ok, err := s.lateralFuncOuter(x); ok || err != nil {
		return j, ok, err
	}
	left := idSet(x.left.outIDs())
	reads := func(e expr.Expr) bool {
		for id := range refsOf(e) {
			if left[id] {
				return true
			}
		}
		return false
	}
	top := x.right
	var proj *lProject
	if p, ok := top.(*lProject); ok {
		proj, top = p, p.in
		for { // projections over projections: one, the inner inlined
			q, ok := top.(*lProject)
			if !ok {
				break
			}
			merged, err := inlineProject(proj, q)
			if err != nil {
				return nil, true, err
			}
			proj, top = merged, q.in
		}
		for _, e := range proj.exprs {
			if reads(e) && x.kind == exec.LeftJoin {
				return nil, false, nil
			}
		}
	}
	if a, ok := top.(*lAgg); ok {
		return s.lateralAgg(x, proj, a, nil, left, reads)
	}
	if f, ok := top.(*lFilter); ok { // HAVING
		if a, ok := f.in.(*lAgg); ok {
			return s.lateralAgg(x, proj, a, f, left, reads)
		}
	}
	if d, ok := top.(*lDistinct); ok && len(d.on) == 0 { // SELECT DISTINCT: GROUP BY its columns
		ids := d.in.outIDs()
		a := &lAgg{in: d.in, groupIDs: ids}
		for _, id := range ids {
			a.groups = append(a.groups, s.b.colRef(id))
		}
		return s.lateralAgg(x, proj, a, nil, left, reads)
	}
	var lim *lLimit
	var order []exec.SortKey
	if l, ok := top.(*lLimit); ok {
		srt, sorted := l.in.(*lSort)
		if !sorted || len(l.ties) > 0 || reads(l.limit) || reads(l.offset) {
			return nil, false, nil // a top-N needs an order
		}
		lim, order, top = l, srt.keys, srt.in
	} else if srt, ok := top.(*lSort); ok {
		top = srt.in // an order without a limit changes no row
	}
	for _, k := range order {
		if reads(k.E) {
			return nil, false, nil
		}
	}
	in, pairs, ok, err := s.pullKeys(top, left, reads)
	if !ok || err != nil {
		return nil, ok, err
	}
	right := in
	if lim != nil {
		if right, ok, err = s.topPerKey(in, pairs, order, lim); !ok || err != nil {
			return nil, ok, err
		}
	}
	j := &lJoin{left: x.left, right: right, kind: x.kind}
	for _, p := range pairs {
		c, err := expr.NewBinary("=", p.outer, s.b.colRef(p.id))
		if err != nil {
			return nil, true, err
		}
		j.conds = append(j.conds, c)
	}
	j.conds = append(j.conds, x.conds...)
	out := &lProject{in: j}
	for _, id := range x.left.outIDs() {
		out.ids, out.exprs = append(out.ids, id), append(out.exprs, s.b.colRef(id))
	}
	if proj != nil {
		out.ids, out.exprs = append(out.ids, proj.ids...), append(out.exprs, proj.exprs...)
	} else {
		for _, id := range x.right.outIDs() {
			out.ids, out.exprs = append(out.ids, id), append(out.exprs, s.b.colRef(id))
		}
	}
	return out, true, nil
}

// lateralAgg is lateralJoin for an aggregate without GROUP BY (one row
// for every left row): the aggregate grouped by the keys, left-joined, as
// a correlated scalar subquery (stream_corrscalar.go); over no rows count
// and regr_count read 0, the others NULL. Only with an ON condition that
// is always true: a false one must make even count NULL.
func (s *streamPlanner) lateralAgg(x *lApply, proj *lProject, a *lAgg, having *lFilter, left map[int]bool, reads func(expr.Expr) bool) (lnode, bool, error) {
	grouped := len(a.groups) > 0
	if !grouped && len(a.aggs) == 0 {
		return nil, false, nil
	}
	for _, c := range x.conds {
		if k, ok := c.(*expr.Const); !ok || k.V != true {
			return nil, false, nil
		}
	}
	for _, e := range nodeExprs(a) {
		if e != nil && reads(e) {
			return nil, false, nil
		}
	}
	if having != nil {
		for _, c := range having.conds {
			if reads(c) {
				return nil, false, nil
			}
		}
	}
	in, pairs, ok, err := s.pullKeys(a.in, left, reads)
	if !ok || err != nil || len(pairs) == 0 {
		return nil, false, err
	}
	// Grouped, the subquery has no row for a left row without matches: an
	// inner LATERAL drops the row, a LEFT one keeps it with NULLs. Not
	// grouped, it has its one row (count 0, the rest NULL): a left join,
	// the aggregates over no rows put back below.
	g := &lAgg{in: in, groupIDs: append([]int(nil), a.groupIDs...), groups: append([]expr.Expr(nil), a.groups...), aggIDs: a.aggIDs, aggs: a.aggs}
	var right lnode = g
	if having != nil && grouped {
		right = &lFilter{in: g, conds: having.conds}
	}
	kind := exec.LeftJoin
	if grouped {
		kind = x.kind
	}
	j := &lJoin{left: x.left, right: right, kind: kind}
	for _, p := range pairs {
		id := s.b.newCol("lateral_key", "", p.outer.Type())
		g.groups, g.groupIDs = append(g.groups, s.b.colRef(p.id)), append(g.groupIDs, id)
		c, err := expr.NewBinary("=", p.outer, s.b.colRef(id))
		if err != nil {
			return nil, true, err
		}
		j.conds = append(j.conds, c)
	}
	counts := countIDs(a, "count", "regr_count") // stream_corrscalar.go
	// HAVING without GROUP BY judges the one row, over no rows too: an
	// inner LATERAL keeps the left rows it holds for, a LEFT one gives
	// the others NULLs (kept, below).
	var keep expr.Expr
	if having != nil && !grouped {
		var err error
		if keep, err = zeroOverNoRows(andOf(having.conds), counts); err != nil {
			return nil, true, err
		}
	}
	var joined lnode = j
	if keep != nil && x.kind == exec.InnerJoin {
		joined, keep = &lFilter{in: j, conds: []expr.Expr{keep}}, nil
	}
	out := &lProject{in: joined}
	for _, id := range x.left.outIDs() {
		out.ids, out.exprs = append(out.ids, id), append(out.exprs, s.b.colRef(id))
	}
	ids, exprs := a.outIDs(), []expr.Expr(nil)
	if proj != nil {
		ids, exprs = proj.ids, proj.exprs
	} else {
		for _, id := range ids {
			exprs = append(exprs, s.b.colRef(id))
		}
	}
	for i, e := range exprs {
		if !grouped {
			if e, err = zeroOverNoRows(e, counts); err != nil {
				return nil, true, err
			}
		}
		if keep != nil {
			if e, err = expr.NewCase([]expr.When{{Cond: keep, Result: e}}, nil); err != nil {
				return nil, true, err
			}
		}
		out.ids, out.exprs = append(out.ids, ids[i]), append(out.exprs, e)
	}
	return out, true, nil
}

// pullKeys returns n without its correlations (conditions reading the
// left ids), each inner side now an output column, or ok false when n
// reads the left row otherwise. n is a chain of projections and filters
// (or a scan's filter) over a subtree that does not read the left row.
func (s *streamPlanner) pullKeys(n lnode, left map[int]bool, reads func(expr.Expr) bool) (lnode, []keyPair, bool, error) {
	// split separates the correlations among conds, adding their inner
	// sides over the input ids as new columns of a projection over base.
	split := func(conds []expr.Expr, make func([]expr.Expr) lnode) (lnode, []keyPair, bool, error) {
		var local, inner []expr.Expr
		var pairs []keyPair
		for _, c := range conds {
			if !reads(c) {
				local = append(local, c)
				continue
			}
			a, b, ok := joinEquality(c)
			if !ok {
				return nil, nil, false, nil
			}
			if reads(a) {
				a, b = b, a
			}
			if reads(a) || !onlyReads(b, left) {
				return nil, nil, false, nil
			}
			inner = append(inner, a)
			pairs = append(pairs, keyPair{id: s.b.newCol("lateral_key", "", a.Type()), outer: b})
		}
		out := make(local)
		if len(pairs) == 0 {
			return out, nil, true, nil
		}
		p := &lProject{in: out}
		for _, id := range out.outIDs() {
			p.ids, p.exprs = append(p.ids, id), append(p.exprs, s.b.colRef(id))
		}
		for i, k := range pairs {
			p.ids, p.exprs = append(p.ids, k.id), append(p.exprs, inner[i])
		}
		return p, pairs, true, nil
	}
	switch x := n.(type) {
	case *lScan:
		return split(x.filter, func(local []expr.Expr) lnode {
			c := *x
			c.filter = local
			return &c
		})
	case *lFilter:
		in, below, ok, err := s.pullKeys(x.in, left, reads)
		if !ok || err != nil {
			return nil, nil, ok, err
		}
		out, mine, ok, err := split(x.conds, func(local []expr.Expr) lnode {
			if len(local) == 0 {
				return in
			}
			return &lFilter{in: in, conds: local}
		})
		return out, append(below, mine...), ok, err
	case *lProject:
		for _, e := range x.exprs {
			if reads(e) {
				return nil, nil, false, nil
			}
		}
		in, below, ok, err := s.pullKeys(x.in, left, reads)
		if !ok || err != nil {
			return nil, nil, ok, err
		}
		p := &lProject{in: in, ids: append([]int(nil), x.ids...), exprs: append([]expr.Expr(nil), x.exprs...)}
		for _, k := range below { // the keys pass through
			p.ids, p.exprs = append(p.ids, k.id), append(p.exprs, s.b.colRef(k.id))
		}
		return p, below, true, nil
	}
	if readsAny(n, left) { // lateral.go
		return nil, nil, false, nil
	}
	return n, nil, true, nil
}

// topPerKey numbers in's rows per key in order and keeps those lim
// selects (row_number() in (offset, offset + limit], both constants).
func (s *streamPlanner) topPerKey(in lnode, pairs []keyPair, order []exec.SortKey, lim *lLimit) (lnode, bool, error) {
	bound := func(e expr.Expr) (int64, bool, error) {
		if e == nil {
			return 0, true, nil
		}
		f, err := expr.Fold(&expr.Context{}, e)
		if err != nil {
			return 0, false, err
		}
		k, ok := f.(*expr.Const)
		if !ok {
			return 0, false, nil
		}
		v, ok := k.V.(int64)
		return v, ok && v >= 0, nil
	}
	n, ok, err := bound(lim.limit)
	if !ok || err != nil || lim.limit == nil {
		return nil, false, err
	}
	off, ok, err := bound(lim.offset)
	if !ok || err != nil {
		return nil, false, err
	}
	fn, err := exec.ResolveWindow("row_number", nil, false)
	if err != nil {
		return nil, true, err
	}
	call := exec.WindowCall{Fn: fn, OrderBy: order,
		Frame: exec.Frame{Mode: exec.FrameRange, Start: exec.FrameBound{Kind: exec.UnboundedPreceding}, End: exec.FrameBound{Kind: exec.CurrentRow}}}
	for _, p := range pairs {
		call.PartitionBy = append(call.PartitionBy, s.b.colRef(p.id))
	}
	rn := s.b.newCol("row_number", "", types.TInt8)
	w := &lWindow{in: in, ids: []int{rn}, calls: []exec.WindowCall{call}}
	hi, err := expr.NewBinary("<=", s.b.colRef(rn), &expr.Const{V: off + n, T: types.TInt8})
	if err != nil {
		return nil, true, err
	}
	conds := []expr.Expr{hi}
	if off > 0 {
		lo, err := expr.NewBinary(">", s.b.colRef(rn), &expr.Const{V: off, T: types.TInt8})
		if err != nil {
			return nil, true, err
		}
		conds = append(conds, lo)
	}
	return &lFilter{in: w, conds: conds}, true, nil
}

// onlyReads reports whether e reads ids of set only (and some).
func onlyReads(e expr.Expr, set map[int]bool) bool {
	r := refsOf(e)
	for id := range r {
		if !set[id] {
			return false
		}
	}
	return len(r) > 0
}

// inlineProject is outer computed over inner's input: outer's references
// to inner's columns replaced by their expressions.
func inlineProject(outer, inner *lProject) (*lProject, error) {
	def := make(map[int]expr.Expr, len(inner.ids))
	for i, id := range inner.ids {
		def[id] = inner.exprs[i]
	}
	out := &lProject{in: inner.in, ids: outer.ids}
	for _, e := range outer.exprs {
		r, err := transform(e, func(x expr.Expr) (expr.Expr, bool, error) {
			if c, ok := x.(*expr.ColRef); ok {
				if d, found := def[c.Idx]; found {
					return d, true, nil
				}
			}
			return x, false, nil
		})
		if err != nil {
			return nil, err
		}
		out.exprs = append(out.exprs, r)
	}
	return out, nil
}

// lateralFuncOuter returns x, a LEFT JOIN LATERAL of a set-returning
// function under filters and projections (LEFT JOIN LATERAL unnest(t.tags)
// g ON g <> 'x', or LEFT JOIN LATERAL (SELECT x->>'sku' AS sku FROM
// jsonb_array_elements(o.items) x WHERE ...) i ON true), as an outer
// ProjectSet over x's left side that keeps the values meeting the filters
// and the ON conditions, and each left row none of whose values does once
// with NULLs: what the batch engine's lApply computes, row by row and
// without state. The projections' columns are computed over the
// ProjectSet, NULL on a row it kept with NULLs (told by its ordinality,
// NULL there only; a hidden one when the query has none). ok is false
// for another shape.
func (s *streamPlanner) lateralFuncOuter(x *lApply) (lnode, bool, error) {
	if x.kind != exec.LeftJoin {
		return nil, false, nil
	}
	var chain []lnode // the projections and filters over the function, top first
	var f *lLateralFunc
	for n := x.right; f == nil; {
		switch c := n.(type) {
		case *lProject:
			chain, n = append(chain, c), c.in
		case *lFilter:
			chain, n = append(chain, c), c.in
		case *lLateralFunc:
			f = c
		case *lFunc: // in a subquery, its arguments the left row's columns
			if c.srf == nil {
				return nil, false, nil
			}
			f = &lLateralFunc{calls: []*srfCall{c.srf}, ids: c.ids, ord: -1, fn: c}
			if c.ordinality {
				f.ids, f.ord = c.ids[:len(c.ids)-1], c.ids[len(c.ids)-1]
			}
		default:
			return nil, false, nil
		}
	}
	// def: a column of the chain -> its expression over the left row's
	// and the function's columns
	def := map[int]expr.Expr{}
	subst := func(e expr.Expr) expr.Expr {
		out, _ := transform(e, func(n expr.Expr) (expr.Expr, bool, error) {
			if r, ok := n.(*expr.ColRef); ok {
				if d, ok := def[r.Idx]; ok {
					return d, true, nil
				}
			}
			return n, false, nil
		})
		return out
	}
	var conds []expr.Expr
	for i := len(chain) - 1; i >= 0; i-- {
		switch c := chain[i].(type) {
		case *lProject:
			for k, e := range c.exprs {
				def[c.ids[k]] = subst(e)
			}
		case *lFilter:
			for _, e := range c.conds {
				conds = append(conds, subst(e))
			}
		}
	}
	ps := &lProjectSet{in: x.left, calls: f.calls, ids: slices.Clone(f.outIDs()), ordinality: f.ord >= 0, outer: true}
	for _, c := range f.calls {
		ps.args = append(ps.args, c.args)
	}
	for _, c := range append(conds, x.conds...) {
		if k, ok := c.(*expr.Const); ok && k.V == true {
			continue
		}
		ps.keep = append(ps.keep, subst(c))
	}
	fcols := idSet(f.outIDs())
	out := &lProject{in: ps}
	for _, id := range x.left.outIDs() {
		out.ids, out.exprs = append(out.ids, id), append(out.exprs, s.b.colRef(id))
	}
	ord := f.ord
	for _, id := range x.right.outIDs() {
		e := subst(s.b.colRef(id))
		if r, ok := e.(*expr.ColRef); !ok || !fcols[r.Idx] {
			// computed, or a left column renamed: NULL on a row kept
			// with NULLs, as the subquery's column is
			if ord < 0 {
				ord = s.b.newCol("ordinality", "", types.TInt8)
				ps.ids, ps.ordinality = append(ps.ids, ord), true
			}
			c, err := expr.NewCase([]expr.When{{Cond: &expr.IsNull{E: s.b.colRef(ord), Not: true}, Result: e}}, nil)
			if err != nil {
				return nil, true, err
			}
			e = c
		}
		out.ids, out.exprs = append(out.ids, id), append(out.exprs, e)
	}
	return out, true, nil
}

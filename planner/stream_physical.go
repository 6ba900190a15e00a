package planner

import (
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connector"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
	"slices"
)

// streamPlanner translates an optimized logical plan into stream nodes. As
// in physical.go, each node is asked for the ids its parent needs and
// returns its operator with its layout (the ids of its columns, in order);
// expressions are rewritten from ids to positions by physical.expr. Each
// result also carries its stream key. Used by one goroutine.
type streamPlanner struct {
	b *binder
	p *physical
	// emit is the query's EMIT clause, given to its windowed aggregations;
	// windowAggs counts them.
	emit       stream.EmitSpec
	windowAggs int
	eowcPlain  bool // the output is under a stream.EOWC (stream_eowc.go)
}

// sout is a translated subtree: its operator, the ids of its columns in
// order, whether it only inserts, and its stream key as ids: the columns whose values identify a
// row. A nil key means rows are a multiset; an empty non-nil key means the
// subtree has at most one row. A nil key is always correct; a wrong key is
// a bug, so keys are only kept where they are certain.
type sout struct {
	node stream.Node
	lay  []int
	key  []int
	// appendOnly is set when the changelog never retracts (inserts only),
	// which lets aggregations and top-N keep less state.
	appendOnly bool
}

// notInMV is the error for a construct a continuous query cannot maintain.
func notInMV(what string) *pgerr.Error {
	return pgerr.Unsupported("%s cannot be used in a materialized view", what)
}

// root translates a whole query: the output is exactly ids.
func (s *streamPlanner) root(n lnode, ids []int) (sout, error) {
	o, err := s.node(n, idSet(ids))
	if err != nil {
		return sout{}, err
	}
	return s.reorder(o, ids)
}

// reorder projects o to exactly ids.
func (s *streamPlanner) reorder(o sout, ids []int) (sout, error) {
	if equalInts(o.lay, ids) {
		return o, nil
	}
	pr := &stream.Project{Input: o.node}
	for _, id := range ids {
		e, err := s.expr(s.b.colRef(id), o.lay)
		if err != nil {
			return sout{}, err
		}
		pr.Exprs = append(pr.Exprs, e)
		pr.Cols = append(pr.Cols, s.p.col(id))
	}
	return sout{node: fuseProject(pr), lay: ids, key: keepKey(o.key, ids), appendOnly: o.appendOnly}, nil
}

// fuseProject merges a projection into the projection below it when one
// of the two only picks columns (so nothing is computed twice).
func fuseProject(p *stream.Project) stream.Node {
	in, ok := p.Input.(*stream.Project)
	if !ok {
		return p
	}
	if picks(p.Exprs) {
		f := &stream.Project{Input: in.Input, Cols: p.Cols}
		for _, e := range p.Exprs {
			f.Exprs = append(f.Exprs, in.Exprs[e.(*expr.ColRef).Idx])
		}
		return f
	}
	if picks(in.Exprs) {
		f := &stream.Project{Input: in.Input, Cols: p.Cols}
		for _, e := range p.Exprs {
			r, _ := transform(e, func(x expr.Expr) (expr.Expr, bool, error) {
				if c, ok := x.(*expr.ColRef); ok {
					return in.Exprs[c.Idx], true, nil
				}
				return x, false, nil
			})
			f.Exprs = append(f.Exprs, r)
		}
		return f
	}
	return p
}

// picks reports whether every expression is a column reference.
func picks(es []expr.Expr) bool {
	for _, e := range es {
		if _, ok := e.(*expr.ColRef); !ok {
			return false
		}
	}
	return true
}

// keepKey returns key if every id of it is in lay, else nil.
func keepKey(key, lay []int) []int {
	if key == nil {
		return nil
	}
	for _, id := range key {
		if position(lay, id) < 0 {
			return nil
		}
	}
	return key
}

// expr rewrites a bound expression for a batch of layout lay; subqueries
// that were not turned into joins cannot be maintained.
func (s *streamPlanner) expr(e expr.Expr, lay []int) (expr.Expr, error) {
	if err := subqueryErr(e); err != nil {
		return nil, err
	}
	if hasNow(e) {
		return nil, nowErr("now()") // would be folded into a constant
	}
	return s.p.expr(e, lay)
}

func (s *streamPlanner) exprs(es []expr.Expr, lay []int) ([]expr.Expr, error) {
	out := make([]expr.Expr, len(es))
	for i, e := range es {
		var err error
		if out[i], err = s.expr(e, lay); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *streamPlanner) keys(ks []exec.SortKey, lay []int) ([]exec.SortKey, error) {
	out := make([]exec.SortKey, len(ks))
	for i, k := range ks {
		out[i] = k
		var err error
		if out[i].E, err = s.expr(k.E, lay); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// subqueryErr names the first subquery left in e.
func subqueryErr(e expr.Expr) error {
	var err error
	walk(e, func(x expr.Expr) bool {
		sl, ok := x.(*sublink)
		if !ok || err != nil {
			return err == nil
		}
		switch {
		case sl.array != nil:
			err = notInMV("ANY/ALL (array) over a subquery")
		case sl.kind == expr.ArraySubquery:
			err = notInMV("ARRAY(subquery)")
		case sl.kind == expr.AnySubquery:
			err = notInMV("IN (subquery) here (correlated: only by equalities; of several columns: only IN under AND and OR in WHERE, NOT IN as a condition of WHERE)")
		case sl.kind == expr.AllSubquery:
			err = notInMV("ALL (subquery) (NOT IN included)")
		case sl.kind == expr.ExistsSubquery:
			err = notInMV("this EXISTS (subquery) (only in WHERE, under AND and OR; NOT EXISTS only as a condition of its own)")
		case len(sl.outer) > 0:
			err = notInMV("a correlated scalar subquery")
		default:
			err = notInMV("a scalar subquery here")
		}
		return false
	})
	return err
}

func (s *streamPlanner) node(n lnode, need map[int]bool) (sout, error) {
	if constantInput(n) { // stream_values.go
		return s.constant(n)
	}
	switch x := n.(type) {
	case *lScan:
		return s.scan(x, need)
	case *lFunc:
		return sout{}, notInMV(x.name)
	case *lLateralFunc: // a set-returning function with nothing before it in FROM
		return sout{}, notInMV(x.calls[0].name)
	case *lValues:
		if len(x.ids) == 0 {
			return sout{}, notInMV("a SELECT without FROM")
		}
		return sout{}, notInMV("VALUES")
	case *lFilter:
		if w, ok := x.in.(*lWindow); ok {
			return s.window(w, x.conds, need)
		}
		in, err := s.node(x.in, union(need, x.conds...))
		if err != nil {
			return sout{}, err
		}
		return s.filterConds(in, x.conds)
	case *lProject:
		return s.project(x, need)
	case *lJoin:
		if x.temporal {
			return s.lookupJoin(x, need)
		}
		return s.join(x, need)
	case *lAgg:
		return s.agg(x, need)
	case *lWindow:
		return s.window(x, nil, need)
	case *lSort:
		// A view has no order: ORDER BY without LIMIT changes nothing.
		return s.node(x.in, need)
	case *lLimit:
		return s.limit(x, need)
	case *lDistinct:
		return s.distinct(x)
	case *lSetOp:
		return s.setOp(x)
	case *lProjectSet:
		return s.projectSet(x, need) // stream_projectset.go
	case *lTimeWindow:
		return s.timeWindow(x, need)
	case *lRecursive:
		return sout{}, notInMV("WITH RECURSIVE")
	case *lShared:
		if x.key != nil { // a WITH query computed once per execution (volatile)
			return sout{}, notInMV("a WITH query with volatile functions")
		}
		// each parent plans its own copy: an input read twice (NOT IN),
		// or the one input of every grouping set (GROUPING SETS, ROLLUP,
		// CUBE: a union of one aggregation per set), whose scans are then
		// read once (shareSources) and equal stateful subtrees computed
		// once (shareSubtrees)
		return s.node(x.in, need)
	case *lApply:
		if j, ok, err := s.lateralJoin(x); ok || err != nil { // stream_lateral.go
			if err != nil {
				return sout{}, err
			}
			return s.node(j, need)
		}
		return sout{}, notInMV("this LATERAL subquery").
			WithHint("A materialized view takes LATERAL subqueries correlated by equalities (inner.k = outer.k) made of projections, filters, ORDER BY ... LIMIT, or one aggregate level without GROUP BY.")
	}
	return sout{}, pgerr.Internal("stream: unknown logical node %T", n)
}

// scan reads every column of a table, source or materialized view (of a
// source whose connector prunes, only those the plan reads: pruneSource),
// then filters (conditions pushed into the scan) and drops unneeded
// columns.
func (s *streamPlanner) scan(x *lScan, need map[int]bool) (sout, error) {
	if x.asOf != nil && !x.lookup {
		return sout{}, lookupPlaceErr(s.b, x)
	}
	rel := x.rel
	sc := &stream.Scan{Rel: rel.OID, Name: rel.Name, Cols: rel.ColumnTypes()}
	if x.alias != rel.Name {
		sc.Name = rel.Name + " " + x.alias
	}
	var key []int
	switch rel.Kind {
	case catalog.KindTable:
		sc.Kind, key = stream.ScanTable, rel.PrimaryKey
		sc.AppendOnly = rel.AppendOnly
	case catalog.KindSource:
		sc.Kind, sc.AppendOnly = stream.ScanSource, true
		sc.Splittable = connector.SplitsReaders(rel.Connector)
		sc.SplitsInOrder = connector.SplitsInTimeOrder(rel.Connector)
	case catalog.KindMatView:
		sc.Kind = stream.ScanView
		if env := s.b.env; env != nil && env.Streams != nil {
			key = env.Streams.ViewKey(rel.OID)
			if va, ok := env.Streams.(ViewAppendOnly); ok {
				sc.AppendOnly = va.ViewAppendOnly(rel.OID)
			}
		}
	default:
		return sout{}, notInMV("relation \"" + rel.Name + "\"")
	}
	if rel.Kind != catalog.KindMatView {
		w, err := ScanWatermark(s.b.env, rel)
		if err != nil {
			return sout{}, err
		}
		sc.Watermark = w
	}
	for _, k := range key {
		if k < 0 || k >= len(x.ids) {
			return sout{}, pgerr.Internal("stream: key column %d of %s out of range", k, rel.Name)
		}
	}
	if len(key) > 0 {
		sc.Key = append([]int(nil), key...)
	}
	o := sout{node: sc, lay: pruneSource(sc, x, need, x.filter), appendOnly: sc.AppendOnly}
	for _, k := range sc.Key {
		o.key = append(o.key, x.ids[k])
	}
	if len(x.filter) > 0 {
		var err error
		if o, err = s.filterConds(o, x.filter); err != nil {
			return sout{}, err
		}
	}
	var keep []int
	for _, id := range x.ids {
		if need[id] {
			keep = append(keep, id)
		}
	}
	if len(keep) == 0 {
		// Nothing is read, but the rows still count: keep the first column.
		keep = o.lay[:1]
	}
	return s.reorder(o, keep)
}

func (s *streamPlanner) project(x *lProject, need map[int]bool) (sout, error) {
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
	in, err := s.node(x.in, sub)
	if err != nil {
		return sout{}, err
	}
	if len(keep) == 0 {
		return in, nil // nothing is read, but the rows still count
	}
	pr := &stream.Project{Input: in.node}
	var out []int
	for _, i := range keep {
		if stream.IsProcTime(x.exprs[i]) && !in.appendOnly {
			// A retraction would carry a different stamp than its insert.
			return sout{}, notInMV("PROCTIME() over an input with updates or deletes")
		}
		e, err := s.expr(x.exprs[i], in.lay)
		if err != nil {
			return sout{}, err
		}
		pr.Exprs = append(pr.Exprs, e)
		pr.Cols = append(pr.Cols, s.p.col(x.ids[i]))
		out = append(out, x.ids[i])
	}
	// The key survives where its columns are passed on unchanged.
	var key []int
	if in.key != nil {
		key = []int{}
		for _, k := range in.key {
			found := -1
			for _, i := range keep {
				if c, ok := x.exprs[i].(*expr.ColRef); ok && c.Idx == k {
					found = x.ids[i]
					break
				}
			}
			if found < 0 {
				key = nil
				break
			}
			key = append(key, found)
		}
	}
	if isIdentity(pr.Exprs, len(in.lay)) {
		return sout{node: in.node, lay: out, key: key, appendOnly: in.appendOnly}, nil
	}
	return sout{node: fuseProject(pr), lay: out, key: key, appendOnly: in.appendOnly}, nil
}

// equiKeys splits a join's conditions into the equalities between an
// expression of the left input and one of the right (the hash keys, compiled
// against each side's layout) and the rest (the residual condition).
func (s *streamPlanner) equiKeys(conds []expr.Expr, l, r sout) (lkeys, rkeys []expr.Expr, residual []expr.Expr, err error) {
	lset, rset := idSet(l.lay), idSet(r.lay)
	for _, c := range conds {
		a, b, ok := joinEquality(c)
		if ok && len(refsOf(a)) > 0 && len(refsOf(b)) > 0 {
			if within(b, lset) && within(a, rset) {
				a, b = b, a
			}
			if within(a, lset) && within(b, rset) {
				if a, b, ok = commonKeys(a, b); ok {
					lk, err := s.expr(a, l.lay)
					if err != nil {
						return nil, nil, nil, err
					}
					rk, err := s.expr(b, r.lay)
					if err != nil {
						return nil, nil, nil, err
					}
					lkeys, rkeys = append(lkeys, lk), append(rkeys, rk)
					continue
				}
			}
		}
		residual = append(residual, c)
	}
	return lkeys, rkeys, residual, nil
}

func (s *streamPlanner) join(x *lJoin, need map[int]bool) (sout, error) {
	sub := union(need, x.conds...)
	l, err := s.node(x.left, sub)
	if err != nil {
		return sout{}, err
	}
	r, err := s.node(x.right, sub)
	if err != nil {
		return sout{}, err
	}
	all := append(append([]int(nil), l.lay...), r.lay...)
	j := &stream.HashJoin{Left: l.node, Right: r.node, Kind: x.kind}
	var residual []expr.Expr
	if j.LeftKeys, j.RightKeys, residual, err = s.equiKeys(x.conds, l, r); err != nil {
		return sout{}, err
	}
	if j.Cond, err = s.expr(andOf(residual), all); err != nil {
		return sout{}, err
	}
	j.Compares, j.Residual = pairCompares(j.Cond, len(l.lay))
	out := all
	if x.kind == exec.SemiJoin || x.kind == exec.AntiJoin {
		out = l.lay
	}
	s.joinStateCleaning(j, l, r)
	j.Cols = s.p.cols(out)
	o := sout{node: j, lay: out}
	if x.kind == exec.InnerJoin || x.kind == exec.SemiJoin {
		// New pairs (new first matches) only: nothing is ever retracted.
		o.appendOnly = l.appendOnly && r.appendOnly
	}
	if x.kind == exec.InnerJoin && l.key != nil && r.key != nil {
		// A pair of rows is identified by both rows' keys.
		o.key = append(append([]int{}, l.key...), r.key...)
	}
	j.Pruned = prunedJoinCols(out, need, o.key)
	return o, nil
}

// prunedJoinCols flags the join's output columns (out) that nothing above
// reads: neither needed by the parent nor part of the output's key. The
// join sends them as NULLs (stream.HashJoin.Pruned); nil when none is.
func prunedJoinCols(out []int, need map[int]bool, key []int) []bool {
	var pruned []bool
	for i, id := range out {
		if !need[id] && !slices.Contains(key, id) {
			if pruned == nil {
				pruned = make([]bool, len(out))
			}
			pruned[i] = true
		}
	}
	return pruned
}

// joinEquality splits a condition `a = b` (PostgreSQL's = operator).
func joinEquality(c expr.Expr) (expr.Expr, expr.Expr, bool) {
	call, ok := c.(*expr.Call)
	if !ok || call.Fn == nil || call.Fn.Name != "=" || len(call.Args) != 2 || hasSubquery(c) {
		return nil, nil, false
	}
	return call.Args[0], call.Args[1], true
}

// commonKeys casts two join keys to one type, so that equal values hash
// alike; ok is false when they have none.
func commonKeys(a, b expr.Expr) (expr.Expr, expr.Expr, bool) {
	if a.Type().SameKind(b.Type()) {
		return a, b, true
	}
	t, err := expr.CommonType([]types.T{a.Type(), b.Type()}, "JOIN")
	if err != nil {
		return nil, nil, false
	}
	ca, err1 := expr.Coerce(a, t, false)
	cb, err2 := expr.Coerce(b, t, false)
	if err1 != nil || err2 != nil {
		return nil, nil, false
	}
	return ca, cb, true
}

// limit plans ORDER BY ... LIMIT / OFFSET as a top-N over the input. A
// LIMIT without ORDER BY keeps the first rows in the order of all columns.
func (s *streamPlanner) limit(x *lLimit, need map[int]bool) (sout, error) {
	lim, err := limitCount(x.limit, "LIMIT", pgerr.InvalidRowCountInLimit, -1)
	if err != nil {
		return sout{}, err
	}
	off, err := limitCount(x.offset, "OFFSET", pgerr.InvalidRowCountInOffset, 0)
	if err != nil {
		return sout{}, err
	}
	if x.ties != nil && off != 0 {
		return sout{}, pgerr.New(pgerr.FeatureNotSupported, "OFFSET with FETCH FIRST ... WITH TIES is not supported in materialized views").
			WithHint("Without OFFSET, FETCH FIRST n ROWS WITH TIES keeps the rows ranked n or better, as rank() <= n does.")
	}
	order := sortKeysOf(x.in)
	sub := need
	for _, k := range order {
		sub = union(sub, k.E)
	}
	in, err := s.node(x.in, sub)
	if err != nil {
		return sout{}, err
	}
	if lim < 0 && off == 0 {
		return in, nil // LIMIT ALL
	}
	t := &stream.TopN{Input: in.node, Limit: lim, Offset: off, Cols: in.node.Columns(), AppendOnly: in.appendOnly}
	if t.Order, err = s.orderOr(order, in); err != nil {
		return sout{}, err
	}
	if x.ties != nil {
		// FETCH FIRST n ROWS WITH TIES: the rows that fewer than n rows
		// come before, rank() <= n; rows tie, so only the input's key is
		// one.
		t.Ties = stream.Rank
		return sout{node: t, lay: in.lay, key: in.key}, nil
	}
	return sout{node: t, lay: in.lay, key: topNKey(t, nil, in.key, -1)}, nil
}

// topNKey is the stream key of a top-N's output, given the ids of its
// partition columns (nil when some PARTITION BY item is not a column),
// its input's key and the id of its rank column (-1: none). A top-N emits
// each epoch's changes partition by partition, deletes before inserts
// within a partition, and never reuses a rank before vacating it, so:
//
//   - with one row per partition (LIMIT 1), the partition columns are a key;
//   - the input's key is one when a row cannot move between partitions
//     (no PARTITION BY, or every partition column is part of the key):
//     otherwise a row's insert into one partition may come before its
//     delete from another;
//   - the partition columns and the rank are one;
//   - otherwise there is none.
func topNKey(t *stream.TopN, part, inKey []int, rank int) []int {
	partCols := part != nil || len(t.PartitionBy) == 0
	switch {
	case t.Limit == 1 && partCols:
		return append([]int{}, part...)
	case inKey != nil && partCols && subset(part, inKey):
		return inKey
	case rank >= 0 && partCols:
		return append(append([]int{}, part...), rank)
	}
	return nil
}

// subset reports whether every id of a is in b.
func subset(a, b []int) bool {
	for _, id := range a {
		if position(b, id) < 0 {
			return false
		}
	}
	return true
}

// colIDs returns the ids of column references, or nil if some expression
// is not one.
func colIDs(es []expr.Expr) []int {
	out := []int{}
	for _, e := range es {
		c, ok := e.(*expr.ColRef)
		if !ok {
			return nil
		}
		out = append(out, c.Idx)
	}
	return out
}

// orderOr translates order over in, or without one orders by every column
// (any order would do; this one makes the chosen rows deterministic).
func (s *streamPlanner) orderOr(order []exec.SortKey, in sout) ([]exec.SortKey, error) {
	if order != nil {
		return s.keys(order, in.lay)
	}
	var out []exec.SortKey
	for i, c := range in.node.Columns() {
		out = append(out, exec.SortKey{E: &expr.ColRef{Idx: i, T: c.Type, Name: c.Name}})
	}
	return out, nil
}

// limitCount evaluates a constant LIMIT or OFFSET; absent or NULL gives def.
func limitCount(e expr.Expr, what string, code pgerr.Code, def int64) (int64, error) {
	if e == nil || isNullConst(e) {
		return def, nil
	}
	v, ok := constInt(e)
	if !ok {
		return 0, notInMV("a " + what + " that is not a constant")
	}
	if v < 0 {
		return 0, pgerr.New(code, "%s must not be negative", what)
	}
	return v, nil
}

// isNullConst reports whether e folds to NULL (LIMIT NULL is no limit).
func isNullConst(e expr.Expr) bool {
	if len(refsOf(e)) > 0 || hasSubquery(e) {
		return false
	}
	f, err := expr.Fold(&expr.Context{}, e)
	if err != nil {
		return false
	}
	c, ok := f.(*expr.Const)
	return ok && c.V == nil
}

// sortKeysOf returns the order a LIMIT applies to: the ORDER BY below it
// (under DISTINCT ON, whose rows come out in that order), or nil.
func sortKeysOf(n lnode) []exec.SortKey {
	switch x := n.(type) {
	case *lSort:
		return x.keys
	case *lDistinct:
		if x.on != nil {
			return sortKeysOf(x.in)
		}
	}
	return nil
}

// distinct plans DISTINCT as a grouping on every column (the output key)
// and DISTINCT ON as a top-1 per DISTINCT ON value in ORDER BY's order
// (without ORDER BY, in the order of all columns).
func (s *streamPlanner) distinct(x *lDistinct) (sout, error) {
	ids := x.in.outIDs()
	if x.on == nil {
		in, err := s.root(x.in, ids)
		if err != nil {
			return sout{}, err
		}
		return s.distinctOf(in), nil
	}
	order := sortKeysOf(x.in)
	sub := union(idSet(ids), x.on...)
	for _, k := range order {
		sub = union(sub, k.E)
	}
	in, err := s.node(x.in, sub)
	if err != nil {
		return sout{}, err
	}
	t := &stream.TopN{Input: in.node, Limit: 1, Cols: in.node.Columns(), AppendOnly: in.appendOnly}
	if t.PartitionBy, err = s.exprs(x.on, in.lay); err != nil {
		return sout{}, err
	}
	if t.Order, err = s.orderOr(order, in); err != nil {
		return sout{}, err
	}
	return sout{node: t, lay: in.lay, key: topNKey(t, colIDs(x.on), in.key, -1)}, nil
}

// distinctOf groups in by all its columns: they become the key. Over an
// append-only input a group, once there, never goes: so is the output.
func (s *streamPlanner) distinctOf(in sout) sout {
	cols := in.node.Columns()
	h := &stream.HashAgg{Input: in.node, Cols: cols, AppendOnly: in.appendOnly}
	for i, c := range cols {
		h.GroupBy = append(h.GroupBy, &expr.ColRef{Idx: i, T: c.Type, Name: c.Name})
	}
	return sout{node: h, lay: in.lay, key: append([]int{}, in.lay...), appendOnly: in.appendOnly}
}

// setOp plans UNION ALL as a union of changelogs and UNION as a union
// followed by DISTINCT.
func (s *streamPlanner) setOp(x *lSetOp) (sout, error) {
	if x.kind == exec.Intersect || x.kind == exec.Except {
		return s.intersectExcept(x) // stream_setop.go
	}
	l, err := s.root(x.left, x.left.outIDs())
	if err != nil {
		return sout{}, err
	}
	r, err := s.root(x.right, x.right.outIDs())
	if err != nil {
		return sout{}, err
	}
	o := sout{node: &stream.Union{Ins: []stream.Node{l.node, r.node}, Cols: s.p.cols(x.ids)}, lay: x.ids, appendOnly: l.appendOnly && r.appendOnly}
	if !x.all {
		o = s.distinctOf(o)
	}
	return o, nil
}

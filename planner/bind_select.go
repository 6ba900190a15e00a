package planner

import (
	"maps"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// query binds a SELECT (simple, VALUES or set operation) as a query level
// below parent; sub is set when the query is a subquery expression, hide
// for subqueries in FROM.
func (b *binder) query(n *pg.Node, parent *level, sub *sublink, hide bool) (lnode, error) {
	s := n.GetSelectStmt()
	if s == nil {
		return nil, b.newErr(pgerr.FeatureNotSupported, nodeLoc(n), "%s is not supported here", nodeKind(n))
	}
	return b.selectStmt(s, parent, sub, hide)
}

func (b *binder) selectStmt(s *pg.SelectStmt, parent *level, sub *sublink, hide bool) (lnode, error) {
	return b.selectLevel(s, &level{parent: parent, sub: sub, hideParent: hide})
}

// selectLevel binds a SELECT as level l.
func (b *binder) selectLevel(s *pg.SelectStmt, l *level) (lnode, error) {
	if s.WithClause != nil {
		if err := b.with(l, s.WithClause); err != nil {
			return nil, err
		}
	}
	if s.IntoClause != nil {
		return nil, b.newErr(pgerr.FeatureNotSupported, -1, "SELECT INTO is not supported")
	}
	if len(s.LockingClause) > 0 {
		if lc := s.LockingClause[0].GetLockingClause(); lc != nil && s.Op != pg.SetOperation_SETOP_NONE {
			// PostgreSQL's check, before any support question
			return nil, b.newErr(pgerr.FeatureNotSupported, -1, "%s is not allowed with UNION/INTERSECT/EXCEPT", lockStrength(lc.Strength))
		}
		if b.stream {
			return nil, b.newErr(pgerr.FeatureNotSupported, -1, "SELECT FOR UPDATE/SHARE is not supported in a streaming query")
		}
		if len(s.ValuesLists) > 0 {
			return nil, b.newErr(pgerr.FeatureNotSupported, -1, "%s cannot be applied to VALUES", lockStrength(s.LockingClause[0].GetLockingClause().GetStrength()))
		}
		l.locking = true // FROM items are recorded (bind_lock.go)
		plan, err := b.simpleSelect(s, l)
		if err != nil {
			return nil, err
		}
		if err := b.lockClauses(s, l); err != nil {
			return nil, err
		}
		return plan, nil
	}
	var plan lnode
	var err error
	switch {
	case s.Op != pg.SetOperation_SETOP_NONE && s.Op != pg.SetOperation_SET_OPERATION_UNDEFINED:
		plan, err = b.setOp(s, l)
	case len(s.ValuesLists) > 0:
		plan, err = b.values(l, s.ValuesLists)
	default:
		return b.simpleSelect(s, l)
	}
	if err != nil {
		return nil, err
	}
	return b.orderLimitOver(plan, s, l)
}

// with registers the WITH queries of a level (inlined at each reference).
func (b *binder) with(l *level, w *pg.WithClause) error {
	l.ctes = map[string]*cteDef{}
	for _, n := range w.Ctes {
		c := n.GetCommonTableExpr()
		if _, dup := l.ctes[c.Ctename]; dup {
			return b.newErr(pgerr.DuplicateAlias, c.Location, "WITH query name \"%s\" specified more than once", c.Ctename)
		}
		if c.Ctequery.GetSelectStmt() == nil {
			m, err := b.modifyingCTE(l, w, c) // dml_with.go
			if err != nil {
				return err
			}
			l.ctes[c.Ctename] = &cteDef{name: c.Ctename, query: c.Ctequery, colNames: strs(c.Aliascolnames), mod: m, loc: c.Location}
			continue
		}
		// SEARCH and CYCLE add columns (recursive_search.go).
		if !w.Recursive && (c.SearchClause != nil || c.CycleClause != nil) {
			return b.newErr(pgerr.SyntaxError, c.Location, "WITH query is not recursive")
		}
		// Later WITH queries see earlier ones: each definition gets a level
		// holding the ones before it.
		def := &level{parent: l.parent, ctes: map[string]*cteDef{}}
		for k, v := range l.ctes {
			def.ctes[k] = v
		}
		l.ctes[c.Ctename] = &cteDef{name: c.Ctename, query: c.Ctequery, colNames: strs(c.Aliascolnames), level: def, recursive: w.Recursive, loc: c.Location,
			search: c.SearchClause, cycle: c.CycleClause, inline: c.Ctematerialized == pg.CTEMaterialize_CTEMaterializeNever, owner: l}
	}
	if !w.Recursive {
		later := map[string]bool{}
		for i := len(w.Ctes) - 1; i >= 0; i-- {
			c := w.Ctes[i].GetCommonTableExpr()
			later[c.Ctename] = true
			if d := l.ctes[c.Ctename]; d != nil && d.level != nil {
				d.level.laterCTEs = maps.Clone(later)
			}
		}
	} else {
		// Under WITH RECURSIVE every query sees the others, later ones
		// too, as in PostgreSQL (a query is bound when referenced; one
		// reached again while it is bound is mutual recursion: cteRef).
		for name, c := range l.ctes {
			if c.level == nil {
				continue
			}
			for k, v := range l.ctes {
				if _, seen := c.level.ctes[k]; !seen && k != name {
					c.level.ctes[k] = v
				}
			}
		}
	}
	return nil
}

// target is one bound select-list item.
type target struct {
	name string
	e    expr.Expr
	loc  int32
}

func (b *binder) targets(l *level, list []*pg.Node) ([]target, error) {
	var out []target
	for _, n := range list {
		rt := n.GetResTarget()
		if cr := rt.Val.GetColumnRef(); cr != nil && len(cr.Fields) > 0 && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
			cols, refs, err := b.star(l, cr)
			if err != nil {
				return nil, err
			}
			for i, c := range cols {
				out = append(out, target{name: c.name, e: refs[i], loc: cr.Location})
			}
			continue
		}
		if ts, ok, err := b.recordStar(l, rt.Val.GetAIndirection()); ok || err != nil { // (x).* (usertype.go)
			if err != nil {
				return nil, err
			}
			out = append(out, ts...)
			continue
		}
		if len(rt.Indirection) > 0 {
			return nil, b.newErr(pgerr.FeatureNotSupported, rt.Location, "indirection in a select list is not supported")
		}
		e, err := b.expr(l, rt.Val)
		if err != nil {
			return nil, err
		}
		name := rt.Name
		if name == "" {
			name = figureName(rt.Val)
		}
		out = append(out, target{name: name, e: e, loc: rt.Location})
	}
	if len(out) > MaxTargetEntries {
		return nil, errTargetList()
	}
	return out, nil
}

// MaxTargetEntries is PostgreSQL's limit of entries in a select list (after
// * is expanded), a VALUES row or a RETURNING list (MaxTupleAttributeNumber);
// the wire's RowDescription could not describe more than 65,535 anyway.
const MaxTargetEntries = 1664

func errTargetList() error {
	return pgerr.New(pgerr.TooManyColumns, "target lists can have at most %d entries", MaxTargetEntries)
}

// star expands * and t.*.
// star expands * or t.* to columns and their references; t may be a FROM
// item of an enclosing query (outer references, as LATERAL (SELECT t.*)).
func (b *binder) star(l *level, cr *pg.ColumnRef) ([]nsCol, []expr.Expr, error) {
	names := strs(cr.Fields)
	refs := func(cols []nsCol, depth int, crossed []*level) []expr.Expr {
		out := make([]expr.Expr, len(cols))
		for i, c := range cols {
			out[i] = b.refAcross(c.id, depth, crossed, cr.Location)
		}
		return out
	}
	if len(names) == 0 {
		if len(l.ns) == 0 {
			return nil, nil, b.newErr(pgerr.SyntaxError, cr.Location, "SELECT * with no tables specified is not valid")
		}
		cols := visibleCols(l.ns)
		return cols, refs(cols, 0, nil), nil
	}
	tbl := names[len(names)-1]
	depth := 0
	skipNS := false
	var crossed []*level
	for x := l; x != nil; x = x.parent {
		for _, it := range x.ns {
			if !skipNS && it.relVisible && it.alias == tbl {
				return it.cols, refs(it.cols, depth, crossed), nil
			}
		}
		skipNS = x.hideParent // as resolveColumn
		if x.sub != nil {
			depth++
			crossed = append(crossed, x)
		}
	}
	return nil, nil, b.missingTable(l, tbl, cr.Location)
}

// orderItem is one ORDER BY or DISTINCT ON item: a target index, or a
// hidden expression.
type orderItem struct {
	target int
	sort   *pg.SortBy
}

func (b *binder) simpleSelect(s *pg.SelectStmt, l *level) (lnode, error) {
	var plan lnode
	var err error
	if len(s.FromClause) > 0 {
		l.clause = inJoin
		saved := b.sourceLimit
		b.sourceLimit = sourceLimitOf(s)
		plan, err = b.from(l, s.FromClause)
		b.sourceLimit = saved
		if err != nil {
			return nil, err
		}
	} else {
		plan = &lValues{rows: [][]expr.Expr{{}}}
	}
	if s.WhereClause != nil {
		l.clause = inWhere
		cond, err := b.expr(l, s.WhereClause)
		if err != nil {
			return nil, err
		}
		if cond, err = b.boolArg(cond, "WHERE", nodeLoc(s.WhereClause)); err != nil {
			return nil, err
		}
		plan = &lFilter{in: plan, conds: conjuncts(cond, nil)}
	}
	if plan, err = b.groupWindow(l, s.GroupClause, plan); err != nil {
		return nil, err
	}
	if len(s.WindowClause) > 0 {
		l.windows = map[string]*pg.WindowDef{}
		for _, w := range s.WindowClause {
			wd := w.GetWindowDef()
			if _, dup := l.windows[wd.Name]; dup {
				return nil, b.newErr(pgerr.WindowingError, wd.Location, "window \"%s\" is already defined", wd.Name)
			}
			l.windows[wd.Name] = wd
		}
	}
	l.clause = inSelect
	tl, err := b.targets(l, s.TargetList)
	if err != nil {
		return nil, err
	}
	groups, sets, err := b.groupBy(l, s.GroupClause, tl)
	if err != nil {
		return nil, err
	}
	if sets != nil {
		l.scans = nil // no functional dependency with grouping sets
	}
	b.keySessions(l, plan, groups)
	var having expr.Expr
	if s.HavingClause != nil {
		l.clause = inHaving
		if having, err = b.expr(l, s.HavingClause); err != nil {
			return nil, err
		}
		if having, err = b.boolArg(having, "HAVING", nodeLoc(s.HavingClause)); err != nil {
			return nil, err
		}
	}
	// ORDER BY and DISTINCT ON items are resolved against the select list;
	// expressions not in it become hidden columns.
	l.clause = inOrderBy
	nVisible := len(tl)
	var order, distinctOn []orderItem
	for _, n := range s.SortClause {
		it, err := b.orderTarget(l, n.GetSortBy(), &tl, nVisible, false)
		if err != nil {
			return nil, err
		}
		order = append(order, it)
	}
	distinct := len(s.DistinctClause) > 0
	if distinct && s.DistinctClause[0].Node != nil {
		for _, n := range s.DistinctClause {
			it, err := b.orderTarget(l, &pg.SortBy{Node: n, Location: nodeLoc(n)}, &tl, nVisible, false)
			if err != nil {
				return nil, err
			}
			distinctOn = append(distinctOn, it)
		}
	} else if distinct && len(tl) > nVisible {
		return nil, b.newErr(pgerr.InvalidColumnReference, tl[nVisible].loc, "for SELECT DISTINCT, ORDER BY expressions must appear in select list")
	}

	// Aggregation: group keys and aggregates are computed below; everything
	// above reads them by id.
	if len(l.groupings) > 0 && sets == nil {
		// Without grouping sets GROUPING() is 0: one set of every key.
		sets = [][]int{make([]int, len(groups))}
		for i := range groups {
			sets[0][i] = i
		}
	}
	if len(l.aggs) > 0 || len(groups) > 0 || having != nil || sets != nil {
		agg := &lAgg{in: plan, groups: groups}
		for _, g := range groups {
			name := "?column?"
			if c, ok := g.(*expr.ColRef); ok {
				name = b.cols[c.Idx].name
			}
			agg.groupIDs = append(agg.groupIDs, b.newCol(name, "", g.Type()))
			b.passOrigin(agg.groupIDs[len(agg.groupIDs)-1], g)
		}
		for _, a := range l.aggs {
			agg.aggIDs = append(agg.aggIDs, a.id)
			agg.aggs = append(agg.aggs, a.call)
		}
		for i, g := range groups {
			if c, ok := g.(*expr.ColRef); ok {
				b.grouped[c.Idx] = agg.groupIDs[i]
			}
		}
		rw := b.groupRewriter(l, agg)
		if err := directArgsGrouped(l, rw); err != nil {
			return nil, err
		}
		for i := range tl {
			if tl[i].e, err = rw(tl[i].e); err != nil {
				return nil, err
			}
		}
		if having, err = rw(having); err != nil {
			return nil, err
		}
		for i := range l.wins {
			if err := rewriteWindow(&l.wins[i].call, rw); err != nil {
				return nil, err
			}
		}
		plan = agg
		if sets != nil {
			if plan, err = b.groupingUnion(l, agg, sets); err != nil {
				return nil, err
			}
		}
		if having != nil {
			plan = &lFilter{in: plan, conds: conjuncts(having, nil)}
		}
	}
	if len(l.wins) > 0 {
		w := &lWindow{in: plan}
		for _, it := range l.wins {
			w.ids = append(w.ids, it.id)
			w.calls = append(w.calls, it.call)
		}
		plan = w
	}
	if plan, err = b.setFunctionJoin(l, plan); err != nil { // udf_set_select.go
		return nil, err
	}
	if len(l.srfs) > 0 && l.srfs[0].set == nil {
		// Set-returning functions in the select list repeat each row once
		// per value they return.
		ps := &lProjectSet{in: plan}
		agg, aggregated := aggOf(plan)
		for _, f := range l.srfs {
			args := append([]expr.Expr(nil), f.call.args...)
			if aggregated {
				rw := b.groupRewriter(l, agg)
				for i := range args {
					if args[i], err = rw(args[i]); err != nil {
						return nil, err
					}
				}
			}
			ps.calls = append(ps.calls, f.call)
			ps.args = append(ps.args, args)
			ps.ids = append(ps.ids, f.id)
		}
		plan = ps
	}
	proj := &lProject{in: plan}
	for _, t := range tl {
		e := t.e
		if e.Type().Kind == types.Unknown && !l.keepUnknown {
			// An untyped literal in a select list is text, as in PostgreSQL.
			if e, err = expr.Coerce(e, types.TText, false); err != nil {
				return nil, err
			}
		}
		id := b.newCol(t.name, "", e.Type())
		b.passOrigin(id, e)
		b.defs[id] = e
		proj.ids = append(proj.ids, id)
		proj.exprs = append(proj.exprs, e)
	}
	plan = proj
	keys, err := b.orderKeys(order, proj.ids)
	if err != nil {
		return nil, err
	}
	if distinctOn != nil {
		if len(keys) > 0 {
			plan = &lSort{in: plan, keys: keys}
			keys = nil
		}
		d := &lDistinct{in: plan}
		for _, it := range distinctOn {
			d.on = append(d.on, b.colRef(proj.ids[it.target]))
		}
		plan = d
	} else if distinct {
		plan = &lDistinct{in: plan}
	}
	if len(keys) > 0 {
		plan = &lSort{in: plan, keys: keys}
	}
	if plan, err = b.limit(l, s, plan); err != nil {
		return nil, err
	}
	if len(tl) > nVisible {
		final := &lProject{in: plan}
		for _, id := range proj.ids[:nVisible] {
			final.ids = append(final.ids, id)
			final.exprs = append(final.exprs, b.colRef(id))
		}
		plan = final
	}
	return plan, nil
}

func (b *binder) orderKeys(order []orderItem, ids []int) ([]exec.SortKey, error) {
	var keys []exec.SortKey
	for _, it := range order {
		k, err := b.sortKeyOf(b.colRef(ids[it.target]), it.sort)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// orderTarget resolves an ORDER BY item as PostgreSQL does: an output column
// name, an ordinal, or an expression (matched against the select list, else
// added as a hidden column unless onlyOutput).
func (b *binder) orderTarget(l *level, sb *pg.SortBy, tl *[]target, nVisible int, onlyOutput bool) (orderItem, error) {
	n := sb.Node
	if c := n.GetAConst(); c != nil && c.GetIval() != nil {
		k := int(c.GetIval().Ival)
		if k < 1 || k > nVisible {
			return orderItem{}, b.newErr(pgerr.InvalidColumnReference, c.Location, "ORDER BY position %d is not in select list", k)
		}
		return orderItem{target: k - 1, sort: sb}, nil
	}
	if cr := n.GetColumnRef(); cr != nil && len(cr.Fields) == 1 && cr.Fields[0].GetString_() != nil {
		name := cr.Fields[0].GetString_().Sval
		found := -1
		for i := 0; i < nVisible; i++ {
			if (*tl)[i].name == name {
				if found >= 0 && !equalExpr((*tl)[found].e, (*tl)[i].e) {
					return orderItem{}, b.newErr(pgerr.AmbiguousColumn, cr.Location, "ORDER BY \"%s\" is ambiguous", name)
				}
				if found < 0 {
					found = i
				}
			}
		}
		if found >= 0 {
			return orderItem{target: found, sort: sb}, nil
		}
	}
	e, err := b.expr(l, n)
	if err != nil {
		return orderItem{}, err
	}
	for i, t := range *tl {
		if equalExpr(t.e, e) {
			return orderItem{target: i, sort: sb}, nil
		}
	}
	if onlyOutput {
		return orderItem{}, b.newErr(pgerr.FeatureNotSupported, nodeLoc(n), "invalid UNION/INTERSECT/EXCEPT ORDER BY clause")
	}
	*tl = append(*tl, target{name: "?column?", e: e, loc: nodeLoc(n)})
	return orderItem{target: len(*tl) - 1, sort: sb}, nil
}

// limit binds LIMIT / OFFSET / FETCH FIRST.
func (b *binder) limit(l *level, s *pg.SelectStmt, plan lnode) (lnode, error) {
	if s.LimitCount == nil && s.LimitOffset == nil {
		return plan, nil
	}
	var ties []exec.SortKey
	if s.LimitOption == pg.LimitOption_LIMIT_OPTION_WITH_TIES {
		// the parser refuses WITH TIES without ORDER BY
		srt, ok := plan.(*lSort)
		if !ok {
			return nil, b.newErr(pgerr.SyntaxError, nodeLoc(s.LimitCount), "WITH TIES cannot be specified without ORDER BY clause")
		}
		ties = srt.keys
		if c := s.LimitCount.GetAConst(); c != nil && c.Isnull {
			return nil, pgerr.New(pgerr.InvalidRowCountInLimit, "row count cannot be null in FETCH FIRST ... WITH TIES clause")
		}
	}
	bind := func(n *pg.Node, c clause) (expr.Expr, error) {
		if n == nil {
			return nil, nil
		}
		saved := l.clause
		l.clause = c
		e, err := b.expr(l, n)
		l.clause = saved
		if err != nil {
			return nil, err
		}
		for id := range refsOf(e) {
			_ = id
			return nil, b.newErr(pgerr.InvalidColumnReference, nodeLoc(n), "argument of %s must not contain variables", c)
		}
		c2, err := expr.Coerce(e, types.TInt8, false)
		if err != nil {
			if pe := pgerr.As(err); pe != nil && (pe.Code == pgerr.DatatypeMismatch || pe.Code == pgerr.CannotCoerce) {
				return nil, b.newErr(pgerr.DatatypeMismatch, nodeLoc(n), "argument of %s must be type bigint, not type %s", c, e.Type())
			}
			return nil, b.errAt(err, nodeLoc(n))
		}
		return c2, nil
	}
	lim, err := bind(s.LimitCount, inLimit)
	if err != nil {
		return nil, err
	}
	off, err := bind(s.LimitOffset, inOffset)
	if err != nil {
		return nil, err
	}
	return &lLimit{in: plan, limit: lim, offset: off, ties: ties}, nil
}

// orderLimitOver applies ORDER BY / LIMIT of a VALUES or set-operation
// query: they may name only its output columns.
func (b *binder) orderLimitOver(plan lnode, s *pg.SelectStmt, l *level) (lnode, error) {
	if len(s.SortClause) > 0 {
		ids := plan.outIDs()
		it := &nsItem{colsVisible: true}
		tl := make([]target, len(ids))
		for i, id := range ids {
			it.cols = append(it.cols, nsCol{name: b.cols[id].name, id: id})
			tl[i] = target{name: b.cols[id].name, e: b.colRef(id)}
		}
		l.ns = []*nsItem{it}
		l.clause = inOrderBy
		var keys []exec.SortKey
		for _, n := range s.SortClause {
			o, err := b.orderTarget(l, n.GetSortBy(), &tl, len(ids), true)
			if err != nil {
				return nil, setOpArmHint(s, n.GetSortBy(), err)
			}
			k, err := b.sortKeyOf(b.colRef(ids[o.target]), o.sort)
			if err != nil {
				return nil, err
			}
			keys = append(keys, k)
		}
		plan = &lSort{in: plan, keys: keys}
	}
	return b.limit(l, s, plan)
}

// values binds a VALUES list; each column takes the common type of its rows.
func (b *binder) values(l *level, lists []*pg.Node) (lnode, error) {
	l.clause = inValues
	rows := make([][]expr.Expr, len(lists))
	for i, ln := range lists {
		items := ln.GetList().Items
		if len(items) > MaxTargetEntries {
			return nil, errTargetList()
		}
		if i > 0 && len(items) != len(rows[0]) {
			return nil, b.newErr(pgerr.SyntaxError, nodeLoc(items[0]), "VALUES lists must all be the same length")
		}
		rows[i] = make([]expr.Expr, len(items))
		for j, it := range items {
			e, err := b.expr(l, it)
			if err != nil {
				return nil, err
			}
			rows[i][j] = e
		}
	}
	v := &lValues{rows: rows}
	for j := range rows[0] {
		col := make([]expr.Expr, len(rows))
		for i := range rows {
			col[i] = rows[i][j]
		}
		t, col, err := b.unify(col, "VALUES", -1)
		if err != nil {
			return nil, err
		}
		if t.Kind == types.Unknown {
			t = types.TText
			for i := range col {
				if col[i], err = expr.Coerce(col[i], t, false); err != nil {
					return nil, err
				}
			}
		}
		for i := range rows {
			rows[i][j] = col[i]
		}
		v.ids = append(v.ids, b.newCol(columnN(j), "", t))
	}
	return v, nil
}

func columnN(j int) string { return "column" + itoa(j+1) }

// setOp binds UNION / INTERSECT / EXCEPT.
func (b *binder) setOp(s *pg.SelectStmt, l *level) (lnode, error) {
	left, err := b.selectLevel(s.Larg, &level{parent: l, keepUnknown: true})
	if err != nil {
		return nil, err
	}
	right, err := b.selectLevel(s.Rarg, &level{parent: l, keepUnknown: true})
	if err != nil {
		return nil, err
	}
	var kind exec.SetOpKind
	name := "UNION"
	switch s.Op {
	case pg.SetOperation_SETOP_INTERSECT:
		kind, name = exec.Intersect, "INTERSECT"
	case pg.SetOperation_SETOP_EXCEPT:
		kind, name = exec.Except, "EXCEPT"
	}
	lids, rids := left.outIDs(), right.outIDs()
	if len(lids) != len(rids) {
		loc := int32(-1)
		if len(s.Rarg.TargetList) > 0 {
			loc = nodeLoc(s.Rarg.TargetList[0])
		}
		return nil, b.newErr(pgerr.SyntaxError, loc, "each %s query must have the same number of columns", name)
	}
	lp, rp := &lProject{in: left}, &lProject{in: right}
	op := &lSetOp{kind: kind, all: s.All, left: lp, right: rp}
	for i := range lids {
		le, re := expr.Expr(b.colRef(lids[i])), expr.Expr(b.colRef(rids[i]))
		t, es, err := b.unify([]expr.Expr{le, re}, name, -1)
		if err != nil {
			return nil, err
		}
		// An untyped literal of a branch converts now, so a bad one fails
		// at bind time (pointing at it), as in PostgreSQL.
		for _, side := range []expr.Expr{le, re} {
			if c, ok := b.defs[side.(*expr.ColRef).Idx].(*expr.Const); ok && c.T.Kind == types.Unknown {
				if _, err := expr.Coerce(c, t, false); err != nil {
					return nil, b.litErr(err, -1, c)
				}
			}
		}
		if t.Kind == types.Unknown {
			t = types.TText
			for k := range es {
				if es[k], err = expr.Coerce(es[k], t, false); err != nil {
					return nil, err
				}
			}
		}
		lp.exprs, rp.exprs = append(lp.exprs, es[0]), append(rp.exprs, es[1])
		lp.ids = append(lp.ids, b.newCol(b.cols[lids[i]].name, "", t))
		rp.ids = append(rp.ids, b.newCol(b.cols[rids[i]].name, "", t))
		op.ids = append(op.ids, b.newCol(b.cols[lids[i]].name, "", t))
	}
	return op, nil
}

// lockStrength names a locking clause as PostgreSQL's messages do.
func lockStrength(s pg.LockClauseStrength) string {
	switch s {
	case pg.LockClauseStrength_LCS_FORKEYSHARE:
		return "FOR KEY SHARE"
	case pg.LockClauseStrength_LCS_FORSHARE:
		return "FOR SHARE"
	case pg.LockClauseStrength_LCS_FORNOKEYUPDATE:
		return "FOR NO KEY UPDATE"
	}
	return "FOR UPDATE"
}

// directArgsGrouped checks that the direct arguments of the level's
// ordered-set aggregates use only grouped columns, as PostgreSQL does
// (they are evaluated once per group, not per row): rw is the level's
// groupRewriter, whose error names the first ungrouped column.
func directArgsGrouped(l *level, rw func(expr.Expr) (expr.Expr, error)) error {
	for _, a := range l.aggs {
		for _, arg := range a.call.Args[:a.direct] {
			if _, err := rw(arg); err != nil {
				if pe := pgerr.As(err); pe != nil && pe.Code == pgerr.GroupingError {
					return pe.WithDetail("Direct arguments of an ordered-set aggregate must use only grouped columns.")
				}
				return err
			}
		}
	}
	return nil
}

// setOpArmHint adds PostgreSQL's hint to an ORDER BY over a set operation
// that names a column of one of its arms other than the first, whose
// names the output takes: "There is a column named "c" in table
// "*SELECT* k" ..." (k counting the arms from the left).
func setOpArmHint(s *pg.SelectStmt, sb *pg.SortBy, err error) error {
	pe := pgerr.As(err)
	cr := sb.GetNode().GetColumnRef()
	if pe == nil || pe.Code != pgerr.UndefinedColumn || pe.Hint != "" || cr == nil || len(cr.Fields) != 1 ||
		s.Op == pg.SetOperation_SETOP_NONE || s.Op == pg.SetOperation_SET_OPERATION_UNDEFINED {
		return err
	}
	name := cr.Fields[0].GetString_().GetSval()
	k := 0
	var arm func(x *pg.SelectStmt) int
	arm = func(x *pg.SelectStmt) int {
		if x.Op != pg.SetOperation_SETOP_NONE && x.Op != pg.SetOperation_SET_OPERATION_UNDEFINED {
			if found := arm(x.Larg); found > 0 {
				return found
			}
			return arm(x.Rarg)
		}
		k++
		for _, t := range x.TargetList {
			rt := t.GetResTarget()
			n := rt.GetName()
			if n == "" {
				n = figure(rt.GetVal())
			}
			if n == name {
				return k
			}
		}
		return 0
	}
	if found := arm(s); found > 1 {
		return pe.WithHint("There is a column named \"%s\" in table \"*SELECT* %d\", but it cannot be referenced from this part of the query.", name, found)
	}
	return err
}

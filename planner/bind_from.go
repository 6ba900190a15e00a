package planner

import (
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// from binds a FROM list: items are cross-joined (the optimizer turns WHERE
// equalities into join keys later) and their names added to l's namespace.
func (b *binder) from(l *level, items []*pg.Node) (lnode, error) {
	var plan lnode
	for _, it := range items {
		p, ns, err := b.fromItem(l, it)
		if err != nil {
			return nil, err
		}
		if err := b.addNS(l, ns, nodeLoc(it)); err != nil {
			return nil, err
		}
		switch {
		case plan == nil && b.stream && isLateralFunc(p) && !constantInput(p) && !readsApplied(p):
			// a set-returning function with nothing before it to read,
			// and not of constants (those are run once: stream_values.go)
			// nor of the row a LATERAL subquery runs for
			return nil, b.streamFuncErr(it.GetRangeFunction())
		case plan == nil:
			plan = p
		case readsAny(p, idSet(plan.outIDs())) || b.stream && isLateralFunc(p):
			noMarkers(l.ns)
			if plan, err = b.lateralJoin(plan, p, exec.InnerJoin, nil); err != nil {
				return nil, b.errAt(err, nodeLoc(it))
			}
		default:
			plan = &lJoin{left: plan, right: p, kind: exec.InnerJoin}
		}
	}
	return plan, nil
}

// addNS adds FROM items to a level, rejecting duplicate names.
func (b *binder) addNS(l *level, ns []*nsItem, loc int32) error {
	for _, it := range ns {
		if !it.relVisible || it.alias == "" {
			continue
		}
		for _, old := range l.ns {
			if old.relVisible && old.alias == it.alias {
				return pgerr.New(pgerr.DuplicateAlias, "table name \"%s\" specified more than once", it.alias)
			}
		}
	}
	l.ns = append(l.ns, ns...)
	return nil
}

func (b *binder) fromItem(l *level, n *pg.Node) (lnode, []*nsItem, error) {
	switch {
	case n.GetRangeVar() != nil:
		return b.rangeVar(l, n.GetRangeVar())
	case n.GetRangeSubselect() != nil:
		rs := n.GetRangeSubselect()
		was := l.bindingLateral
		l.bindingLateral = rs.Lateral
		plan, err := b.query(rs.Subquery, l, nil, !rs.Lateral)
		l.bindingLateral = was
		if err != nil {
			return nil, nil, err
		}
		if l.locking { // its tables are locked too, as PostgreSQL does
			alias := ""
			if rs.Alias != nil {
				alias = rs.Alias.Aliasname
			}
			scans, ok := tableScans(plan)
			b.noteLockItem(l, lockItem{alias: alias, what: "subquery", scans: scans, ok: ok})
		}
		if rs.Alias == nil {
			return b.unaliased(plan)
		}
		return b.aliased(plan, rs.Alias.Aliasname, rs.Alias)
	case n.GetRangeFunction() != nil:
		if l.locking {
			alias := ""
			if a := n.GetRangeFunction().Alias; a != nil {
				alias = a.Aliasname
			}
			b.noteLockItem(l, lockItem{alias: alias, what: "function"})
		}
		if plan, ns, ok, err := b.windowTVF(l, n.GetRangeFunction()); ok {
			return plan, ns, err
		}
		if b.stream && !b.isUserSetFunction(n.GetRangeFunction()) { // udf_set.go: inlined as a subquery
			// A set-returning function joins the items before it as a
			// ProjectSet over them (stream_projectset.go); any other
			// function in FROM would be evaluated once, not maintained.
			plan, ns, err := b.rangeFunction(l, n.GetRangeFunction())
			if err != nil || !isLateralFunc(plan) && !constantInput(plan) {
				return nil, nil, b.streamFuncErr(n.GetRangeFunction())
			}
			return plan, ns, nil
		}
		return b.rangeFunction(l, n.GetRangeFunction())
	case n.GetJoinExpr() != nil:
		return b.join(l, n.GetJoinExpr())
	}
	return nil, nil, b.newErr(pgerr.FeatureNotSupported, nodeLoc(n), "FROM item %s is not supported", nodeKind(n))
}

// unnamedSubquery is the relation name of a subquery in FROM without an
// alias, in EXPLAIN (PostgreSQL 16's name); queries cannot use it.
const unnamedSubquery = "unnamed_subquery"

// unaliased is aliased for a subquery in FROM without an alias, which
// PostgreSQL 16 accepts (15 asks for one): its columns answer unqualified
// names only, and two such subqueries never clash.
func (b *binder) unaliased(plan lnode) (lnode, []*nsItem, error) {
	p, ns, err := b.aliased(plan, unnamedSubquery, nil)
	if err != nil {
		return nil, nil, err
	}
	ns[0].alias, ns[0].relVisible = "", false
	return p, ns, nil
}

// aliased gives a FROM item's output columns new ids named by its alias
// (and column aliases), returning the item and its namespace entry.
func (b *binder) aliased(plan lnode, name string, alias *pg.Alias) (lnode, []*nsItem, error) {
	ids := plan.outIDs()
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = b.cols[id].name
	}
	if alias != nil {
		cn := strs(alias.Colnames)
		if len(cn) > len(ids) {
			return nil, nil, pgerr.New(pgerr.InvalidColumnReference, "table \"%s\" has %d columns available but %d columns specified", name, len(ids), len(cn))
		}
		copy(names, cn)
	}
	it := &nsItem{alias: name, relVisible: true, colsVisible: true}
	p := &lProject{in: plan}
	mid := -1
	it.marker = func() int {
		if mid < 0 {
			mid = b.newCol("?row?", name, types.TBool)
			p.ids = append(p.ids, mid)
			p.exprs = append(p.exprs, &expr.Const{V: true, T: types.TBool})
		}
		return mid
	}
	for i, id := range ids {
		nid := b.newCol(names[i], name, b.cols[id].t)
		b.cols[nid].origin = b.cols[id].origin
		p.ids = append(p.ids, nid)
		p.exprs = append(p.exprs, b.colRef(id))
		it.cols = append(it.cols, nsCol{name: names[i], id: nid})
	}
	return p, []*nsItem{it}, nil
}

func (b *binder) rangeVar(l *level, rv *pg.RangeVar) (lnode, []*nsItem, error) {
	alias := rv.Relname
	if rv.Alias != nil {
		alias = rv.Alias.Aliasname
	}
	asOf, err := b.asOf(rv)
	if err != nil {
		return nil, nil, err
	}
	if rv.Schemaname == "" {
		if cte := l.findCTE(rv.Relname); cte != nil {
			if asOf != nil {
				return nil, nil, lookupRelErr(b, rv, "\""+rv.Relname+"\" is a WITH query")
			}
			b.noteLockItem(l, lockItem{alias: alias, what: "WITH query"})
			return b.cteRef(l, cte, alias, rv)
		}
	}
	if b.env == nil || b.env.Catalog == nil {
		return nil, nil, b.newErr(pgerr.UndefinedTable, rv.Location, "relation \"%s\" does not exist", rv.Relname)
	}
	rel, err := b.env.Catalog.Resolve(rv.Schemaname, rv.Relname, b.env.SearchPath)
	if err != nil {
		if pe := pgerr.As(err); pe != nil && pe.Code == pgerr.UndefinedTable && rv.Schemaname == "" && l.laterCTE(rv.Relname) {
			err = pe.WithDetail("There is a WITH item named \"%s\", but it cannot be referenced from this part of the query.", rv.Relname).
				WithHint("Use WITH RECURSIVE, or re-order the WITH items to remove forward references.")
		}
		return nil, nil, b.errAt(err, rv.Location)
	}
	if err := b.checkAccess(rel, catalog.PrivSelect); err != nil {
		return nil, nil, err // PostgreSQL prints no position for it
	}
	if asOf != nil {
		if err := checkLookupRel(b, rv, rel); err != nil {
			return nil, nil, err
		}
	}
	if b.viewDepth == 0 { // a view depends on what it names, not on what its views read
		b.deps[rel.OID] = true
	}
	// The item's columns are the relation's, for RowDescription.
	relItem := func(plan lnode, items []*nsItem, err error) (lnode, []*nsItem, error) {
		if err == nil {
			b.setOrigins(plan.outIDs(), rel.OID)
		}
		return plan, items, err
	}
	if rel.Kind != catalog.KindTable && rel.Kind != catalog.KindView {
		b.noteLockItem(l, lockItem{alias: alias, rel: rel}) // refused if a clause covers it
	}
	switch rel.Kind {
	case catalog.KindView:
		plan, err := b.view(rel)
		if err != nil {
			return nil, nil, err
		}
		if l.locking {
			scans, ok := tableScans(plan)
			b.noteLockItem(l, lockItem{alias: alias, rel: rel, scans: scans, ok: ok})
		}
		return relItem(b.aliased(plan, alias, rv.Alias))
	case catalog.KindSystem:
		if b.stream {
			return nil, nil, b.newErr(pgerr.FeatureNotSupported, rv.Location, "system table \"%s\" cannot be used in a materialized view", rel.Name)
		}
		plan, items, err := relItem(b.aliased(b.systemTable(rel), alias, rv.Alias))
		if err == nil {
			items[0].sys = &sysItem{oid: rel.OID, proj: plan.(*lProject), tableoid: -1}
		}
		return plan, items, err
	case catalog.KindMatView:
		if !b.stream {
			return relItem(b.aliased(b.viewRows(rel), alias, rv.Alias))
		}
	case catalog.KindSequence:
		plan, err := b.sequenceRows(rel, rv.Location)
		if err != nil {
			return nil, nil, err
		}
		return relItem(b.aliased(plan, alias, rv.Alias))
	case catalog.KindSink:
		return nil, nil, b.newErr(pgerr.WrongObjectType, rv.Location, "cannot read \"%s\" in a query: it is a sink", rel.Name)
	case catalog.KindSource:
		if !b.stream {
			plan, err := b.sourceRows(rel, rv.Location)
			if err != nil {
				return nil, nil, err
			}
			return relItem(b.aliased(plan, alias, rv.Alias))
		}
	}
	if rel.Kind == catalog.KindTable && !b.stream {
		if plan, ok := b.remoteTable(rel); ok { // remote_table.go
			b.noteLockItem(l, lockItem{alias: alias, rel: rel}) // no scan of its own: refused if covered
			return relItem(b.aliased(plan, alias, rv.Alias))
		}
	}
	tbl := b.env.Catalog.Table(rel.OID)
	if tbl == nil && !b.stream {
		return nil, nil, b.newErr(pgerr.FeatureNotSupported, rv.Location, "cannot read \"%s\" in a query: it stores no rows", rel.Name)
	}
	names := make([]string, len(rel.Columns))
	for i, c := range rel.Columns {
		names[i] = c.Name
	}
	if rv.Alias != nil {
		cn := strs(rv.Alias.Colnames)
		if len(cn) > len(names) {
			return nil, nil, b.newErr(pgerr.InvalidColumnReference, rv.Location, "table \"%s\" has %d columns available but %d columns specified", alias, len(names), len(cn))
		}
		copy(names, cn)
	}
	scan := &lScan{rel: rel, table: tbl, alias: alias, rowID: -1, asOf: asOf}
	l.scans = append(l.scans, scan)
	b.noteLockItem(l, lockItem{alias: alias, rel: rel, scans: []*lScan{scan}, ok: true})
	it := &nsItem{alias: alias, relname: rel.Name, relVisible: true, colsVisible: true}
	it.marker = func() int {
		if scan.rowID < 0 {
			scan.rowID = b.newCol("ctid", alias, types.TInt8)
		}
		return scan.rowID
	}
	for i, c := range rel.Columns {
		id := b.newCol(names[i], alias, c.Type)
		scan.ids = append(scan.ids, id)
		it.cols = append(it.cols, nsCol{name: names[i], id: id})
	}
	b.setOrigins(scan.ids, rel.OID)
	return scan, []*nsItem{it}, nil
}

// checkAccess checks that the statement's role (a view's owner inside the
// view) holds priv on rel.
func (b *binder) checkAccess(rel *catalog.Relation, priv catalog.Privilege) error {
	if b.env == nil || b.env.Access == nil {
		return nil
	}
	role := b.env.Role
	if b.asRole != 0 {
		role = b.asRole
	}
	return b.env.Access(role, rel, priv)
}

// view binds a view's stored query.
func (b *binder) view(rel *catalog.Relation) (lnode, error) {
	if b.viewDepth > 32 {
		return nil, pgerr.New(pgerr.InvalidObjectDefinition, "infinite recursion detected in rules for relation \"%s\"", rel.Name)
	}
	stmts, err := sql.Parse(rel.ViewQuery)
	if err != nil {
		return nil, fmtErr("parse view %s: %w", rel.Name, err)
	}
	if len(stmts) != 1 || stmts[0].AST == nil {
		return nil, pgerr.Internal("view %s has a bad definition", rel.Name)
	}
	src, frames := b.src, b.sessionFrames
	b.src = ""
	b.sessionFrames = nil
	if stmts[0].Ext != nil {
		b.sessionFrames = stmts[0].Ext.SessionFrames // the view's own text's offsets
	}
	b.viewDepth++
	asRole := b.asRole
	b.asRole = rel.OwnerOID() // a view reads with its owner's rights
	plan, err := b.query(stmts[0].AST, nil, nil, false)
	b.asRole = asRole
	b.viewDepth--
	b.src, b.sessionFrames = src, frames
	if err != nil {
		return nil, err
	}
	ids := plan.outIDs()
	if len(ids) != len(rel.Columns) {
		return nil, pgerr.Internal("view %s returns %d columns, catalog says %d", rel.Name, len(ids), len(rel.Columns))
	}
	p := &lProject{in: plan}
	for i, id := range ids {
		c := rel.Columns[i]
		var e expr.Expr = b.colRef(id)
		if shapelessRecord(c.Type) && sameShapeKind(c.Type, e.Type()) {
			c.Type = e.Type() // the catalog keeps a record column as just "record"
		}
		if !e.Type().Equal(c.Type) {
			if e, err = expr.Coerce(e, c.Type, false); err != nil {
				return nil, err
			}
		}
		p.ids = append(p.ids, b.newCol(c.Name, rel.Name, c.Type))
		p.exprs = append(p.exprs, e)
	}
	return p, nil
}

func (b *binder) systemTable(rel *catalog.Relation) lnode {
	ids := make([]int, len(rel.Columns))
	for i, c := range rel.Columns {
		ids[i] = b.newCol(c.Name, rel.Name, c.Type)
	}
	rows := rel.Rows
	searchPath := []string(nil)
	if b.env != nil {
		searchPath = b.env.SearchPath
	}
	produce := systemRows(rows, searchPath)
	return &lFunc{name: rel.Name, scan: "Seq Scan", ids: ids, produce: func([]expr.Expr) func(*exec.Context) ([]arrowBatch, error) {
		return produce
	}}
}

func systemRows(rows func(catalog.RowsContext) ([]arrowBatch, error), searchPath []string) func(*exec.Context) ([]arrowBatch, error) {
	return func(ctx *exec.Context) ([]arrowBatch, error) {
		if rows == nil {
			return nil, nil
		}
		rc := catalog.RowsContext{SearchPath: searchPath}
		if ctx != nil && ctx.Eval != nil && ctx.Eval.Session != nil {
			s := ctx.Eval.Session
			rc.User, rc.Database, rc.SearchPath = s.User(), s.Database(), s.SearchPath()
			rc.Setting = s.Setting
		}
		return rows(rc)
	}
}

func (b *binder) cteRef(ref *level, cte *cteDef, alias string, rv *pg.RangeVar) (lnode, []*nsItem, error) {
	if cte.mod != nil {
		return b.modifyingRef(cte, alias, rv) // dml_with.go
	}
	if i := slices.Index(b.cteStack, cte); i >= 0 && i < len(b.cteStack)-1 {
		// reached from another WITH query that it reads (WITH RECURSIVE)
		return nil, nil, b.newErr(pgerr.FeatureNotSupported, cte.loc, "mutual recursion between WITH items is not implemented")
	}
	b.cteStack = append(b.cteStack, cte)
	defer func() { b.cteStack = b.cteStack[:len(b.cteStack)-1] }()
	if cte.work != nil {
		plan, ns, err := b.aliased(b.workTableScan(cte.work, cte.name), alias, rv.Alias)
		if err == nil {
			cte.work.scanIDs = plan.outIDs()
		}
		return plan, ns, err
	}
	var plan lnode
	var err error
	if cte.recursive {
		plan, err = b.recursiveCTE(cte)
	} else {
		plan, err = b.query(cte.query, cteLevel(cte, ref), nil, true)
		if err == nil {
			plan = b.sharedCTE(cte, plan) // cte_shared.go
		}
	}
	if err != nil {
		return nil, nil, err
	}
	if _, isRec := plan.(*lRecursive); isRec {
		return b.aliased(plan, alias, rv.Alias) // the column names are applied already
	}
	ids := plan.outIDs()
	if len(cte.colNames) > len(ids) {
		return nil, nil, b.newErr(pgerr.InvalidColumnReference, cte.loc, "WITH query \"%s\" has %d columns available but %d columns specified", cte.name, len(ids), len(cte.colNames))
	}
	if len(cte.colNames) > 0 {
		p := &lProject{in: plan}
		for i, id := range ids {
			name := b.cols[id].name
			if i < len(cte.colNames) {
				name = cte.colNames[i]
			}
			p.ids = append(p.ids, b.newCol(name, cte.name, b.cols[id].t))
			p.exprs = append(p.exprs, b.colRef(id))
		}
		plan = p
	}
	return b.aliased(plan, alias, rv.Alias)
}

// join binds a JoinExpr.
func (b *binder) join(l *level, j *pg.JoinExpr) (lnode, []*nsItem, error) {
	left, lns, err := b.fromItem(l, j.Larg)
	if err != nil {
		return nil, nil, err
	}
	// A LATERAL right side (or a function, implicitly lateral) sees the
	// left's names, but not under RIGHT and FULL joins (as PostgreSQL:
	// naming them is an invalid reference).
	saved := l.ns
	seen := lns
	if j.Jointype == pg.JoinType_JOIN_RIGHT || j.Jointype == pg.JoinType_JOIN_FULL {
		seen = nil
		for _, it := range lns {
			if it.alias != "" && (it.relVisible || it.hidden) {
				seen = append(seen, &nsItem{alias: it.alias, relname: it.relname, hidden: true, notLateral: true, usingAlias: it.usingAlias})
			}
		}
	}
	l.ns = append(append([]*nsItem(nil), l.ns...), seen...)
	right, rns, err := b.fromItem(l, j.Rarg)
	l.ns = saved
	if err != nil {
		return nil, nil, err
	}
	lateral := readsAny(right, idSet(left.outIDs())) || b.stream && isLateralFunc(right)
	var kind exec.JoinKind
	switch j.Jointype {
	case pg.JoinType_JOIN_INNER:
		kind = exec.InnerJoin
	case pg.JoinType_JOIN_LEFT:
		kind = exec.LeftJoin
	case pg.JoinType_JOIN_RIGHT:
		kind = exec.RightJoin
	case pg.JoinType_JOIN_FULL:
		kind = exec.FullJoin
	default:
		return nil, nil, pgerr.Unsupported("join type %v is not supported", j.Jointype)
	}
	if lateral || j.IsNatural || len(j.UsingClause) > 0 {
		noMarkers(lns)
		noMarkers(rns)
	}
	markNullable(lns, kind == exec.RightJoin || kind == exec.FullJoin)
	markNullable(rns, kind == exec.LeftJoin || kind == exec.FullJoin)
	both := append(append([]*nsItem(nil), lns...), rns...)
	tmp := &level{ns: nil}
	if err := b.addNS(tmp, both, nodeLoc(j.Rarg)); err != nil {
		return nil, nil, err
	}
	jn := &lJoin{left: left, right: right, kind: kind}
	if err := b.lookupJoin(jn, j, lateral); err != nil {
		return nil, nil, err
	}
	var plan lnode = jn
	if lateral && (j.IsNatural || len(j.UsingClause) > 0) {
		return nil, nil, pgerr.Unsupported("LATERAL with USING or NATURAL is not supported")
	}
	var using []string
	if j.IsNatural {
		lc, rc := visibleCols(lns), visibleCols(rns)
		for _, c := range lc {
			for _, d := range rc {
				if c.name == d.name {
					using = append(using, c.name)
					break
				}
			}
		}
	} else {
		using = strs(j.UsingClause)
	}
	var out []*nsItem
	if j.Quals != nil {
		saved, savedClause := l.ns, l.clause
		l.ns, l.clause = both, inJoin
		cond, err := b.expr(l, j.Quals)
		if err == nil {
			cond, err = b.boolArg(cond, "JOIN/ON", nodeLoc(j.Quals))
		}
		l.ns, l.clause = saved, savedClause
		if err != nil {
			return nil, nil, err
		}
		jn.conds = conjuncts(cond, nil)
		out = both
		if lateral {
			if plan, err = b.lateralJoin(left, right, kind, jn.conds); err != nil {
				return nil, nil, err
			}
		}
	} else if j.IsNatural || len(j.UsingClause) > 0 {
		merged := &nsItem{colsVisible: true}
		lc, rc := visibleCols(lns), visibleCols(rns)
		usedL, usedR := map[int]bool{}, map[int]bool{}
		var extra []expr.Expr
		var extraIDs []int
		for _, name := range using {
			li, err := b.usingCol(lc, name, "left")
			if err != nil {
				return nil, nil, err
			}
			ri, err := b.usingCol(rc, name, "right")
			if err != nil {
				return nil, nil, err
			}
			usedL[li], usedR[ri] = true, true
			x, y, eq, err := b.eqFunc(b.colRef(li), b.colRef(ri), -1)
			if err != nil {
				return nil, nil, err
			}
			jn.conds = append(jn.conds, &expr.Call{Fn: eq, Args: []expr.Expr{x, y}})
			id := li
			switch kind {
			case exec.RightJoin:
				id = ri
			case exec.FullJoin:
				id = b.newCol(name, "", x.Type())
				extra = append(extra, &expr.Coalesce{Args: []expr.Expr{x, y}, T: x.Type()})
				extraIDs = append(extraIDs, id)
			}
			merged.cols = append(merged.cols, nsCol{name: name, id: id})
		}
		for _, c := range lc {
			if !usedL[c.id] {
				merged.cols = append(merged.cols, c)
			}
		}
		for _, c := range rc {
			if !usedR[c.id] {
				merged.cols = append(merged.cols, c)
			}
		}
		if len(extra) > 0 {
			p := &lProject{in: jn}
			for _, id := range jn.outIDs() {
				p.ids = append(p.ids, id)
				p.exprs = append(p.exprs, b.colRef(id))
			}
			p.ids = append(p.ids, extraIDs...)
			p.exprs = append(p.exprs, extra...)
			plan = p
		}
		for _, it := range both {
			c := *it
			c.colsVisible = false
			out = append(out, &c)
		}
		out = append(out, merged)
		if a := j.JoinUsingAlias; a != nil {
			// JOIN ... USING (cols) AS x: x names the merged columns only
			for _, it := range both {
				if it.relVisible && it.alias == a.Aliasname {
					return nil, nil, pgerr.New(pgerr.DuplicateAlias, "table name \"%s\" specified more than once", a.Aliasname)
				}
			}
			out = append(out, &nsItem{alias: a.Aliasname, relVisible: true, cols: merged.cols[:len(using)], usingAlias: true})
		}
	} else {
		out = both // CROSS JOIN
		if lateral {
			if plan, err = b.lateralJoin(left, right, kind, nil); err != nil {
				return nil, nil, err
			}
		}
	}
	if j.Alias != nil {
		var hidden []*nsItem
		for _, o := range out {
			if o.alias != "" {
				hidden = append(hidden, &nsItem{alias: o.alias, relname: o.relname, hidden: true, usingAlias: o.usingAlias})
			}
		}
		it := &nsItem{alias: j.Alias.Aliasname, relVisible: true, colsVisible: true}
		cols := visibleCols(out)
		cn := strs(j.Alias.Colnames)
		if len(cn) > len(cols) {
			return nil, nil, pgerr.New(pgerr.InvalidColumnReference, "join expression \"%s\" has %d columns available but %d columns specified", j.Alias.Aliasname, len(cols), len(cn))
		}
		for i, c := range cols {
			if i < len(cn) {
				c.name = cn[i]
			}
			it.cols = append(it.cols, c)
		}
		out = append([]*nsItem{it}, hidden...)
	}
	return plan, out, nil
}

func (b *binder) usingCol(cols []nsCol, name, side string) (int, error) {
	found := -1
	for _, c := range cols {
		if c.name == name {
			if found >= 0 {
				return 0, pgerr.New(pgerr.AmbiguousColumn, "common column name \"%s\" appears more than once in %s table", name, side)
			}
			found = c.id
		}
	}
	if found < 0 {
		return 0, pgerr.New(pgerr.UndefinedColumn, "column \"%s\" specified in USING clause does not exist in %s table", name, side)
	}
	return found, nil
}

// visibleCols lists the columns that unqualified names (and *) see.
func visibleCols(ns []*nsItem) []nsCol {
	var out []nsCol
	for _, it := range ns {
		if it.colsVisible {
			out = append(out, it.cols...)
		}
	}
	return out
}

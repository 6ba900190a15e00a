package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"
	"strings"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/storage"
	"github.com/streamsql/streamsql/types"
)

// target resolves the table a DML statement writes.
// priv is what the statement needs on it (checked after its kind).
func (b *binder) writeTarget(rv *pg.RangeVar, priv catalog.Privilege) (*catalog.Relation, *storage.Table, error) {
	if b.env == nil || b.env.Catalog == nil {
		return nil, nil, b.newErr(pgerr.UndefinedTable, rv.Location, "relation \"%s\" does not exist", rv.Relname)
	}
	rel, err := b.env.Catalog.Resolve(rv.Schemaname, rv.Relname, b.env.SearchPath)
	if err != nil {
		return nil, nil, b.errAt(err, rv.Location)
	}
	switch rel.Kind {
	case catalog.KindTable:
	case catalog.KindView:
		return nil, nil, b.newErr(pgerr.FeatureNotSupported, rv.Location, "cannot change view \"%s\"", rel.Name)
	case catalog.KindMatView:
		return nil, nil, b.newErr(pgerr.WrongObjectType, rv.Location, "cannot change materialized view \"%s\"", rel.Name)
	case catalog.KindSource:
		return nil, nil, b.newErr(pgerr.WrongObjectType, rv.Location, "cannot change source \"%s\"", rel.Name)
	case catalog.KindSequence:
		return nil, nil, b.newErr(pgerr.WrongObjectType, rv.Location, "cannot change sequence \"%s\"", rel.Name)
	default:
		return nil, nil, b.newErr(pgerr.WrongObjectType, rv.Location, "cannot change relation \"%s\"", rel.Name)
	}
	if err := b.checkAccess(rel, priv); err != nil {
		return nil, nil, err // PostgreSQL prints no position for it
	}
	tbl := b.env.Catalog.Table(rel.OID)
	if tbl == nil {
		return nil, nil, pgerr.Internal("table %s has no storage", rel.Name)
	}
	return rel, tbl, nil
}

// readsTarget adds SELECT to priv when an UPDATE or DELETE reads its
// target's rows (WHERE, RETURNING), as PostgreSQL requires (it does so per
// column; column privileges do not exist here).
func readsTarget(priv catalog.Privilege, where *pg.Node, returning []*pg.Node) catalog.Privilege {
	if where != nil || len(returning) > 0 {
		priv |= catalog.PrivSelect
	}
	return priv
}

// defaultExpr binds column i's default (NULL of its type when it has none).
func (b *binder) defaultExpr(rel *catalog.Relation, i int) (expr.Expr, error) {
	c := rel.Columns[i]
	if c.Default == "" && c.IdentityDefault != "" {
		c.Default = c.IdentityDefault
	}
	if c.Default == "" && c.Domain != 0 { // the domain's default (domain.go)
		d, err := b.domainOf(c.Domain)
		if err != nil {
			return nil, err
		}
		c.Default = d.Default
		if c.Default == "" { // NULL, which the domain may refuse
			return b.assign(&expr.Const{V: nil, T: c.Type}, c, -1)
		}
	}
	if c.Default == "" {
		return &expr.Const{V: nil, T: c.Type}, nil
	}
	stmts, err := sql.Parse("SELECT " + c.Default)
	if err != nil || len(stmts) != 1 || stmts[0].AST == nil {
		return nil, pgerr.Internal("bad default for column %s: %q", c.Name, c.Default)
	}
	sel := stmts[0].AST.GetSelectStmt()
	if sel == nil || len(sel.TargetList) != 1 {
		return nil, pgerr.Internal("bad default for column %s: %q", c.Name, c.Default)
	}
	src := b.src
	b.src = ""
	defer func() { b.src = src }()
	e, err := b.expr(&level{clause: inDefault}, sel.TargetList[0].GetResTarget().Val)
	if err != nil {
		return nil, err
	}
	return b.assign(e, c, -1)
}

// assign coerces a value to a column's type as INSERT and UPDATE do, and
// to the column's domain (domain.go).
func (b *binder) assign(e expr.Expr, c catalog.Column, loc int32) (expr.Expr, error) {
	if c.Domain != 0 {
		d, err := b.domainOf(c.Domain)
		if err != nil {
			return nil, err
		}
		c.Domain = 0
		out, err := b.assign(e, c, loc)
		if err != nil {
			return nil, err
		}
		return b.domainCheck(out, d)
	}
	if e.Type().Equal(c.Type) {
		return e, nil
	}
	out, err := expr.Coerce(e, c.Type, true)
	if err != nil {
		if pe := pgerr.As(err); pe != nil && (pe.Code == pgerr.DatatypeMismatch || pe.Code == pgerr.CannotCoerce) {
			return nil, b.newErr(pgerr.DatatypeMismatch, loc, "column \"%s\" is of type %s but expression is of type %s", c.Name, c.Type, e.Type()).(*pgerr.Error).
				WithHint("You will need to rewrite or cast the expression.")
		}
		if lerr := b.literalInputErr(e, c.Type); lerr != nil {
			return nil, lerr
		}
		if k, ok := e.(*expr.Const); ok && k.T.Kind != types.Unknown && pgerr.As(err) != nil && strings.HasPrefix(string(pgerr.As(err).Code), "22") {
			// a typed constant's assignment cast, folded: PostgreSQL
			// reports it without a position ("integer out of range")
			return nil, err
		}
		return nil, b.litErr(err, loc, e)
	}
	if _, folded := out.(*expr.Const); !folded {
		// date/time literals are read when folded, with the session's
		// settings: a bad one is reported at the literal now
		if lerr := b.literalInputErr(e, c.Type); lerr != nil {
			return nil, lerr
		}
	}
	return out, nil
}

// literalInputErr reads an untyped string literal e with t's input
// function (without t's modifier) as PostgreSQL's parser does when it
// coerces the literal, and returns its error (22xxx) positioned at the
// literal: "date/time field value out of range", "interval out of range".
// A modifier's error (numeric field overflow) is left to run time, without
// a position, as in PostgreSQL.
func (b *binder) literalInputErr(e expr.Expr, t types.T) error {
	c, ok := e.(*expr.Const)
	if !ok || c.T.Kind != types.Unknown || b.env == nil || b.env.Eval == nil {
		return nil
	}
	l, ok := b.loc[c]
	if !ok {
		return nil
	}
	in, err := expr.Coerce(c, t.WithTypmod(-1), true)
	if err == nil {
		_, err = expr.Fold(b.env.Eval, in)
	}
	if pe := pgerr.As(err); pe != nil && strings.HasPrefix(string(pe.Code), "22") {
		return b.errAt(err, l)
	}
	return nil
}

// targetCols resolves an INSERT column list.
func (b *binder) targetCols(rel *catalog.Relation, cols []*pg.Node) ([]int, []int32, error) {
	if len(cols) == 0 {
		idx := make([]int, len(rel.Columns))
		locs := make([]int32, len(rel.Columns))
		for i := range idx {
			idx[i], locs[i] = i, -1
		}
		return idx, locs, nil
	}
	seen := map[int]bool{}
	var idx []int
	var locs []int32
	for k, n := range cols {
		rt := n.GetResTarget()
		i := rel.ColumnIndex(rt.Name)
		if i < 0 {
			return nil, nil, b.newErr(pgerr.UndefinedColumn, rt.Location, "column \"%s\" of relation \"%s\" does not exist", rt.Name, rel.Name)
		}
		if len(rt.Indirection) > 0 { // col[n] (insert_subscript.go)
			if err := b.subscriptTarget(rel, i, k, rt); err != nil {
				return nil, nil, err
			}
			if seen[i] && b.subTargets[i] == nil {
				return nil, nil, b.newErr(pgerr.DuplicateColumn, rt.Location, "column \"%s\" specified more than once", rt.Name)
			}
		} else if seen[i] {
			return nil, nil, b.newErr(pgerr.DuplicateColumn, rt.Location, "column \"%s\" specified more than once", rt.Name)
		}
		seen[i] = true
		idx = append(idx, i)
		locs = append(locs, rt.Location)
	}
	for i, subs := range b.subTargets {
		if len(subs) != countOf(idx, i) { // col and col[n] together
			return nil, nil, b.newErr(pgerr.DuplicateColumn, subs[0].loc, "column \"%s\" specified more than once", rel.Columns[i].Name)
		}
	}
	return idx, locs, nil
}

func planInsert(env *Env, stmt *pg.InsertStmt) (*Insert, error) {
	return planInsertIn(env, stmt, nil)
}

// planInsertIn plans an INSERT whose queries see the WITH queries of outer
// (when it is itself a WITH query; nil for a statement).
func planInsertIn(env *Env, stmt *pg.InsertStmt, outer *level) (*Insert, error) {
	b := newBinder(env)
	if outer == nil && env != nil && env.ModifyingWith {
		b.topWith = stmt.WithClause
	}
	wl, err := b.dmlWith(stmt.WithClause, outer)
	if err != nil {
		return nil, err
	}
	priv := catalog.PrivInsert
	if len(stmt.ReturningList) > 0 {
		priv |= catalog.PrivSelect
	}
	if oc := stmt.OnConflictClause; oc != nil && oc.Action == pg.OnConflictAction_ONCONFLICT_UPDATE {
		priv |= catalog.PrivUpdate
	}
	rel, tbl, err := b.writeTarget(stmt.Relation, priv)
	if err != nil {
		return nil, err
	}
	targets, locs, err := b.targetCols(rel, stmt.Cols)
	if err != nil {
		return nil, err
	}
	explicit := len(stmt.Cols) > 0
	ids := make([]int, len(rel.Columns))
	for i, c := range rel.Columns {
		ids[i] = b.newCol(c.Name, "", c.Type)
	}
	slot := make([]int, len(rel.Columns)) // table column -> position in the target list, or -1
	for i := range slot {
		slot[i] = -1
	}
	for k, i := range targets {
		if slot[i] < 0 {
			slot[i] = k
		}
	}
	// userValue reports whether a value given for column i is used: not
	// for identity columns under OVERRIDING USER VALUE; a GENERATED ALWAYS
	// column takes one only under OVERRIDING SYSTEM VALUE (else 428C9).
	userValue := func(i int) (bool, error) {
		c := rel.Columns[i]
		switch {
		case c.Generated != "":
			return false, generatedInsertError(c) // generated.go
		case c.Identity == 0:
			return true, nil
		case stmt.Override == pg.OverridingKind_OVERRIDING_USER_VALUE:
			return false, nil
		case c.Identity == 'a' && stmt.Override != pg.OverridingKind_OVERRIDING_SYSTEM_VALUE:
			return false, pgerr.New(pgerr.GeneratedAlways, "cannot insert a non-DEFAULT value into column \"%s\"", c.Name).
				WithDetail("Column \"%s\" is an identity column defined as GENERATED ALWAYS.", c.Name).
				WithHint("Use OVERRIDING SYSTEM VALUE to override.")
		}
		return true, nil
	}
	var plan lnode
	sel := stmt.SelectStmt.GetSelectStmt()
	switch {
	case sel == nil: // DEFAULT VALUES
		row := make([]expr.Expr, len(rel.Columns))
		for i := range row {
			if row[i], err = b.defaultExpr(rel, i); err != nil {
				return nil, err
			}
		}
		plan = &lValues{ids: ids, rows: [][]expr.Expr{row}}
	case len(sel.ValuesLists) > 0 && len(sel.SortClause) == 0 && sel.LimitCount == nil && sel.LimitOffset == nil && sel.WithClause == nil:
		v := &lValues{ids: ids, rows: make([][]expr.Expr, len(sel.ValuesLists))}
		defaults := make([]expr.Expr, len(rel.Columns))
		l := &level{clause: inValues, parent: wl}
		for r, ln := range sel.ValuesLists {
			items := ln.GetList().Items
			if len(items) > len(targets) {
				return nil, b.newErr(pgerr.SyntaxError, nodeLoc(items[len(targets)]), "INSERT has more expressions than target columns")
			}
			if explicit && len(items) < len(targets) {
				return nil, b.newErr(pgerr.SyntaxError, locs[len(items)], "INSERT has more target columns than expressions")
			}
			row := make([]expr.Expr, len(rel.Columns))
			for i := range rel.Columns {
				k := slot[i]
				use := true
				if k >= 0 && k < len(items) && items[k].GetSetToDefault() == nil {
					if use, err = userValue(i); err != nil {
						return nil, err
					}
				}
				if !use || k < 0 || k >= len(items) || items[k].GetSetToDefault() != nil {
					if defaults[i] == nil {
						if defaults[i], err = b.defaultExpr(rel, i); err != nil {
							return nil, err
						}
					}
					row[i] = defaults[i]
					continue
				}
				if subs := b.subTargets[i]; subs != nil { // col[n] (insert_subscript.go)
					if row[i], err = b.subscriptAssign(rel.Columns[i], subs, func(k int) (expr.Expr, error) {
						if k >= len(items) {
							return nil, b.newErr(pgerr.SyntaxError, locs[len(items)], "INSERT has more target columns than expressions")
						}
						if items[k].GetSetToDefault() != nil {
							return nil, b.subDefaultError(subs, k, locs[k]) // insert_subscript.go
						}
						return b.expr(l, items[k])
					}); err != nil {
						return nil, err
					}
					continue
				}
				e, err := b.expr(l, items[k])
				if err != nil {
					return nil, err
				}
				if row[i], err = b.assign(e, rel.Columns[i], nodeLoc(items[k])); err != nil {
					return nil, err
				}
			}
			v.rows[r] = row
		}
		plan = v
	default:
		// Untyped literals of the SELECT take the target columns' types.
		q, err := b.selectLevel(sel, &level{keepUnknown: true, parent: wl})
		if err != nil {
			return nil, err
		}
		qids := q.outIDs()
		if len(qids) > len(targets) {
			return nil, b.newErr(pgerr.SyntaxError, -1, "INSERT has more expressions than target columns")
		}
		if explicit && len(qids) < len(targets) {
			return nil, b.newErr(pgerr.SyntaxError, locs[len(qids)], "INSERT has more target columns than expressions")
		}
		p := &lProject{in: q, ids: ids}
		for i := range rel.Columns {
			k := slot[i]
			var e expr.Expr
			use := true
			if k >= 0 && k < len(qids) {
				if use, err = userValue(i); err != nil {
					return nil, err
				}
			}
			if subs := b.subTargets[i]; subs != nil && k >= 0 && k < len(qids) { // col[n] (insert_subscript.go)
				if e, err = b.subscriptAssign(rel.Columns[i], subs, func(k int) (expr.Expr, error) {
					if k >= len(qids) {
						return nil, b.newErr(pgerr.SyntaxError, locs[len(qids)], "INSERT has more target columns than expressions")
					}
					return b.colRef(qids[k]), nil
				}); err != nil {
					return nil, err
				}
			} else if !use || k < 0 || k >= len(qids) {
				if e, err = b.defaultExpr(rel, i); err != nil {
					return nil, err
				}
			} else if e, err = b.assign(b.colRef(qids[k]), rel.Columns[i], -1); err != nil {
				return nil, err
			}
			p.exprs = append(p.exprs, e)
		}
		plan = p
	}
	var oc *OnConflict
	if stmt.OnConflictClause != nil {
		if oc, err = b.onConflict(stmt.OnConflictClause, rel, stmt.Relation, wl); err != nil {
			return nil, err
		}
	}
	ph := &physical{b: b}
	src, err := ph.root(optimize(plan))
	if err != nil {
		return nil, err
	}
	ret, err := b.returning(rel, rel.Name, stmt.ReturningList)
	if err != nil {
		return nil, err
	}
	checks, err := compileChecks(env, rel) // constraints.go
	if err != nil {
		return nil, err
	}
	gen, err := compileGenerated(env, rel) // generated.go
	if err != nil {
		return nil, err
	}
	return &Insert{Rel: rel, Table: tbl, Source: src, Returning: ret, OnConflict: oc, Checks: checks, Gen: gen, ParamTypes: b.paramTypes(), With: b.modifying}, nil
}

// returning binds a RETURNING list over a row of rel (table column order).
func (b *binder) returning(rel *catalog.Relation, alias string, list []*pg.Node) (*Returning, error) {
	if len(list) == 0 {
		return nil, nil
	}
	l := &level{clause: inReturn}
	it := &nsItem{alias: alias, relVisible: true, colsVisible: true}
	lay := make([]int, len(rel.Columns))
	for i, c := range rel.Columns {
		lay[i] = b.newCol(c.Name, alias, c.Type)
		it.cols = append(it.cols, nsCol{name: c.Name, id: lay[i]})
	}
	l.ns = []*nsItem{it}
	tl, err := b.targets(l, list)
	if err != nil {
		return nil, err
	}
	ph := &physical{b: b}
	out := &Returning{}
	for _, t := range tl {
		e := t.e
		if e.Type().Kind == types.Unknown {
			if e, err = expr.Coerce(e, types.TText, false); err != nil {
				return nil, err
			}
		}
		m, err := ph.expr(e, lay)
		if err != nil {
			return nil, err
		}
		out.Exprs = append(out.Exprs, m)
		out.Columns = append(out.Columns, types.Column{Name: t.name, Type: e.Type()})
	}
	return out, nil
}

// scanForWrite binds the target of UPDATE/DELETE as a scan with row ids.
func (b *binder) scanForWrite(rel *catalog.Relation, tbl *storage.Table, rv *pg.RangeVar) (*lScan, *level) {
	alias := rel.Name
	if rv.Alias != nil {
		alias = rv.Alias.Aliasname
	}
	scan := &lScan{rel: rel, table: tbl, alias: alias}
	it := &nsItem{alias: alias, relname: rel.Name, relVisible: true, colsVisible: true}
	for _, c := range rel.Columns {
		id := b.newCol(c.Name, alias, c.Type)
		scan.ids = append(scan.ids, id)
		it.cols = append(it.cols, nsCol{name: c.Name, id: id})
	}
	scan.rowID = b.newCol("ctid", alias, types.TInt8)
	return scan, &level{ns: []*nsItem{it}}
}

func (b *binder) where(l *level, plan lnode, w *pg.Node) (lnode, error) {
	if w == nil {
		return plan, nil
	}
	l.clause = inWhere
	cond, err := b.expr(l, w)
	if err != nil {
		return nil, err
	}
	if cond, err = b.boolArg(cond, "WHERE", nodeLoc(w)); err != nil {
		return nil, err
	}
	return &lFilter{in: plan, conds: conjuncts(cond, nil)}, nil
}

func planUpdate(env *Env, stmt *pg.UpdateStmt) (*Update, error) {
	return planUpdateIn(env, stmt, nil, false)
}

// planUpdateIn plans an UPDATE inside outer (a WITH query's). everyMatch
// keeps a target row once per FROM row it joins (MERGE counts them),
// where UPDATE uses one of them.
func planUpdateIn(env *Env, stmt *pg.UpdateStmt, outer *level, everyMatch bool) (*Update, error) {
	b := newBinder(env)
	if outer == nil && env != nil && env.ModifyingWith {
		b.topWith = stmt.WithClause
	}
	wl, err := b.dmlWith(stmt.WithClause, outer)
	if err != nil {
		return nil, err
	}
	rel, tbl, err := b.writeTarget(stmt.Relation, readsTarget(catalog.PrivUpdate, stmt.WhereClause, stmt.ReturningList))
	if err != nil {
		return nil, err
	}
	scan, l := b.scanForWrite(rel, tbl, stmt.Relation)
	l.parent = wl
	target, err := b.withFrom(l, scan, stmt.FromClause)
	if err != nil {
		return nil, err
	}
	set := make([]expr.Expr, len(rel.Columns))
	l.clause = inUpdate
	targets, err := b.expandMultiAssign(l, stmt.TargetList)
	if err != nil {
		return nil, err
	}
	fields := map[int]*updField{} // SET c.f = v (update_fields.go)
	for _, n := range targets {
		rt := n.GetResTarget()
		i := rel.ColumnIndex(rt.Name)
		if i < 0 {
			return nil, b.newErr(pgerr.UndefinedColumn, rt.Location, "column \"%s\" of relation \"%s\" does not exist", rt.Name, rel.Name)
		}
		if rel.Columns[i].Generated != "" && rt.Val.GetSetToDefault() == nil {
			return nil, generatedUpdateError(rel.Columns[i]) // generated.go
		}
		if len(rt.Indirection) > 0 {
			if set[i] != nil {
				return nil, pgerr.New(pgerr.SyntaxError, "multiple assignments to same column \"%s\"", rt.Name)
			}
			if err := b.updateFieldTarget(l, rel, i, rt, fields); err != nil {
				return nil, err
			}
			continue
		}
		if set[i] != nil || fields[i] != nil {
			return nil, pgerr.New(pgerr.SyntaxError, "multiple assignments to same column \"%s\"", rt.Name)
		}
		if rt.Val.GetSetToDefault() != nil {
			if set[i], err = b.defaultExpr(rel, i); err != nil {
				return nil, err
			}
			continue
		}
		if rel.Columns[i].Identity == 'a' {
			return nil, pgerr.New(pgerr.GeneratedAlways, "column \"%s\" can only be updated to DEFAULT", rt.Name).
				WithDetail("Column \"%s\" is an identity column defined as GENERATED ALWAYS.", rt.Name)
		}
		e, err := b.expr(l, rt.Val)
		if err != nil {
			return nil, err
		}
		if set[i], err = b.assign(e, rel.Columns[i], nodeLoc(rt.Val)); err != nil {
			return nil, err
		}
	}
	for i, n := range fields {
		v, err := buildUpdateField(b.colRef(scan.ids[i]), rel.Columns[i].Type, n)
		if err != nil {
			return nil, b.errAt(err, n.loc)
		}
		if set[i], err = b.assign(v, rel.Columns[i], n.loc); err != nil {
			return nil, err
		}
	}
	plan, err := b.where(l, target, stmt.WhereClause)
	if err != nil {
		return nil, err
	}
	plan = onePerRow(b, plan, scan, len(stmt.FromClause) > 0 && !everyMatch)
	p := &lProject{in: plan, ids: []int{b.newCol("ctid", "", types.TInt8)}, exprs: []expr.Expr{b.colRef(scan.rowID)}}
	for i, c := range rel.Columns {
		e := set[i]
		if e == nil {
			e = b.colRef(scan.ids[i])
		}
		p.ids = append(p.ids, b.newCol(c.Name, "", c.Type))
		p.exprs = append(p.exprs, e)
	}
	ph := &physical{b: b}
	src, err := ph.root(optimize(p))
	if err != nil {
		return nil, err
	}
	ret, err := b.returning(rel, scan.alias, stmt.ReturningList)
	if err != nil {
		return nil, err
	}
	checks, err := compileChecks(env, rel) // constraints.go
	if err != nil {
		return nil, err
	}
	gen, err := compileGenerated(env, rel) // generated.go
	if err != nil {
		return nil, err
	}
	return &Update{Rel: rel, Table: tbl, Source: src, Returning: ret, Checks: checks, Gen: gen, ParamTypes: b.paramTypes(), With: b.modifying}, nil
}

func planDelete(env *Env, stmt *pg.DeleteStmt) (*Delete, error) {
	return planDeleteIn(env, stmt, nil, false)
}

// planDeleteIn is planUpdateIn for DELETE (everyMatch: per USING row).
func planDeleteIn(env *Env, stmt *pg.DeleteStmt, outer *level, everyMatch bool) (*Delete, error) {
	b := newBinder(env)
	if outer == nil && env != nil && env.ModifyingWith {
		b.topWith = stmt.WithClause
	}
	wl, err := b.dmlWith(stmt.WithClause, outer)
	if err != nil {
		return nil, err
	}
	rel, tbl, err := b.writeTarget(stmt.Relation, readsTarget(catalog.PrivDelete, stmt.WhereClause, stmt.ReturningList))
	if err != nil {
		return nil, err
	}
	scan, l := b.scanForWrite(rel, tbl, stmt.Relation)
	l.parent = wl
	target, err := b.withFrom(l, scan, stmt.UsingClause)
	if err != nil {
		return nil, err
	}
	plan, err := b.where(l, target, stmt.WhereClause)
	if err != nil {
		return nil, err
	}
	plan = onePerRow(b, plan, scan, len(stmt.UsingClause) > 0 && !everyMatch)
	p := &lProject{in: plan, ids: []int{b.newCol("ctid", "", types.TInt8)}, exprs: []expr.Expr{b.colRef(scan.rowID)}}
	for i, c := range rel.Columns {
		p.ids = append(p.ids, b.newCol(c.Name, "", c.Type))
		p.exprs = append(p.exprs, b.colRef(scan.ids[i]))
	}
	ph := &physical{b: b}
	src, err := ph.root(optimize(p))
	if err != nil {
		return nil, err
	}
	ret, err := b.returning(rel, scan.alias, stmt.ReturningList)
	if err != nil {
		return nil, err
	}
	return &Delete{Rel: rel, Table: tbl, Source: src, Returning: ret, ParamTypes: b.paramTypes(), With: b.modifying}, nil
}

// withFrom joins the target of UPDATE ... FROM / DELETE ... USING with the
// other tables (the WHERE clause then relates them).
func (b *binder) withFrom(l *level, scan *lScan, from []*pg.Node) (lnode, error) {
	if len(from) == 0 {
		return scan, nil
	}
	saved := l.clause
	l.clause = inJoin
	for _, it := range l.ns {
		it.unreachable = true
	}
	others, err := b.from(l, from)
	for _, it := range l.ns {
		it.unreachable = false
	}
	l.clause = saved
	if err != nil {
		return nil, err
	}
	return &lJoin{left: scan, right: others, kind: exec.InnerJoin}, nil
}

// onePerRow keeps one joined row per target row: with FROM/USING a target
// row may match several times, and PostgreSQL then uses one of them.
func onePerRow(b *binder, plan lnode, scan *lScan, joined bool) lnode {
	if !joined {
		return plan
	}
	return &lDistinct{in: plan, on: []expr.Expr{b.colRef(scan.rowID)}}
}

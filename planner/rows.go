package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Row values: ROW(a, b) and (a, b) are records (types.Record), as is a
// whole-row reference to a FROM item (SELECT t FROM t, t.* as a function
// argument). Two row constructors compared with = and <> compare field by
// field, with < <= > >= lexicographically (expr.RowCompare); row IN (row,
// ...) is an OR of those, and row IN (subquery) is a multi-column semi join
// when it is a WHERE condition. Record values compared otherwise use the
// record operators (exec/expr/record.go).

// rowArgs binds a row constructor's fields; t.* stands for all of t's
// columns.
func (b *binder) rowArgs(l *level, r *pg.RowExpr) ([]expr.Expr, error) {
	var out []expr.Expr
	for _, a := range r.Args {
		if name, ok := qualifiedStar(a); ok {
			w, err := b.resolveColumn(l, []string{name}, nodeLoc(a))
			if err != nil {
				return nil, err
			}
			if rx, ok := w.(*expr.RowExpr); ok {
				out = append(out, rx.Args...)
				continue
			}
			return nil, b.newErr(pgerr.FeatureNotSupported, nodeLoc(a), "* is not allowed here")
		}
		e, err := b.expr(l, a)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// qualifiedStar returns t for a column reference t.*.
func qualifiedStar(n *pg.Node) (string, bool) {
	cr := n.GetColumnRef()
	if cr == nil || len(cr.Fields) != 2 || cr.Fields[1].GetAStar() == nil || cr.Fields[0].GetString_() == nil {
		return "", false
	}
	return cr.Fields[0].GetString_().Sval, true
}

// rowExpr binds ROW(a, b, ...) as a record value.
func (b *binder) rowExpr(l *level, r *pg.RowExpr) (expr.Expr, error) {
	if err := b.noStreamRecords(r.Location); err != nil {
		return nil, err
	}
	args, err := b.rowArgs(l, r)
	if err != nil {
		return nil, err
	}
	var names []string
	if len(r.Colnames) == len(args) && len(args) > 0 {
		names = strs(r.Colnames)
	}
	e, err := expr.NewRowExpr(args, names)
	return nullable(e, b.errAt(err, r.Location))
}

// wholeRowItem is the FROM item of level x that name refers to as a whole
// row, or nil.
func wholeRowItem(x *level, name string) *nsItem {
	for _, it := range x.ns {
		if it.relVisible && it.alias == name {
			return it
		}
	}
	return nil
}

// wholeRow binds a whole-row reference to FROM item it: a record of its
// columns, named as they are. On the nullable side of an outer join
// PostgreSQL's whole-row value is NULL where the join added the row, which
// a row of the columns cannot tell from a row of NULLs: refused there.
func (b *binder) wholeRow(it *nsItem, depth int, crossed []*level, loc int32) (expr.Expr, error) {
	if it.scalar && len(it.cols) == 1 {
		return b.refAcross(it.cols[0].id, depth, crossed, loc), nil
	}
	if err := b.noStreamRecords(loc); err != nil {
		return nil, err
	}
	if it.nullable && (it.marker == nil || it.noMarker) {
		return nil, b.newErr(pgerr.FeatureNotSupported, loc, "whole-row reference to \"%s\" on the nullable side of an outer join is not supported here", it.alias)
	}
	args := make([]expr.Expr, len(it.cols))
	names := make([]string, len(it.cols))
	for i, c := range it.cols {
		args[i] = b.refAcross(c.id, depth, crossed, loc)
		names[i] = c.name
	}
	row, err := expr.NewRowExpr(args, names)
	if err != nil || !it.nullable {
		return nullable(row, b.errAt(err, loc))
	}
	// NULL where the join added the row: the item's marker is NULL there
	present := &expr.IsNull{E: b.refAcross(it.marker(), depth, crossed, loc), Not: true}
	e, err := expr.NewCase([]expr.When{{Cond: present, Result: row}}, nil)
	return nullable(e, b.errAt(err, loc))
}

// noMarkers marks items whose columns now pass through a node listing them.
func noMarkers(items []*nsItem) {
	for _, it := range items {
		it.noMarker = true
	}
}

// noStreamRecords refuses record values in continuous queries (the
// streaming operators' state does not hold records).
func (b *binder) noStreamRecords(loc int32) error {
	if b.stream {
		return b.newErr(pgerr.FeatureNotSupported, loc, "row values are not supported in materialized views and continuous queries")
	}
	return nil
}

// shapelessRecord reports record (or record[]) without its fields, as the
// catalog stores a view's record column (by type OID).
func shapelessRecord(t types.T) bool {
	for t.Kind == types.Array && t.Elem != nil {
		t = *t.Elem
	}
	return t.Kind == types.Record && t.Rec == nil
}

// sameShapeKind reports a record (or array of records, as deep) for a
// shapeless record type s.
func sameShapeKind(s, t types.T) bool {
	for s.Kind == types.Array && t.Kind == types.Array && s.Elem != nil && t.Elem != nil {
		s, t = *s.Elem, *t.Elem
	}
	return s.Kind == types.Record && t.Kind == types.Record
}

// markNullable marks the FROM items of an outer join's nullable side.
func markNullable(items []*nsItem, on bool) {
	if !on {
		return
	}
	for _, it := range items {
		it.nullable = true
	}
}

// rowCompare binds `(a, b) op (c, d)`.
func (b *binder) rowCompare(l *level, op string, x, y *pg.RowExpr, loc int32) (expr.Expr, error) {
	xs, err := b.rowArgs(l, x)
	if err != nil {
		return nil, err
	}
	ys, err := b.rowArgs(l, y)
	if err != nil {
		return nil, err
	}
	switch op {
	case "=", "<>", "!=":
		if op == "!=" {
			op = "<>"
		}
		return b.rowEq(op, xs, ys, loc)
	case "<", "<=", ">", ">=":
		return b.rowOrder(op, xs, ys, loc)
	}
	return nil, b.newErr(pgerr.FeatureNotSupported, loc, "row comparison with %s is not supported", op)
}

// rowOrder binds a lexicographic row comparison.
func (b *binder) rowOrder(op string, xs, ys []expr.Expr, loc int32) (expr.Expr, error) {
	if len(xs) != len(ys) {
		return nil, b.newErr(pgerr.SyntaxError, loc, "unequal number of entries in row expressions")
	}
	if len(xs) == 0 {
		return nil, b.newErr(pgerr.FeatureNotSupported, loc, "cannot compare rows of zero length")
	}
	rc := &expr.RowCompare{Op: op}
	for i := range xs {
		eq, err := b.binary("=", xs[i], ys[i], loc)
		if err != nil {
			return nil, err
		}
		c, err := b.binary(op, xs[i], ys[i], loc)
		if err != nil {
			return nil, err
		}
		rc.Eq = append(rc.Eq, eq)
		rc.Cmp = append(rc.Cmp, c)
	}
	if len(xs) == 1 {
		return rc.Cmp[0], nil
	}
	return rc, nil
}

func (b *binder) rowEq(op string, xs, ys []expr.Expr, loc int32) (expr.Expr, error) {
	if len(xs) != len(ys) {
		return nil, b.newErr(pgerr.SyntaxError, loc, "unequal number of entries in row expressions")
	}
	terms := make([]expr.Expr, len(xs))
	for i := range xs {
		var err error
		if terms[i], err = b.binary(op, xs[i], ys[i], loc); err != nil {
			return nil, err
		}
	}
	if len(terms) == 1 {
		return terms[0], nil
	}
	if op == "=" {
		return &expr.And{Args: terms}, nil
	}
	return &expr.Or{Args: terms}, nil
}

// rowIn binds `(a, b) [NOT] IN ((1, 2), (3, 4))`.
func (b *binder) rowIn(l *level, row *pg.RowExpr, list []*pg.Node, not bool, loc int32) (expr.Expr, error) {
	xs, err := b.rowArgs(l, row)
	if err != nil {
		return nil, err
	}
	terms := make([]expr.Expr, len(list))
	for i, it := range list {
		r := it.GetRowExpr()
		if r == nil {
			return nil, b.newErr(pgerr.SyntaxError, nodeLoc(it), "unequal number of entries in row expressions")
		}
		ys, err := b.rowArgs(l, r)
		if err != nil {
			return nil, err
		}
		if terms[i], err = b.rowEq("=", xs, ys, loc); err != nil {
			return nil, err
		}
	}
	var e expr.Expr = &expr.Or{Args: terms}
	if len(terms) == 1 {
		e = terms[0]
	}
	if not {
		e = &expr.Not{E: e}
	}
	return e, nil
}

// rowSubLink binds `(a, b) IN (SELECT x, y ...)`.
func (b *binder) rowSubLink(l *level, s *sublink, row *pg.RowExpr, sl *pg.SubLink, ids []int) (expr.Expr, error) {
	op := "="
	if len(sl.OperName) > 0 {
		op = opName(sl.OperName)
	}
	if op != "=" || s.kind != expr.AnySubquery {
		return nil, b.newErr(pgerr.FeatureNotSupported, sl.Location, "row comparison %s with a subquery is not supported", op)
	}
	xs, err := b.rowArgs(l, row)
	if err != nil {
		return nil, err
	}
	if len(xs) < len(ids) {
		return nil, b.newErr(pgerr.SyntaxError, sl.Location, "subquery has too many columns")
	}
	if len(xs) > len(ids) {
		return nil, b.newErr(pgerr.SyntaxError, sl.Location, "subquery has too few columns")
	}
	proj := &lProject{in: s.plan}
	cast := false
	for i, x := range xs {
		c := b.cols[ids[i]]
		ref := &expr.ColRef{Idx: ids[i], T: c.t, Name: c.name}
		e, err := b.binary(op, x, ref, sl.Location)
		if err != nil {
			return nil, err
		}
		call, ok := e.(*expr.Call)
		if !ok || len(call.Args) != 2 || call.Fn.Return.Kind != types.Bool {
			return nil, b.newErr(pgerr.FeatureNotSupported, sl.Location, "operator %s with a subquery is not supported", op)
		}
		s.rowLHS = append(s.rowLHS, call.Args[0])
		s.rowOps = append(s.rowOps, call.Fn)
		id := ids[i]
		if call.Args[1] != expr.Expr(ref) {
			id = b.newCol(c.name, "", call.Args[1].Type())
			cast = true
		}
		proj.ids = append(proj.ids, id)
		proj.exprs = append(proj.exprs, call.Args[1])
		s.rowIDs = append(s.rowIDs, id)
	}
	if cast {
		s.plan = proj
	}
	s.t = types.TBool
	return s, nil
}

// isRecordName reports the type name record (not record[]).
func isRecordName(tn *pg.TypeName) bool {
	names := strs(tn.Names)
	return len(tn.ArrayBounds) == 0 && len(names) > 0 && names[len(names)-1] == "record" &&
		(len(names) == 1 || len(names) == 2 && names[0] == "pg_catalog")
}

// recordCast binds x::record: a record stays as it is; anything else
// would be read as an anonymous record's text, which PostgreSQL does not
// implement either.
func (b *binder) recordCast(l *level, tc *pg.TypeCast) (expr.Expr, error) {
	e, err := b.expr(l, tc.Arg)
	if err != nil {
		return nil, err
	}
	if e.Type().Kind == types.Record {
		return e, nil
	}
	loc := int32(-1)
	if c := tc.Arg.GetAConst(); c != nil && e.Type().Kind == types.Unknown {
		loc = c.Location
	}
	return nil, b.newErr(pgerr.FeatureNotSupported, loc, "input of anonymous composite types is not implemented")
}

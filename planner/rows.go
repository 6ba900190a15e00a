package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Row constructors, (a, b), appear only in comparisons: row = row and
// row <> row compare field by field, row IN (row, ...) is an OR of those,
// and row IN (subquery) is a multi-column semi join when it is a WHERE
// condition.

func (b *binder) rowArgs(l *level, r *pg.RowExpr) ([]expr.Expr, error) {
	return b.args(l, r.Args)
}

// rowCompare binds `(a, b) op (c, d)` for = and <>.
func (b *binder) rowCompare(l *level, op string, x, y *pg.RowExpr, loc int32) (expr.Expr, error) {
	if op != "=" && op != "<>" {
		return nil, b.newErr(pgerr.FeatureNotSupported, loc, "row comparison with %s is not supported", op)
	}
	xs, err := b.rowArgs(l, x)
	if err != nil {
		return nil, err
	}
	ys, err := b.rowArgs(l, y)
	if err != nil {
		return nil, err
	}
	return b.rowEq(op, xs, ys, loc)
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

package planner

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// expr binds a scalar expression of query level l. As in PostgreSQL, the
// first context that gives a parameter a type fixes it for later references.
func (b *binder) expr(l *level, n *pg.Node) (expr.Expr, error) {
	e, err := b.expr0(l, n)
	if err == nil && len(b.params) > 0 {
		walk(e, func(x expr.Expr) bool {
			if p, ok := x.(*expr.Param); ok && err == nil {
				err = b.noteParam(p)
			}
			return err == nil
		})
		if err != nil {
			return nil, b.errAt(err, nodeLoc(n))
		}
	}
	return e, err
}

func (b *binder) expr0(l *level, n *pg.Node) (expr.Expr, error) {
	switch {
	case n == nil:
		return nil, pgerr.Internal("missing expression")
	case n.GetAConst() != nil:
		return b.constant(n.GetAConst())
	case n.GetColumnRef() != nil:
		cr := n.GetColumnRef()
		names := strs(cr.Fields)
		if tbl, ok := qualifiedStar(n); ok {
			// t.* as a value (a function's argument): t's whole row
			if e, err := b.resolveColumn(l, []string{tbl}, cr.Location); err == nil {
				if e.Type().Kind == types.Record {
					return e, nil
				}
			} else if pgerr.As(err) != nil && pgerr.As(err).Code == pgerr.FeatureNotSupported {
				return nil, err
			}
		}
		if len(names) != len(cr.Fields) {
			return nil, b.newErr(pgerr.FeatureNotSupported, cr.Location, "* is not allowed here")
		}
		return b.resolveColumn(l, names, cr.Location)
	case n.GetParamRef() != nil:
		return b.param(n.GetParamRef())
	case n.GetAExpr() != nil:
		return b.aexpr(l, n.GetAExpr())
	case n.GetBoolExpr() != nil:
		return b.boolExpr(l, n.GetBoolExpr())
	case n.GetNullTest() != nil:
		nt := n.GetNullTest()
		e, err := b.expr(l, nt.Arg)
		if err != nil {
			return nil, err
		}
		return &expr.IsNull{E: e, Not: nt.Nulltesttype == pg.NullTestType_IS_NOT_NULL}, nil
	case n.GetBooleanTest() != nil:
		return b.boolTest(l, n.GetBooleanTest())
	case n.GetTypeCast() != nil:
		return b.typeCast(l, n.GetTypeCast())
	case n.GetFuncCall() != nil:
		return b.funcCall(l, n.GetFuncCall())
	case n.GetSubLink() != nil:
		return b.subLink(l, n.GetSubLink())
	case n.GetCaseExpr() != nil:
		return b.caseExpr(l, n.GetCaseExpr())
	case n.GetCoalesceExpr() != nil:
		c := n.GetCoalesceExpr()
		args, err := b.args(l, c.Args)
		if err != nil {
			return nil, err
		}
		out, err := expr.NewCoalesce(args)
		return nullable(out, b.litErr(err, c.Location, args...))
	case n.GetMinMaxExpr() != nil:
		return b.minMax(l, n.GetMinMaxExpr())
	case n.GetSqlvalueFunction() != nil:
		return b.sqlValueFunc(n.GetSqlvalueFunction())
	case n.GetCollateClause() != nil:
		// Every comparison in streamsql uses the C collation (byte order):
		// a collation that compares so changes nothing (collate.go).
		cc := n.GetCollateClause()
		e, err := b.expr(l, cc.Arg)
		if err != nil {
			return nil, err
		}
		return e, b.checkCollate(cc.Collname, e.Type(), cc.Location)
	case n.GetAArrayExpr() != nil:
		return b.arrayExpr(l, n.GetAArrayExpr(), types.TUnknown)
	case n.GetAIndirection() != nil:
		return b.indirection(l, n.GetAIndirection())
	case n.GetSetToDefault() != nil:
		return nil, b.newErr(pgerr.SyntaxError, n.GetSetToDefault().Location, "DEFAULT is not allowed in this context")
	case n.GetGroupingFunc() != nil:
		return b.groupingFunc(l, n.GetGroupingFunc())
	case n.GetRowExpr() != nil:
		return b.rowExpr(l, n.GetRowExpr())
	}
	return nil, b.newErr(pgerr.FeatureNotSupported, nodeLoc(n), "expression %s is not supported", nodeKind(n))
}

// constant binds a literal: integers are int4 when they fit, else int8, else
// numeric; decimals are numeric; strings are unknown until context types them.
func (b *binder) constant(c *pg.A_Const) (expr.Expr, error) {
	if c.Isnull {
		return &expr.Const{V: nil, T: types.TUnknown}, nil
	}
	switch {
	case c.GetIval() != nil:
		return &expr.Const{V: int64(c.GetIval().Ival), T: types.TInt4}, nil
	case c.GetFval() != nil:
		s := c.GetFval().Fval
		if !strings.ContainsAny(s, ".eE") {
			if v, err := strconv.ParseInt(s, 10, 64); err == nil {
				if v >= -1<<31 && v < 1<<31 {
					return &expr.Const{V: v, T: types.TInt4}, nil
				}
				return &expr.Const{V: v, T: types.TInt8}, nil
			}
		}
		d, _, err := apd.NewFromString(s)
		if err != nil {
			return nil, b.newErr(pgerr.InvalidTextRepresentation, c.Location, "invalid input syntax for type numeric: \"%s\"", s)
		}
		if err := types.CheckNumericRange(d); err != nil {
			return nil, b.newErr(pgerr.NumericValueOutOfRange, c.Location, "value overflows numeric format")
		}
		return &expr.Const{V: d, T: types.TNumeric}, nil
	case c.GetSval() != nil:
		k := &expr.Const{V: c.GetSval().Sval, T: types.TUnknown}
		b.loc[k] = c.Location
		return k, nil
	case c.GetBoolval() != nil:
		return &expr.Const{V: c.GetBoolval().Boolval, T: types.TBool}, nil
	}
	return nil, b.newErr(pgerr.FeatureNotSupported, c.Location, "bit string literals are not supported")
}

func (b *binder) param(p *pg.ParamRef) (expr.Expr, error) {
	idx := int(p.Number) - 1
	if b.udfParams != nil { // a SQL function's body: $n is its parameter n
		if idx < 0 || idx >= len(b.udfParams) {
			return nil, b.newErr(pgerr.UndefinedParameter, p.Location, "there is no parameter $%d", p.Number)
		}
		if a, ok := b.udfConst[b.udfParams[idx]]; ok {
			return a, nil
		}
		return b.colRef(b.udfParams[idx]), nil
	}
	if idx < 0 || idx >= 65535 {
		return nil, b.newErr(pgerr.UndefinedParameter, p.Location, "there is no parameter $%d", p.Number)
	}
	for len(b.params) <= idx {
		b.params = append(b.params, types.TUnknown)
	}
	t := b.params[idx]
	if t.Kind == 0 && t.Typmod == 0 { // zero value: not declared
		t = types.TUnknown
		b.params[idx] = t
	}
	return &expr.Param{Idx: idx, T: t}, nil
}

// opName returns an operator's name (OPERATOR(pg_catalog.~) is "~").
func opName(ns []*pg.Node) string {
	parts := strs(ns)
	if len(parts) == 0 {
		return ""
	}
	return parts[len(parts)-1]
}

func (b *binder) binary(op string, l, r expr.Expr, loc int32) (expr.Expr, error) {
	switch op {
	case "~", "~*", "!~", "!~*", "~~", "~~*", "!~~", "!~~*":
		return b.like(op, l, r, nil, loc)
	}
	e, err := expr.NewBinary(op, l, r)
	if err != nil {
		return nil, b.litErr(err, loc, l, r)
	}
	return e, nil
}

// litErr positions an error: a bad literal (22xxx: invalid input syntax
// and the like) is reported at the untyped literal that failed to convert,
// as PostgreSQL does; other errors at loc.
func (b *binder) litErr(err error, loc int32, es ...expr.Expr) error {
	if pe := pgerr.As(err); pe != nil && pe.Position == 0 && strings.HasPrefix(string(pe.Code), "22") {
		for _, e := range es {
			for r, ok := e.(*expr.ColRef); ok && b.defs[r.Idx] != nil; r, ok = e.(*expr.ColRef) {
				e = b.defs[r.Idx]
			}
			if c, ok := e.(*expr.Const); ok {
				if l, ok := b.loc[c]; ok && c.T.Kind == types.Unknown {
					s, isStr := c.V.(string)
					if !isStr || strings.Contains(pe.Message, `"`+s+`"`) {
						return b.errAt(err, l)
					}
					// Not the literal's input but the type modifier
					// (numeric field overflow...): PostgreSQL applies it
					// as a run-time coercion, without a position.
					return err
				}
			}
		}
	}
	return b.errAt(err, loc)
}

func (b *binder) like(op string, l, r, esc expr.Expr, loc int32) (expr.Expr, error) {
	e, err := expr.NewLike(l, r, esc, strings.Contains(op, "*"), strings.HasPrefix(op, "!"), !strings.Contains(op, "~~"))
	if err != nil {
		return nil, b.errAt(err, loc)
	}
	return e, nil
}

// toText types an unknown literal as text.
func (b *binder) toText(e expr.Expr, loc int32) (expr.Expr, error) {
	if e.Type().Kind != types.Unknown {
		return e, nil
	}
	c, err := expr.NewCast(e, types.TText, false)
	return c, b.errAt(err, loc)
}

// eqFunc resolves l = r and returns the coerced sides and the "=" overload.
func (b *binder) eqFunc(l, r expr.Expr, loc int32) (expr.Expr, expr.Expr, *expr.Func, error) {
	e, err := b.binary("=", l, r, loc)
	if err != nil {
		return nil, nil, nil, err
	}
	c, ok := e.(*expr.Call)
	if !ok || len(c.Args) != 2 {
		return nil, nil, nil, b.newErr(pgerr.FeatureNotSupported, loc, "comparison of %s and %s is not supported here", l.Type(), r.Type())
	}
	return c.Args[0], c.Args[1], c.Fn, nil
}

func (b *binder) aexpr(l *level, a *pg.A_Expr) (expr.Expr, error) {
	op := opName(a.Name)
	switch a.Kind {
	case pg.A_Expr_Kind_AEXPR_OP:
		if x, y := a.Lexpr.GetRowExpr(), a.Rexpr.GetRowExpr(); x != nil && y != nil {
			return b.rowCompare(l, op, x, y, a.Location)
		}
		if a.Lexpr == nil {
			r, err := b.expr(l, a.Rexpr)
			if err != nil {
				return nil, err
			}
			e, err := expr.NewUnary(op, r)
			return e, b.errAt(err, a.Location)
		}
		x, err := b.expr(l, a.Lexpr)
		if err != nil {
			return nil, err
		}
		y, err := b.expr(l, a.Rexpr)
		if err != nil {
			return nil, err
		}
		return b.binary(op, x, y, a.Location)
	case pg.A_Expr_Kind_AEXPR_LIKE, pg.A_Expr_Kind_AEXPR_ILIKE:
		x, err := b.expr(l, a.Lexpr)
		if err != nil {
			return nil, err
		}
		pat := a.Rexpr
		var esc expr.Expr
		if fc := pat.GetFuncCall(); fc != nil && funcName(fc.Funcname) == "like_escape" && len(fc.Args) == 2 {
			pat = fc.Args[0]
			if esc, err = b.expr(l, fc.Args[1]); err != nil {
				return nil, err
			}
		}
		y, err := b.expr(l, pat)
		if err != nil {
			return nil, err
		}
		return b.like(op, x, y, esc, a.Location)
	case pg.A_Expr_Kind_AEXPR_DISTINCT, pg.A_Expr_Kind_AEXPR_NOT_DISTINCT, pg.A_Expr_Kind_AEXPR_NULLIF:
		x, err := b.expr(l, a.Lexpr)
		if err != nil {
			return nil, err
		}
		y, err := b.expr(l, a.Rexpr)
		if err != nil {
			return nil, err
		}
		if a.Kind == pg.A_Expr_Kind_AEXPR_NULLIF {
			e, err := expr.NewNullIf(x, y)
			return nullable(e, b.errAt(err, a.Location))
		}
		e, err := expr.NewIsDistinct(x, y, a.Kind == pg.A_Expr_Kind_AEXPR_NOT_DISTINCT)
		return nullable(e, b.errAt(err, a.Location))
	case pg.A_Expr_Kind_AEXPR_IN:
		if row := a.Lexpr.GetRowExpr(); row != nil && a.Rexpr.GetList() != nil {
			return b.rowIn(l, row, a.Rexpr.GetList().Items, op == "<>", a.Location)
		}
		return b.inList(l, a, op == "<>")
	case pg.A_Expr_Kind_AEXPR_OP_ANY, pg.A_Expr_Kind_AEXPR_OP_ALL:
		arr := a.Rexpr.GetAArrayExpr()
		any := a.Kind == pg.A_Expr_Kind_AEXPR_OP_ANY
		if arr != nil && len(arr.Elements) > 0 && ((any && op == "=") || (!any && op == "<>")) {
			return b.inList(l, &pg.A_Expr{Lexpr: a.Lexpr, Rexpr: pg.MakeListNode(arr.Elements), Location: a.Location}, !any)
		}
		return b.arrayAnyAll(l, a, op, any)
	case pg.A_Expr_Kind_AEXPR_BETWEEN, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN,
		pg.A_Expr_Kind_AEXPR_BETWEEN_SYM, pg.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM:
		return b.between(l, a)
	case pg.A_Expr_Kind_AEXPR_SIMILAR:
		// The parser has made the pattern similar_to_escape(pattern
		// [, escape]); the match is the POSIX operator on its result.
		x, err := b.expr(l, a.Lexpr)
		if err != nil {
			return nil, err
		}
		y, err := b.expr(l, a.Rexpr)
		if err != nil {
			return nil, err
		}
		return b.like(op, x, y, nil, a.Location)
	}
	return nil, b.newErr(pgerr.FeatureNotSupported, a.Location, "operator kind %v is not supported", a.Kind)
}

func (b *binder) between(l *level, a *pg.A_Expr) (expr.Expr, error) {
	x, err := b.expr(l, a.Lexpr)
	if err != nil {
		return nil, err
	}
	bounds := a.Rexpr.GetList()
	if bounds == nil || len(bounds.Items) != 2 {
		return nil, pgerr.Internal("malformed BETWEEN")
	}
	lo, err := b.expr(l, bounds.Items[0])
	if err != nil {
		return nil, err
	}
	hi, err := b.expr(l, bounds.Items[1])
	if err != nil {
		return nil, err
	}
	in := func(lo, hi expr.Expr) (expr.Expr, error) {
		ge, err := b.binary(">=", x, lo, a.Location)
		if err != nil {
			return nil, err
		}
		le, err := b.binary("<=", x, hi, a.Location)
		if err != nil {
			return nil, err
		}
		return &expr.And{Args: []expr.Expr{ge, le}}, nil
	}
	e, err := in(lo, hi)
	if err != nil {
		return nil, err
	}
	switch a.Kind {
	case pg.A_Expr_Kind_AEXPR_BETWEEN:
		return e, nil
	case pg.A_Expr_Kind_AEXPR_NOT_BETWEEN:
		return &expr.Not{E: e}, nil
	}
	e2, err := in(hi, lo)
	if err != nil {
		return nil, err
	}
	var sym expr.Expr = &expr.Or{Args: []expr.Expr{e, e2}}
	if a.Kind == pg.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM {
		sym = &expr.Not{E: sym}
	}
	return sym, nil
}

// inList binds `x [NOT] IN (a, b, ...)`: with a common type it is an
// InList; otherwise, as PostgreSQL does, a chain of = joined by OR.
func (b *binder) inList(l *level, a *pg.A_Expr, not bool) (expr.Expr, error) {
	x, err := b.expr(l, a.Lexpr)
	if err != nil {
		return nil, err
	}
	list := a.Rexpr.GetList()
	if list == nil {
		return nil, pgerr.Internal("malformed IN list")
	}
	items := make([]expr.Expr, len(list.Items))
	for i, it := range list.Items {
		if items[i], err = b.expr(l, it); err != nil {
			return nil, err
		}
	}
	if in, err := expr.NewInList(x, items, not); err == nil {
		return in, nil
	}
	op := "="
	if not {
		op = "<>"
	}
	terms := make([]expr.Expr, len(items))
	for i, it := range items {
		if terms[i], err = b.binary(op, x, it, a.Location); err != nil {
			return nil, err
		}
	}
	if len(terms) == 1 {
		return terms[0], nil
	}
	if not {
		return &expr.And{Args: terms}, nil
	}
	return &expr.Or{Args: terms}, nil
}

// boolArg coerces e to boolean for a construct (WHERE, AND, CASE/WHEN...).
func (b *binder) boolArg(e expr.Expr, what string, loc int32) (expr.Expr, error) {
	if e.Type().Kind == types.Bool {
		return e, nil
	}
	if e.Type().Kind == types.Unknown {
		c, err := expr.Coerce(e, types.TBool, false)
		return c, b.errAt(err, loc)
	}
	return nil, b.newErr(pgerr.DatatypeMismatch, loc, "argument of %s must be type boolean, not type %s", what, e.Type())
}

func (b *binder) boolExpr(l *level, be *pg.BoolExpr) (expr.Expr, error) {
	what := "AND"
	switch be.Boolop {
	case pg.BoolExprType_OR_EXPR:
		what = "OR"
	case pg.BoolExprType_NOT_EXPR:
		what = "NOT"
	}
	args := make([]expr.Expr, len(be.Args))
	for i, a := range be.Args {
		e, err := b.expr(l, a)
		if err != nil {
			return nil, err
		}
		if args[i], err = b.boolArg(e, what, nodeLoc(a)); err != nil {
			return nil, err
		}
	}
	switch be.Boolop {
	case pg.BoolExprType_OR_EXPR:
		return &expr.Or{Args: args}, nil
	case pg.BoolExprType_NOT_EXPR:
		return &expr.Not{E: args[0]}, nil
	}
	return &expr.And{Args: args}, nil
}

func (b *binder) boolTest(l *level, bt *pg.BooleanTest) (expr.Expr, error) {
	e, err := b.expr(l, bt.Arg)
	if err != nil {
		return nil, err
	}
	what := "IS TRUE"
	t, f := true, false
	out := &expr.IsBool{}
	switch bt.Booltesttype {
	case pg.BoolTestType_IS_TRUE:
		out.Value = &t
	case pg.BoolTestType_IS_NOT_TRUE:
		out.Value, out.Not, what = &t, true, "IS NOT TRUE"
	case pg.BoolTestType_IS_FALSE:
		out.Value, what = &f, "IS FALSE"
	case pg.BoolTestType_IS_NOT_FALSE:
		out.Value, out.Not, what = &f, true, "IS NOT FALSE"
	case pg.BoolTestType_IS_UNKNOWN:
		what = "IS UNKNOWN"
	case pg.BoolTestType_IS_NOT_UNKNOWN:
		out.Not, what = true, "IS NOT UNKNOWN"
	}
	if out.E, err = b.boolArg(e, what, bt.Location); err != nil {
		return nil, err
	}
	return out, nil
}

func (b *binder) typeCast(l *level, tc *pg.TypeCast) (expr.Expr, error) {
	if isRecordName(tc.TypeName) {
		return b.recordCast(l, tc) // rows.go
	}
	t, fields, err := bindTypeName(tc.TypeName)
	if err != nil {
		if ut, ok := b.lookupUserType(tc.TypeName); ok { // an enum or composite type (usertype.go)
			return b.typeCastTo(l, tc, ut, "")
		}
		d := b.lookupDomain(tc.TypeName) // domain.go
		if d == nil {
			return nil, b.errAt(err, tc.TypeName.Location)
		}
		e, err := b.typeCastTo(l, tc, d.Base, "")
		if err != nil {
			return nil, err
		}
		return b.domainCheck(e, d)
	}
	return b.typeCastTo(l, tc, t, fields)
}

// typeCastTo binds tc, whose type name is t (fields: an interval's field).
func (b *binder) typeCastTo(l *level, tc *pg.TypeCast, t types.T, fields string) (expr.Expr, error) {
	if arr := tc.Arg.GetAArrayExpr(); arr != nil && t.Kind == types.Array {
		return b.arrayExpr(l, arr, t)
	}
	e, err := b.expr(l, tc.Arg)
	if err != nil {
		return nil, err
	}
	// INTERVAL '5' MINUTE: a bare number takes the unit of the field.
	if c, ok := e.(*expr.Const); ok && fields != "" && t.Kind == types.Interval {
		if s, ok := c.V.(string); ok && isNumber(strings.TrimSpace(s)) {
			e = &expr.Const{V: strings.TrimSpace(s) + " " + fields, T: c.T}
		}
	}
	loc := tc.Location
	// Only a string literal's input is checked by PostgreSQL's parser
	// (errors with a position); a number's cast and a type modifier are
	// applied at run time (or constant folding), without one.
	lit := tc.Arg.GetAConst() != nil && e.Type().Kind == types.Unknown
	if lit {
		loc = tc.Arg.GetAConst().Location
		if t.Typmod >= 0 && castFolds(b, e, types.T{Kind: t.Kind, Elem: t.Elem, Typmod: -1}) {
			lit = false
		}
	}
	out, err := expr.NewCast(e, t, true)
	if err != nil {
		if pe := pgerr.As(err); pe != nil && !lit && pe.Code != pgerr.CannotCoerce {
			// A value cast at run time (or folded by the planner), as
			// PostgreSQL does it: no position, whatever the error
			// ("integer out of range", "cannot convert NaN to integer").
			return nil, err
		}
		return nil, b.errAt(err, loc)
	}
	if c, ok := out.(*expr.Cast); ok && lit && b.env != nil && b.env.Eval != nil {
		if _, isConst := c.E.(*expr.Const); isConst {
			// Date/time literals are read with the session's settings
			// when folded; a bad one is reported at the literal now, as
			// PostgreSQL's parser does.
			if _, err := expr.Fold(b.env.Eval, c); err != nil {
				if pe := pgerr.As(err); pe != nil && (strings.HasPrefix(string(pe.Code), "22") || lookupFailed(t, pe.Code)) {
					return nil, b.errAt(err, loc)
				}
			}
		}
	}
	return out, nil
}

// lookupFailed reports a regclass/regtype/regproc literal naming no
// object: PostgreSQL's parser reads such a literal, so the error has its
// position.
func lookupFailed(t types.T, code pgerr.Code) bool {
	switch t.Kind {
	case types.RegClass, types.RegType, types.RegProc:
		return code == pgerr.UndefinedTable || code == pgerr.UndefinedObject || code == pgerr.UndefinedFunction
	}
	return false
}

// castFolds reports whether e cast to t binds and, when e is a constant,
// evaluates without an error.
func castFolds(b *binder, e expr.Expr, t types.T) bool {
	c, err := expr.NewCast(e, t, true)
	if err != nil {
		return false
	}
	if b.env != nil && b.env.Eval != nil {
		if _, err := expr.Fold(b.env.Eval, c); err != nil {
			return false
		}
	}
	return true
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil && s != ""
}

func (b *binder) caseExpr(l *level, c *pg.CaseExpr) (expr.Expr, error) {
	var arg expr.Expr
	var err error
	if c.Arg != nil {
		if arg, err = b.expr(l, c.Arg); err != nil {
			return nil, err
		}
	}
	whens := make([]expr.When, len(c.Args))
	results := make([]expr.Expr, 0, len(c.Args)+1)
	for i, wn := range c.Args {
		w := wn.GetCaseWhen()
		cond, err := b.expr(l, w.Expr)
		if err != nil {
			return nil, err
		}
		if arg != nil {
			if cond, err = b.binary("=", arg, cond, w.Location); err != nil {
				return nil, err
			}
		}
		if cond, err = b.boolArg(cond, "CASE/WHEN", nodeLoc(w.Expr)); err != nil {
			return nil, err
		}
		r, err := b.expr(l, w.Result)
		if err != nil {
			return nil, err
		}
		whens[i] = expr.When{Cond: cond}
		results = append(results, r)
	}
	if c.Defresult != nil {
		r, err := b.expr(l, c.Defresult)
		if err != nil {
			return nil, err
		}
		results = append(results, r)
	}
	var els expr.Expr
	if c.Defresult != nil {
		els = results[len(results)-1]
	}
	for i := range whens {
		whens[i].Result = results[i]
	}
	out, err := expr.NewCase(whens, els)
	return nullable(out, b.litErr(err, c.Location, results...))
}

// unify coerces es to their common type.
func (b *binder) unify(es []expr.Expr, context string, loc int32) (types.T, []expr.Expr, error) {
	ts := make([]types.T, len(es))
	for i, e := range es {
		ts[i] = e.Type()
	}
	t, err := expr.CommonType(ts, context)
	if err != nil {
		return t, nil, b.litErr(err, loc, es...)
	}
	out := make([]expr.Expr, len(es))
	for i, e := range es {
		if out[i], err = expr.Coerce(e, t, false); err != nil {
			return t, nil, b.litErr(err, loc, e)
		}
	}
	return t, out, nil
}

func (b *binder) commonArgs(l *level, ns []*pg.Node, context string, loc int32) ([]expr.Expr, types.T, error) {
	es := make([]expr.Expr, len(ns))
	for i, n := range ns {
		e, err := b.expr(l, n)
		if err != nil {
			return nil, types.T{}, err
		}
		es[i] = e
	}
	t, es, err := b.unify(es, context, loc)
	return es, t, err
}

// minMax binds GREATEST/LEAST (NULL arguments are ignored).
func (b *binder) minMax(l *level, m *pg.MinMaxExpr) (expr.Expr, error) {
	name, op := "greatest", ">="
	if m.Op == pg.MinMaxOp_IS_LEAST {
		name, op = "least", "<="
	}
	args, _, err := b.commonArgs(l, m.Args, strings.ToUpper(name), m.Location)
	if err != nil {
		return nil, err
	}
	if e, err := expr.NewCall(name, args); err == nil {
		return e, nil
	}
	// CASE WHEN a IS NULL THEN b WHEN b IS NULL THEN a WHEN a >= b THEN a ELSE b END, folded left.
	acc := args[0]
	for _, x := range args[1:] {
		cmp, err := b.binary(op, acc, x, m.Location)
		if err != nil {
			return nil, err
		}
		acc = &expr.Case{T: acc.Type(), Whens: []expr.When{
			{Cond: &expr.IsNull{E: acc}, Result: x},
			{Cond: &expr.IsNull{E: x}, Result: acc},
			{Cond: cmp, Result: acc},
		}, Else: x}
	}
	return acc, nil
}

func (b *binder) sqlValueFunc(f *pg.SQLValueFunction) (expr.Expr, error) {
	var name string
	switch f.Op {
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
		name = "current_date"
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_TIME, pg.SQLValueFunctionOp_SVFOP_CURRENT_TIME_N:
		name = "current_time"
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N:
		name = "now"
	case pg.SQLValueFunctionOp_SVFOP_LOCALTIME, pg.SQLValueFunctionOp_SVFOP_LOCALTIME_N:
		name = "localtime"
	case pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP, pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
		name = "localtimestamp"
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_ROLE, pg.SQLValueFunctionOp_SVFOP_CURRENT_USER, pg.SQLValueFunctionOp_SVFOP_USER:
		name = "current_user"
	case pg.SQLValueFunctionOp_SVFOP_SESSION_USER:
		name = "session_user"
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG:
		name = "current_database"
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA:
		name = "current_schema"
	}
	e, err := expr.NewCall(name, nil)
	if err != nil {
		return nil, b.errAt(err, f.Location)
	}
	if f.Typmod >= 0 && (e.Type().IsTimestamp() || e.Type().Kind == types.Time) {
		return expr.NewCast(e, e.Type().WithTypmod(f.Typmod), true)
	}
	return e, nil
}

func (b *binder) arrayExpr(l *level, a *pg.A_ArrayExpr, want types.T) (expr.Expr, error) {
	if len(a.Elements) == 0 {
		if want.Kind != types.Array {
			return nil, b.newErr(pgerr.IndeterminateDatatype, a.Location, "cannot determine type of empty array")
		}
		return &expr.ArrayExpr{T: want}, nil
	}
	elems := make([]expr.Expr, len(a.Elements))
	for i, n := range a.Elements {
		if sub := n.GetAArrayExpr(); sub != nil {
			return nil, b.newErr(pgerr.FeatureNotSupported, sub.Location, "multidimensional arrays are not supported")
		}
		e, err := b.expr(l, n)
		if err != nil {
			return nil, err
		}
		elems[i] = e
	}
	var t types.T
	var err error
	if want.Kind == types.Array {
		t = *want.Elem
		for i := range elems {
			if elems[i], err = expr.NewCast(elems[i], t, true); err != nil {
				return nil, b.errAt(err, a.Location)
			}
		}
	} else if t, elems, err = b.unify(elems, "ARRAY", a.Location); err != nil {
		return nil, err
	}
	if t.Kind == types.Unknown {
		t = types.TText
		for i := range elems {
			if elems[i], err = expr.Coerce(elems[i], t, false); err != nil {
				return nil, b.errAt(err, a.Location)
			}
		}
	}
	return &expr.ArrayExpr{Elems: elems, T: types.ArrayOf(t)}, nil
}

func (b *binder) indirection(l *level, ind *pg.A_Indirection) (expr.Expr, error) {
	if e, ok, err := b.srfField(l, ind); ok {
		return e, err
	}
	e, err := b.expr(l, ind.Arg)
	if err != nil {
		return nil, err
	}
	for _, n := range ind.Indirection {
		if s := n.GetString_(); s != nil {
			f, ok, err := recordField(e, s.Sval)
			if !ok && e.Type().Kind == types.Record {
				f, err = expr.NewFieldSelect(e, s.Sval)
				ok = true
			}
			if !ok {
				return nil, b.newErr(pgerr.FeatureNotSupported, nodeLoc(ind.Arg), "only array subscripts are supported")
			}
			if err != nil {
				return nil, b.errAt(err, nodeLoc(ind.Arg))
			}
			e = f
			continue
		}
		ix := n.GetAIndices()
		if ix == nil || ix.IsSlice || ix.Uidx == nil {
			return nil, b.newErr(pgerr.FeatureNotSupported, nodeLoc(ind.Arg), "only array subscripts are supported")
		}
		i, err := b.expr(l, ix.Uidx)
		if err != nil {
			return nil, err
		}
		s, err := expr.NewSubscript(e, i)
		if err != nil {
			return nil, b.errAt(err, nodeLoc(ind.Arg))
		}
		e = s
	}
	return e, nil
}

// exprLocation is PostgreSQL's exprLocation over a raw expression: the
// leftmost of a cast's or operator's own location and its (left)
// argument's, where nodeLoc gives the :: or the operator. Errors about a
// value as a whole point there ('1 year'::interval at its literal).
func exprLocation(n *pg.Node) int32 {
	leftmost := func(a, b int32) int32 {
		if a < 0 || b >= 0 && b < a {
			return b
		}
		return a
	}
	switch {
	case n.GetTypeCast() != nil:
		return leftmost(n.GetTypeCast().Location, exprLocation(n.GetTypeCast().Arg))
	case n.GetAExpr() != nil && n.GetAExpr().Lexpr != nil:
		return leftmost(n.GetAExpr().Location, exprLocation(n.GetAExpr().Lexpr))
	}
	return nodeLoc(n)
}

// nodeLoc returns a node's location in the source, or -1.
func nodeLoc(n *pg.Node) int32 {
	switch {
	case n == nil:
		return -1
	case n.GetAConst() != nil:
		return n.GetAConst().Location
	case n.GetColumnRef() != nil:
		return n.GetColumnRef().Location
	case n.GetAExpr() != nil:
		return n.GetAExpr().Location
	case n.GetFuncCall() != nil:
		return n.GetFuncCall().Location
	case n.GetTypeCast() != nil:
		return n.GetTypeCast().Location
	case n.GetBoolExpr() != nil:
		return n.GetBoolExpr().Location
	case n.GetSubLink() != nil:
		return n.GetSubLink().Location
	case n.GetParamRef() != nil:
		return n.GetParamRef().Location
	case n.GetCaseExpr() != nil:
		return n.GetCaseExpr().Location
	case n.GetNullTest() != nil:
		return n.GetNullTest().Location
	case n.GetResTarget() != nil:
		return n.GetResTarget().Location
	case n.GetSortBy() != nil:
		return nodeLoc(n.GetSortBy().Node)
	case n.GetCoalesceExpr() != nil:
		return n.GetCoalesceExpr().Location
	case n.GetRangeVar() != nil:
		return n.GetRangeVar().Location
	case n.GetSetToDefault() != nil:
		return n.GetSetToDefault().Location
	case n.GetRowExpr() != nil:
		return n.GetRowExpr().Location
	case n.GetAArrayExpr() != nil:
		return n.GetAArrayExpr().Location
	case n.GetMinMaxExpr() != nil:
		return n.GetMinMaxExpr().Location
	case n.GetBooleanTest() != nil:
		return n.GetBooleanTest().Location
	case n.GetCollateClause() != nil:
		return n.GetCollateClause().Location
	case n.GetSqlvalueFunction() != nil:
		return n.GetSqlvalueFunction().Location
	}
	return -1
}

// exprLoc is PostgreSQL's exprLocation for errors about a whole
// expression: a cast counts from its argument when that is to the left of
// the :: (nodeLoc gives the ::, where cast errors point).
func exprLoc(n *pg.Node) int32 {
	if tc := n.GetTypeCast(); tc != nil {
		if a := exprLoc(tc.Arg); a >= 0 && (tc.Location < 0 || a < tc.Location) {
			return a
		}
		return tc.Location
	}
	if sb := n.GetSortBy(); sb != nil {
		return exprLoc(sb.Node)
	}
	return nodeLoc(n)
}

// nodeKind names a node's type for error messages.
func nodeKind(n *pg.Node) string {
	if n == nil || n.Node == nil {
		return "(nil)"
	}
	s := strings.TrimPrefix(strings.TrimPrefix(typeName(n.Node), "*pg_query.Node_"), "*pg_query.")
	return s
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }

// nullable returns a typed constructor result as an expr.Expr, keeping a
// nil interface on error.
func nullable[T expr.Expr](e T, err error) (expr.Expr, error) {
	if err != nil {
		return nil, err
	}
	return e, nil
}

package planner

import (
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// funcCall binds a function call: a window function (OVER), an aggregate,
// or a scalar function.
func (b *binder) funcCall(l *level, fc *pg.FuncCall) (expr.Expr, error) {
	name := funcName(fc.Funcname)
	if e, ok, err := b.groupWindowAccessor(l, fc, name); ok {
		return e, err
	}
	if fc.Over != nil {
		return b.windowCall(l, fc, name)
	}
	if fc.AggWithinGroup {
		return b.orderedSetCall(l, fc, name) // bind_orderedset.go
	}
	if exec.IsAggregate(name) {
		return b.aggCall(l, fc, name)
	}
	if isSRF(name) {
		if l.clause != inSelect || l.inAgg || l.inWinArg {
			return nil, b.newErr(pgerr.FeatureNotSupported, fc.Location, "set-returning functions are not allowed in %s", l.clause)
		}
		call, err := b.srfCall(l, fc, name)
		if err != nil {
			return nil, err
		}
		if call.rows != nil {
			rec, ok := recordSRF(call)
			if !ok {
				return nil, b.newErr(pgerr.FeatureNotSupported, fc.Location, "%s returning a record is only supported in FROM", name)
			}
			call = rec
		}
		id := b.newCol(name, "", call.t)
		l.srfs = append(l.srfs, srfItem{id: id, call: call})
		return b.colRef(id), nil
	}
	if e, ok, err := b.selectSetFunction(l, fc, name); ok { // udf_set_select.go
		return e, err
	}
	if hasNamedArgs(fc) && aggModifier(fc, name) == "" {
		if _, _, builtin := expr.ParamNames(name); !builtin && len(b.lookupFunctions(fc)) > 0 {
			// named notation of a SQL function (bind_udf_args.go)
			cargs, err := b.bindCallArgs(l, fc)
			if err != nil {
				return nil, err
			}
			if e, ok, err := b.userFunction(fc, cargs); ok {
				return e, err
			}
			return nil, b.undefinedFunction(fc, name, cargs)
		}
	}
	args, err := b.callArgs(l, name, fc)
	if err != nil {
		return nil, err
	}
	e, err := expr.NewCall(name, args)
	if modifier := aggModifier(fc, name); modifier != "" {
		// As PostgreSQL: a function that does not exist is reported as
		// such first; one that does is not an aggregate.
		if pe := pgerr.As(err); pe != nil && pe.Code == pgerr.UndefinedFunction {
			if _, ok, _ := b.userFunction(fc, positional(args)); !ok {
				if len(fc.AggOrder) > 1 {
					err = pe.WithHint("No aggregate function matches the given name and argument types. Perhaps you misplaced ORDER BY; ORDER BY must appear after all regular arguments of the aggregate.")
				}
				return nil, b.errAt(err, fc.Location)
			}
		}
		return nil, b.newErr(pgerr.WrongObjectType, fc.Location, "%s specified, but %s is not an aggregate function", modifier, name)
	}
	if err != nil {
		if pe := pgerr.As(err); pe != nil && pe.Code == pgerr.UndefinedFunction {
			if ue, ok, uerr := b.userFunction(fc, positional(args)); ok { // bind_udf.go
				return ue, uerr
			}
			if t, ok := numericCastFuncs[name]; ok && len(args) == 1 && (args[0].Type().IsNumeric() || args[0].Type().Kind == types.Unknown) {
				// PostgreSQL's cast functions named after the numeric
				// types (float8(bigint), int4(numeric)...).
				c, cerr := expr.NewCast(args[0], t, true)
				return c, b.errAt(cerr, fc.Location)
			}
		}
		return nil, b.errAt(err, fc.Location)
	}
	return e, nil
}

// aggModifier names the aggregate-only part of a call (f(*), DISTINCT,
// ORDER BY, FILTER) as PostgreSQL's error does, or "" when it has none.
func aggModifier(fc *pg.FuncCall, name string) string {
	switch {
	case fc.AggStar:
		return name + "(*)"
	case fc.AggDistinct:
		return "DISTINCT"
	case len(fc.AggOrder) > 0:
		return "ORDER BY"
	case fc.AggFilter != nil:
		return "FILTER"
	}
	return ""
}

// numericCastFuncs are the types whose pg_proc cast functions take every
// other numeric type: int2(x), int4(x), int8(x), float4(x), float8(x),
// numeric(x).
var numericCastFuncs = map[string]types.T{
	"int2": types.TInt2, "int4": types.TInt4, "int8": types.TInt8,
	"float4": types.TFloat4, "float8": types.TFloat8, "numeric": types.TNumeric,
}

// callArgs binds a scalar call's arguments, turning named notation
// (f(x, b => 2)) into positions, with defaults for the parameters left out.
func (b *binder) callArgs(l *level, name string, fc *pg.FuncCall) ([]expr.Expr, error) {
	named := false
	for _, n := range fc.Args {
		named = named || n.GetNamedArgExpr() != nil
	}
	if !named {
		return b.args(l, fc.Args)
	}
	// Bind every argument first: the error for an unknown name shows the
	// argument types, as PostgreSQL's does.
	cargs, err := b.bindCallArgs(l, fc) // bind_udf_args.go
	if err != nil {
		return nil, err
	}
	bound := callValues(cargs)
	argNames := make([]string, len(cargs))
	for i, a := range cargs {
		argNames[i] = a.name
	}
	notFound := func() error { return b.undefinedFunction(fc, name, cargs) }
	names, defaults, ok := expr.ParamNames(name)
	if !ok || len(fc.Args) > len(names) {
		return nil, notFound()
	}
	out := make([]expr.Expr, len(names))
	last := -1
	for i, e := range bound {
		pos := i
		if argNames[i] != "" {
			pos = slices.Index(names, argNames[i])
		}
		if pos < 0 || out[pos] != nil {
			return nil, notFound()
		}
		out[pos] = e
		last = max(last, pos)
	}
	out = out[:last+1]
	for i := range out {
		if out[i] == nil {
			out[i] = defaults[i]
		}
	}
	return out, nil
}

func (b *binder) args(l *level, ns []*pg.Node) ([]expr.Expr, error) {
	out := make([]expr.Expr, len(ns))
	for i, n := range ns {
		if n.GetNamedArgExpr() != nil {
			return nil, b.newErr(pgerr.FeatureNotSupported, n.GetNamedArgExpr().Location, "named arguments are not supported")
		}
		e, err := b.expr(l, n)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

func argTypes(es []expr.Expr) []types.T {
	ts := make([]types.T, len(es))
	for i, e := range es {
		ts[i] = e.Type()
	}
	return ts
}

// castArgs casts arguments to a resolved signature.
func (b *binder) castArgs(args []expr.Expr, want []types.T, loc int32) error {
	for i := range args {
		if i < len(want) && !args[i].Type().Equal(want[i]) {
			c, err := expr.Coerce(args[i], want[i], false)
			if err != nil {
				return b.errAt(err, loc)
			}
			args[i] = c
		}
	}
	return nil
}

// aggAllowed checks where an aggregate appears.
func (b *binder) aggAllowed(l *level, loc int32) error {
	if l.inFilter {
		return b.newErr(pgerr.GroupingError, loc, "aggregate functions are not allowed in FILTER")
	}
	if l.inAgg {
		return b.newErr(pgerr.GroupingError, loc, "aggregate function calls cannot be nested")
	}
	switch l.clause {
	case inSelect, inHaving, inOrderBy:
		return nil
	case inJoin:
		return b.newErr(pgerr.GroupingError, loc, "aggregate functions are not allowed in JOIN conditions")
	case inFunc:
		return b.newErr(pgerr.GroupingError, loc, "aggregate functions are not allowed in functions in FROM")
	}
	return b.newErr(pgerr.GroupingError, loc, "aggregate functions are not allowed in %s", l.clause)
}

func (b *binder) aggCall(l *level, fc *pg.FuncCall, name string) (expr.Expr, error) {
	if fc.AggWithinGroup || orderedSetAggs[name] {
		return b.orderedSetCall(l, fc, name) // bind_orderedset.go
	}
	if !l.inAgg {
		if e, moved, err := b.outerAgg(l, fc, name); moved || err != nil { // bind_outeragg.go
			return e, err
		}
	}
	if l.inAgg && l.inFilter {
		// An aggregate in another aggregate's FILTER that belongs to an
		// enclosing level is nested at that level, as PostgreSQL reports:
		// in SELECT (SELECT max(o.a) FILTER (WHERE sum(o.b) > 0) FROM i)
		// FROM o both aggregate o.
		if target, ok := b.aggLevel(l, fc); ok && target != l {
			return nil, b.newErr(pgerr.GroupingError, fc.Location, "aggregate function calls cannot be nested")
		}
	}
	if err := b.aggAllowed(l, fc.Location); err != nil {
		return nil, err
	}
	l.inAgg = true
	defer func() { l.inAgg = false }()
	args, err := b.args(l, fc.Args)
	if err != nil {
		return nil, err
	}
	if err := b.parameterless(fc, name, len(args)); err != nil {
		return nil, err
	}
	fn, err := exec.ResolveAggregate(name, argTypes(args), fc.AggStar)
	if err != nil {
		return nil, b.errAt(err, fc.Location)
	}
	raw := append([]expr.Expr(nil), args...)
	if err := b.castArgs(args, fn.Args, fc.Location); err != nil {
		return nil, err
	}
	call := exec.AggCall{Fn: fn, Args: args, Distinct: fc.AggDistinct}
	if fc.AggFilter != nil {
		l.inFilter = true
		f, err := b.expr(l, fc.AggFilter)
		l.inFilter = false
		if err != nil {
			return nil, err
		}
		if call.Filter, err = b.boolArg(f, "FILTER", nodeLoc(fc.AggFilter)); err != nil {
			return nil, err
		}
	}
	for _, s := range fc.AggOrder {
		k, err := b.sortKey(l, s.GetSortBy())
		if err != nil {
			return nil, err
		}
		if fc.AggDistinct && !slices.ContainsFunc(raw, func(a expr.Expr) bool { return a.String() == k.E.String() }) {
			return nil, b.newErr(pgerr.InvalidColumnReference, exprLoc(s.GetSortBy().Node), "in an aggregate with DISTINCT, ORDER BY expressions must appear in argument list")
		}
		call.OrderBy = append(call.OrderBy, k)
	}
	if fc.AggDistinct && len(call.OrderBy) == 0 && orderSensitiveAggs[name] {
		// PostgreSQL sorts a DISTINCT aggregate's input by its arguments
		// to remove the duplicates, so the values come in that order
		for _, a := range args {
			call.OrderBy = append(call.OrderBy, exec.SortKey{E: a})
		}
	}
	id := b.newCol(name, "", fn.Return)
	l.aggs = append(l.aggs, aggItem{id: id, call: call})
	return b.colRef(id), nil
}

// orderSensitiveAggs are the aggregates whose value depends on the order
// of their input.
var orderSensitiveAggs = map[string]bool{"string_agg": true, "array_agg": true, "json_agg": true, "jsonb_agg": true,
	"json_object_agg": true, "jsonb_object_agg": true}

// sortKey binds an ORDER BY item as an expression over the input.
func (b *binder) sortKey(l *level, s *pg.SortBy) (exec.SortKey, error) {
	e, err := b.expr(l, s.Node)
	if err != nil {
		return exec.SortKey{}, err
	}
	return b.sortKeyOf(e, s)
}

func (b *binder) sortKeyOf(e expr.Expr, s *pg.SortBy) (exec.SortKey, error) {
	k := exec.SortKey{E: e}
	switch s.SortbyDir {
	case pg.SortByDir_SORTBY_DESC:
		k.Desc = true
	case pg.SortByDir_SORTBY_USING:
		switch opName(s.UseOp) {
		case "<":
		case ">":
			k.Desc = true
		default:
			return k, b.newErr(pgerr.FeatureNotSupported, s.Location, "ORDER BY USING %s is not supported", opName(s.UseOp))
		}
	}
	switch s.SortbyNulls {
	case pg.SortByNulls_SORTBY_NULLS_FIRST:
		k.NullsFirst = true
	case pg.SortByNulls_SORTBY_NULLS_LAST:
		k.NullsFirst = false
	default:
		k.NullsFirst = k.Desc
	}
	if e.Type().Kind == types.Unknown {
		c, err := expr.Coerce(e, types.TText, false)
		if err != nil {
			return k, err
		}
		k.E = c
	}
	return k, nil
}

// Frame option bits of WindowDef.FrameOptions (PostgreSQL's FRAMEOPTION_*).
const (
	frameNonDefault     = 0x1
	frameRange          = 0x2
	frameRows           = 0x4
	frameGroups         = 0x8
	frameStartUnbPrec   = 0x20
	frameEndUnbPrec     = 0x40
	frameStartUnbFoll   = 0x80
	frameEndUnbFoll     = 0x100
	frameStartCurrent   = 0x200
	frameEndCurrent     = 0x400
	frameStartOffPrec   = 0x800
	frameEndOffPrec     = 0x1000
	frameStartOffFoll   = 0x2000
	frameEndOffFoll     = 0x4000
	frameExcludeCurrent = 0x8000
	frameExcludeGroup   = 0x10000
	frameExcludeTies    = 0x20000
)

func (b *binder) windowCall(l *level, fc *pg.FuncCall, name string) (expr.Expr, error) {
	if l.inWinDef {
		return nil, b.newErr(pgerr.WindowingError, fc.Location, "window functions are not allowed in window definitions")
	}
	if l.inWinArg {
		return nil, b.newErr(pgerr.WindowingError, fc.Location, "window function calls cannot be nested")
	}
	if l.inAgg {
		return nil, b.newErr(pgerr.GroupingError, fc.Location, "aggregate function calls cannot contain window function calls")
	}
	if l.clause != inSelect && l.clause != inOrderBy {
		return nil, b.newErr(pgerr.WindowingError, fc.Location, "window functions are not allowed in %s", l.clause)
	}
	l.inWinArg = true
	defer func() { l.inWinArg = false }()
	args, err := b.args(l, fc.Args)
	if err != nil {
		return nil, err
	}
	if err := b.parameterless(fc, name, len(args)); err != nil {
		return nil, err
	}
	fn, err := exec.ResolveWindow(name, argTypes(args), fc.AggStar)
	if err != nil {
		if pe := pgerr.As(err); pe != nil && pe.Code == pgerr.UndefinedFunction && !exec.IsAggregate(name) {
			// As PostgreSQL: a function that exists but is no window
			// function or aggregate is reported as such.
			if _, serr := expr.NewCall(name, args); serr == nil || isSRF(name) {
				return nil, b.newErr(pgerr.WrongObjectType, fc.Location, "OVER specified, but %s is not a window function nor an aggregate function", name)
			}
		}
		return nil, b.errAt(err, fc.Location)
	}
	if err := b.castArgs(args, fn.Args, fc.Location); err != nil {
		return nil, err
	}
	call := exec.WindowCall{Fn: fn, Args: args, Distinct: fc.AggDistinct}
	if fc.AggDistinct {
		return nil, b.newErr(pgerr.FeatureNotSupported, fc.Location, "DISTINCT is not implemented for window functions")
	}
	if fc.AggFilter != nil {
		f, err := b.expr(l, fc.AggFilter)
		if err != nil {
			return nil, err
		}
		if call.Filter, err = b.boolArg(f, "FILTER", nodeLoc(fc.AggFilter)); err != nil {
			return nil, err
		}
	}
	wd, err := b.windowDef(l, fc.Over)
	if err != nil {
		return nil, err
	}
	l.inWinDef = true
	defer func() { l.inWinDef = false }()
	for _, p := range wd.PartitionClause {
		e, err := b.expr(l, p)
		if err != nil {
			return nil, err
		}
		call.PartitionBy = append(call.PartitionBy, e)
	}
	for _, s := range wd.OrderClause {
		k, err := b.sortKey(l, s.GetSortBy())
		if err != nil {
			return nil, err
		}
		call.OrderBy = append(call.OrderBy, k)
	}
	if call.Frame, err = b.frame(l, wd, call.OrderBy); err != nil {
		return nil, err
	}
	id := b.newCol(name, "", fn.Return)
	l.wins = append(l.wins, winItem{id: id, call: call})
	return b.colRef(id), nil
}

// windowDef resolves OVER w and OVER (w ...) against the WINDOW clause.
func (b *binder) windowDef(l *level, wd *pg.WindowDef) (*pg.WindowDef, error) {
	ref := wd.Name
	if ref == "" {
		ref = wd.Refname
	}
	if ref == "" {
		return wd, nil
	}
	base, ok := l.windows[ref]
	if !ok {
		return nil, b.newErr(pgerr.UndefinedObject, wd.Location, "window \"%s\" does not exist", ref)
	}
	if wd.Name != "" {
		return base, nil
	}
	if len(wd.PartitionClause) > 0 {
		return nil, b.newErr(pgerr.WindowingError, wd.Location, "cannot override PARTITION BY clause of window \"%s\"", ref)
	}
	if len(wd.OrderClause) > 0 && len(base.OrderClause) > 0 {
		return nil, b.newErr(pgerr.WindowingError, wd.Location, "cannot override ORDER BY clause of window \"%s\"", ref)
	}
	if base.FrameOptions&frameNonDefault != 0 {
		return nil, b.newErr(pgerr.WindowingError, wd.Location, "cannot copy window \"%s\" because it has a frame clause", ref)
	}
	out := &pg.WindowDef{PartitionClause: base.PartitionClause, OrderClause: base.OrderClause,
		FrameOptions: wd.FrameOptions, StartOffset: wd.StartOffset, EndOffset: wd.EndOffset, Location: wd.Location}
	if len(wd.OrderClause) > 0 {
		out.OrderClause = wd.OrderClause
	}
	return out, nil
}

// subLink binds a subquery expression.
func (b *binder) subLink(l *level, sl *pg.SubLink) (expr.Expr, error) {
	testexpr := sl.Testexpr
	s := &sublink{}
	switch sl.SubLinkType {
	case pg.SubLinkType_EXISTS_SUBLINK:
		s.kind = expr.ExistsSubquery
	case pg.SubLinkType_EXPR_SUBLINK:
		s.kind = expr.ScalarSubquery
	case pg.SubLinkType_ANY_SUBLINK:
		s.kind = expr.AnySubquery
	case pg.SubLinkType_ALL_SUBLINK:
		s.kind = expr.AllSubquery
	case pg.SubLinkType_ARRAY_SUBLINK:
		s.kind = expr.ArraySubquery
	default:
		return nil, b.newErr(pgerr.FeatureNotSupported, sl.Location, "this kind of subquery is not supported")
	}
	q, err := b.query(sl.Subselect, l, s, false)
	if err != nil {
		return nil, err
	}
	s.plan = q
	ids := q.outIDs()
	if s.kind == expr.ExistsSubquery {
		s.t = types.TBool
		if len(ids) > 0 {
			s.outID = ids[0]
		}
		return s, nil
	}
	if s.kind == expr.AnySubquery || s.kind == expr.AllSubquery {
		if row := sl.Testexpr.GetRowExpr(); row != nil {
			if len(row.Args) != 1 || len(ids) != 1 {
				return b.rowSubLink(l, s, row, sl, ids)
			}
			// ROW(x) against one column compares x, as PostgreSQL does
			testexpr = row.Args[0]
		}
		if len(ids) > 1 {
			return nil, b.newErr(pgerr.SyntaxError, sl.Location, "subquery has too many columns")
		}
	}
	if len(ids) != 1 {
		return nil, b.newErr(pgerr.SyntaxError, sl.Location, "subquery must return only one column")
	}
	s.outID = ids[0]
	inner := b.cols[s.outID]
	s.outName = b.colRef(s.outID).Name
	switch s.kind {
	case expr.ScalarSubquery:
		s.t = inner.t
		return s, nil
	case expr.ArraySubquery:
		if inner.t.Kind == types.Array {
			return nil, b.newErr(pgerr.FeatureNotSupported, sl.Location, "arrays of arrays are not supported")
		}
		s.t = types.ArrayOf(inner.t)
		return s, nil
	}
	lhs, err := b.expr(l, testexpr)
	if err != nil {
		return nil, err
	}
	op := "="
	if len(sl.OperName) > 0 {
		op = opName(sl.OperName)
	}
	ref := &expr.ColRef{Idx: s.outID, T: inner.t, Name: inner.name}
	e, err := b.binary(op, lhs, ref, sl.Location)
	if err != nil {
		return nil, err
	}
	call, ok := e.(*expr.Call)
	if !ok || len(call.Args) != 2 || call.Fn.Return.Kind != types.Bool {
		return nil, b.newErr(pgerr.FeatureNotSupported, sl.Location, "operator %s with a subquery is not supported", op)
	}
	s.lhs, s.op, s.t = call.Args[0], call.Fn, types.TBool
	if rhs := call.Args[1]; rhs != expr.Expr(ref) {
		// The subquery's column needs a cast: compute it inside the subquery.
		id := b.newCol(inner.name, "", rhs.Type())
		s.plan = &lProject{in: s.plan, ids: []int{id}, exprs: []expr.Expr{rhs}}
		s.outID = id
	}
	return s, nil
}

// parameterless refuses count() as PostgreSQL does: the aggregate of no
// arguments is called as count(*).
func (b *binder) parameterless(fc *pg.FuncCall, name string, nargs int) error {
	if name == "count" && nargs == 0 && !fc.AggStar {
		return b.newErr(pgerr.WrongObjectType, fc.Location, "count(*) must be used to call a parameterless aggregate function")
	}
	return nil
}

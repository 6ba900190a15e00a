package planner

import (
	"maps"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
)

// Set-returning SQL functions (RETURNS SETOF t, RETURNS TABLE (...)) are
// inlined in FROM as PostgreSQL's inline_set_returning_function does:
// the body query becomes a subquery in FROM, each reference to a
// parameter replaced by the call's argument. Arguments that read earlier
// FROM items make it a LATERAL subquery, run once per row (lateralJoin);
// in a select list it is joined where set-returning functions run
// (udf_set_select.go). Arguments may not read an enclosing query, run a
// subquery or call volatile functions (each would be evaluated where the
// body reads the parameter, maybe several times).

// isUserSetFunction reports whether rf calls a set-returning SQL
// function (not a built-in one), whose inlined body a materialized view
// may read like any subquery.
func (b *binder) isUserSetFunction(rf *pg.RangeFunction) bool {
	if rf.IsRowsfrom || len(rf.Functions) != 1 || b.env == nil {
		return false
	}
	items := rf.Functions[0].GetList().GetItems()
	if len(items) == 0 || items[0].GetFuncCall() == nil {
		return false
	}
	fc := items[0].GetFuncCall()
	if isSRF(funcName(fc.Funcname)) {
		return false
	}
	for _, fn := range b.lookupFunctions(fc) {
		if fn.SetOf {
			return true
		}
	}
	return false
}

// userSetFunction binds fc in FROM when it names a set-returning SQL
// function; ok is false when no such function has fc's name.
func (b *binder) userSetFunction(l *level, fc *pg.FuncCall, ordinality bool) (lnode, bool, error) {
	name := funcNameLast(fc.Funcname)
	var set []*catalog.Function
	for _, fn := range b.lookupFunctions(fc) {
		if fn.SetOf {
			set = append(set, fn)
		}
	}
	if len(set) == 0 {
		return nil, false, nil
	}
	if ordinality || fc.AggStar || fc.AggDistinct || len(fc.AggOrder) > 0 || fc.AggFilter != nil || fc.Over != nil || fc.FuncVariadic {
		return nil, true, b.newErr(pgerr.FeatureNotSupported, fc.Location, "this call of set-returning SQL function %s is not supported", name)
	}
	cargs, err := b.bindCallArgs(l, fc)
	if err != nil {
		return nil, true, err
	}
	for i, a := range cargs {
		e := a.e
		if hasOuterRef(e) || hasSubquery(e) || callsVolatileExpr(e) {
			return nil, true, b.errAt(pgerr.New(pgerr.FeatureNotSupported, "the arguments of set-returning SQL function %s may not read an enclosing query, run a subquery or call a volatile function", name).
				WithHint("SQL functions are inlined as subqueries, each argument evaluated where the function's body reads it."), nodeLoc(fc.Args[i]))
		}
	}
	args := callValues(cargs)
	shapes, err := b.callShapes(fc, name, set, cargs, nil)
	if err != nil {
		return nil, true, err
	}
	var litErr error // as in userFunction
	for _, sh := range shapes {
		coerced, bad, err := coerceArgs(sh.fn, sh.place(args))
		if err != nil && litErr == nil {
			litErr = b.errAt(err, nodeLoc(fc.Args[callIndex(sh.order, bad)]))
		}
		if bad >= 0 {
			continue
		}
		if err := b.fillDefaults(fc, sh.fn, coerced, sh.missing); err != nil {
			return nil, true, err
		}
		plan, err := b.inlineSet(sh.fn, coerced)
		if err != nil {
			return nil, true, b.errAt(err, fc.Location)
		}
		b.deps[sh.fn.OID] = true // a view calling it depends on it
		return plan, true, nil
	}
	if litErr != nil {
		return nil, true, litErr
	}
	return nil, true, b.undefinedFunction(fc, name, cargs)
}

// inlineSet binds fn's body query with its parameters replaced by args
// (of the parameters' types) and returns it with fn's result columns:
// one named after the function for SETOF t, RETURNS TABLE's otherwise,
// each coerced to its declared type.
func (b *binder) inlineSet(fn *catalog.Function, args []expr.Expr) (lnode, error) {
	if b.inlineDepth >= maxInlineDepth {
		return nil, pgerr.New(pgerr.ProgramLimitExceeded, "SQL function \"%s\" nests more than %d function calls deep", fn.Name, maxInlineDepth)
	}
	tree, err := pg.Parse(fn.Body)
	if err != nil {
		return nil, pgerr.New(pgerr.SyntaxError, "syntax error in the body of function \"%s\": %s", fn.Name, err.Error())
	}
	if len(tree.Stmts) != 1 || tree.Stmts[0].Stmt.GetSelectStmt() == nil {
		return nil, pgerr.Unsupported("the body of set-returning SQL function \"%s\" must be one SELECT", fn.Name)
	}
	ids := make([]int, len(fn.Args))
	it := &nsItem{alias: fn.Name, relVisible: true, colsVisible: true}
	consts := maps.Clone(b.udfConst)
	if consts == nil {
		consts = map[int]expr.Expr{}
	}
	for i, a := range fn.Args {
		ids[i] = b.newCol(a.Name, fn.Name, a.Type)
		consts[ids[i]] = args[i]
		if a.Name != "" {
			it.cols = append(it.cols, nsCol{name: a.Name, id: ids[i]})
		}
	}
	src, params, outer := b.src, b.udfParams, b.udfConst
	b.src, b.udfParams, b.udfConst = "", ids, consts
	b.inlineDepth++
	plan, err := b.query(tree.Stmts[0].Stmt, &level{ns: []*nsItem{it}}, nil, false)
	b.src, b.udfParams, b.udfConst = src, params, outer
	b.inlineDepth--
	if err != nil {
		return nil, err
	}
	want := fn.Out
	if len(want) == 0 {
		want = []catalog.FuncArg{{Name: fn.Name, Type: fn.Return}}
	}
	got := plan.outIDs()
	mismatch := func(detail string, args ...any) error {
		ret := "record"
		switch {
		case fn.RowOf != 0:
			ret = rowTypeName(b.env, fn.RowOf)
		case len(want) == 1:
			ret = want[0].Type.String()
		}
		return pgerr.New(codeInvalidFunctionDefinition, "return type mismatch in function declared to return %s", ret).WithDetail(detail, args...)
	}
	switch {
	case len(got) != len(want) && len(want) == 1:
		return nil, mismatch("Final statement must return exactly one column.")
	case len(got) > len(want):
		return nil, mismatch("Final statement returns too many columns.")
	case len(got) < len(want):
		return nil, mismatch("Final statement returns too few columns.")
	}
	p := &lProject{in: plan}
	for i, id := range got {
		e, err := expr.Coerce(b.colRef(id), want[i].Type, true)
		if err != nil && len(want) == 1 {
			return nil, mismatch("Actual return type is %s.", b.cols[id].t)
		}
		if err != nil {
			return nil, mismatch("Final statement returns %s instead of %s at column %d.", b.cols[id].t, want[i].Type, i+1)
		}
		p.ids = append(p.ids, b.newCol(want[i].Name, fn.Name, want[i].Type))
		p.exprs = append(p.exprs, e)
	}
	return p, nil
}

// hasOuterRef reports whether e reads an enclosing query's column.
func hasOuterRef(e expr.Expr) bool {
	found := false
	walk(e, func(x expr.Expr) bool {
		if _, ok := x.(*expr.OuterRef); ok {
			found = true
		}
		return !found
	})
	return found
}

// callsVolatileExpr reports whether e calls a volatile function.
func callsVolatileExpr(e expr.Expr) bool {
	found := false
	walk(e, func(x expr.Expr) bool {
		if c, ok := x.(*expr.Call); ok && c.Fn.Volatile {
			found = true
		}
		return !found
	})
	return found
}

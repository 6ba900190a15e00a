package planner

import (
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// SQL-language functions (CREATE FUNCTION f(...) RETURNS t LANGUAGE sql AS
// $$ SELECT expr $$) are inlined where they are called, as PostgreSQL's
// inline_function does: the body's expression is bound with its
// parameters standing for the call's arguments (coerced to the declared
// types), and the result is coerced to the return type. A function has no
// runtime of its own, so it costs what its expression costs, in batch and
// streaming plans alike. Only bodies that are one SELECT of one
// expression without FROM are accepted (the ones PostgreSQL inlines);
// CREATE FUNCTION checks that when it binds the body (FunctionDef).

// codeInvalidFunctionDefinition is PostgreSQL's invalid_function_definition.
const codeInvalidFunctionDefinition pgerr.Code = "42P13"

// FunctionCatalog is implemented by catalogs that hold SQL-language
// functions (*catalog.Catalog does). Without it, only built-in functions
// exist.
type FunctionCatalog interface {
	// Functions returns the overloads of name in schema, or in the first
	// schema of searchPath that has any (schema "").
	Functions(schema, name string, searchPath []string) []*catalog.Function
}

// maxInlineDepth bounds functions whose bodies call functions (a function
// calling itself through another would otherwise inline forever).
const maxInlineDepth = 16

// lookupFunctions returns the catalog's SQL functions named by fc's
// (possibly schema-qualified) name; none without a function catalog.
func (b *binder) lookupFunctions(fc *pg.FuncCall) []*catalog.Function {
	if b.env == nil {
		return nil
	}
	fcat, ok := b.env.Catalog.(FunctionCatalog)
	if !ok {
		return nil
	}
	parts := strs(fc.Funcname)
	schema := ""
	if len(parts) == 2 {
		schema = parts[0]
	}
	return fcat.Functions(schema, parts[len(parts)-1], b.env.SearchPath)
}

// userFunction resolves a call that matched no built-in function against
// the catalog's SQL functions; ok is false when none has that name or
// none takes the call's arguments.
//
// An overload takes the call when its positional arguments, names and
// defaults fit (matchArgs, bind_udf_args.go); two that fit with the same
// types for the given arguments are ambiguous (42725). Among the others,
// an overload whose parameter types are the arguments' wins. Otherwise
// the first overload the arguments fit by implicit casts does, unless a
// polymorphic overload fits too (bind_udf_poly.go): PostgreSQL then finds
// the call ambiguous (42725), as it does between two polymorphic ones.
func (b *binder) userFunction(fc *pg.FuncCall, cargs []callArg) (e expr.Expr, ok bool, err error) {
	fns := b.lookupFunctions(fc)
	if len(fns) == 0 {
		return nil, false, nil
	}
	args := callValues(cargs)
	shapes, err := b.callShapes(fc, fns[0].Name, fns, cargs, func(fn *catalog.Function) error {
		if !fn.SetOf {
			return nil
		}
		return b.errAt(pgerr.New(pgerr.FeatureNotSupported, "set-returning SQL function %s can only be called in FROM", fn.Name).
			WithHint("Write SELECT ... FROM %s(...).", fn.Name), fc.Location)
	})
	if err != nil {
		return nil, true, err
	}
	type candidate struct {
		callShape
		coerced []expr.Expr // the given arguments coerced, in parameter order (defaults nil)
		err     error       // a polymorphic overload whose types the call leaves undetermined
	}
	var litErr error    // an overload fit but for a literal's value (reported when none fits)
	var cast *candidate // the first overload that fits by implicit casts
	var polys []candidate
	for _, sh := range shapes {
		fn := sh.fn
		placed := sh.place(args)
		poly := polymorphic(fn)
		defaulted := len(sh.missing) > 0
		if poly {
			if defaulted {
				// The given arguments choose the overload; the defaults'
				// types then count in resolving its types, as in PostgreSQL.
				if _, fits, _ := resolvePoly(givenView(fn, sh.order), args); !fits {
					continue
				}
				if err := b.fillDefaults(fc, fn, placed, sh.missing); err != nil {
					return nil, true, err
				}
				sh.missing = nil
			}
			r, fits, err := resolvePoly(fn, placed)
			if !fits && defaulted {
				return nil, true, notAlike(fn, placed) // (PostgreSQL gives no position)
			}
			if !fits {
				continue
			}
			if err != nil {
				polys = append(polys, candidate{err: err})
				continue
			}
			fn = r
		}
		coerced, bad, err := coerceArgs(fn, placed)
		if err != nil {
			if litErr == nil && bad < len(fc.Args) {
				litErr = b.errAt(err, nodeLoc(fc.Args[callIndex(sh.order, bad)]))
			}
			continue
		}
		if bad >= 0 {
			continue
		}
		c := candidate{callShape: callShape{fn, sh.order, sh.missing}, coerced: coerced}
		switch {
		case poly:
			polys = append(polys, c)
		case exactArgs(fn, placed):
			return b.callUserArgs(fc, c.fn, c.coerced, c.missing)
		case cast == nil:
			cast = &c
		}
	}
	switch {
	case len(polys) > 1 || len(polys) == 1 && cast != nil:
		return nil, true, b.notUnique(fc, fns[0].Name, cargs)
	case len(polys) == 1 && polys[0].err != nil:
		return nil, true, polys[0].err // (PostgreSQL gives no position)
	case len(polys) == 1:
		return b.callUserArgs(fc, polys[0].fn, polys[0].coerced, nil)
	case cast != nil:
		return b.callUserArgs(fc, cast.fn, cast.coerced, cast.missing)
	case litErr != nil:
		return nil, true, litErr
	}
	return nil, false, nil
}

// callIndex is the call argument that fills parameter p (order as
// matchArgs returns it).
func callIndex(order []int, p int) int {
	for i, q := range order {
		if q == p {
			return i
		}
	}
	return 0
}

// callUserArgs is callUser with the defaults of the parameters missing
// bound into coerced (in parameter order, nil where missing).
func (b *binder) callUserArgs(fc *pg.FuncCall, fn *catalog.Function, coerced []expr.Expr, missing []int) (expr.Expr, bool, error) {
	if err := b.fillDefaults(fc, fn, coerced, missing); err != nil {
		return nil, true, err
	}
	return b.callUser(fc, fn, coerced)
}

// exactArgs reports whether args have fn's parameter types (modifiers
// aside; an untyped literal never does).
func exactArgs(fn *catalog.Function, args []expr.Expr) bool {
	for i, a := range args {
		if a == nil {
			continue // a parameter left to its default
		}
		if t := a.Type(); t.Kind == types.Unknown || !t.SameKind(fn.Args[i].Type) {
			return false
		}
	}
	return true
}

// callUser inlines the chosen overload fn of the call fc with its
// arguments coerced.
func (b *binder) callUser(fc *pg.FuncCall, fn *catalog.Function, coerced []expr.Expr) (expr.Expr, bool, error) {
	e, err := b.inline(fn, coerced)
	if err != nil {
		return nil, true, b.errAt(err, fc.Location)
	}
	b.deps[fn.OID] = true // a view calling it depends on it (DROP FUNCTION refuses)
	return e, true, nil
}

// coerceArgs implicitly casts args to fn's parameter types. bad is the
// first argument that does not fit (-1: none; fn is not the overload the
// call means), and err is set when that argument is a literal of unknown
// type whose text is no value of the parameter's type: PostgreSQL takes
// such a literal for any type when it picks the overload, then fails to
// read it ("invalid input syntax for type integer").
func coerceArgs(fn *catalog.Function, args []expr.Expr) (coerced []expr.Expr, bad int, err error) {
	coerced = make([]expr.Expr, len(args))
	for i, a := range args {
		if a == nil {
			continue // a parameter left to its default (bound later)
		}
		c, cerr := expr.Coerce(a, fn.Args[i].Type, false)
		if cerr != nil {
			if k, ok := a.(*expr.Const); ok && k.T.Kind == types.Unknown && k.V != nil {
				return nil, i, cerr
			}
			return nil, i, nil
		}
		coerced[i] = c
	}
	return coerced, -1, nil
}

// inline binds fn's body with its parameters bound to args (already of the
// parameters' types) and returns the expression, of fn's return type.
func (b *binder) inline(fn *catalog.Function, args []expr.Expr) (expr.Expr, error) {
	if fn.Language == plLang {
		return b.plCall(fn, args) // not inlined: plpgsql.go
	}
	if b.inlineDepth >= maxInlineDepth {
		return nil, pgerr.New(pgerr.ProgramLimitExceeded, "SQL function \"%s\" nests more than %d function calls deep", fn.Name, maxInlineDepth)
	}
	ids := make([]int, len(fn.Args))
	for i, a := range fn.Args {
		ids[i] = b.newCol(a.Name, fn.Name, a.Type)
	}
	body, err := b.bindBody(fn.Name, fn.Body, fn.Args, ids, fn.Return)
	if err != nil {
		return nil, err
	}
	body = strictGuard(fn, ids, body)
	return transform(body, func(e expr.Expr) (expr.Expr, bool, error) {
		if c, ok := e.(*expr.ColRef); ok {
			for i, id := range ids {
				if c.Idx == id {
					return args[i], true, nil
				}
			}
		}
		return e, false, nil
	})
}

// strictGuard wraps the body of a STRICT (RETURNS NULL ON NULL INPUT)
// function so that it yields NULL, without evaluating the body, when any
// parameter is NULL: CASE WHEN p1 IS NULL OR ... THEN NULL ELSE body END,
// over the parameters' columns ids (replaced by the arguments afterwards).
func strictGuard(fn *catalog.Function, ids []int, body expr.Expr) expr.Expr {
	if !fn.Strict || len(ids) == 0 {
		return body
	}
	tests := make([]expr.Expr, len(ids))
	for i, id := range ids {
		tests[i] = &expr.IsNull{E: &expr.ColRef{Idx: id, T: fn.Args[i].Type, Name: fn.Args[i].Name}}
	}
	cond := tests[0]
	if len(tests) > 1 {
		cond = &expr.Or{Args: tests}
	}
	return &expr.Case{Whens: []expr.When{{Cond: cond, Result: &expr.Const{T: body.Type()}}}, Else: body, T: body.Type()}
}

// bindBody binds a function body ("SELECT expr") in a level of its own
// whose names are the parameters (as name or fname.name; $n too), columns
// ids. The result is coerced to ret (as an assignment).
func (b *binder) bindBody(fname, body string, params []catalog.FuncArg, ids []int, ret types.T) (expr.Expr, error) {
	target, err := bodyExpr(fname, body)
	if err != nil {
		return nil, err
	}
	it := &nsItem{alias: fname, relVisible: true, colsVisible: true}
	for i, p := range params {
		if p.Name != "" {
			it.cols = append(it.cols, nsCol{name: p.Name, id: ids[i]})
		}
	}
	l := &level{clause: inSelect, ns: []*nsItem{it}}
	src, outer := b.src, b.udfParams
	b.src, b.udfParams = "", ids // positions would point into the body, not the statement
	b.inlineDepth++
	defer func() { b.src, b.udfParams = src, outer; b.inlineDepth-- }()
	e, err := b.expr(l, target)
	if err != nil {
		return nil, err
	}
	if len(l.aggs) > 0 || len(l.wins) > 0 || len(l.srfs) > 0 || hasSubquery(e) {
		return nil, notInlinable(fname)
	}
	out, err := expr.Coerce(e, ret, true)
	if err != nil {
		return nil, pgerr.New(codeInvalidFunctionDefinition, "return type mismatch in function declared to return %s", ret).
			WithDetail("Actual return type is %s.", e.Type())
	}
	return out, nil
}

func notInlinable(fname string) error {
	return pgerr.New(pgerr.FeatureNotSupported, "the body of SQL function \"%s\" is not one expression", fname).
		WithHint("SQL functions are inlined where they are called: the body must be SELECT <expression>, without FROM, aggregates, window functions, set-returning functions or subqueries.")
}

// bodyExpr parses a body and returns its one expression.
func bodyExpr(fname, body string) (*pg.Node, error) {
	tree, err := pg.Parse(body)
	if err != nil {
		return nil, pgerr.New(pgerr.SyntaxError, "syntax error in the body of function \"%s\": %s", fname, err.Error())
	}
	if len(tree.Stmts) != 1 {
		return nil, notInlinable(fname)
	}
	sel := tree.Stmts[0].Stmt.GetSelectStmt()
	if sel == nil || len(sel.TargetList) != 1 || len(sel.FromClause) > 0 || sel.WhereClause != nil || len(sel.GroupClause) > 0 ||
		sel.HavingClause != nil || len(sel.SortClause) > 0 || sel.LimitCount != nil || sel.LimitOffset != nil || sel.WithClause != nil ||
		len(sel.ValuesLists) > 0 || sel.Op != pg.SetOperation_SETOP_NONE || len(sel.DistinctClause) > 0 || len(sel.WindowClause) > 0 ||
		sel.IntoClause != nil || len(sel.LockingClause) > 0 {
		return nil, notInlinable(fname)
	}
	rt := sel.TargetList[0].GetResTarget()
	if rt == nil || rt.Val == nil || rt.Val.GetColumnRef() != nil && isStar(rt.Val.GetColumnRef()) {
		return nil, notInlinable(fname)
	}
	return rt.Val, nil
}

func isStar(c *pg.ColumnRef) bool {
	return len(c.Fields) > 0 && c.Fields[len(c.Fields)-1].GetAStar() != nil
}

// FunctionDef checks CREATE FUNCTION ... LANGUAGE sql and returns the
// function to store: parameters (IN only, no defaults), the return type,
// the body (bound with the parameters' types, as PostgreSQL does with
// check_function_bodies on) and the volatility. Options the engine cannot
// honour are refused by name.
func FunctionDef(env *Env, n *pg.CreateFunctionStmt) (*catalog.Function, error) {
	if n.IsProcedure {
		return nil, pgerr.Unsupported("CREATE PROCEDURE is not supported")
	}
	parts := strs(n.Funcname)
	fn := &catalog.Function{Name: parts[len(parts)-1], Volatility: 'v'}
	switch len(parts) {
	case 1:
	case 2:
		fn.Schema = parts[0]
	default:
		return nil, pgerr.New(pgerr.SyntaxError, "improper qualified name (too many dotted names): %s", strings.Join(parts, "."))
	}
	if n.SqlBody != nil {
		body, err := standardBody(n.SqlBody)
		if err != nil {
			return nil, err
		}
		fn.Body = body
	}
	for _, p := range n.Parameters {
		fp := p.GetFunctionParameter()
		if fp == nil {
			return nil, pgerr.Internal("malformed function parameter")
		}
		switch fp.Mode {
		case pg.FunctionParameterMode_FUNC_PARAM_IN, pg.FunctionParameterMode_FUNC_PARAM_DEFAULT:
		case pg.FunctionParameterMode_FUNC_PARAM_TABLE: // RETURNS TABLE (...) (udf_set.go)
			t, err := BindSignatureType(fp.ArgType)
			if err != nil {
				return nil, refuseDomainType(env, fp.ArgType, err)
			}
			fn.Out = append(fn.Out, catalog.FuncArg{Name: fp.Name, Type: t})
			continue
		default:
			return nil, pgerr.Unsupported("OUT, INOUT and VARIADIC parameters are not supported")
		}
		t, err := BindSignatureType(fp.ArgType)
		if err != nil {
			return nil, refuseDomainType(env, fp.ArgType, err)
		}
		arg := catalog.FuncArg{Name: fp.Name, Type: t}
		if fp.Defexpr != nil { // bind_udf_args.go
			if arg.Default, err = bindParamDefault(env, fp.Defexpr, t); err != nil {
				return nil, err
			}
		} else if len(fn.Args) > 0 && fn.Args[len(fn.Args)-1].Default != "" {
			return nil, pgerr.New(codeInvalidFunctionDefinition, "input parameters after one with a default value must also have defaults")
		}
		fn.Args = append(fn.Args, arg)
	}
	if n.ReturnType == nil {
		return nil, pgerr.New(codeInvalidFunctionDefinition, "function result type must be specified")
	}
	var err error
	ret := n.ReturnType
	if ret.Setof { // RETURNS SETOF t, RETURNS TABLE (...) (udf_set.go)
		fn.SetOf = true
		ret = &pg.TypeName{Names: ret.Names, TypeOid: ret.TypeOid, PctType: ret.PctType, Typmods: ret.Typmods,
			Typemod: ret.Typemod, ArrayBounds: ret.ArrayBounds, Location: ret.Location}
	}
	if len(fn.Out) > 0 {
		fn.Return = types.T{Kind: types.Record, Typmod: -1}
	} else if fn.Return, err = BindSignatureType(ret); err != nil {
		rel := rowTypeRelation(env, ret)
		if rel == nil || !fn.SetOf {
			return nil, refuseDomainType(env, ret, err)
		}
		// RETURNS SETOF t of a table or view: its rows, with t's columns.
		for _, c := range rel.Columns {
			fn.Out = append(fn.Out, catalog.FuncArg{Name: c.Name, Type: c.Type})
		}
		fn.Return, fn.RowOf = types.T{Kind: types.Record, Typmod: -1}, rel.RowTypeOID
	}
	if fn.Return.Kind == types.Record && len(fn.Out) == 0 {
		return nil, pgerr.Unsupported("functions returning record without RETURNS TABLE (...) are not supported")
	}
	language := ""
	var rows float32
	for _, o := range n.Options {
		d := o.GetDefElem()
		if d == nil {
			continue
		}
		switch d.Defname {
		case "language":
			language = strings.ToLower(d.Arg.GetString_().GetSval())
		case "as":
			if n.SqlBody != nil {
				return nil, pgerr.New(codeInvalidFunctionDefinition, "duplicate function body specified")
			}
			list := d.Arg.GetList()
			if list == nil || len(list.Items) != 1 {
				return nil, pgerr.New(codeInvalidFunctionDefinition, "only one AS item needed for language \"sql\"")
			}
			fn.Body = list.Items[0].GetString_().GetSval()
		default:
			ok, err := functionOption(env, fn, d, &rows)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, pgerr.Unsupported("CREATE FUNCTION option %s is not supported", strings.ToUpper(d.Defname))
			}
		}
	}
	if rows != 0 {
		if !fn.SetOf {
			return nil, pgerr.New(pgerr.InvalidParameterValue, "ROWS is not applicable when function does not return a set")
		}
		fn.Rows = rows
	}
	if language == "" {
		return nil, pgerr.New(codeInvalidFunctionDefinition, "no language specified")
	}
	if language != "sql" && language != plLang {
		return nil, pgerr.New(pgerr.UndefinedObject, "language \"%s\" does not exist", language).
			WithHint("LANGUAGE sql and LANGUAGE plpgsql functions are supported.")
	}
	if fn.Body == "" {
		return nil, pgerr.New(codeInvalidFunctionDefinition, "no function body specified")
	}
	if language == plLang { // plpgsql.go
		if n.SqlBody != nil {
			return nil, pgerr.New(codeInvalidFunctionDefinition, "inline SQL function body only valid for language SQL")
		}
		fn.Language = plLang
		if fn.SetOf {
			return nil, pgerr.Unsupported("set-returning PL/pgSQL functions (RETURNS SETOF, RETURNS TABLE) are not supported")
		}
		if polymorphic(fn) || fn.Return.Polymorphic() {
			return nil, pgerr.Unsupported("polymorphic PL/pgSQL functions are not supported")
		}
		if _, err := compilePL(env, fn, true); err != nil {
			return nil, err
		}
		return fn, nil
	}
	if err := checkPolyResult(fn); err != nil {
		return nil, err
	}
	if polymorphic(fn) {
		// checked for syntax only, as PostgreSQL does: its types are
		// known at a call (bind_udf_poly.go)
		if _, err := bodyExpr(fn.Name, fn.Body); err != nil {
			return nil, err
		}
		return fn, nil
	}
	b := newBinder(env)
	if fn.SetOf {
		args := make([]expr.Expr, len(fn.Args))
		for i, a := range fn.Args {
			args[i] = &expr.Const{T: a.Type} // NULL of the type: the body is checked, not run
		}
		if _, err := b.inlineSet(fn, args); err != nil {
			return nil, err
		}
		return fn, nil
	}
	ids := make([]int, len(fn.Args))
	for i, a := range fn.Args {
		ids[i] = b.newCol(a.Name, fn.Name, a.Type)
	}
	if _, err := b.bindBody(fn.Name, fn.Body, fn.Args, ids, fn.Return); err != nil {
		return nil, err
	}
	return fn, nil
}

// standardBody turns a SQL-standard body (RETURN expr, or BEGIN ATOMIC
// with one SELECT) into the SELECT text the function is stored and
// inlined as; pg_get_functiondef shows it in the AS form.
func standardBody(n *pg.Node) (string, error) {
	var sel *pg.Node
	if r := n.GetReturnStmt(); r != nil {
		sel = &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: &pg.SelectStmt{
			TargetList: []*pg.Node{{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{Val: r.Returnval}}}}}}}
	} else if l := n.GetList(); l != nil {
		// BEGIN ATOMIC ... END: a list holding the list of statements.
		stmts := l.Items
		if len(stmts) == 1 && stmts[0].GetList() != nil {
			stmts = stmts[0].GetList().Items
		}
		if len(stmts) == 1 && stmts[0].GetSelectStmt() != nil {
			sel = stmts[0]
		} else if len(stmts) == 1 && stmts[0].GetReturnStmt() != nil {
			return standardBody(stmts[0])
		}
	}
	if sel == nil {
		return "", pgerr.Unsupported("a BEGIN ATOMIC body other than one SELECT or RETURN is not supported").
			WithHint("SQL functions are inlined where they are called: the body must be RETURN <expression> or SELECT <expression>.")
	}
	text, err := sql.Deparse(sel)
	if err != nil {
		return "", pgerr.Internal("deparse function body: %v", err)
	}
	return text, nil
}

// defNumber reads a numeric option value (COST 5, ROWS 2.5).
func defNumber(n *pg.Node) (float64, bool) {
	switch {
	case n.GetInteger() != nil:
		return float64(n.GetInteger().GetIval()), true
	case n.GetFloat() != nil:
		v, err := strconv.ParseFloat(n.GetFloat().GetFval(), 64)
		return v, err == nil
	}
	return 0, false
}

// functionOption applies one of CREATE FUNCTION's and ALTER FUNCTION's
// attributes to fn (ROWS into *rows, checked against SETOF by the
// caller); ok is false for an option it does not know.
func functionOption(env *Env, fn *catalog.Function, d *pg.DefElem, rows *float32) (ok bool, err error) {
	switch d.Defname {
	case "volatility":
		switch d.Arg.GetString_().GetSval() {
		case "immutable":
			fn.Volatility = 'i'
		case "stable":
			fn.Volatility = 's'
		case "volatile":
			fn.Volatility = 'v'
		}
	case "strict":
		fn.Strict = d.Arg.GetBoolean().GetBoolval()
	case "parallel":
		switch strings.ToLower(d.Arg.GetString_().GetSval()) {
		case "safe":
			fn.Parallel = 's'
		case "restricted":
			fn.Parallel = 'r'
		case "unsafe":
			fn.Parallel = 0
		default:
			return false, pgerr.New(pgerr.InvalidParameterValue, "parameter \"parallel\" must be SAFE, RESTRICTED, or UNSAFE")
		}
	case "cost", "rows":
		v, ok := defNumber(d.Arg)
		if !ok || v <= 0 {
			return false, pgerr.New(pgerr.InvalidParameterValue, "%s must be positive", strings.ToUpper(d.Defname))
		}
		if d.Defname == "cost" {
			fn.Cost = float32(v)
		} else {
			*rows = float32(v)
		}
	case "leakproof":
		fn.Leakproof = d.Arg.GetBoolean().GetBoolval()
		if fn.Leakproof && env != nil && env.Access != nil {
			return false, pgerr.New(pgerr.InsufficientPrivilege, "only superuser can define a leakproof function")
		}
	case "security":
		if d.Arg.GetBoolean().GetBoolval() {
			return false, pgerr.Unsupported("SECURITY DEFINER functions are not supported")
		}
	default:
		return false, nil
	}
	return true, nil
}

// AlterFunctionOptions applies ALTER FUNCTION's actions to fn (a copy):
// the attributes CREATE FUNCTION takes, checked as it checks them.
func AlterFunctionOptions(env *Env, fn *catalog.Function, actions []*pg.Node) (err error) {
	defer recoverTo(&err)
	var rows float32
	for _, a := range actions {
		d := a.GetDefElem()
		if d == nil {
			continue
		}
		ok, err := functionOption(env, fn, d, &rows)
		if err != nil {
			return err
		}
		if !ok {
			return pgerr.Unsupported("ALTER FUNCTION ... %s is not supported", strings.ToUpper(d.Defname))
		}
	}
	if rows != 0 {
		if !fn.SetOf {
			return pgerr.New(pgerr.InvalidParameterValue, "ROWS is not applicable when function does not return a set")
		}
		fn.Rows = rows
	}
	return nil
}

// rowTypeRelation is the table, view or materialized view whose row type
// tn names (not an array of it, nor with a typmod), or nil.
func rowTypeRelation(env *Env, tn *pg.TypeName) *catalog.Relation {
	if env == nil || env.Catalog == nil || len(tn.ArrayBounds) > 0 || len(tn.Typmods) > 0 {
		return nil
	}
	schema, name := "", ""
	switch names := strs(tn.Names); len(names) {
	case 1:
		name = names[0]
	case 2:
		schema, name = names[0], names[1]
	default:
		return nil
	}
	rel, err := env.Catalog.Resolve(schema, name, env.SearchPath)
	if err != nil || rel.RowTypeOID == 0 {
		return nil
	}
	return rel
}

// rowTypeName names a relation's row type as regtype does ("record" when
// the catalog cannot).
func rowTypeName(env *Env, oid uint32) string {
	if rn, ok := env.Catalog.(interface {
		RegNames([]string) func(types.Kind, uint32) (string, bool)
	}); ok {
		if n, ok := rn.RegNames(env.SearchPath)(types.RegType, oid); ok {
			return n
		}
	}
	return "record"
}

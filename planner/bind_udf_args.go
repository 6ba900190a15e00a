package planner

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// Parameter defaults and named notation of SQL functions, as PostgreSQL
// has them: CREATE FUNCTION f(a int, b int DEFAULT 10) keeps b's
// expression as text (catalog.FuncArg.Default); a call may leave out
// trailing parameters that have defaults, and may name parameters
// (f(1, b => 2), f(b := 2, a => 1)) after its positional arguments. A
// call is matched against each overload by its positional arguments,
// its names and the defaults (matchArgs); the defaults it takes are bound
// afresh at each call (a volatile default such as random() is evaluated
// per call, as in PostgreSQL) and become arguments of the inlined body.
// Two overloads that fit a call with the same types for the arguments it
// gives are ambiguous (42725), as PostgreSQL finds f(int) against f(int,
// int DEFAULT 1) called as f(1).

// callArg is one argument of a call as written: its bound value and its
// name (named notation) or "".
type callArg struct {
	e    expr.Expr
	name string
}

// hasNamedArgs reports whether a call uses named notation.
func hasNamedArgs(fc *pg.FuncCall) bool {
	for _, n := range fc.Args {
		if n.GetNamedArgExpr() != nil {
			return true
		}
	}
	return false
}

// bindCallArgs binds a call's arguments with their names; an argument
// name used twice is PostgreSQL's syntax error.
func (b *binder) bindCallArgs(l *level, fc *pg.FuncCall) ([]callArg, error) {
	out := make([]callArg, len(fc.Args))
	seen := map[string]bool{}
	for i, n := range fc.Args {
		node := n
		if na := n.GetNamedArgExpr(); na == nil && len(seen) > 0 {
			return nil, b.newErr(pgerr.SyntaxError, nodeLoc(n), "positional argument cannot follow named argument")
		} else if na != nil {
			if seen[na.Name] {
				return nil, b.newErr(pgerr.SyntaxError, na.Location, "argument name \"%s\" used more than once", na.Name)
			}
			seen[na.Name] = true
			node, out[i].name = na.Arg, na.Name
		}
		e, err := b.expr(l, node)
		if err != nil {
			return nil, err
		}
		out[i].e = e
	}
	return out, nil
}

// callValues returns the arguments' values.
func callValues(args []callArg) []expr.Expr {
	out := make([]expr.Expr, len(args))
	for i, a := range args {
		out[i] = a.e
	}
	return out
}

// callSignature renders a call's arguments as PostgreSQL's messages do:
// "integer, b => text".
func callSignature(args []callArg) string {
	sig := make([]string, len(args))
	for i, a := range args {
		sig[i] = a.e.Type().String()
		if a.name != "" {
			sig[i] = a.name + " => " + sig[i]
		}
	}
	return strings.Join(sig, ", ")
}

// matchArgs places a call's arguments on fn's parameters: positional
// ones in order, named ones by name. order[i] is the parameter argument
// i fills; missing lists the parameters left to their defaults. ok is
// false when fn cannot take the call (too many arguments, an unknown or
// repeated name, a parameter left out without a default).
func matchArgs(fn *catalog.Function, args []callArg) (order []int, missing []int, ok bool) {
	if len(args) > len(fn.Args) {
		return nil, nil, false
	}
	filled := make([]bool, len(fn.Args))
	order = make([]int, len(args))
	for i, a := range args {
		p := i
		if a.name != "" {
			p = -1
			for k, fa := range fn.Args {
				if fa.Name == a.name {
					p = k
					break
				}
			}
		}
		if p < 0 || filled[p] {
			return nil, nil, false
		}
		filled[p], order[i] = true, p
	}
	for k, f := range filled {
		if !f {
			if fn.Args[k].Default == "" {
				return nil, nil, false
			}
			missing = append(missing, k)
		}
	}
	return order, missing, true
}

// callShape is how one overload takes a call (matchArgs): the parameter
// each argument fills, and the parameters left to their defaults.
type callShape struct {
	fn             *catalog.Function
	order, missing []int
}

// callShapes returns the overloads of fns that take the call, in order.
// onFit, when set, may refuse a fitting overload (its error ends the
// call). Two overloads the given arguments cannot tell apart (the same
// types for them, one using defaults) make the call ambiguous (42725).
func (b *binder) callShapes(fc *pg.FuncCall, name string, fns []*catalog.Function, cargs []callArg, onFit func(*catalog.Function) error) ([]callShape, error) {
	var shapes []callShape
	for _, fn := range fns {
		order, missing, fits := matchArgs(fn, cargs)
		if !fits {
			continue
		}
		if onFit != nil {
			if err := onFit(fn); err != nil {
				return nil, err
			}
		}
		for _, o := range shapes {
			if (len(missing) > 0 || len(o.missing) > 0) && sameTypes(givenTypes(fn, order), givenTypes(o.fn, o.order)) {
				return nil, b.notUnique(fc, name, cargs)
			}
		}
		shapes = append(shapes, callShape{fn, order, missing})
	}
	return shapes, nil
}

// place returns the call's arguments in parameter order (nil for the
// parameters left to their defaults).
func (s callShape) place(args []expr.Expr) []expr.Expr {
	placed := make([]expr.Expr, len(s.fn.Args))
	for i, p := range s.order {
		placed[p] = args[i]
	}
	return placed
}

// notUnique is PostgreSQL's 42725 for an ambiguous call.
func (b *binder) notUnique(fc *pg.FuncCall, name string, cargs []callArg) error {
	return b.errAt(pgerr.New(pgerr.AmbiguousFunction, "function %s(%s) is not unique", name, callSignature(cargs)).
		WithHint("Could not choose a best candidate function. You might need to add explicit type casts."), fc.Location)
}

// undefinedFunction is PostgreSQL's 42883 for a call no overload takes.
func (b *binder) undefinedFunction(fc *pg.FuncCall, name string, cargs []callArg) error {
	return b.errAt(pgerr.New(pgerr.UndefinedFunction, "function %s(%s) does not exist", name, callSignature(cargs)).
		WithHint("No function matches the given name and argument types. You might need to add explicit type casts."), fc.Location)
}

// fillDefaults binds the defaults of fn's parameters missing into args
// (in parameter order).
func (b *binder) fillDefaults(fc *pg.FuncCall, fn *catalog.Function, args []expr.Expr, missing []int) error {
	for _, p := range missing {
		d, err := b.paramDefault(fn, p)
		if err != nil {
			return b.errAt(err, fc.Location)
		}
		args[p] = d
	}
	return nil
}

// givenTypes is fn's parameter types at the positions a call fills, in
// the call's order: what PostgreSQL compares to find two overloads the
// call cannot tell apart.
func givenTypes(fn *catalog.Function, order []int) []types.T {
	out := make([]types.T, len(order))
	for i, p := range order {
		out[i] = fn.Args[p].Type
	}
	return out
}

func sameTypes(a, b []types.T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].OID() != b[i].OID() {
			return false
		}
	}
	return true
}

// expandArgs returns the full argument list of a call of fn in parameter
// order: the call's arguments placed by order, the missing parameters'
// defaults bound.
func (b *binder) expandArgs(fn *catalog.Function, args []callArg, order, missing []int) ([]expr.Expr, error) {
	out := make([]expr.Expr, len(fn.Args))
	for i, p := range order {
		out[p] = args[i].e
	}
	for _, p := range missing {
		d, err := b.paramDefault(fn, p)
		if err != nil {
			return nil, err
		}
		out[p] = d
	}
	return out, nil
}

// paramDefault binds the DEFAULT of fn's parameter p, of the parameter's
// type.
func (b *binder) paramDefault(fn *catalog.Function, p int) (expr.Expr, error) {
	a := fn.Args[p]
	stmts, err := sql.Parse("SELECT " + a.Default)
	if err != nil || len(stmts) != 1 || stmts[0].AST == nil || stmts[0].AST.GetSelectStmt() == nil ||
		len(stmts[0].AST.GetSelectStmt().TargetList) != 1 {
		return nil, pgerr.Internal("bad default for parameter %d of function %s: %q", p+1, fn.Name, a.Default)
	}
	src, params := b.src, b.udfParams
	b.src, b.udfParams = "", []int{} // no positions into the call; $n is no parameter
	defer func() { b.src, b.udfParams = src, params }()
	e, err := b.expr(&level{clause: inDefault}, stmts[0].AST.GetSelectStmt().TargetList[0].GetResTarget().Val)
	if err != nil || a.Type.Polymorphic() {
		return e, err // a polymorphic parameter's default keeps its type (resolvePoly)
	}
	return expr.Coerce(e, a.Type, true)
}

// bindParamDefault checks the DEFAULT of a parameter of type t at CREATE
// FUNCTION, as PostgreSQL does (no column, subquery, aggregate, window
// or set-returning function, no $n; assignable to t), and returns its
// text.
func bindParamDefault(env *Env, n *pg.Node, t types.T) (string, error) {
	b := newBinder(env)
	b.udfParams = []int{}
	e, err := b.expr(&level{clause: inDefault}, n) // (refuses aggregates, windows and set-returning functions)
	if err != nil {
		return "", err
	}
	if hasSubquery(e) {
		return "", b.newErr(pgerr.FeatureNotSupported, nodeLoc(n), "cannot use subquery in DEFAULT expression")
	}
	if t.Polymorphic() {
		return deparseExpr(n) // its type counts at each call (resolvePoly)
	}
	if _, err := expr.Coerce(e, t, true); err != nil {
		if k, ok := e.(*expr.Const); ok && k.T.Kind == types.Unknown {
			return "", b.errAt(err, nodeLoc(n)) // the literal's input error
		}
		return "", b.newErr(pgerr.DatatypeMismatch, nodeLoc(n), "argument of DEFAULT must be type %s, not type %s", t, e.Type())
	}
	return deparseExpr(n)
}

// positional wraps arguments given by position.
func positional(args []expr.Expr) []callArg {
	out := make([]callArg, len(args))
	for i, a := range args {
		out[i].e = a
	}
	return out
}

// givenView is fn with only the parameters a call gives (order, as
// matchArgs returns it), in the call's order: what chooses a polymorphic
// overload before its defaults' types are known.
func givenView(fn *catalog.Function, order []int) *catalog.Function {
	v := *fn
	v.Args = make([]catalog.FuncArg, len(order))
	for i, p := range order {
		v.Args[i] = fn.Args[p]
	}
	return &v
}

// notAlike is PostgreSQL's error for a polymorphic call whose defaults'
// types differ from its arguments': "arguments declared "anyelement" are
// not all alike", naming the first two types that differ.
func notAlike(fn *catalog.Function, placed []expr.Expr) error {
	family, first, other := "", "", ""
	for i, a := range fn.Args {
		if !a.Type.Polymorphic() || placed[i] == nil {
			continue
		}
		t := placed[i].Type()
		if a.Type.Kind == types.AnyArray || a.Type.Kind == types.AnyCompatibleArray {
			if t.Kind != types.Array {
				continue
			}
			t = *t.Elem
		}
		switch {
		case family == "":
			family, first = a.Type.String(), t.String()
		case other == "" && t.String() != first:
			other = t.String()
		}
	}
	e := pgerr.New(pgerr.DatatypeMismatch, "arguments declared \"%s\" are not all alike", family)
	if other != "" {
		e = e.WithDetail("%s versus %s", first, other)
	}
	return e
}

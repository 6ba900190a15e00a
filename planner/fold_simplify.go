package planner

import (
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// simplify applies what PostgreSQL's eval_const_expressions does with
// constant arguments of conditional and strict expressions whose other
// arguments are not constant, to e, whose children are already folded:
//
//   - a strict function with a NULL constant argument is NULL (it is never
//     called, so its other arguments are never evaluated);
//   - COALESCE drops NULL constants and everything after a non-NULL one;
//   - CASE drops the WHENs whose condition is a false or NULL constant, and
//     a WHEN whose condition is a true constant becomes the ELSE;
//   - AND and OR drop true (AND) and false (OR) constants, are false (AND)
//     or true (OR) when one argument is, and keep one NULL constant for
//     all the NULL constants;
//   - NULLIF of a NULL constant, and a NULL constant IN a list, are NULL.
//
// The value is the same either way; what changes is which arguments are
// evaluated, so that an argument that would fail (1/0) where PostgreSQL
// never evaluates it does not fail here either. An argument PostgreSQL
// simplifies before it gets there (all of a function's, those of an AND
// before its false) and that is a constant whose folding failed (fold
// leaves it for run time) keeps e as it is: PostgreSQL fails on it while
// planning, and the evaluation here fails on it too. e is returned
// unchanged when no rule applies.
func simplify(e expr.Expr) expr.Expr {
	switch x := e.(type) {
	case *expr.Call:
		if x.Fn.Strict && !anyFailedConst(x.Args) {
			for _, a := range x.Args {
				if isNullLit(a) {
					return nullOf(x.Type())
				}
			}
		}
	case *expr.Coalesce:
		return simplifyCoalesce(x)
	case *expr.Case:
		return simplifyCase(x)
	case *expr.And:
		return simplifyLogic(x.Args, true)
	case *expr.Or:
		return simplifyLogic(x.Args, false)
	case *expr.NullIf:
		if isNullLit(x.L) && !anyFailedConst([]expr.Expr{x.R}) {
			return nullOf(x.Type())
		}
	case *expr.InList:
		if isNullLit(x.E) && !anyFailedConst(x.List) {
			return nullOf(types.TBool)
		}
	}
	return e
}

// anyFailedConst reports whether some expression of es is constant but not
// a Const: its folding failed.
func anyFailedConst(es []expr.Expr) bool {
	for _, e := range es {
		if _, ok := e.(*expr.Const); !ok && expr.Foldable(e) {
			return true
		}
	}
	return false
}

func simplifyCoalesce(x *expr.Coalesce) expr.Expr {
	var args []expr.Expr
	for _, a := range x.Args {
		if isNullLit(a) {
			continue
		}
		args = append(args, a)
		if _, ok := a.(*expr.Const); ok {
			break
		}
	}
	switch {
	case len(args) == 0:
		return nullOf(x.T)
	case len(args) == 1 && args[0].Type().Equal(x.T):
		return args[0]
	case len(args) == len(x.Args):
		return x
	}
	return &expr.Coalesce{Args: args, T: x.T}
}

func simplifyCase(x *expr.Case) expr.Expr {
	var whens []expr.When
	els := x.Else
	for _, w := range x.Whens {
		c, ok := w.Cond.(*expr.Const)
		if !ok {
			whens = append(whens, w)
			continue
		}
		if b, _ := c.V.(bool); b {
			els = w.Result
			break
		}
		// a false or NULL condition: the branch is never taken
	}
	if len(whens) == 0 {
		if els == nil {
			return nullOf(x.T)
		}
		if els.Type().Equal(x.T) {
			return els
		}
	}
	if len(whens) == len(x.Whens) && els == x.Else {
		return x
	}
	return &expr.Case{Whens: whens, Else: els, T: x.T}
}

// simplifyLogic simplifies the arguments of an AND (and) or an OR.
func simplifyLogic(in []expr.Expr, and bool) expr.Expr {
	var args []expr.Expr
	null := false
	for _, a := range in {
		c, ok := a.(*expr.Const)
		if !ok {
			if expr.Foldable(a) {
				return logicOf(in, and) // PostgreSQL fails on it while planning
			}
			args = append(args, a)
			continue
		}
		b, isBool := c.V.(bool)
		switch {
		case !isBool: // NULL
			null = true
		case b != and: // false in an AND, true in an OR
			return c
		}
		// true in an AND, false in an OR: no effect
	}
	if null {
		args = append(args, nullOf(types.TBool))
	}
	switch {
	case len(args) == 0:
		return &expr.Const{V: and, T: types.TBool}
	case len(args) == 1:
		return args[0]
	case len(args) == len(in):
		return logicOf(in, and)
	}
	return logicOf(args, and)
}

func logicOf(args []expr.Expr, and bool) expr.Expr {
	if and {
		return &expr.And{Args: args}
	}
	return &expr.Or{Args: args}
}

// isNullLit reports whether e is a NULL constant.
func isNullLit(e expr.Expr) bool {
	c, ok := e.(*expr.Const)
	return ok && c.V == nil
}

func nullOf(t types.T) expr.Expr { return &expr.Const{V: nil, T: t} }

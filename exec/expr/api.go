package expr

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// The binder's entry points. Each resolves types the way PostgreSQL does
// (unknown literals take the type of the other side, implicit casts are
// inserted, the best overload is chosen) and returns a *pgerr.Error such as
// 42883 `operator does not exist: integer + text` (with PostgreSQL's hint)
// when nothing fits.
//
// STUBS: the bodies below are placeholders until the evaluator lands; their
// signatures are the contract with planner/.

// NewCall resolves a scalar function call by name (lower-case, unqualified or
// "pg_catalog."-qualified) over bound arguments.
func NewCall(name string, args []Expr) (Expr, error) {
	return nil, pgerr.New(pgerr.UndefinedFunction, "function %s does not exist", name)
}

// NewBinary resolves a binary operator: arithmetic (+ - * / % ^), comparison
// (= <> < <= > >=), string concatenation (||), jsonb access (-> ->> #> #>>),
// containment (@> <@), and the other operators in the registry.
func NewBinary(op string, l, r Expr) (Expr, error) {
	return nil, pgerr.New(pgerr.UndefinedFunction, "operator does not exist: %s %s %s", l.Type(), op, r.Type())
}

// NewUnary resolves a prefix operator (-, +, ~, @, NOT is And/Or/Not).
func NewUnary(op string, e Expr) (Expr, error) {
	return nil, pgerr.New(pgerr.UndefinedFunction, "operator does not exist: %s %s", op, e.Type())
}

// NewCast converts e to t; explicit is true for CAST(e AS t) and e::t.
// Constants are cast at bind time so that bad literals fail early (22P02).
func NewCast(e Expr, t types.T, explicit bool) (Expr, error) {
	return nil, pgerr.New(pgerr.CannotCoerce, "cannot cast type %s to %s", e.Type(), t)
}

// Coerce converts e to t if an implicit (assignment, when assign is true)
// cast exists, as INSERT and UNION do; otherwise 42804 datatype mismatch.
func Coerce(e Expr, t types.T, assign bool) (Expr, error) {
	return NewCast(e, t, false)
}

// CommonType picks the result type of CASE, COALESCE, UNION, IN lists and
// VALUES columns from the candidate types, as PostgreSQL's
// select_common_type does; context names the construct for the error
// message ("CASE", "UNION", "COALESCE", "VALUES").
func CommonType(ts []types.T, context string) (types.T, error) {
	return types.T{}, pgerr.Unsupported("%s type resolution", context)
}

// Fold evaluates e once if it has no column, parameter, outer or volatile
// references, returning a Const; otherwise it returns e unchanged.
func Fold(ctx *Context, e Expr) (Expr, error) { return e, nil }

// Register adds a scalar function overload to the registry (used at init by
// this package and by catalog/ for the pg_catalog functions). Overloads with
// the same name are chosen between by argument types, as PostgreSQL does.
// Register is not safe to call concurrently with resolution: call it from init.
func Register(f *Func) {}

// RowKernel adapts a row-at-a-time function to a Kernel, for functions that
// are not on hot paths (catalog functions, rarely used string functions).
// fn sees each row's arguments as Values (nil is NULL; a Strict Func never
// sees NULLs) and returns a Value of type ret.
func RowKernel(ret types.T, argTypes []types.T, fn func(ctx *Context, args []types.Value) (types.Value, error)) func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
	return nil
}

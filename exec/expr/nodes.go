package expr

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/types"
)

// The node types below are what the binder (planner/) builds and what the
// evaluator runs. Build them with the constructors in this package (NewCall,
// NewBinary, NewCast, ...), which resolve overloads and insert implicit casts
// the way PostgreSQL does; the struct literals are for this package and tests.

// ColRef reads column Idx of the input batch.
type ColRef struct {
	Idx  int
	T    types.T
	Name string // for EXPLAIN only
}

// Const is a constant. V is in the Go form of types.Value (nil is NULL).
type Const struct {
	V types.Value
	T types.T
}

// Param is a statement parameter $Idx+1, typed during binding.
type Param struct {
	Idx int // 0-based
	T   types.T
}

// OuterRef reads column Idx of an enclosing query's current row, Depth levels
// out (1 = the directly enclosing query). Used in correlated subqueries.
type OuterRef struct {
	Depth int
	Idx   int
	T     types.T
	Name  string
}

// Call applies a scalar function or operator. Fn was resolved by NewCall or
// NewBinary/NewUnary; Args already carry any implicit casts.
type Call struct {
	Fn   *Func
	Args []Expr
}

// Func is one resolved overload of a scalar function or operator.
type Func struct {
	Name   string    // "+", "substr", "date_trunc"...
	Args   []types.T // parameter types after resolution
	Return types.T
	// Strict functions return NULL when any argument is NULL, without calling Kernel.
	Strict bool
	// Volatile functions (random, now is not: it is stable) are not constant-folded.
	Volatile bool
	// UserDefined marks a user's function that runs as a call (a PL/pgSQL
	// one; SQL functions are inlined), for the planner's messages.
	UserDefined bool
	// Kernel evaluates the function over argument arrays of equal length n.
	Kernel func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error)

	// Element, when set, evaluates element k (1-based) of the array the
	// function returns, f(args)[k], without building the arrays; NULL
	// arguments give NULL (for a Strict function) and the kernel handles
	// them itself. Subscript uses it for a constant k.
	Element func(ctx *Context, args []arrow.Array, n int, k int64) (arrow.Array, error)

	// nullSafe marks built-in kernels that handle NULL rows themselves.
	nullSafe bool
}

// Cast converts E to To. Explicit is true for CAST/:: (allows the casts PostgreSQL
// only allows explicitly, and applies typmods such as varchar(n) truncation).
type Cast struct {
	E        Expr
	To       types.T
	Explicit bool
}

// And is n-ary AND with SQL three-valued logic.
type And struct{ Args []Expr }

// Or is n-ary OR with SQL three-valued logic.
type Or struct{ Args []Expr }

// Not is logical negation (NULL stays NULL).
type Not struct{ E Expr }

// IsNull is `E IS NULL` (or IS NOT NULL when Not).
type IsNull struct {
	E   Expr
	Not bool
}

// IsBool is `E IS [NOT] TRUE|FALSE|UNKNOWN`; Value nil means UNKNOWN.
type IsBool struct {
	E     Expr
	Value *bool
	Not   bool
}

// IsDistinct is `L IS [NOT] DISTINCT FROM R` (NULLs compare equal).
type IsDistinct struct {
	L, R Expr
	Not  bool
	// Eq is the resolved "=" for the common type of L and R.
	Eq *Func
}

// Case is a searched CASE; a simple CASE x WHEN v is bound into conditions x = v.
type Case struct {
	Whens []When
	Else  Expr // nil means NULL
	T     types.T
}

// When is one WHEN branch.
type When struct {
	Cond   Expr
	Result Expr
}

// Coalesce returns its first non-NULL argument; arguments are evaluated lazily
// per row as PostgreSQL does (a later argument's error only matters for rows
// that reach it).
type Coalesce struct {
	Args []Expr
	T    types.T
}

// NullIf is NULLIF(L, R).
type NullIf struct {
	L, R Expr
	Eq   *Func
}

// InList is `E [NOT] IN (List...)` with SQL NULL semantics.
type InList struct {
	E    Expr
	List []Expr
	Not  bool
	Eq   *Func
}

// Like is `E [NOT] LIKE|ILIKE Pattern [ESCAPE Escape]`; with Regex it is the
// POSIX regex match family (~, ~*, !~, !~*) and Pattern is a regular expression.
type Like struct {
	E, Pattern Expr
	Escape     Expr // nil: backslash
	CaseInsens bool
	Not        bool
	Regex      bool
}

// SubqueryKind says how a subquery's rows become a value.
type SubqueryKind uint8

// Subquery kinds.
const (
	ScalarSubquery SubqueryKind = iota // (SELECT x ...): at most one row
	ExistsSubquery                     // EXISTS (...)
	AnySubquery                        // lhs op ANY (...), IN (...)
	AllSubquery                        // lhs op ALL (...), NOT IN is NOT(= ANY)
	ArraySubquery                      // ARRAY(SELECT ...)
)

// Subquery evaluates a nested query per row (correlated) or once (uncorrelated,
// cached in Context.Subqueries).
type Subquery struct {
	Kind SubqueryKind
	Plan SubPlan
	// Correlated is true when Plan reads OuterRef of depth 1 or more.
	Correlated bool
	// For ANY/ALL: the left-hand side and the comparison, resolved against the
	// subquery's single column type.
	LHS Expr
	Op  *Func
	T   types.T
}

// SubPlan runs a nested query. Implemented by exec; expr only calls it.
type SubPlan interface {
	// Run executes the query with ctx.Outer already extended by the current
	// outer row and returns all its rows (first column only is used, except
	// for EXISTS which only counts rows). limit > 0 stops after that many rows.
	Run(ctx *Context, limit int) ([]arrow.Array, error)
	// Explain renders the nested plan.
	Explain() string
}

// ArrayExpr is ARRAY[e1, e2, ...].
type ArrayExpr struct {
	Elems []Expr
	T     types.T
}

// Subscript is E[Index] on an array (1-based, NULL out of range).
type Subscript struct {
	E, Index Expr
	T        types.T
}

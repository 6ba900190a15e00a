package expr

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Fold evaluates e once if it has no column, parameter, outer, subquery or
// volatile references, returning a Const; otherwise it returns e unchanged.
// Errors (1/0) are returned, as PostgreSQL reports them at plan time.
func Fold(ctx *Context, e Expr) (Expr, error) {
	if _, ok := e.(*Const); ok || !foldable(e) {
		return e, nil
	}
	one := array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 1)
	defer one.Release()
	a, err := e.Eval(ctx, one)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	return &Const{V: valueAt(a, 0, e.Type()), T: e.Type()}, nil
}

// Foldable reports whether e depends only on constants and stable
// functions: whether Fold evaluates it.
func Foldable(e Expr) bool { return foldable(e) }

// foldable reports whether e depends only on constants and stable functions.
func foldable(e Expr) bool {
	ok := true
	walk(e, func(x Expr) {
		switch x := x.(type) {
		case *ColRef, *Param, *OuterRef, *Subquery:
			ok = false
		case *Call:
			if x.Fn.Volatile {
				ok = false
			}
		}
	})
	return ok
}

// QualCost estimates what evaluating e costs per row, in PostgreSQL's
// units of cpu_operator_cost as its cost_qual_eval counts them for
// built-in functions: an operator, function call, cast, LIKE, IS DISTINCT
// FROM or NULLIF is 1, an IN list half a comparison per item, a subquery
// 1000 (PostgreSQL adds the subplan's own cost); CASE, COALESCE, AND, OR,
// NOT, IS NULL and column references add nothing of their own.
func QualCost(e Expr) float64 {
	cost := 0.0
	walk(e, func(x Expr) {
		switch x := x.(type) {
		case *Call, *Cast, *Like, *IsDistinct, *NullIf:
			cost++
		case *InList:
			cost += 0.5 * float64(len(x.List))
		case *Subquery:
			cost += 1000
		}
	})
	return cost
}

// walk calls f on e and every sub-expression.
func walk(e Expr, f func(Expr)) {
	if e == nil {
		return
	}
	f(e)
	for _, c := range children(e) {
		walk(c, f)
	}
}

// children lists the direct sub-expressions of e.
func children(e Expr) []Expr {
	switch x := e.(type) {
	case *Call:
		return x.Args
	case *Cast:
		return []Expr{x.E}
	case *DomainCheck: // its Checks read their own one-column batch
		return []Expr{x.E}
	case *And:
		return x.Args
	case *Or:
		return x.Args
	case *Not:
		return []Expr{x.E}
	case *IsNull:
		return []Expr{x.E}
	case *IsBool:
		return []Expr{x.E}
	case *IsDistinct:
		return []Expr{x.L, x.R}
	case *Case:
		var out []Expr
		for _, w := range x.Whens {
			out = append(out, w.Cond, w.Result)
		}
		if x.Else != nil {
			out = append(out, x.Else)
		}
		return out
	case *Coalesce:
		return x.Args
	case *NullIf:
		return []Expr{x.L, x.R}
	case *InList:
		return append([]Expr{x.E}, x.List...)
	case *Like:
		out := []Expr{x.E, x.Pattern}
		if x.Escape != nil {
			out = append(out, x.Escape)
		}
		return out
	case *Subquery:
		if x.LHS != nil {
			return []Expr{x.LHS}
		}
	case *ArrayExpr:
		return x.Elems
	case *RowExpr:
		return x.Args
	case *FieldSelect:
		return []Expr{x.E}
	case *RowCompare:
		return append(append([]Expr(nil), x.Eq...), x.Cmp...)
	case *Subscript:
		return []Expr{x.E, x.Index}
	}
	return nil
}

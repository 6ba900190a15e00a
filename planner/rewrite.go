package planner

import (
	"reflect"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// sublink is a subquery while it is still logical: physical translation
// replaces it with an *expr.Subquery whose plan is built then (the plan's
// outer references need the enclosing batch layout, known only at that
// point). It implements expr.Expr only so it can sit in bound trees.
type sublink struct {
	kind expr.SubqueryKind
	plan lnode
	// outID is the id of the subquery's (first) output column.
	outID int
	lhs   expr.Expr
	op    *expr.Func
	t     types.T
	// outer lists the ids of enclosing queries that the subquery reads.
	outer []int
	// outName names outID for EXPLAIN.
	outName string
	// rowLHS, rowOps and rowIDs describe `(a, b) IN (SELECT x, y ...)`:
	// a = x, b = y, with x, y the subquery's columns rowIDs.
	rowLHS []expr.Expr
	rowOps []*expr.Func
	rowIDs []int
	// array is set instead of plan for `x op ANY/ALL (array)`.
	array expr.Expr
}

var _ expr.Expr = (*sublink)(nil)

func (s *sublink) Type() types.T { return s.t }
func (s *sublink) Eval(*expr.Context, arrow.RecordBatch) (arrow.Array, error) {
	return nil, pgerr.Internal("unplanned subquery evaluated")
}
func (s *sublink) String() string { return "(subquery)" }

// children returns e's direct sub-expressions, in a fixed order that
// withChildren understands.
func children(e expr.Expr) []expr.Expr {
	switch x := e.(type) {
	case *expr.Call:
		return x.Args
	case *expr.Cast:
		return []expr.Expr{x.E}
	case *expr.DomainCheck: // its Checks read their own one-column batch
		return []expr.Expr{x.E}
	case *expr.And:
		return x.Args
	case *expr.Or:
		return x.Args
	case *expr.Not:
		return []expr.Expr{x.E}
	case *expr.IsNull:
		return []expr.Expr{x.E}
	case *expr.IsBool:
		return []expr.Expr{x.E}
	case *expr.IsDistinct:
		return []expr.Expr{x.L, x.R}
	case *expr.Case:
		out := make([]expr.Expr, 0, 2*len(x.Whens)+1)
		for _, w := range x.Whens {
			out = append(out, w.Cond, w.Result)
		}
		if x.Else != nil {
			out = append(out, x.Else)
		}
		return out
	case *expr.Coalesce:
		return x.Args
	case *expr.NullIf:
		return []expr.Expr{x.L, x.R}
	case *expr.InList:
		return append([]expr.Expr{x.E}, x.List...)
	case *expr.Like:
		if x.Escape != nil {
			return []expr.Expr{x.E, x.Pattern, x.Escape}
		}
		return []expr.Expr{x.E, x.Pattern}
	case *expr.ArrayExpr:
		return x.Elems
	case *expr.Subscript:
		return []expr.Expr{x.E, x.Index}
	case *expr.RowExpr:
		return x.Args
	case *expr.FieldSelect:
		return []expr.Expr{x.E}
	case *expr.RowCompare:
		return append(append([]expr.Expr(nil), x.Eq...), x.Cmp...)
	case *sublink:
		if x.rowLHS != nil {
			return x.rowLHS
		}
		if x.array != nil {
			return []expr.Expr{x.lhs, x.array}
		}
		if x.lhs != nil {
			return []expr.Expr{x.lhs}
		}
	case *expr.Subquery:
		if x.LHS != nil {
			return []expr.Expr{x.LHS}
		}
	}
	return nil
}

// withChildren returns a copy of e with its children replaced (c is in the
// order children returns).
func withChildren(e expr.Expr, c []expr.Expr) expr.Expr {
	switch x := e.(type) {
	case *expr.Call:
		n := *x
		n.Args = c
		return &n
	case *expr.Cast:
		n := *x
		n.E = c[0]
		return &n
	case *expr.DomainCheck:
		n := *x
		n.E = c[0]
		return &n
	case *expr.And:
		return &expr.And{Args: c}
	case *expr.Or:
		return &expr.Or{Args: c}
	case *expr.Not:
		return &expr.Not{E: c[0]}
	case *expr.IsNull:
		return &expr.IsNull{E: c[0], Not: x.Not}
	case *expr.IsBool:
		return &expr.IsBool{E: c[0], Value: x.Value, Not: x.Not}
	case *expr.IsDistinct:
		return &expr.IsDistinct{L: c[0], R: c[1], Not: x.Not, Eq: x.Eq}
	case *expr.Case:
		n := &expr.Case{T: x.T, Whens: make([]expr.When, len(x.Whens))}
		for i := range x.Whens {
			n.Whens[i] = expr.When{Cond: c[2*i], Result: c[2*i+1]}
		}
		if x.Else != nil {
			n.Else = c[len(c)-1]
		}
		return n
	case *expr.Coalesce:
		return &expr.Coalesce{Args: c, T: x.T}
	case *expr.NullIf:
		return &expr.NullIf{L: c[0], R: c[1], Eq: x.Eq}
	case *expr.InList:
		return &expr.InList{E: c[0], List: c[1:], Not: x.Not, Eq: x.Eq}
	case *expr.Like:
		n := *x
		n.E, n.Pattern = c[0], c[1]
		if len(c) > 2 {
			n.Escape = c[2]
		}
		return &n
	case *expr.ArrayExpr:
		return &expr.ArrayExpr{Elems: c, T: x.T}
	case *expr.Subscript:
		return &expr.Subscript{E: c[0], Index: c[1], T: x.T}
	case *expr.RowExpr:
		return &expr.RowExpr{Args: c, T: x.T}
	case *expr.FieldSelect:
		return &expr.FieldSelect{E: c[0], Idx: x.Idx, Name: x.Name}
	case *expr.RowCompare:
		return &expr.RowCompare{Op: x.Op, Eq: c[:len(x.Eq)], Cmp: c[len(x.Eq):]}
	case *sublink:
		n := *x
		if x.rowLHS != nil {
			n.rowLHS = c
			return &n
		}
		n.lhs = c[0]
		if x.array != nil {
			n.array = c[1]
		}
		return &n
	case *expr.Subquery:
		n := *x
		n.LHS = c[0]
		return &n
	}
	return e
}

// transform rewrites e top-down: f sees each node first; when it returns
// done, its result replaces the node, otherwise the node's children are
// transformed and the node rebuilt if any changed.
func transform(e expr.Expr, f func(expr.Expr) (expr.Expr, bool, error)) (expr.Expr, error) {
	if e == nil {
		return nil, nil
	}
	r, done, err := f(e)
	if err != nil || done {
		return r, err
	}
	kids := children(e)
	if len(kids) == 0 {
		return e, nil
	}
	var out []expr.Expr
	for i, k := range kids {
		nk, err := transform(k, f)
		if err != nil {
			return nil, err
		}
		if nk != k && out == nil {
			out = append(make([]expr.Expr, 0, len(kids)), kids[:i]...)
		}
		if out != nil {
			out = append(out, nk)
		}
	}
	if out == nil {
		return e, nil
	}
	return withChildren(e, out), nil
}

// walk calls f on every node of e (pre-order); f returns false to skip a
// node's children.
func walk(e expr.Expr, f func(expr.Expr) bool) {
	if e == nil || !f(e) {
		return
	}
	for _, k := range children(e) {
		walk(k, f)
	}
}

// refs adds to set the ids e reads at the current query level: column
// references, and the outer references of its subqueries.
func refs(e expr.Expr, set map[int]bool) {
	walk(e, func(n expr.Expr) bool {
		switch x := n.(type) {
		case *expr.ColRef:
			set[x.Idx] = true
		case *sublink:
			for _, id := range x.outer {
				set[id] = true
			}
		}
		return true
	})
}

// refsOf returns the set of ids the expressions read.
func refsOf(es ...expr.Expr) map[int]bool {
	set := map[int]bool{}
	for _, e := range es {
		refs(e, set)
	}
	return set
}

// within reports whether every id e reads is in avail.
func within(e expr.Expr, avail map[int]bool) bool {
	for id := range refsOf(e) {
		if !avail[id] {
			return false
		}
	}
	return true
}

// hasSubquery reports whether e holds a subquery (which must not be
// duplicated or moved into another expression freely).
func hasSubquery(e expr.Expr) bool {
	found := false
	walk(e, func(n expr.Expr) bool {
		if _, ok := n.(*sublink); ok {
			found = true
		}
		return !found
	})
	return found
}

// equalExpr reports whether two bound expressions are the same computation
// (used to match GROUP BY expressions and ORDER BY targets).
func equalExpr(a, b expr.Expr) bool {
	if reflect.TypeOf(a) != reflect.TypeOf(b) {
		return false
	}
	switch x := a.(type) {
	case *expr.ColRef:
		return x.Idx == b.(*expr.ColRef).Idx
	case *expr.OuterRef:
		y := b.(*expr.OuterRef)
		return x.Idx == y.Idx && x.Depth == y.Depth
	case *expr.Param:
		return x.Idx == b.(*expr.Param).Idx
	case *expr.Const:
		y := b.(*expr.Const)
		return x.T.Equal(y.T) && reflect.DeepEqual(x.V, y.V)
	case *expr.Call:
		y := b.(*expr.Call)
		if x.Fn != y.Fn && (x.Fn.Name != y.Fn.Name || !x.Fn.Return.Equal(y.Fn.Return) || len(x.Fn.Args) != len(y.Fn.Args)) {
			return false
		}
	case *expr.Cast:
		y := b.(*expr.Cast)
		if !x.To.Equal(y.To) || x.Explicit != y.Explicit {
			return false
		}
	case *expr.DomainCheck:
		if x.Domain != b.(*expr.DomainCheck).Domain {
			return false
		}
	case *expr.IsNull:
		if x.Not != b.(*expr.IsNull).Not {
			return false
		}
	case *expr.IsBool:
		y := b.(*expr.IsBool)
		if x.Not != y.Not || (x.Value == nil) != (y.Value == nil) || (x.Value != nil && *x.Value != *y.Value) {
			return false
		}
	case *expr.IsDistinct:
		if x.Not != b.(*expr.IsDistinct).Not {
			return false
		}
	case *expr.InList:
		if x.Not != b.(*expr.InList).Not {
			return false
		}
	case *expr.Like:
		y := b.(*expr.Like)
		if x.Not != y.Not || x.CaseInsens != y.CaseInsens || x.Regex != y.Regex || (x.Escape == nil) != (y.Escape == nil) {
			return false
		}
	case *expr.Case:
		y := b.(*expr.Case)
		if len(x.Whens) != len(y.Whens) || (x.Else == nil) != (y.Else == nil) {
			return false
		}
	case *sublink, *expr.Subquery:
		return a == b
	}
	ka, kb := children(a), children(b)
	if len(ka) != len(kb) {
		return false
	}
	for i := range ka {
		if !equalExpr(ka[i], kb[i]) {
			return false
		}
	}
	return true
}

// conjuncts splits an AND tree into its terms.
func conjuncts(e expr.Expr, out []expr.Expr) []expr.Expr {
	if a, ok := e.(*expr.And); ok {
		for _, x := range a.Args {
			out = conjuncts(x, out)
		}
		return out
	}
	return append(out, e)
}

// andOf joins conditions with AND (nil for none).
func andOf(cs []expr.Expr) expr.Expr {
	switch len(cs) {
	case 0:
		return nil
	case 1:
		return cs[0]
	}
	return &expr.And{Args: cs}
}

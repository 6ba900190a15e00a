package planner

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// `x op ANY (array)` and `x op ALL (array)` are planned as an ANY/ALL
// subquery whose "plan" evaluates the array for the current row and yields
// its elements, so they share the subquery's NULL semantics.

func (b *binder) arrayAnyAll(l *level, a *pg.A_Expr, op string, any bool) (expr.Expr, error) {
	lhs, err := b.expr(l, a.Lexpr)
	if err != nil {
		return nil, err
	}
	arr, err := b.expr(l, a.Rexpr)
	if err != nil {
		return nil, err
	}
	if arr.Type().Kind == types.Unknown && lhs.Type().Kind != types.Unknown {
		if arr, err = expr.NewCast(arr, types.ArrayOf(lhs.Type()), false); err != nil {
			return nil, b.errAt(err, nodeLoc(a.Rexpr))
		}
	}
	if arr.Type().Kind != types.Array {
		return nil, b.newErr(pgerr.WrongObjectType, a.Location, "op ANY/ALL (array) requires array on right side")
	}
	elem := *arr.Type().Elem
	e, err := b.binary(op, lhs, &expr.ColRef{Idx: -1, T: elem}, a.Location)
	if err != nil {
		return nil, err
	}
	call, ok := e.(*expr.Call)
	if !ok || len(call.Args) != 2 || call.Fn.Return.Kind != types.Bool {
		return nil, b.newErr(pgerr.DatatypeMismatch, a.Location, "op ANY/ALL (array) requires operator to yield boolean")
	}
	s := &sublink{kind: expr.AllSubquery, lhs: call.Args[0], op: call.Fn, t: types.TBool, array: arr}
	if any {
		s.kind = expr.AnySubquery
	}
	return s, nil
}

// arraySubPlan yields the elements of an array expression evaluated for
// the current outer row (its column references are OuterRefs of depth 1).
type arraySubPlan struct {
	arr  expr.Expr
	elem types.T
}

func (s *arraySubPlan) Run(ctx *expr.Context, limit int) ([]arrow.Array, error) {
	one := array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 1)
	defer one.Release()
	a, err := s.arr.Eval(ctx, one)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	list, ok := a.(*array.List)
	if !ok {
		return nil, pgerr.Internal("ANY/ALL over a non-array value")
	}
	if list.IsNull(0) {
		// A NULL array compares as unknown, like a single NULL element.
		bld := types.NewBuilder(ctx.Allocator(), s.elem)
		defer bld.Release()
		bld.AppendNull()
		return []arrow.Array{bld.NewArray()}, nil
	}
	start, end := list.ValueOffsets(0)
	return []arrow.Array{array.NewSlice(list.ListValues(), start, end)}, nil
}

func (s *arraySubPlan) Explain() string { return s.arr.String() }

// arrayPlan maps the array expression of an ANY/ALL over the current batch
// layout and turns its column references into outer references.
func (p *physical) arrayPlan(x *sublink, lay []int) (*expr.Subquery, error) {
	arr, err := p.expr(x.array, lay)
	if err != nil {
		return nil, err
	}
	correlated := false
	arr, err = transform(arr, func(n expr.Expr) (expr.Expr, bool, error) {
		switch c := n.(type) {
		case *expr.ColRef:
			correlated = true
			return &expr.OuterRef{Depth: 1, Idx: c.Idx, T: c.T, Name: c.Name}, true, nil
		case *expr.OuterRef:
			correlated = true
			return &expr.OuterRef{Depth: c.Depth + 1, Idx: c.Idx, T: c.T, Name: c.Name}, true, nil
		}
		return n, false, nil
	})
	if err != nil {
		return nil, err
	}
	lhs, err := p.expr(x.lhs, lay)
	if err != nil {
		return nil, err
	}
	return &expr.Subquery{Kind: x.kind, Plan: &arraySubPlan{arr: arr, elem: *x.array.Type().Elem}, Correlated: correlated,
		LHS: lhs, Op: x.op, T: x.t}, nil
}

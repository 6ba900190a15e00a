package expr

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Subqueries. An uncorrelated subquery runs once per execution: its values
// are cached in Context.Subqueries. A correlated one runs once per outer
// row, with Context.Outer extended by that row.

// Type returns the subquery's result type (boolean for EXISTS/ANY/ALL).
func (e *Subquery) Type() types.T { return e.T }

func (e *Subquery) String() string {
	plan := "SubPlan"
	if !e.Correlated {
		plan = "InitPlan"
	}
	switch e.Kind {
	case ExistsSubquery:
		return "(" + plan + " EXISTS)"
	case AnySubquery:
		return "(" + e.LHS.String() + " " + e.Op.Name + " ANY (" + plan + "))"
	case AllSubquery:
		return "(" + e.LHS.String() + " " + e.Op.Name + " ALL (" + plan + "))"
	case ArraySubquery:
		return "ARRAY(" + plan + ")"
	}
	return "(" + plan + ")"
}

// subqueryResult is what one run of the subquery yields.
type subqueryResult struct {
	vals  []types.Value // the first column's values (EXISTS: just counted)
	count int
}

// elemType is the type of the subquery's single column.
func (e *Subquery) elemType() types.T {
	switch e.Kind {
	case AnySubquery, AllSubquery:
		if e.Op != nil {
			return e.Op.Args[1]
		}
	case ArraySubquery:
		if e.T.Kind == types.Array {
			return *e.T.Elem
		}
	case ScalarSubquery:
		return e.T
	}
	return types.TUnknown
}

func (e *Subquery) run(ctx *Context) (*subqueryResult, error) {
	limit := 0
	switch e.Kind {
	case ExistsSubquery:
		limit = 1
	case ScalarSubquery:
		limit = 2
	}
	chunks, err := e.Plan.Run(ctx, limit)
	if err != nil {
		return nil, err
	}
	defer releaseAll(chunks)
	res := &subqueryResult{}
	t := e.elemType()
	for _, c := range chunks {
		res.count += c.Len()
		if e.Kind == ExistsSubquery {
			continue
		}
		ct := fitType(c, t)
		for i := 0; i < c.Len(); i++ {
			v := valueAt(c, i, ct)
			if v != nil && !ct.SameKind(t) && t.Kind != types.Unknown {
				if v, err = castValue(ctx, v, ct, t, false); err != nil {
					return nil, err
				}
			}
			res.vals = append(res.vals, v)
		}
	}
	if e.Kind == ScalarSubquery && res.count > 1 {
		return nil, pgerr.New(pgerr.CardinalityViolation, "more than one row returned by a subquery used as an expression")
	}
	return res, nil
}

// cached runs an uncorrelated subquery once per Context.
func (e *Subquery) cached(ctx *Context) (*subqueryResult, error) {
	if r, ok := ctx.Subqueries[e]; ok {
		return r.(*subqueryResult), nil
	}
	r, err := e.run(ctx)
	if err != nil {
		return nil, err
	}
	if ctx.Subqueries == nil {
		ctx.Subqueries = map[*Subquery]any{}
	}
	ctx.Subqueries[e] = r
	return r, nil
}

// Eval computes the subquery's value for every row of b.
func (e *Subquery) Eval(ctx *Context, b arrow.RecordBatch) (arrow.Array, error) {
	n := int(b.NumRows())
	var lhs arrow.Array
	if e.Kind == AnySubquery || e.Kind == AllSubquery {
		l0, err := e.LHS.Eval(ctx, b)
		if err != nil {
			return nil, err
		}
		// castTo takes over l0's reference.
		if lhs, err = castTo(ctx, l0, e.LHS.Type(), e.Op.Args[0]); err != nil {
			return nil, err
		}
		defer lhs.Release()
	}
	if !e.Correlated {
		r, err := e.cached(ctx)
		if err != nil {
			return nil, err
		}
		if lhs != nil {
			return e.quantified(ctx, lhs, r.vals)
		}
		return constArray(ctx.Allocator(), e.value(r), e.T, n)
	}
	out := make([]types.Value, n)
	saved := ctx.Outer
	defer func() { ctx.Outer = saved }()
	for i := 0; i < n; i++ {
		ctx.Outer = append(saved[:len(saved):len(saved)], OuterRow{Batch: b, Row: i})
		r, err := e.run(ctx)
		if err != nil {
			return nil, err
		}
		if lhs != nil {
			one := takeRows(ctx.Allocator(), lhs, []int{i})
			q, err := e.quantified(ctx, one, r.vals)
			one.Release()
			if err != nil {
				return nil, err
			}
			out[i] = valueAt(q, 0, types.TBool)
			q.Release()
			continue
		}
		out[i] = e.value(r)
	}
	return buildValues(ctx.Allocator(), out, e.T)
}

// value is the per-row value of scalar, EXISTS and ARRAY subqueries.
func (e *Subquery) value(r *subqueryResult) types.Value {
	switch e.Kind {
	case ExistsSubquery:
		return r.count > 0
	case ArraySubquery:
		if r.vals == nil {
			return []types.Value{}
		}
		return r.vals
	}
	if len(r.vals) == 0 {
		return nil
	}
	return r.vals[0]
}

// quantified computes lhs op ANY/ALL (vals): ANY is true if some
// comparison is true, else NULL if some is NULL, else false; ALL is false
// if some is false, else NULL if some is NULL, else true.
func (e *Subquery) quantified(ctx *Context, lhs arrow.Array, vals []types.Value) (arrow.Array, error) {
	n := lhs.Len()
	any := e.Kind == AnySubquery
	decided, null := newBits(n), newBits(n)
	rt := e.Op.Args[1]
	for _, v := range vals {
		if bitutil.CountSetBits(decided, 0, n) == n {
			break
		}
		c, err := constArray(ctx.Allocator(), v, rt, n)
		if err != nil {
			return nil, err
		}
		res, err := callKernel(ctx, e.Op, []arrow.Array{lhs, c}, n)
		c.Release()
		if err != nil {
			return nil, err
		}
		bv, m := boolBits(res)
		for i := range decided {
			if any {
				decided[i] |= m[i] & bv[i]
			} else {
				decided[i] |= m[i] &^ bv[i]
			}
			null[i] |= ^m[i]
		}
		res.Release()
	}
	val, valid := newBits(n), newBits(n)
	for i := range val {
		valid[i] = decided[i] | ^null[i]
		if any {
			val[i] = decided[i]
		} else {
			val[i] = ^decided[i]
		}
	}
	return makeBool(n, val, valid), nil
}

// NewQuantified builds `lhs op ANY|ALL (subquery)` (IN is = ANY, NOT IN is
// NOT (= ANY)): op is resolved between lhs and the subquery column type col.
func NewQuantified(kind SubqueryKind, lhs Expr, op string, col types.T, plan SubPlan, correlated bool) (*Subquery, error) {
	c, err := NewBinary(op, lhs, &ColRef{T: col})
	if err != nil {
		return nil, err
	}
	call, ok := c.(*Call)
	if !ok || call.Fn.Return.Kind != types.Bool {
		return nil, pgerr.New(pgerr.DatatypeMismatch, "op ANY/ALL (array) requires operator to yield boolean")
	}
	return &Subquery{Kind: kind, Plan: plan, Correlated: correlated, LHS: lhs, Op: call.Fn, T: types.TBool}, nil
}

package exec

import (
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// AggFunc is one resolved aggregate (count, sum, avg, min, max, bool_and,
// bool_or, every, string_agg, array_agg, stddev..., variance...).
type AggFunc struct {
	Name   string
	Args   []types.T // argument types after resolution (the planner casts to them)
	Return types.T
	// impl is operator-private.
	impl any
}

// WindowFunc is one resolved window function: a ranking/offset function
// (row_number, rank, dense_rank, percent_rank, cume_dist, ntile, lag, lead,
// first_value, last_value, nth_value) or an aggregate used OVER a window.
type WindowFunc struct {
	Name   string
	Args   []types.T
	Return types.T
	Agg    *AggFunc // set when the window function is an aggregate
	impl   any
}

// ResolveAggregate picks the aggregate overload for the argument types, as
// PostgreSQL does: sum(int4) is bigint, sum(int8) and avg(int) are numeric,
// count(*) is written with no arguments (star is true).
// STUB until the aggregate operators land.
func ResolveAggregate(name string, args []types.T, star bool) (*AggFunc, error) {
	return nil, pgerr.New(pgerr.UndefinedFunction, "function %s does not exist", name)
}

// IsAggregate reports whether name is a known aggregate function.
func IsAggregate(name string) bool { return false }

// ResolveWindow picks a window function (or an aggregate used as one).
// STUB until the window operator lands.
func ResolveWindow(name string, args []types.T, star bool) (*WindowFunc, error) {
	return nil, pgerr.New(pgerr.UndefinedFunction, "function %s does not exist", name)
}

// NewSubPlan wraps a plan as an expr.SubPlan for scalar, EXISTS, IN/ANY/ALL
// and ARRAY subqueries. The plan's OuterRef expressions read ctx.Outer.
// STUB until the subquery runner lands.
func NewSubPlan(n Node) expr.SubPlan { return nil }

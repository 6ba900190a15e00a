package planner

import (
	"fmt"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/types"
)

// Two-phase aggregation (docs/contributing/parallel.md, "Two-phase
// aggregation"). A global aggregate (no GROUP BY) over an input that
// runs as several instances (a split source's readers, a parallel
// operator, and the stateless chain fused above them) is planned as
//
//	Project (the partials' merge back to each aggregate's type)
//	└─HashAgg final: sum of the partial counts and sums, min/max of the partial extremes (single)
//	  └─Parallel{Local}: HashAgg partial, once per instance of the input, no exchange
//
// when every aggregate merges exactly under retractions: count(*),
// count(x), sum(x) of an integer or numeric x, and min/max over an
// append-only input (each partial then keeps only its running extreme;
// over a retracting input a partial min/max would keep every value, as
// the single operator does, so it stays single). avg, float sums (their
// result depends on the order of the additions), DISTINCT aggregates and
// the other aggregates keep the aggregation single. Each partial emits
// its one row as an update pair when it changes; the final one sums the
// partial rows live at the end of an epoch, so its result equals the
// single operator's epoch by epoch.

// TwoPhaseOf returns the two-phase plan of the global aggregation h over
// an input of width w > 1, or nil when it is not eligible.
func TwoPhaseOf(h *stream.HashAgg, w int) stream.Node {
	if len(h.GroupBy) != 0 || h.Clean != nil || w <= 1 || len(h.Aggs) == 0 {
		return nil
	}
	for _, a := range h.Aggs {
		if !mergeable(a, h.AppendOnly) {
			return nil
		}
	}
	pcols := make([]types.Column, len(h.Aggs))
	final := make([]stream.AggSpec, len(h.Aggs))
	fcols := make([]types.Column, len(h.Aggs))
	for i, a := range h.Aggs {
		t, err := a.ResultType()
		if err != nil {
			return nil
		}
		pcols[i] = types.Column{Name: fmt.Sprintf("partial%d", i), Type: t}
		ref := &expr.ColRef{Idx: i, T: t, Name: pcols[i].Name}
		final[i] = stream.AggSpec{Kind: mergeKind(a), Arg: ref}
		ft, err := final[i].ResultType()
		if err != nil {
			return nil
		}
		fcols[i] = types.Column{Name: pcols[i].Name, Type: ft}
	}
	partial := &stream.HashAgg{Input: h.Input, Aggs: h.Aggs, Cols: pcols, AppendOnly: h.AppendOnly}
	par := &stream.Parallel{Input: partial, Keys: [][]int{nil}, N: w, Local: true}
	merged := &stream.HashAgg{Input: par, Aggs: final, Cols: fcols}
	exprs := make([]expr.Expr, len(h.Aggs))
	for i, a := range h.Aggs {
		e, ok := castBack(&expr.ColRef{Idx: i, T: fcols[i].Type, Name: fcols[i].Name}, h.Cols[i].Type)
		if !ok {
			return nil
		}
		if a.Kind == stream.AggCount || a.Kind == stream.AggCountStar {
			// no partial row yet: a count is 0, not NULL
			e = &expr.Coalesce{Args: []expr.Expr{e, &expr.Const{V: int64(0), T: types.TInt8}}, T: types.TInt8}
		}
		exprs[i] = e
	}
	return &stream.Project{Input: merged, Exprs: exprs, Cols: h.Cols}
}

// mergeable reports whether partials of a merge exactly into a's result
// under the input's changes (TwoPhaseOf).
func mergeable(a stream.AggSpec, appendOnly bool) bool {
	if a.Distinct {
		return false
	}
	switch a.Kind {
	case stream.AggCountStar, stream.AggCount:
		return true
	case stream.AggSum:
		if a.Arg == nil {
			return false
		}
		switch a.Arg.Type().Kind {
		case types.Int2, types.Int4, types.Int8, types.Numeric:
			return true
		}
	case stream.AggMin, stream.AggMax:
		return appendOnly
	}
	return false
}

package planner

import (
	"github.com/streamsql/streamsql/exec/stream"
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
// count(x), sum(x) and avg(x) of an integer or numeric x (avg as a sum
// and a count, stream_twophase_merge.go), and min/max over an
// append-only input (each partial then keeps only its running extreme;
// over a retracting input a partial min/max would keep every value, as
// the single operator does, so it stays single). Float sums and avgs
// (their result depends on the order of the additions), DISTINCT
// aggregates and the other aggregates keep the aggregation single. Each partial emits
// its one row as an update pair when it changes; the final one sums the
// partial rows live at the end of an epoch, so its result equals the
// single operator's epoch by epoch.

// TwoPhaseOf returns the two-phase plan of the global aggregation h over
// an input of width w > 1, or nil when it is not eligible.
func TwoPhaseOf(h *stream.HashAgg, w int) stream.Node {
	if len(h.GroupBy) != 0 || h.Clean != nil || w <= 1 || len(h.Aggs) == 0 {
		return nil
	}
	p, ok := planTwoPhaseAggs(h.Aggs, func(a stream.AggSpec) bool { return mergeable(a, h.AppendOnly) }, 0)
	if !ok {
		return nil
	}
	partial := &stream.HashAgg{Input: h.Input, Aggs: p.partial, Cols: p.pcols, AppendOnly: h.AppendOnly}
	par := &stream.Parallel{Input: partial, Keys: [][]int{nil}, N: w, Local: true}
	merged := &stream.HashAgg{Input: par, Aggs: p.final, Cols: p.fcols}
	exprs, ok := p.results(h.Aggs, h.Cols, 0)
	if !ok {
		return nil
	}
	return &stream.Project{Input: merged, Exprs: exprs, Cols: h.Cols}
}

package planner

import (
	"slices"
	"strings"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Split-distinct aggregation (docs/contributing/parallel.md,
// "Split-distinct aggregation"; Flink's distinct-agg split, RisingWave's
// two-phase aggregation with a bucketed distinct). An aggregation with
// count(DISTINCT x) calls is keyed by its GROUP BY, so a few hot groups
// (Nexmark q16's four channels, q15's one day) load a few instances, or
// one. Planned instead as
//
//	Project (the merged partials back to each aggregate's type)
//	└─HashAgg final: GROUP BY the keys, sum of the partial counts, min/max of the partial extremes
//	  └─Parallel by split_bucket: HashAgg partial GROUP BY the keys, split_tag, split_bucket
//	    └─SplitExpand: a row per DISTINCT argument, tagged, bucketed by the argument's vnode (fused)
//
// Tag t's rows feed only the aggregates of tag t (a FILTER split_tag = t
// added to each): the DISTINCT aggregates over the t-th distinct
// argument column, and, for tag 0, every non-DISTINCT aggregate. All rows
// of one distinct value share a bucket, so each partial counts a disjoint
// part of the distinct values and the sum of the partial counts is the
// count. Both phases are ordinary keyed HashAggs, exact under
// retractions (a partial emits update pairs, the final applies them), and
// both keep their state per vnode, so checkpoints restore and rescale as
// any aggregation's.
//
// Eligible: no EMIT ON WINDOW CLOSE cleaning, at least one DISTINCT
// aggregate, every DISTINCT aggregate a count(DISTINCT column), every
// other one mergeable: count, sum and avg of integers and numeric,
// min and max (the partial keeps every value under retractions, as the
// single operator does; the final keeps one per partial row).

// Values of streaming_split_distinct.
const (
	SplitDistinctAuto = "auto"
	SplitDistinctOn   = "on"
	SplitDistinctOff  = "off"
)

// CheckSplitDistinct normalizes a streaming_split_distinct value.
func CheckSplitDistinct(v string) (string, error) {
	switch s := strings.ToLower(strings.TrimSpace(v)); s {
	case SplitDistinctAuto, SplitDistinctOn, SplitDistinctOff:
		return s, nil
	case "true", "1", "yes":
		return SplitDistinctOn, nil
	case "false", "0", "no":
		return SplitDistinctOff, nil
	}
	return "", pgerr.New(pgerr.InvalidParameterValue, "invalid value for parameter \"streaming_split_distinct\": %q (on, off or auto)", v)
}

// useSplitDistinct reports whether mode plans the aggregation h, if
// eligible, split at parallelism n: on always; auto when n is at least
// SplitDistinctAutoMin and h has no GROUP BY key that is a plain column,
// so that it would otherwise run as one instance (a global
// count(DISTINCT), or Nexmark q15's GROUP BY of an expression). Measured
// (docs/benchmarks.md, issue 15): the split costs q15 1.6 times the CPU
// of the single aggregation, which at 2 instances is as fast, and from 4
// on faster (projected to 16 cores: 0.13 s against 0.81 s); an
// aggregation routed by a column stays keyed, since the split multiplies
// every group into partials per tag and bucket and costs q16 3.3 times
// the CPU (its projected 16-core wall is no better).
func useSplitDistinct(mode string, n int, h *stream.HashAgg) bool {
	if !useSplitAt(mode, n) {
		return false
	}
	if mode == SplitDistinctOn {
		return true
	}
	cols, _ := plainKeys(h.GroupBy) // auto
	return len(cols) == 0
}

// useSplitAt reports whether mode may split an aggregation at parallelism
// n (useSplitDistinct without the aggregation): on always, auto from
// SplitDistinctAutoMin, off (and "", planner.Env's zero value) never.
func useSplitAt(mode string, n int) bool {
	return mode == SplitDistinctOn || mode == SplitDistinctAuto && n >= SplitDistinctAutoMin
}

// SplitDistinctAutoMin is the parallelism from which auto splits.
const SplitDistinctAutoMin = 4

// splitMergeable reports whether a (a phase-one aggregate, its FILTER
// already tagged) merges exactly from the partials of a split plan.
func splitMergeable(a stream.AggSpec) bool {
	if a.Distinct {
		_, col := a.Arg.(*expr.ColRef)
		return a.Kind == stream.AggCount && col
	}
	return mergeable(a, true)
}

// SplitDistinctOf returns the split-distinct plan of h at parallelism n
// (the partial phase wrapped in a Parallel when n > 1; the final left to
// parallelize), or nil when h is not eligible.
func SplitDistinctOf(h *stream.HashAgg, n int) (out stream.Node, final *stream.HashAgg) {
	if h.Clean != nil || len(h.Aggs) == 0 {
		return nil, nil
	}
	in := h.Input.Columns()
	w := len(in)
	var args []int // per tag, the DISTINCT argument's column
	tagOf := make([]int, len(h.Aggs))
	for i, a := range h.Aggs {
		if !a.Distinct {
			continue
		}
		c, ok := a.Arg.(*expr.ColRef)
		if !ok || a.Kind != stream.AggCount || len(a.OrderBy) > 0 {
			return nil, nil
		}
		t := -1
		for k, col := range args {
			if col == c.Idx {
				t = k
			}
		}
		if t < 0 {
			t = len(args)
			args = append(args, c.Idx)
		}
		tagOf[i] = t
	}
	if len(args) == 0 {
		return nil, nil
	}
	tagRef := &expr.ColRef{Idx: w, T: types.TInt8, Name: stream.SplitTagCol}
	bucketRef := &expr.ColRef{Idx: w + 1, T: types.TInt8, Name: stream.SplitBucketCol}
	nulls := splitNulls(h, args, tagOf)
	tagged := make([]stream.AggSpec, len(h.Aggs))
	for i, a := range h.Aggs {
		if a.Distinct && nullElsewhere(nulls, tagOf[i], args[tagOf[i]]) {
			// the other tags' rows carry its argument as NULL, which
			// DISTINCT skips: no tag FILTER needed
			tagged[i] = a
			continue
		}
		eq, err := expr.NewBinary("=", tagRef, &expr.Const{V: int64(tagOf[i]), T: types.TInt8})
		if err != nil {
			return nil, nil
		}
		a.Filter = andFilter(eq, a.Filter)
		tagged[i] = a
	}
	k := len(h.GroupBy)
	p, ok := planTwoPhaseAggs(tagged, splitMergeable, k+2)
	if !ok {
		return nil, nil
	}
	expand := &stream.SplitExpand{Input: h.Input, Args: args, Nulls: nulls, Cols: stream.SplitExpandCols(in)}
	groupBy := append(append([]expr.Expr(nil), h.GroupBy...), tagRef, bucketRef)
	pcols := append(append([]types.Column(nil), h.Cols[:k]...),
		types.Column{Name: stream.SplitTagCol, Type: types.TInt8}, types.Column{Name: stream.SplitBucketCol, Type: types.TInt8})
	partial := &stream.HashAgg{Input: expand, GroupBy: groupBy, Aggs: p.partial, Cols: append(pcols, p.pcols...), AppendOnly: h.AppendOnly}
	var phase1 stream.Node = partial
	if n > 1 {
		// routed by the bucket alone: its label's vnode is the distinct
		// value's (stream.BucketLabel), so a hot group spreads evenly
		phase1 = &stream.Parallel{Input: partial, Keys: [][]int{{w + 1}}, KeyTypes: []types.T{types.TInt8}, N: n}
	}
	final = &stream.HashAgg{Input: phase1, Aggs: p.final, Cols: append(append([]types.Column(nil), h.Cols[:k]...), p.fcols...)}
	for i := range k {
		final.GroupBy = append(final.GroupBy, &expr.ColRef{Idx: i, T: h.Cols[i].Type, Name: h.Cols[i].Name})
	}
	exprs, ok := p.results(h.Aggs, h.Cols[k:], k)
	if !ok {
		return nil, nil
	}
	keys := make([]expr.Expr, k, k+len(exprs))
	for i := range k {
		keys[i] = &expr.ColRef{Idx: i, T: h.Cols[i].Type, Name: h.Cols[i].Name}
	}
	return &stream.Project{Input: final, Exprs: append(keys, exprs...), Cols: h.Cols}, final
}

// andFilter is a AND b (b may be nil: no FILTER).
func andFilter(a, b expr.Expr) expr.Expr {
	if b == nil {
		return a
	}
	return &expr.And{Args: []expr.Expr{a, b}}
}

// splitNulls are, per tag, the other tags' DISTINCT argument columns that
// neither a group key nor an aggregate of the tag reads: its rows carry
// them as NULL (stream.SplitExpand.Nulls).
func splitNulls(h *stream.HashAgg, args, tagOf []int) [][]int {
	w := len(h.Input.Columns())
	out := make([][]int, len(args))
	for t := range args {
		used := make([]bool, w)
		ok := true
		for _, g := range h.GroupBy {
			ok = ok && expr.ReadsColumns(g, used)
		}
		for i, a := range h.Aggs {
			if tagOf[i] != t {
				continue
			}
			ok = ok && expr.ReadsColumns(a.Arg, used) && expr.ReadsColumns(a.Filter, used) && expr.ReadsColumns(a.Sep, used)
			for _, k := range a.OrderBy {
				ok = ok && expr.ReadsColumns(k.E, used)
			}
		}
		if !ok {
			continue
		}
		for u, c := range args {
			if u != t && !used[c] && !slices.Contains(out[t], c) {
				out[t] = append(out[t], c)
			}
		}
	}
	return out
}

// nullElsewhere reports whether column c is NULL in the rows of every tag
// but t.
func nullElsewhere(nulls [][]int, t, c int) bool {
	for u, cs := range nulls {
		if u != t && !slices.Contains(cs, c) {
			return false
		}
	}
	return true
}

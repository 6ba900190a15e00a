package planner

import (
	"slices"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/types"
)

// No-shuffle exchanges (docs/contributing/parallel.md, "No-shuffle
// exchanges"). A parallel operator's instance k outputs only rows whose
// routing columns hash to the vnodes instance k owns (a group's key, a
// join key, a partition), and those columns pass into its output
// unchanged. A keyed operator of one input above it (through fused
// filters and projections) that may route by those same columns, in the
// same order, would send every row of instance k to its own instance k:
// the exchange would hash every row and move none. noShuffle routes such
// an operator by those columns (any subset of a group's plain keys or of
// a partition's columns routes correctly) and marks it NoShuffle, so the
// runtime connects instance k to instance k. Nexmark q4's max per
// (auction id, category) above the join on the auction id, and q9's
// top-1 per auction above the same join, no longer shuffle their input.

// noShuffle makes p (just built by parallelOf over a keyed operator)
// consume its input without an exchange when the input is already
// partitioned by columns p may route by.
func noShuffle(p *stream.Parallel) {
	if p == nil || p.Local || len(p.Keys) != 1 || len(p.Input.Inputs()) != 1 {
		return
	}
	in := p.Input.Inputs()[0]
	cols := in.Columns()
	for _, part := range partitionedBy(in, p.N) {
		ok := len(part) > 0
		for _, c := range part {
			ok = ok && slices.Contains(p.Keys[0], c)
		}
		if !ok {
			continue
		}
		ts := make([]types.T, len(part))
		for i, c := range part {
			ts[i] = cols[c].Type
		}
		p.Keys, p.KeyTypes, p.NoShuffle = [][]int{part}, ts, true
		return
	}
}

// partitionedBy lists the column lists of nd's output by which its rows
// are partitioned over n instances: instance k of nd's fragment outputs
// only rows whose vnode over the list (in that order) instance k owns.
// Several lists when several columns carry the routed values (an inner
// join's key on both sides); none when nd's rows are not partitioned by
// key (a single operator, a split source, the partial phase of a
// two-phase aggregation).
func partitionedBy(nd stream.Node, n int) [][]int {
	switch x := nd.(type) {
	case *stream.Parallel:
		if x.Local || max(x.N, 1) != n || n <= 1 || len(x.Keys) == 0 {
			return nil
		}
		return parallelOutputKeys(x)
	case *stream.Filter:
		return partitionedBy(x.Input, n)
	case *stream.Project:
		var out [][]int
		for _, part := range partitionedBy(x.Input, n) {
			if m := mapThroughProject(x.Exprs, part); m != nil {
				out = append(out, m)
			}
		}
		return out
	}
	return nil
}

// parallelOutputKeys are the output columns of p's operator that hold the
// values p routes by.
func parallelOutputKeys(p *stream.Parallel) [][]int {
	switch op := p.Input.(type) {
	case *stream.HashAgg:
		// its output is the GROUP BY values, then the aggregates
		out := make([]int, len(p.Keys[0]))
		for i, c := range p.Keys[0] {
			g := slices.IndexFunc(op.GroupBy, func(e expr.Expr) bool {
				r, ok := e.(*expr.ColRef)
				return ok && r.Idx == c
			})
			if g < 0 {
				return nil
			}
			out[i] = g
		}
		return [][]int{out}
	case *stream.TopN, *stream.OverWindow:
		// the input's columns in place (then a rank, or the calls')
		return [][]int{slices.Clone(p.Keys[0])}
	case *stream.HashJoin:
		if len(p.Keys) != 2 {
			return nil
		}
		nl := len(op.Left.Columns())
		right := make([]int, len(p.Keys[1]))
		for i, c := range p.Keys[1] {
			right[i] = nl + c
		}
		// a row's columns of a side hold that side's key when the row
		// joined, or when the side is preserved (a NULL-padded row keeps
		// its own side's key); semi and anti joins output the left side
		switch op.Kind {
		case exec.InnerJoin:
			return [][]int{slices.Clone(p.Keys[0]), right}
		case exec.LeftJoin, exec.SemiJoin, exec.AntiJoin:
			return [][]int{slices.Clone(p.Keys[0])}
		case exec.RightJoin:
			return [][]int{right}
		}
	}
	return nil
}

// mapThroughProject maps input columns cols to the first output columns
// of a projection that are plain references to them (nil when one is not
// projected as is).
func mapThroughProject(es []expr.Expr, cols []int) []int {
	out := make([]int, len(cols))
	for i, c := range cols {
		j := slices.IndexFunc(es, func(e expr.Expr) bool {
			r, ok := e.(*expr.ColRef)
			return ok && r.Idx == c
		})
		if j < 0 {
			return nil
		}
		out[i] = j
	}
	return out
}

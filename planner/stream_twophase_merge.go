package planner

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// The aggregates of a two-phase plan (stream_twophase.go,
// stream_twophase_window.go): what each partial computes, how the final
// merges it and how the merged values become the aggregate's result.
// avg(x) of an integer or numeric x runs as two partials, sum(x) and
// count(x); the final sums both and divides as the single aggregate does
// at its end (exec.AvgNumericText), so the result is the same digits.

// twoPhaseAggs are the partial and final aggregates of aggs.
type twoPhaseAggs struct {
	partial []stream.AggSpec
	pcols   []types.Column // the partials' output, after off leading columns
	final   []stream.AggSpec
	fcols   []types.Column
	at      [][]int // per aggregate, its merged values' columns in fcols
}

// planTwoPhaseAggs splits aggs into partial and final aggregates whose
// arguments start at column off of the partials' output; ok is false
// when an aggregate does not merge exactly (merges: mergeable, or the
// split-distinct plan's splitMergeable).
func planTwoPhaseAggs(aggs []stream.AggSpec, merges func(stream.AggSpec) bool, off int) (twoPhaseAggs, bool) {
	var p twoPhaseAggs
	seen := map[string]int{} // a partial computed once (avg(x)'s sum and a sum(x))
	var cur []int
	add := func(a stream.AggSpec) bool {
		key := "" // the same kind over the same input column, with the same FILTER
		if c, ok := a.Arg.(*expr.ColRef); ok && !a.Distinct {
			key = fmt.Sprintf("%d/%d", a.Kind, c.Idx)
			if a.Filter != nil {
				key += " FILTER " + a.Filter.String()
			}
		}
		if i, ok := seen[key]; ok && key != "" {
			cur = append(cur, i)
			return true
		}
		t, err := a.ResultType()
		if err != nil {
			return false
		}
		if key != "" {
			seen[key] = len(p.partial)
		}
		cur = append(cur, len(p.partial))
		name := fmt.Sprintf("partial%d", len(p.partial))
		p.partial = append(p.partial, a)
		p.pcols = append(p.pcols, types.Column{Name: name, Type: t})
		f := stream.AggSpec{Kind: mergeKind(a), Arg: &expr.ColRef{Idx: off + len(p.final), T: t, Name: name}}
		ft, err := f.ResultType()
		if err != nil {
			return false
		}
		p.final = append(p.final, f)
		p.fcols = append(p.fcols, types.Column{Name: name, Type: ft})
		return true
	}
	for _, a := range aggs {
		if !merges(a) {
			return p, false
		}
		cur = nil
		if a.Kind == stream.AggAvg {
			// both with the call's FILTER
			if !add(stream.AggSpec{Kind: stream.AggSum, Arg: a.Arg, Filter: a.Filter}) || !add(stream.AggSpec{Kind: stream.AggCount, Arg: a.Arg, Filter: a.Filter}) {
				return p, false
			}
		} else if !add(a) {
			return p, false
		}
		p.at = append(p.at, cur)
	}
	return p, true
}

// results are the expressions over the final's output (the merged
// values from column off on) that give each of aggs's result, of the
// types of want.
func (p twoPhaseAggs) results(aggs []stream.AggSpec, want []types.Column, off int) ([]expr.Expr, bool) {
	var out []expr.Expr
	for i, a := range aggs {
		k := 0
		col := func() *expr.ColRef {
			j := p.at[i][k]
			k++
			return &expr.ColRef{Idx: off + j, T: p.fcols[j].Type, Name: p.fcols[j].Name}
		}
		var e expr.Expr
		switch a.Kind {
		case stream.AggAvg:
			sum := col()
			n, ok := castBack(col(), types.TInt8)
			if !ok {
				return nil, false
			}
			e = &avgMerge{Sum: sum, N: n}
		case stream.AggCount, stream.AggCountStar:
			c, ok := castBack(col(), want[i].Type)
			if !ok {
				return nil, false
			}
			// no partial row yet: a count is 0, not NULL
			e = &expr.Coalesce{Args: []expr.Expr{c, &expr.Const{V: int64(0), T: types.TInt8}}, T: types.TInt8}
		default:
			c, ok := castBack(col(), want[i].Type)
			if !ok {
				return nil, false
			}
			e = c
		}
		if e.Type().Kind != want[i].Type.Kind {
			return nil, false
		}
		out = append(out, e)
	}
	return out, true
}

// mergeable reports whether partials of a merge exactly into a's result
// under the input's changes.
func mergeable(a stream.AggSpec, appendOnly bool) bool {
	if a.Distinct {
		return false
	}
	switch a.Kind {
	case stream.AggCountStar, stream.AggCount:
		return true
	case stream.AggSum, stream.AggAvg:
		// not floats: their sum depends on the order of the additions
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

// mergeKind is the aggregate that merges a's partial results: the sum of
// partial counts and sums, the min/max of partial extremes.
func mergeKind(a stream.AggSpec) stream.AggKind {
	if a.Kind == stream.AggMin || a.Kind == stream.AggMax {
		return a.Kind
	}
	return stream.AggSum
}

// castBack casts e (a merged partial) to want, the aggregate's own type.
func castBack(e expr.Expr, want types.T) (expr.Expr, bool) {
	if e.Type().Kind == want.Kind {
		return e, true
	}
	c, err := expr.NewCast(e, want, true)
	if err != nil {
		return nil, false
	}
	return c, true
}

// avgMerge is avg(x) of an integer or numeric x from the merged sum(x)
// (numeric) and count(x) (bigint): NULL when the count is 0, else the sum
// divided by the count as the avg aggregate divides at its end.
type avgMerge struct {
	Sum, N expr.Expr
}

// Type implements expr.Expr.
func (a *avgMerge) Type() types.T { return types.TNumeric }

// String implements expr.Expr.
func (a *avgMerge) String() string {
	return fmt.Sprintf("avg_of(%s, %s)", a.Sum, a.N)
}

// Eval implements expr.Expr.
func (a *avgMerge) Eval(ctx *expr.Context, b arrow.RecordBatch) (arrow.Array, error) {
	sa, err := a.Sum.Eval(ctx, b)
	if err != nil {
		return nil, err
	}
	defer sa.Release()
	na, err := a.N.Eval(ctx, b)
	if err != nil {
		return nil, err
	}
	defer na.Release()
	sums, ok1 := sa.(*array.String)
	ns, ok2 := na.(*array.Int64)
	if !ok1 || !ok2 {
		return nil, pgerr.Internal("avg of partials over %s and %s", sa.DataType(), na.DataType())
	}
	bld := array.NewStringBuilder(ctx.Allocator())
	defer bld.Release()
	var d apd.Decimal
	for i := range sums.Len() {
		if sums.IsNull(i) || ns.IsNull(i) || ns.Value(i) == 0 {
			bld.AppendNull()
			continue
		}
		if _, _, err := d.SetString(sums.Value(i)); err != nil {
			return nil, pgerr.Internal("avg of partials: sum %q: %v", sums.Value(i), err)
		}
		txt, err := exec.AvgNumericText(&d, ns.Value(i))
		if err != nil {
			return nil, fmt.Errorf("avg of partials: %w", err)
		}
		bld.Append(txt)
	}
	return bld.NewArray(), nil
}

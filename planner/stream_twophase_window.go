package planner

import (
	"fmt"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/types"
)

// Two-phase window aggregation (docs/contributing/parallel.md, "Two-phase
// window aggregation"). A TUMBLE aggregation whose only key is the window
// (Nexmark q7's SELECT max(price) ... GROUP BY window_end) has one group
// per window, so it cannot be spread by key. Over an input that runs as
// several instances it is planned as
//
//	Project (window_start, window_end, each merged aggregate cast back to its type)
//	└─WindowAgg final: TUMBLE over the partials' window_start, closed by their window_end watermark (single)
//	  └─Parallel{Local}: WindowAgg partial, the same windows, once per instance of the input, no exchange
//
// under the aggregates TwoPhaseOf accepts (mergeable), the emit modes
// ON UPDATE and plain ON WINDOW CLOSE (WITH DELAY allowed: the partials
// apply it), and TUMBLE. Each partial keeps, per open window of its
// instance's rows, the aggregates' states and emits its window rows as
// the single operator would (under ON WINDOW CLOSE once, when its
// watermark passes the window's end; under ON UPDATE as update pairs at
// each barrier); then it forwards its watermark on window_end. The final
// (stream.WindowAgg.EndWatermark) sums the partial counts and sums, takes
// the min/max of the partial extremes per window and closes a window
// when the minimum of the partials' window_end watermarks passes its
// end: that minimum is the single operator's input watermark less its
// delay, so it closes, emits and frees the same windows in the same
// epoch.
//
// Not planned so (single, as before): HOP, CUMULATE and SESSION (a
// partial's pane is not a window), EMIT EVERY, EARLY EVERY, ALLOW
// LATENESS and LATE ROWS INTO (a partial's late rows are judged by its
// own instance's watermark), GROUP BY keys besides the window (those
// spread by key, stream_parallel.go), and the aggregates mergeable
// refuses (avg, float sums, DISTINCT, ...).

// TwoPhaseWindowOf returns the two-phase plan of the window aggregation w
// over an input of width n > 1, or nil when it is not eligible.
func TwoPhaseWindowOf(w *stream.WindowAgg, n int) stream.Node {
	e := w.Emit
	if n <= 1 || len(w.GroupBy) != 0 || len(w.Aggs) == 0 || w.EndWatermark || w.Window.Kind != stream.Tumble ||
		(e.Mode != stream.EmitOnUpdate && e.Mode != stream.EmitOnWindowClose) ||
		e.EarlyEvery != 0 || e.AllowLateness != 0 || e.LateRows || e.Every != 0 {
		return nil
	}
	for _, a := range w.Aggs {
		if !mergeable(a, w.AppendOnly) {
			return nil
		}
	}
	wcols := w.Cols[:2] // window_start, window_end
	pcols := append([]types.Column(nil), wcols...)
	fcols := append([]types.Column(nil), wcols...)
	final := make([]stream.AggSpec, len(w.Aggs))
	for i, a := range w.Aggs {
		t, err := a.ResultType()
		if err != nil {
			return nil
		}
		name := fmt.Sprintf("partial%d", i)
		pcols = append(pcols, types.Column{Name: name, Type: t})
		final[i] = stream.AggSpec{Kind: mergeKind(a), Arg: &expr.ColRef{Idx: 2 + i, T: t, Name: name}}
		ft, err := final[i].ResultType()
		if err != nil {
			return nil
		}
		fcols = append(fcols, types.Column{Name: name, Type: ft})
	}
	partial := &stream.WindowAgg{Input: w.Input, Window: w.Window, Aggs: w.Aggs, Emit: e, Cols: pcols, AppendOnly: w.AppendOnly}
	par := &stream.Parallel{Input: partial, Keys: [][]int{nil}, N: n, Local: true}
	spec := stream.WindowSpec{Kind: stream.Tumble, TimeCol: 0, Size: w.Window.Size, Offset: w.Window.Offset}
	merged := &stream.WindowAgg{Input: par, Window: spec, Aggs: final, Emit: stream.EmitSpec{Mode: e.Mode},
		Cols: fcols, EndWatermark: true,
		// plain ON WINDOW CLOSE partials send each window's row once
		AppendOnly: e.Mode == stream.EmitOnWindowClose}
	exprs := []expr.Expr{
		&expr.ColRef{Idx: 0, T: wcols[0].Type, Name: wcols[0].Name},
		&expr.ColRef{Idx: 1, T: wcols[1].Type, Name: wcols[1].Name},
	}
	for i := range w.Aggs {
		c, ok := castBack(&expr.ColRef{Idx: 2 + i, T: fcols[2+i].Type, Name: fcols[2+i].Name}, w.Cols[2+i].Type)
		if !ok {
			return nil
		}
		exprs = append(exprs, c)
	}
	return &stream.Project{Input: merged, Exprs: exprs, Cols: w.Cols}
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

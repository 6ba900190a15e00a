package planner

import (
	"slices"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
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
// spread by key, stream_parallel.go), the aggregates mergeable refuses
// (float sums and avgs, DISTINCT, ...), and inputs read by split readers
// whose rows may come behind their own reader's watermark (Kafka
// partitions, datagen: splitsInOrder). A partial judges lateness by its
// own instance's watermark, which such a reader runs ahead of the
// minimum over the readers: it would drop a row that the single
// operator, at the minimum, counts.

// TwoPhaseWindowOf returns the two-phase plan of the window aggregation w
// over an input of width n > 1, or nil when it is not eligible.
func TwoPhaseWindowOf(w *stream.WindowAgg, n int) stream.Node {
	e := w.Emit
	if n <= 1 || len(w.GroupBy) != 0 || len(w.Aggs) == 0 || w.EndWatermark || w.Window.Kind != stream.Tumble ||
		(e.Mode != stream.EmitOnUpdate && e.Mode != stream.EmitOnWindowClose) ||
		e.EarlyEvery != 0 || e.AllowLateness != 0 || e.LateRows || e.Every != 0 || !splitsInOrder(w.Input) {
		return nil
	}
	p, ok := planTwoPhaseAggs(w.Aggs, func(a stream.AggSpec) bool { return mergeable(a, w.AppendOnly) }, 2)
	if !ok {
		return nil
	}
	wcols := w.Cols[:2] // window_start, window_end
	pcols := append(slices.Clone(wcols), p.pcols...)
	fcols := append(slices.Clone(wcols), p.fcols...)
	partial := &stream.WindowAgg{Input: w.Input, Window: w.Window, Aggs: p.partial, Emit: e, Cols: pcols, AppendOnly: w.AppendOnly}
	par := &stream.Parallel{Input: partial, Keys: [][]int{nil}, N: n, Local: true}
	spec := stream.WindowSpec{Kind: stream.Tumble, TimeCol: 0, Size: w.Window.Size, Offset: w.Window.Offset}
	merged := &stream.WindowAgg{Input: par, Window: spec, Aggs: p.final, Emit: stream.EmitSpec{Mode: e.Mode},
		Cols: fcols, EndWatermark: true,
		// plain ON WINDOW CLOSE partials send each window's row once
		AppendOnly: e.Mode == stream.EmitOnWindowClose}
	aggs, ok := p.results(w.Aggs, w.Cols[2:], 2)
	if !ok {
		return nil
	}
	exprs := append([]expr.Expr{
		&expr.ColRef{Idx: 0, T: wcols[0].Type, Name: wcols[0].Name},
		&expr.ColRef{Idx: 1, T: wcols[1].Type, Name: wcols[1].Name},
	}, aggs...)
	return &stream.Project{Input: merged, Exprs: exprs, Cols: w.Cols}
}

// splitsInOrder reports whether every split source scan under n has
// readers that each deliver rows in event-time order
// (stream.Scan.SplitsInOrder).
func splitsInOrder(n stream.Node) bool {
	if sc, ok := n.(*stream.Scan); ok && sc.Splittable && !sc.SplitsInOrder {
		return false
	}
	for _, in := range n.Inputs() {
		if !splitsInOrder(in) {
			return false
		}
	}
	return true
}

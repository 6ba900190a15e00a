package planner

import (
	"slices"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/types"
)

// EMIT ON WINDOW CLOSE on a query without a windowed aggregation: the
// query's output is put under a stream.EOWC on the first output column
// that carries the input's watermark (a scanned WATERMARK FOR column passed
// on by filters and plain projections), which emits each row once, when
// the watermark passes its time (+ WITH DELAY). The output is then append
// only and has no stream key (a row updated after it went out comes out
// again). Without such a column checkEmit refuses the query.

// plainEOWC wraps root in an EOWC when the query asks for EMIT ON WINDOW
// CLOSE and has no windowed aggregation; ok is false when no output column
// carries a watermark.
func (s *streamPlanner) plainEOWC(root sout) (sout, bool) {
	col := -1
	cols := root.node.Columns()
	for _, c := range s.watermarkCols(root.node) {
		if k := cols[c].Type.Kind; (k == types.Timestamp || k == types.TimestampTZ) && (col < 0 || c < col) {
			col = c
		}
	}
	if col < 0 {
		return root, false
	}
	root.node = &stream.EOWC{Input: root.node, TimeCol: col, Delay: s.emit.Delay}
	root.key, root.appendOnly = nil, true
	s.eowcPlain = true
	return root, true
}

// ViewWatermarks is implemented by Streams that know which output columns
// of a materialized view carry watermarks (the engine: WatermarkCols of the
// view's plan); without it a view's columns carry none for planning.
type ViewWatermarks interface {
	ViewWatermarkCols(oid uint32) []int
}

// WatermarkCols lists the output columns of a planned continuous query
// that carry watermarks: a scanned WATERMARK FOR column passed on by
// filters and plain projections, window_start/window_end of windows
// closed with EMIT ON WINDOW CLOSE, an EOWC's time column, the time
// columns of an interval join, the key columns of an inner join whose
// inputs both carry them, those of a lookup join's stream side, and the
// columns of a scanned view that carry its watermarks (st, if it
// implements ViewWatermarks).
func WatermarkCols(n stream.Node, st Streams) []int {
	return (&streamPlanner{b: &binder{env: &Env{Streams: st}}}).watermarkCols(n)
}

// watermarkCols lists the output columns of n that may carry a watermark
// (see WatermarkCols).
func (s *streamPlanner) watermarkCols(n stream.Node) []int {
	switch n := n.(type) {
	case *stream.Scan:
		if n.Watermark != nil {
			return []int{n.Watermark.Col}
		}
		if n.Kind == stream.ScanView && s.b != nil && s.b.env != nil {
			if vw, ok := s.b.env.Streams.(ViewWatermarks); ok {
				return vw.ViewWatermarkCols(n.Rel)
			}
		}
	case *stream.HashJoin:
		if n.Interval != nil {
			return n.IntervalMarkCols()
		}
		if n.Kind != exec.InnerJoin {
			return nil
		}
		// Inner joins forward the watermark of key pairs of plain columns
		// (the minimum of both sides') on both columns.
		lw, rw := s.watermarkCols(n.Left), s.watermarkCols(n.Right)
		var out []int
		for i := range n.LeftKeys {
			lc, ok1 := n.LeftKeys[i].(*expr.ColRef)
			rc, ok2 := n.RightKeys[i].(*expr.ColRef)
			if ok1 && ok2 && slices.Contains(lw, lc.Idx) && slices.Contains(rw, rc.Idx) {
				out = append(out, lc.Idx, len(n.Left.Columns())+rc.Idx)
			}
		}
		return out
	case *stream.TemporalJoin:
		// The stream side's watermarks pass through, its columns first.
		return s.watermarkCols(n.Stream)
	case *stream.Union:
		// The minimum of the inputs' watermarks, per column: a column
		// carries one when every input's does.
		var out []int
		for i, in := range n.Ins {
			w := s.watermarkCols(in)
			if i == 0 {
				out = slices.Clone(w)
				continue
			}
			out = slices.DeleteFunc(out, func(c int) bool { return !slices.Contains(w, c) })
		}
		return out
	case *stream.Filter:
		return s.watermarkCols(n.Input)
	case *stream.ProjectSet:
		// the input's columns come first and pass on as they are
		return s.watermarkCols(n.Input)
	case *stream.Parallel:
		return s.watermarkCols(n.Input)
	case *stream.EOWC:
		return []int{n.TimeCol}
	case *stream.HashAgg:
		// Closed groups go out once; none is older than the watermark.
		if n.Clean != nil {
			return []int{n.Clean.Key}
		}
	case *stream.WindowAgg:
		// Final rows of closed windows: no later row has an earlier
		// window_start or window_end than the forwarded watermark.
		if n.Emit.Mode == stream.EmitOnWindowClose && n.Window.Kind != stream.Session {
			return []int{0, 1}
		}
	case *stream.Project:
		in := s.watermarkCols(n.Input)
		var out []int
		for i, e := range n.Exprs {
			// a column, or an expression growing with one
			// (date_trunc('minute', ts)), carries its watermark
			if c, ok := stream.MarkSource(e); ok && slices.Contains(in, c) || stream.IsProcTime(e) {
				out = append(out, i)
			}
		}
		return out
	}
	return nil
}

// windowJoinClean frees a window join's state with the watermark: an inner
// join of two append-only inputs on a key pair whose columns both carry a
// watermark (window_start or window_end of windows closed with EMIT ON
// WINDOW CLOSE, a scan's WATERMARK FOR column) can drop the groups below
// the pair's combined watermark, since neither side will send a row there
// again. Without it a window join keeps every window forever.
func (s *streamPlanner) windowJoinClean(j *stream.HashJoin, l, r sout) *stream.JoinClean {
	if j.Kind != exec.InnerJoin || !l.appendOnly || !r.appendOnly {
		return nil
	}
	lw, rw := s.watermarkCols(l.node), s.watermarkCols(r.node)
	for i := range j.LeftKeys {
		lc, ok1 := j.LeftKeys[i].(*expr.ColRef)
		rc, ok2 := j.RightKeys[i].(*expr.ColRef)
		if ok1 && ok2 && slices.Contains(lw, lc.Idx) && slices.Contains(rw, rc.Idx) {
			return &stream.JoinClean{Key: i}
		}
	}
	return nil
}

// aggClean closes an ordinary aggregation's groups like windows: under EMIT
// ON WINDOW CLOSE (without EARLY EVERY or ALLOW LATENESS, whose
// corrections would retract a closed group), a GROUP BY key that is a
// timestamp column carrying a watermark (window_start or window_end of
// closed windows, a scan's WATERMARK FOR column, the key of another such
// aggregation) closes its groups: each goes out once when the watermark
// passes it and is freed, later rows for it are late, and the output is
// append only with the watermark on that key (Nexmark q5's max per window
// start, which a window join then frees by). The query's WITH DELAY
// applies to a scan's watermark only (windows and closed aggregations
// below already waited for it): on the projection that rounds the time
// into the key (delayMark), else on the key itself. Nil when no key
// qualifies.
func (s *streamPlanner) aggClean(h *stream.HashAgg) *stream.AggClean {
	e := s.emit
	if e.Mode != stream.EmitOnWindowClose || e.EarlyEvery != 0 || e.AllowLateness != 0 {
		return nil
	}
	marks := s.watermarkCols(h.Input)
	for i, g := range h.GroupBy {
		m, ok := stream.MarkSource(g)
		if k := g.Type().Kind; !ok || !slices.Contains(marks, m) || k != types.Timestamp && k != types.TimestampTZ {
			continue
		}
		c, isRef := g.(*expr.ColRef)
		if !isRef {
			// a key growing with a watermarked column (GROUP BY
			// date_trunc('minute', ts)) is computed as a column below,
			// which carries the watermark through it
			cols := h.Input.Columns()
			p := &stream.Project{Input: h.Input, Cols: append(append([]types.Column(nil), cols...), types.Column{Name: g.String(), Type: g.Type()})}
			for j, col := range cols {
				p.Exprs = append(p.Exprs, &expr.ColRef{Idx: j, T: col.Type, Name: col.Name})
			}
			p.Exprs = append(p.Exprs, g)
			c = &expr.ColRef{Idx: len(cols), T: g.Type(), Name: g.String()}
			h.Input, h.GroupBy[i] = p, c
		}
		cl := &stream.AggClean{Key: i}
		if slack, ok := s.slackOf(h.Input, c.Idx, true); ok {
			cl.Slack = slack
		}
		if scanMark(h.Input, c.Idx) && !delayMark(h.Input, c.Idx, e.Delay) {
			cl.Delay = e.Delay
		}
		return cl
	}
	return nil
}

// delayMark holds back by d the watermark of column col of n where a
// projection computes it from a time that grows in steps (date_trunc,
// date_bin; Project.MarkDelays): a group or partition keyed by the
// rounded time must close once the time's watermark passes the end of
// its step plus d, which the rounded watermark itself, plus d, does not
// say (date_trunc('minute', W) + 10s passes a minute as soon as W reaches
// its end). It reports whether it found such a projection; when it did
// not (a plain column of the scan), the delay goes on the closing
// operator. Only a scan's watermark (scanMark) is delayed.
func delayMark(n stream.Node, col int, d int64) bool {
	if d <= 0 {
		return false
	}
	switch n := n.(type) {
	case *stream.Filter:
		return delayMark(n.Input, col, d)
	case *stream.ProjectSet:
		return col < len(n.Input.Columns()) && delayMark(n.Input, col, d)
	case *stream.Project:
		if c, isRef := n.Exprs[col].(*expr.ColRef); isRef {
			return delayMark(n.Input, c.Idx, d)
		}
		if _, grows := stream.MonotoneInput(n.Exprs[col]); !grows {
			return false // PROCTIME(): its watermark is the clock's, not computed here
		}
		if n.MarkDelays == nil {
			n.MarkDelays = make([]int64, len(n.Exprs))
		}
		n.MarkDelays[col] = d
		return true
	}
	return false
}

// scanMark reports whether column col of n carries a scan's watermark
// (through filters, plain column references and expressions growing with
// a column) rather than one of an operator that closes windows.
func scanMark(n stream.Node, col int) bool {
	switch n := n.(type) {
	case *stream.Scan:
		return n.Watermark != nil && n.Watermark.Col == col
	case *stream.Filter:
		return scanMark(n.Input, col)
	case *stream.ProjectSet:
		return col < len(n.Input.Columns()) && scanMark(n.Input, col)
	case *stream.Project:
		c, ok := stream.MarkSource(n.Exprs[col])
		return ok && scanMark(n.Input, c)
	}
	return false
}

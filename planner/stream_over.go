package planner

import (
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/types"
)

// Window functions in continuous queries: a row_number() top-N per time
// window (closing partitions with the watermark) and the general OverWindow.

// markSlack reports whether column col of n carries a watermark W such
// that no later row has a value below W + slack + 1 (slack 0: the plain
// watermark promise, "not below W"; -1: "above W", WindowAgg's window
// columns). It follows plain column references through projections and
// filters down to the operator that makes the watermark.
func (s *streamPlanner) markSlack(n stream.Node, col int) (slack int64, ok bool) {
	return s.slackOf(n, col, false)
}

// slackOf is markSlack; with views set it also follows a column of a
// materialized view that n reads into that view's plan (ViewMarkSlacks).
func (s *streamPlanner) slackOf(n stream.Node, col int, views bool) (slack int64, ok bool) {
	switch n := n.(type) {
	case *stream.Scan:
		if n.Watermark != nil {
			return 0, n.Watermark.Col == col
		}
		if views && n.Kind == stream.ScanView && s.b != nil && s.b.env != nil {
			if vs, isVS := s.b.env.Streams.(ViewMarkSlacks); isVS {
				return vs.ViewMarkSlack(n.Rel, col)
			}
		}
		return 0, false
	case *stream.Filter:
		return s.slackOf(n.Input, col, views)
	case *stream.Union:
		// The minimum of the inputs' watermarks keeps the weakest promise.
		for i, in := range n.Ins {
			sl, ok := s.slackOf(in, col, views)
			if !ok {
				return 0, false
			}
			if i == 0 || sl > slack {
				slack = sl
			}
		}
		return slack, len(n.Ins) > 0
	case *stream.Parallel:
		return s.slackOf(n.Input, col, views)
	case *stream.ProjectSet:
		if col < len(n.Input.Columns()) {
			return s.slackOf(n.Input, col, views)
		}
	case *stream.Project:
		if col < 0 || col >= len(n.Exprs) {
			return 0, false
		}
		if stream.IsProcTime(n.Exprs[col]) {
			return 0, true
		}
		if c, isRef := n.Exprs[col].(*expr.ColRef); isRef {
			return s.slackOf(n.Input, c.Idx, views)
		}
	case *stream.WindowExpand:
		if k := len(n.Cols); col == k-2 || col == k-1 {
			_, ok := s.slackOf(n.Input, n.TimeCol, views)
			return 0, ok
		}
		return s.slackOf(n.Input, col, views)
	case *stream.WindowAgg:
		// Later rows are of windows not yet freed: they end after the
		// forwarded watermark (windowagg.go, outWatermarks).
		if (col == 0 || col == 1) && n.Window.Kind != stream.Session && n.Emit.Mode != stream.EmitEvery {
			return -1, true
		}
	case *stream.EOWC:
		return 0, col == n.TimeCol
	}
	return 0, false
}

// MarkSlack is markSlack for column col of a view's plan n, following the
// views it reads (the engine answers ViewMarkSlacks with it; st answers
// for those views).
func MarkSlack(n stream.Node, col int, st Streams) (int64, bool) {
	return (&streamPlanner{b: &binder{env: &Env{Streams: st}}}).slackOf(n, col, true)
}

// ViewMarkSlacks is implemented by Streams that can say how strictly a
// materialized view's output column keeps its watermark promise (see
// markSlack): a view over a view then closes a window start that the
// upstream view's windows closed in the same watermark, not one later.
type ViewMarkSlacks interface {
	ViewMarkSlack(oid uint32, col int) (slack int64, ok bool)
}

// windowExpandOf returns the WindowExpand whose window_start or
// window_end column col of n is (through projections and filters), or nil.
func windowExpandOf(n stream.Node, col int) *stream.WindowExpand {
	switch n := n.(type) {
	case *stream.Filter:
		return windowExpandOf(n.Input, col)
	case *stream.ProjectSet:
		if col < len(n.Input.Columns()) {
			return windowExpandOf(n.Input, col)
		}
	case *stream.Project:
		if col >= 0 && col < len(n.Exprs) {
			if c, ok := n.Exprs[col].(*expr.ColRef); ok {
				return windowExpandOf(n.Input, c.Idx)
			}
		}
	case *stream.WindowExpand:
		if k := len(n.Cols); col == k-2 || col == k-1 {
			return n
		}
	}
	return nil
}

// windowCol reports whether column col of n is window_start or
// window_end of a window function or a windowed aggregation (through
// projections and filters).
func windowCol(n stream.Node, col int) bool {
	switch n := n.(type) {
	case *stream.Filter:
		return windowCol(n.Input, col)
	case *stream.ProjectSet:
		return col < len(n.Input.Columns()) && windowCol(n.Input, col)
	case *stream.Project:
		if col >= 0 && col < len(n.Exprs) {
			if c, ok := n.Exprs[col].(*expr.ColRef); ok {
				return windowCol(n.Input, c.Idx)
			}
		}
	case *stream.WindowExpand:
		k := len(n.Cols)
		return col == k-2 || col == k-1 || windowCol(n.Input, col)
	case *stream.WindowAgg:
		return col == 0 || col == 1
	}
	return false
}

// topNClose makes t a top-N per time window when one of its partition
// expressions is a time column that carries a watermark (window_start or
// window_end of a window function or a windowed aggregation, a WATERMARK
// FOR column): its partitions are then freed once complete, and under
// EMIT ON WINDOW CLOSE emitted once, at that moment. It reports whether t
// emits on window close.
func (s *streamPlanner) topNClose(t *stream.TopN) bool {
	for k, p := range t.PartitionBy {
		c, ok := p.(*expr.ColRef)
		if !ok || (c.T.Kind != types.Timestamp && c.T.Kind != types.TimestampTZ) {
			continue
		}
		slack, ok := s.markSlack(t.Input, c.Idx)
		if !ok || (s.emit.Mode != stream.EmitOnWindowClose && !windowCol(t.Input, c.Idx)) {
			// Under ON UPDATE only windows drop late rows (streaming-sql.md
			// section 2): a plain WATERMARK FOR column keeps its state.
			continue
		}
		t.Close = &stream.TopNClose{Part: k, Col: c.Idx, Slack: slack}
		if s.emit.Mode == stream.EmitOnWindowClose {
			t.Close.EOWC = true
			switch we := windowExpandOf(t.Input, c.Idx); {
			case slack != 0: // -1: a WindowAgg below applied the delay
			case we != nil:
				// Window rows: the delay must hold back the time column's
				// watermark before it is aligned to a window boundary.
				we.MarkDelay = s.emit.Delay
			case !delayMark(t.Input, c.Idx, s.emit.Delay):
				t.Close.Delay = s.emit.Delay
			}
			s.windowAggs++ // it honours the EMIT clause: no plain EOWC above
		}
		return t.Close.EOWC
	}
	return false
}

// overWindow plans window functions other than the row_number() top-N
// as a stream.OverWindow over the lWindow's input, the conditions above it
// (conds) as a filter over its output.
func (s *streamPlanner) overWindow(w *lWindow, conds []expr.Expr, need map[int]bool) (sout, error) {
	sub := union(need, conds...)
	for _, c := range w.calls {
		sub = union(sub, c.Args...)
		sub = union(sub, c.PartitionBy...)
		sub = union(sub, c.Filter, c.Frame.Start.Offset, c.Frame.End.Offset)
		for _, k := range c.OrderBy {
			sub = union(sub, k.E)
		}
	}
	for _, id := range w.ids {
		delete(sub, id)
	}
	in, err := s.node(w.in, sub)
	if err != nil {
		return sout{}, err
	}
	o, _, err := s.overWindowOn(w, conds, in, false)
	return o, err
}

// overWindowOn plans w over its translated input in. Under EMIT ON WINDOW
// CLOSE, when every call orders by the same column carrying a watermark
// of an append-only input, the OverWindow emits each row once its frames
// are final (stream.OverEOWC); a call that cannot (ntile, UNBOUNDED
// FOLLOWING) is refused. With eowcOnly set, ok is false (and nothing is
// planned) when the query cannot be emitted on window close that way.
func (s *streamPlanner) overWindowOn(w *lWindow, conds []expr.Expr, in sout, eowcOnly bool) (o sout, ok bool, err error) {
	ow := &stream.OverWindow{Input: in.node, Cols: append([]types.Column(nil), in.node.Columns()...)}
	for _, c := range w.calls {
		wc := c
		if wc.Args, err = s.exprs(c.Args, in.lay); err != nil {
			return sout{}, false, err
		}
		if wc.PartitionBy, err = s.exprs(c.PartitionBy, in.lay); err != nil {
			return sout{}, false, err
		}
		if wc.OrderBy, err = s.keys(c.OrderBy, in.lay); err != nil {
			return sout{}, false, err
		}
		if wc.Filter, err = s.expr(c.Filter, in.lay); err != nil {
			return sout{}, false, err
		}
		if wc.Frame.Start.Offset, err = s.expr(c.Frame.Start.Offset, in.lay); err != nil {
			return sout{}, false, err
		}
		if wc.Frame.End.Offset, err = s.expr(c.Frame.End.Offset, in.lay); err != nil {
			return sout{}, false, err
		}
		if wc.Distinct {
			return sout{}, false, notInMV("DISTINCT in a window function")
		}
		ow.Calls = append(ow.Calls, wc)
	}
	for _, id := range w.ids {
		ow.Cols = append(ow.Cols, s.p.col(id))
	}
	eowc := false
	if s.emit.Mode == stream.EmitOnWindowClose && in.appendOnly {
		if col, ok := overTimeCol(ow); ok {
			if _, ok := s.markSlack(in.node, col); ok {
				for _, c := range ow.Calls {
					if _, _, err := stream.OverReach(c); err != nil {
						return sout{}, false, err
					}
				}
				ow.EOWC = &stream.OverEOWC{TimeCol: col, Delay: s.emit.Delay}
				s.windowAggs++ // it honours the EMIT clause: no plain EOWC above
				eowc = true
			}
		}
	}
	if eowcOnly && !eowc {
		return sout{}, false, nil
	}
	lay := append(append([]int(nil), in.lay...), w.ids...)
	o = sout{node: ow, lay: lay, key: in.key, appendOnly: eowc}
	if len(conds) > 0 {
		cond, err := s.expr(andOf(conds), lay)
		if err != nil {
			return sout{}, false, err
		}
		o.node = &stream.Filter{Input: ow, Cond: cond}
	}
	return o, true, nil
}

// overTimeCol returns the column every call of ow orders by first,
// ascending, when it is a timestamp.
func overTimeCol(ow *stream.OverWindow) (int, bool) {
	col := -1
	for _, c := range ow.Calls {
		if len(c.OrderBy) == 0 || c.OrderBy[0].Desc {
			return 0, false
		}
		ref, ok := c.OrderBy[0].E.(*expr.ColRef)
		if !ok || (col >= 0 && ref.Idx != col) {
			return 0, false
		}
		col = ref.Idx
	}
	cols := ow.Input.Columns()
	if col < 0 || (cols[col].Type.Kind != types.Timestamp && cols[col].Type.Kind != types.TimestampTZ) {
		return 0, false
	}
	return col, true
}

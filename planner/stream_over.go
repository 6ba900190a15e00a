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
func markSlack(n stream.Node, col int) (slack int64, ok bool) {
	switch n := n.(type) {
	case *stream.Scan:
		return 0, n.Watermark != nil && n.Watermark.Col == col
	case *stream.Filter:
		return markSlack(n.Input, col)
	case *stream.Project:
		if col < 0 || col >= len(n.Exprs) {
			return 0, false
		}
		if stream.IsProcTime(n.Exprs[col]) {
			return 0, true
		}
		if c, isRef := n.Exprs[col].(*expr.ColRef); isRef {
			return markSlack(n.Input, c.Idx)
		}
	case *stream.WindowExpand:
		if k := len(n.Cols); col == k-2 || col == k-1 {
			_, ok := markSlack(n.Input, n.TimeCol)
			return 0, ok
		}
		return markSlack(n.Input, col)
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
		slack, ok := markSlack(t.Input, c.Idx)
		if !ok {
			continue
		}
		t.Close = &stream.TopNClose{Part: k, Col: c.Idx, Slack: slack}
		if s.emit.Mode == stream.EmitOnWindowClose {
			t.Close.EOWC = true
			if slack == 0 { // (-1: a WindowAgg below applied the delay)
				t.Close.Delay = s.emit.Delay
			}
			s.windowAggs++ // it honours the EMIT clause: no plain EOWC above
		}
		return t.Close.EOWC
	}
	return false
}

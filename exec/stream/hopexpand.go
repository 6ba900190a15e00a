package stream

import (
	"time"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// WindowExpand is a window table function (TUMBLE, HOP, CUMULATE) without
// an aggregation above it: each input row goes out once per window it is
// in, with window_start and window_end appended (Cols: the input's columns,
// then those two). Rows with a NULL time are in no window and are dropped.
// A retraction retracts the same windows. An update pair stays a pair when
// each row is in one window (TUMBLE) and becomes a delete and an insert per
// window otherwise. Watermarks pass through (the input's columns keep their
// positions); one on the time column also goes out on window_start and
// window_end as the start and end of the earliest window a row at that
// time can be in (windowMarks), that time being the watermark minus
// MarkDelay. It keeps no state.
type WindowExpand struct {
	Input   Node
	TimeCol int
	Windows exec.TimeWindows
	Cols    []types.Column
	// MarkDelay (µs, not negative) holds back the watermarks on
	// window_start and window_end: a top-N per window under EMIT ON WINDOW
	// CLOSE WITH DELAY d completes a window once the time column's
	// watermark reaches window_end + d, which the window columns' own
	// watermarks, aligned to window boundaries, cannot express once past.
	MarkDelay int64
}

// Columns implements Node.
func (w *WindowExpand) Columns() []types.Column { return w.Cols }

// Inputs implements Node.
func (w *WindowExpand) Inputs() []Node { return []Node{w.Input} }

// Explain implements Node.
func (w *WindowExpand) Explain() string {
	s := "StreamWindowExpand: " + w.Windows.String() + " on " + w.Cols[w.TimeCol].Name
	if w.MarkDelay > 0 {
		s += " (window watermarks " + time.Duration(w.MarkDelay*1000).String() + " behind)"
	}
	return s
}

// Start implements Node.
func (w *WindowExpand) Start(env *Env, inputs []<-chan Message) <-chan Message {
	ectx := env.evalContext()
	schema := types.ArrowSchema(w.Cols)
	timeType := w.Cols[w.TimeCol].Type
	n := len(w.Cols)
	marks := func(m Watermark) []Watermark {
		if m.Col != w.TimeCol {
			return []Watermark{m}
		}
		ws, we, ok := windowMarks(w.Windows, addSat(m.Value, -w.MarkDelay))
		if !ok {
			return []Watermark{m}
		}
		return []Watermark{m, {Col: n - 2, Value: ws}, {Col: n - 1, Value: we}}
	}
	return runMapMarks(env, inputs[0], func(c *Chunk) (*Chunk, error) {
		out, src, err := exec.ExpandWindows(ectx.Allocator(), schema, c.Rec, w.TimeCol, timeType, w.Windows)
		if err != nil || out == nil {
			return nil, err
		}
		return &Chunk{Rec: out, Ops: expandOps(c.Ops, src, w.Windows.PerRow() > 1 || w.Windows.Cumulate)}, nil
	}, marks)
}

// windowMarks returns, for a watermark t on the time column (no later row
// has a time below t), the start and end of the earliest window a later
// row can be in: watermarks on window_start and window_end. ok is false
// near the ends of the time range.
func windowMarks(w exec.TimeWindows, t int64) (ws, we int64, ok bool) {
	const lim = int64(1) << 62
	if t <= -lim || t >= lim || w.Size <= 0 || w.Size >= lim {
		return 0, 0, false
	}
	step := w.Slide
	if step <= 0 || step > w.Size {
		step = w.Size
	}
	if w.Cumulate {
		// The period of t, and the first step boundary after t.
		p := exec.FloorDiv(t-w.Offset, w.Size)*w.Size + w.Offset
		return p, exec.FloorDiv(t-w.Offset, step)*step + w.Offset + step, true
	}
	last := exec.FloorDiv(t-w.Offset, step)*step + w.Offset
	ws = last - w.Size + step
	return ws, ws + w.Size, true
}

// expandOps gives output row k the op of input row src[k] (src nil: the
// identity). With split set, or where a row's partner was dropped, update
// halves become deletes and inserts.
func expandOps(ops []Op, src []int32, split bool) []Op {
	if ops == nil || src == nil {
		return ops
	}
	out := make([]Op, len(src))
	for k, r := range src {
		out[k] = ops[r]
	}
	for k, op := range out {
		switch {
		case op == UpdateBefore && (split || k+1 >= len(out) || out[k+1] != UpdateAfter || src[k+1] != src[k]+1):
			out[k] = Delete
		case op == UpdateAfter && (split || k == 0 || ops[src[k]-1] != UpdateBefore || src[k-1] != src[k]-1):
			out[k] = Insert
		}
	}
	return out
}

// checkpoints marks WindowExpand as resumable from a checkpoint: it keeps
// no state across messages (each chunk maps to its windows alone), so it
// has nothing to snapshot or restore.
func (w *WindowExpand) checkpoints() {}

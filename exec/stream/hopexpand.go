package stream

import (
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
// positions). It keeps no state.
type WindowExpand struct {
	Input   Node
	TimeCol int
	Windows exec.TimeWindows
	Cols    []types.Column
}

// Columns implements Node.
func (w *WindowExpand) Columns() []types.Column { return w.Cols }

// Inputs implements Node.
func (w *WindowExpand) Inputs() []Node { return []Node{w.Input} }

// Explain implements Node.
func (w *WindowExpand) Explain() string {
	return "StreamWindowExpand: " + w.Windows.String() + " on " + w.Cols[w.TimeCol].Name
}

// Start implements Node.
func (w *WindowExpand) Start(env *Env, inputs []<-chan Message) <-chan Message {
	ectx := env.evalContext()
	schema := types.ArrowSchema(w.Cols)
	timeType := w.Cols[w.TimeCol].Type
	return runMap(env, inputs[0], func(c *Chunk) (*Chunk, error) {
		out, src, err := exec.ExpandWindows(ectx.Allocator(), schema, c.Rec, w.TimeCol, timeType, w.Windows)
		if err != nil || out == nil {
			return nil, err
		}
		return &Chunk{Rec: out, Ops: expandOps(c.Ops, src, w.Windows.PerRow() > 1 || w.Windows.Cumulate)}, nil
	})
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

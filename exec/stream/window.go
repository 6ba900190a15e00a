package stream

import (
	"fmt"
	"strings"
	"time"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// WindowKind is a time window function.
type WindowKind uint8

// Window kinds (streaming-sql.md section 3).
const (
	Tumble WindowKind = iota
	Hop
	Session
	Cumulate
)

var windowNames = [...]string{"TUMBLE", "HOP", "SESSION", "CUMULATE"}

func (k WindowKind) String() string { return windowNames[k] }

// WindowSpec describes the windows of one time column. Durations are
// microseconds. Windows are aligned to the Unix epoch plus Offset.
type WindowSpec struct {
	Kind    WindowKind
	TimeCol int   // input column holding the event time (timestamp or timestamptz)
	Size    int64 // TUMBLE, HOP, CUMULATE (the maximum size)
	Slide   int64 // HOP's slide; CUMULATE's step
	Offset  int64
	Gap     int64 // SESSION
}

// String renders the spec for EXPLAIN.
func (w WindowSpec) String() string {
	d := func(us int64) string { return time.Duration(us * 1000).String() }
	switch w.Kind {
	case Tumble:
		return fmt.Sprintf("TUMBLE(size %s, offset %s)", d(w.Size), d(w.Offset))
	case Hop:
		return fmt.Sprintf("HOP(slide %s, size %s, offset %s)", d(w.Slide), d(w.Size), d(w.Offset))
	case Cumulate:
		return fmt.Sprintf("CUMULATE(step %s, size %s, offset %s)", d(w.Slide), d(w.Size), d(w.Offset))
	}
	return fmt.Sprintf("SESSION(gap %s)", d(w.Gap))
}

// EmitMode is when a windowed operator produces rows (see sql.EmitMode).
type EmitMode uint8

// Emit modes (streaming-sql.md section 4).
const (
	EmitOnUpdate      EmitMode = iota // a changelog, updated every epoch
	EmitOnWindowClose                 // one final row per window and group, when the watermark passes window_end + Delay
	EmitEvery                         // ON UPDATE, compacted and delivered once per Every of processing time
)

// EmitSpec is a query's EMIT clause. Durations are microseconds (0: not given).
type EmitSpec struct {
	Mode          EmitMode
	Delay         int64 // ON WINDOW CLOSE WITH DELAY
	EarlyEvery    int64 // ON WINDOW CLOSE EARLY EVERY (processing time)
	AllowLateness int64
	Every         int64 // EMIT EVERY (processing time)
	// LateRows, when set, receives the rows that arrive after their
	// window's state was freed (LATE ROWS INTO); they are counted either way.
	LateRows bool
}

// String renders the spec for EXPLAIN.
func (e EmitSpec) String() string {
	d := func(us int64) string { return time.Duration(us * 1000).String() }
	var parts []string
	switch e.Mode {
	case EmitOnUpdate:
		parts = append(parts, "emit on update")
	case EmitOnWindowClose:
		parts = append(parts, "emit on window close")
		if e.Delay > 0 {
			parts = append(parts, "delay "+d(e.Delay))
		}
		if e.EarlyEvery > 0 {
			parts = append(parts, "early every "+d(e.EarlyEvery))
		}
	case EmitEvery:
		parts = append(parts, "emit every "+d(e.Every))
	}
	if e.AllowLateness > 0 {
		parts = append(parts, "allow lateness "+d(e.AllowLateness))
	}
	if e.LateRows {
		parts = append(parts, "late rows captured")
	}
	return strings.Join(parts, ", ")
}

// WindowAgg is a windowed GROUP BY: for each window of Window over the
// input's time column and each group of GroupBy, the aggregates Aggs. Its
// output rows are window_start, window_end (the time column's type), the
// GroupBy values, then one value per Agg (Cols); (window_start,
// window_end, group keys) is the output's stream key (window_start alone
// is not: CUMULATE's windows of a period share it; a session's end changes
// in an update pair).
//
// A window's state is freed once the watermark of the time column passes
// window_end + Emit.Delay + Emit.AllowLateness; a row that arrives for a
// freed window (for HOP: for windows that are all freed), insert or
// retraction, is late: it is handed to Env.OnLate and dropped. A row whose
// time is NULL is in no window and ignored. HOP keeps one partial aggregate
// per pane of gcd(size, slide) and merges panes at emission (every
// aggregate merges). SESSION keeps sessions per group and merges them
// (retracting emitted sessions). Under EMIT ON WINDOW CLOSE a window's row
// goes out once, when the watermark reaches window_end + Delay; with EARLY
// EVERY provisional rows go out at the first barrier after each tick and
// the final row replaces the last one at close (nothing is sent when they
// are equal); with ALLOW LATENESS a closed window's changes go out as
// corrections at each barrier. EMIT EVERY is ON UPDATE compacted to the
// first barrier after each tick. Watermarks on window_start and window_end
// are forwarded (TUMBLE, HOP, CUMULATE under ON UPDATE and ON WINDOW
// CLOSE). See windowagg*.go.
//
// State: per live pane (or session event time) and group, the aggregate
// states; outside plain ON WINDOW CLOSE, each emitted (window, group) row.
type WindowAgg struct {
	Input   Node
	Window  WindowSpec
	GroupBy []expr.Expr
	Aggs    []AggSpec
	Emit    EmitSpec
	Cols    []types.Column
	// AppendOnly says the input never retracts (as HashAgg.AppendOnly):
	// min and max then keep only their running extreme per pane, and a
	// retraction fails.
	AppendOnly bool
	// EndWatermark marks the final phase of a two-phase window
	// aggregation (planner/stream_twophase_window.go): the input rows are
	// the partial phase's window rows, window_start at Window.TimeCol and
	// window_end right after it, and the watermark that closes and frees
	// windows is the one on window_end (TimeCol+1), not on TimeCol. The
	// partials forward their input's watermark, less their EMIT delay,
	// exactly on window_end (their window_start watermark is a window
	// size below it), so the final closes a window at the watermark at
	// which one instance over all the rows would.
	EndWatermark bool
}

// Columns implements Node.
func (w *WindowAgg) Columns() []types.Column { return w.Cols }

// Inputs implements Node.
func (w *WindowAgg) Inputs() []Node { return []Node{w.Input} }

// Explain implements Node.
func (w *WindowAgg) Explain() string {
	parts := make([]string, len(w.Aggs))
	for i, a := range w.Aggs {
		parts[i] = a.String()
	}
	s := "StreamWindowAgg: " + w.Window.String() + " " + strings.Join(parts, ", ")
	if len(w.GroupBy) > 0 {
		keys := make([]string, len(w.GroupBy))
		for i, g := range w.GroupBy {
			keys[i] = g.String()
		}
		s += " GROUP BY " + strings.Join(keys, ", ")
	}
	if w.EndWatermark {
		return s + " (" + w.Emit.String() + ", merging the partials by the watermark on window_end)"
	}
	return s + " (" + w.Emit.String() + ")"
}

package exec

import (
	"fmt"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// TimeWindows are the fixed-size time windows of TUMBLE, HOP and CUMULATE
// over a timestamp column (streaming-sql.md section 3). Durations are
// microseconds; windows are aligned to the Unix epoch plus Offset:
//
//   - TUMBLE: Slide == Size; each row is in exactly one window.
//   - HOP: windows [s, s+Size) for every s ≡ Offset (mod Slide); Size is a
//     multiple of Slide, so each row is in Size/Slide windows.
//   - CUMULATE (Cumulate set): for each period [p, p+Size) with
//     p ≡ Offset (mod Size), the windows [p, p+Slide), [p, p+2*Slide), ...,
//     [p, p+Size); Size is a multiple of Slide (the step).
//
// A row whose time is NULL is in no window. Alignment uses floor division,
// so times before the epoch (and before the first row) fall into windows
// that start earlier. A TimeWindows value is immutable.
type TimeWindows struct {
	Size, Slide, Offset int64
	Cumulate            bool
}

// FloorDiv is a/b rounded toward negative infinity (b > 0).
func FloorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// PerRow is the number of windows a row with a non-NULL time is in (at
// most: CUMULATE rows late in a period are in fewer).
func (w TimeWindows) PerRow() int64 {
	if w.Slide <= 0 {
		return 1
	}
	return w.Size / w.Slide
}

// lastStart returns the start of the last window of HOP or TUMBLE that
// contains t (the latest start not after t); for CUMULATE, the start of t's
// period.
func (w TimeWindows) lastStart(t int64) int64 {
	step := w.Slide
	if w.Cumulate {
		step = w.Size
	}
	return FloorDiv(t-w.Offset, step)*step + w.Offset
}

// Windows returns the windows of each row of ts (a timestamp array): output
// window k is [start[k], end[k]) of input row src[k], rows in input order
// and each row's windows in ascending order. src is nil when it is the
// identity (every row in exactly one window: TUMBLE without NULL times).
// A window end beyond the timestamp range is an error (22008).
func (w TimeWindows) Windows(ts arrow.Array) (src []int32, start, end []int64, err error) {
	n := ts.Len()
	vals := arrow.GetValues[int64](ts.Data(), 1)
	nulls := ts.NullN() > 0
	limit := int64(math.MaxInt64) - w.Size // a start above it has no representable end
	per := w.PerRow()
	if per == 1 && !w.Cumulate && !nulls {
		start, end = make([]int64, n), make([]int64, n)
		for i, t := range vals {
			s := w.lastStart(t)
			if s > limit {
				return nil, nil, nil, rangeErr()
			}
			start[i], end[i] = s, s+w.Size
		}
		return nil, start, end, nil
	}
	capacity := n * int(per)
	src, start, end = make([]int32, 0, capacity), make([]int64, 0, capacity), make([]int64, 0, capacity)
	for i, t := range vals {
		if nulls && ts.IsNull(i) {
			continue
		}
		last := w.lastStart(t)
		if last > limit {
			return nil, nil, nil, rangeErr()
		}
		if w.Cumulate {
			for e := last + (t-last)/w.Slide*w.Slide + w.Slide; e <= last+w.Size; e += w.Slide {
				src, start, end = append(src, int32(i)), append(start, last), append(end, e)
			}
			continue
		}
		for s := last - (per-1)*w.Slide; s <= last; s += w.Slide {
			src, start, end = append(src, int32(i)), append(start, s), append(end, s+w.Size)
		}
	}
	return src, start, end, nil
}

func rangeErr() error {
	return pgerr.New(pgerr.DatetimeFieldOverflow, "timestamp out of range")
}

// String renders the windows for EXPLAIN, e.g. "HOP(slide 2s, size 10s)".
func (w TimeWindows) String() string {
	d := func(us int64) string { return time.Duration(us * 1000).String() }
	var s string
	switch {
	case w.Cumulate:
		s = fmt.Sprintf("CUMULATE(step %s, size %s", d(w.Slide), d(w.Size))
	case w.Slide == w.Size:
		s = fmt.Sprintf("TUMBLE(size %s", d(w.Size))
	default:
		s = fmt.Sprintf("HOP(slide %s, size %s", d(w.Slide), d(w.Size))
	}
	if w.Offset != 0 {
		s += ", offset " + d(w.Offset)
	}
	return s + ")"
}

// ExpandWindows returns rec's rows once per window they are in, with
// window_start and window_end (arrays of timeType, the time column's type)
// appended; src maps output rows to input rows (nil: the identity). The
// result is nil when no row is in a window.
func ExpandWindows(mem memory.Allocator, schema *arrow.Schema, rec arrow.RecordBatch, timeCol int, timeType types.T, w TimeWindows) (out arrow.RecordBatch, src []int32, err error) {
	src, start, end, err := w.Windows(rec.Column(timeCol))
	if err != nil || len(start) == 0 {
		return nil, nil, err
	}
	ncol := int(rec.NumCols())
	cols := make([]arrow.Array, 0, ncol+2)
	for c := 0; c < ncol; c++ {
		if src == nil {
			a := rec.Column(c)
			a.Retain()
			cols = append(cols, a)
		} else {
			cols = append(cols, takeArray(mem, rec.Column(c), src))
		}
	}
	dt := timeType.ArrowType()
	cols = append(cols, int64Array(dt, start), int64Array(dt, end))
	return array.NewRecordBatch(schema, cols, int64(len(start))), src, nil
}

// int64Array wraps vals (no NULLs) as an array of the 64-bit type dt.
func int64Array(dt arrow.DataType, vals []int64) arrow.Array {
	d := array.NewData(dt, len(vals), []*memory.Buffer{nil, memory.NewBufferBytes(arrow.GetBytes(vals))}, nil, 0, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// WindowExpand adds window_start and window_end to its input's rows,
// repeating each row once per TUMBLE, HOP or CUMULATE window it is in
// (rows with a NULL time are dropped). Built by planner/ for the window
// table functions in FROM; it keeps no state between batches.
type WindowExpand struct {
	Input   Node
	TimeCol int
	Windows TimeWindows
	Cols    []types.Column // the input's columns, window_start, window_end
}

// Columns implements Node.
func (w *WindowExpand) Columns() []types.Column { return w.Cols }

// Children implements Node.
func (w *WindowExpand) Children() []Node { return []Node{w.Input} }

// Explain implements Node.
func (w *WindowExpand) Explain() string {
	return "WindowExpand: " + w.Windows.String() + " on " + w.Cols[w.TimeCol].Name
}

// Open implements Node.
func (w *WindowExpand) Open(ctx *Context) (Iterator, error) {
	in, err := OpenNode(ctx, w.Input)
	if err != nil {
		return nil, err
	}
	return &windowExpandIter{w: w, ctx: ctx, in: in, schema: types.ArrowSchema(w.Cols)}, nil
}

type windowExpandIter struct {
	w      *WindowExpand
	ctx    *Context
	in     Iterator
	schema *arrow.Schema
}

func (it *windowExpandIter) Next() (arrow.RecordBatch, error) {
	w := it.w
	for {
		b, err := it.in.Next()
		if err != nil || b == nil {
			return nil, err
		}
		out, _, err := ExpandWindows(alloc(it.ctx), it.schema, b, w.TimeCol, w.Cols[w.TimeCol].Type, w.Windows)
		b.Release()
		if err != nil || out != nil {
			return out, err
		}
	}
}

func (it *windowExpandIter) Close() error { return it.in.Close() }

package dataflow

import (
	"fmt"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
)

// wmTracker computes the watermark of one table or source reader
// (stream.ScanWatermark): after each batch of new rows (a source's batch, a
// table's backfill, one committed write), watermark = max(watermark,
// max(expr(row))); it never moves back. With an idle timeout, a reader that
// delivered no rows for that long moves the watermark on by the processing
// time elapsed since its last row (checked at every barrier), so windows
// close while the input is silent. A reader that has not seen a row yet has
// no watermark and does not advance it when idle. A resumed reader
// (restore) has the checkpoint's watermark and counts its idle time from
// the restart: processing time is the clock's after a restart, so the time
// of a row before it is not known (and the zero time would make every idle
// step jump to the year 2262). Owned by the reader's goroutine.
type wmTracker struct {
	spec  *stream.ScanWatermark
	ectx  *expr.Context
	clock stream.Clock
	onErr func(error)
	// mono: Expr never decreases as its column grows (col, col ± const),
	// so max(expr) is expr(the row holding max(col)): one row is evaluated.
	mono bool

	cur     int64     // the watermark (µs); math.MinInt64: none yet
	sent    int64     // the last one sent
	lastRow time.Time // processing time of the last row
	atLast  int64     // the watermark when the last row came

	// A partitioned source reader's (connector.Partitioned): a watermark
	// per partition, merged by minimum over the partitions that are not
	// idle (wm_parts.go). parts is nil for other readers.
	parts      map[int32]*partMark
	partitions func() []int32 // the reader's partitions (nil: not known yet)
}

// newWMTracker returns nil when spec is nil (no watermark).
func newWMTracker(spec *stream.ScanWatermark, ectx *expr.Context, clock stream.Clock, onErr func(error)) *wmTracker {
	if spec == nil {
		return nil
	}
	return &wmTracker{spec: spec, ectx: ectx, clock: clock, onErr: onErr, cur: math.MinInt64, sent: math.MinInt64,
		mono: monotone(spec.Expr, spec.Col)}
}

// monotone reports whether e is non-decreasing in column col: the column,
// or the column plus or minus a constant (an interval: adding months is
// non-decreasing too).
func monotone(e expr.Expr, col int) bool {
	switch x := e.(type) {
	case *expr.ColRef:
		return x.Idx == col
	case *expr.Call:
		if len(x.Args) != 2 {
			return false
		}
		_, c0 := x.Args[0].(*expr.Const)
		_, c1 := x.Args[1].(*expr.Const)
		switch x.Fn.Name {
		case "-":
			return c1 && monotone(x.Args[0], col)
		case "+":
			return (c1 && monotone(x.Args[0], col)) || (c0 && monotone(x.Args[1], col))
		}
	}
	return false
}

// observe raises the watermark over a batch of new rows. A batch whose
// expression fails is reported to onErr and leaves the watermark alone.
func (w *wmTracker) observe(rec arrow.RecordBatch) {
	if w == nil || rec == nil || rec.NumRows() == 0 {
		return
	}
	w.lastRow = w.clock.Now()
	if m, ok := w.batchMax(rec); ok && m > w.cur {
		w.cur = m
	}
	w.atLast = w.cur
}

// batchMax is max(expr(row)) over rec; not ok when every value is NULL or
// the expression fails (reported to onErr).
func (w *wmTracker) batchMax(rec arrow.RecordBatch) (int64, bool) {
	if w.mono {
		i, ok := argMax(rec.Column(w.spec.Col))
		if !ok {
			return 0, false
		}
		rec = rec.NewSlice(int64(i), int64(i)+1)
		defer rec.Release()
	}
	a, err := w.spec.Expr.Eval(w.ectx, rec)
	if err != nil {
		w.onErr(fmt.Errorf("watermark %s: %w", w.spec.Expr, err))
		return 0, false
	}
	return maxMicros(a)
}

// restore gives a resumed reader the checkpoint's watermark, to be sent
// again; its idle time counts from now (the restart).
// parts are a partitioned reader's watermarks per partition (nil for
// others).
func (w *wmTracker) restore(wm int64, parts map[int32]int64) {
	if w == nil {
		return
	}
	w.cur, w.atLast, w.sent = wm, wm, math.MinInt64
	w.lastRow = w.clock.Now()
	w.restoreParts(parts)
}

// idle advances the watermark of an input idle for the timeout or longer.
func (w *wmTracker) idle() {
	if w != nil && w.parts != nil {
		w.idleParts()
		return
	}
	if w == nil || w.spec.IdleTimeout <= 0 || w.cur == math.MinInt64 {
		return
	}
	if w.lastRow.IsZero() {
		// A watermark without a last row's time (never, since restore sets
		// it): count from now rather than from the year 1.
		w.lastRow, w.atLast = w.clock.Now(), w.cur
		return
	}
	el := w.clock.Now().Sub(w.lastRow)
	if el < w.spec.IdleTimeout {
		return
	}
	if v := w.atLast + el.Microseconds(); v > w.cur {
		w.cur = v
	}
}

// pending returns the watermark message to send, if it rose since the last.
func (w *wmTracker) pending() (stream.Message, bool) {
	if w == nil || w.cur <= w.sent {
		return stream.Message{}, false
	}
	w.sent = w.cur
	return stream.WatermarkMsg(stream.Watermark{Col: w.spec.Col, Value: w.cur}), true
}

// argMax is the row of the largest non-null value of a timestamp array.
func argMax(a arrow.Array) (int, bool) {
	ts, ok := a.(*array.Timestamp)
	if !ok {
		return 0, false
	}
	vals := ts.TimestampValues()
	if ts.NullN() == 0 {
		if len(vals) == 0 {
			return 0, false
		}
		best := 0
		for i, v := range vals {
			if v > vals[best] {
				best = i
			}
		}
		return best, true
	}
	best, found := -1, false
	for i, v := range vals {
		if (!found || v > vals[best]) && ts.IsValid(i) {
			best, found = i, true
		}
	}
	return best, found
}

// maxMicros is the largest non-null value of a timestamp array.
func maxMicros(a arrow.Array) (int64, bool) {
	ts, ok := a.(*array.Timestamp)
	if !ok {
		return 0, false
	}
	vals := ts.TimestampValues()
	m, found := int64(math.MinInt64), false
	if ts.NullN() == 0 {
		for _, v := range vals {
			m = max(m, int64(v))
		}
		return m, len(vals) > 0
	}
	for i, v := range vals {
		if ts.IsValid(i) {
			m, found = max(m, int64(v)), true
		}
	}
	return m, found
}

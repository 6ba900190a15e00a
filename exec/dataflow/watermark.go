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
// no watermark and does not advance it when idle. Owned by the reader's
// goroutine.
type wmTracker struct {
	spec  *stream.ScanWatermark
	ectx  *expr.Context
	clock stream.Clock
	onErr func(error)

	cur     int64     // the watermark (µs); math.MinInt64: none yet
	sent    int64     // the last one sent
	lastRow time.Time // processing time of the last row
	atLast  int64     // the watermark when the last row came
}

// newWMTracker returns nil when spec is nil (no watermark).
func newWMTracker(spec *stream.ScanWatermark, ectx *expr.Context, clock stream.Clock, onErr func(error)) *wmTracker {
	if spec == nil {
		return nil
	}
	return &wmTracker{spec: spec, ectx: ectx, clock: clock, onErr: onErr, cur: math.MinInt64, sent: math.MinInt64}
}

// observe raises the watermark over a batch of new rows. A batch whose
// expression fails is reported to onErr and leaves the watermark alone.
func (w *wmTracker) observe(rec arrow.RecordBatch) {
	if w == nil || rec == nil || rec.NumRows() == 0 {
		return
	}
	w.lastRow = w.clock.Now()
	a, err := w.spec.Expr.Eval(w.ectx, rec)
	if err != nil {
		w.onErr(fmt.Errorf("watermark %s: %w", w.spec.Expr, err))
		w.atLast = w.cur
		return
	}
	if m, ok := maxMicros(a); ok && m > w.cur {
		w.cur = m
	}
	w.atLast = w.cur
}

// idle advances the watermark of an input idle for the timeout or longer.
func (w *wmTracker) idle() {
	if w == nil || w.spec.IdleTimeout <= 0 || w.cur == math.MinInt64 {
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

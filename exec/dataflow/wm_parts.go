package dataflow

import (
	"math"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// Watermarks of partitioned source readers (connector.Partitioned, a
// Kafka topic's partitions): each partition has its own order of event
// time, so a watermark taken over the reader's interleaved batches would
// run ahead of a slower partition and make its rows late. Instead each
// partition keeps max(expr(row)) over its own rows, and the reader's
// watermark is the minimum over its partitions, never moving back:
//
//   - A partition the reader reads but that has no row yet has no
//     watermark and holds the reader's back (as in Flink).
//   - With idle_timeout, a partition without rows for that long is idle
//     and does not count; when every partition is idle the reader is idle
//     and its watermark advances with processing time as an unpartitioned
//     reader's does (watermark.go), from the highest partition watermark.
//     A reader that knows it has no partitions (a topic being waited for)
//     is idle at once, without waiting for the timeout.
//   - Checkpoints keep each partition's watermark (rootMeta.Parts); after
//     a restart idleness counts from the restart.

// partMark is one partition's watermark.
type partMark struct {
	cur     int64     // max(expr(row)) of its rows; math.MinInt64: none yet
	lastRow time.Time // processing time of its last row (or when first known)
}

// partitioned makes w a partitioned reader's tracker; partitions lists
// the reader's partitions (safe from any goroutine; nil: not known yet).
func (w *wmTracker) partitioned(partitions func() []int32) {
	if w == nil {
		return
	}
	if w.parts == nil {
		w.parts = map[int32]*partMark{}
	}
	w.partitions = partitions
}

// restoreParts gives the partitions their checkpointed watermarks.
func (w *wmTracker) restoreParts(parts map[int32]int64) {
	if len(parts) == 0 {
		return
	}
	if w.parts == nil {
		w.parts = map[int32]*partMark{}
	}
	now := w.clock.Now()
	for p, v := range parts {
		w.parts[p] = &partMark{cur: v, lastRow: now}
	}
}

// partMarks are the partitions' watermarks for a checkpoint (nil when
// there are none).
func (w *wmTracker) partMarks() map[int32]int64 {
	if w == nil {
		return nil
	}
	var m map[int32]int64
	for p, pm := range w.parts {
		if pm.cur != math.MinInt64 {
			if m == nil {
				m = map[int32]int64{}
			}
			m[p] = pm.cur
		}
	}
	return m
}

// learn adds the reader's partitions not known yet, with no watermark and
// their idle time counted from now; it reports whether the reader knows
// its partitions and has none.
func (w *wmTracker) learn(now time.Time) (none bool) {
	if w.partitions == nil {
		return false
	}
	ps := w.partitions()
	for _, p := range ps {
		if w.parts[p] == nil {
			w.parts[p] = &partMark{cur: math.MinInt64, lastRow: now}
		}
	}
	return ps != nil && len(ps) == 0
}

// observePart raises partition p's watermark over a batch of its new rows
// and the reader's over the partitions.
func (w *wmTracker) observePart(rec arrow.RecordBatch, p int32) {
	if w == nil || rec == nil || rec.NumRows() == 0 {
		return
	}
	now := w.clock.Now()
	w.learn(now)
	pm := w.parts[p]
	if pm == nil {
		pm = &partMark{cur: math.MinInt64}
		w.parts[p] = pm
	}
	pm.lastRow, w.lastRow = now, now
	if m, ok := w.batchMax(rec); ok && m > pm.cur {
		pm.cur = m
	}
	w.merge(now)
	w.atLast = w.cur
}

// isIdle reports whether a partition with its last row at last is idle.
func (w *wmTracker) isIdle(last, now time.Time) bool {
	return w.spec.IdleTimeout > 0 && now.Sub(last) >= w.spec.IdleTimeout
}

// merge raises the reader's watermark to the minimum over the partitions
// that are not idle; it reports whether any partition is active.
func (w *wmTracker) merge(now time.Time) (active bool) {
	low := int64(math.MaxInt64)
	for _, pm := range w.parts {
		if w.isIdle(pm.lastRow, now) {
			continue
		}
		active = true
		low = min(low, pm.cur)
	}
	if active && low != math.MinInt64 && low > w.cur {
		w.cur = low
	}
	return active
}

// idleParts runs at each barrier: partitions gone idle stop holding the
// watermark back; a reader whose partitions are all idle, or that has
// none, advances it with processing time.
func (w *wmTracker) idleParts() {
	now := w.clock.Now()
	none := w.learn(now)
	if w.merge(now) || w.spec.IdleTimeout <= 0 {
		return
	}
	if len(w.parts) == 0 && !none {
		return // partitions not known yet
	}
	base := w.cur
	for _, pm := range w.parts {
		base = max(base, pm.cur)
	}
	if base == math.MinInt64 {
		return // no watermark to advance
	}
	if base > w.cur {
		w.cur, w.atLast = base, base
	}
	if w.lastRow.IsZero() {
		w.lastRow, w.atLast = now, w.cur
		return
	}
	el := now.Sub(w.lastRow)
	if !none && el < w.spec.IdleTimeout {
		return
	}
	if v := w.atLast + el.Microseconds(); v > w.cur {
		w.cur = v
	}
}

// partsIdle reports whether the reader has partitions and every one of
// them is idle (idle_timeout): a split reader then tells the merge above
// it, so that it does not hold back the readers that are not (nil-safe).
func (w *wmTracker) partsIdle() bool {
	if w == nil || w.spec.IdleTimeout <= 0 || len(w.parts) == 0 {
		return false
	}
	now := w.clock.Now()
	for _, pm := range w.parts {
		if !w.isIdle(pm.lastRow, now) {
			return false
		}
	}
	return true
}

// partStates are the partitions' watermarks and idleness, by partition.
func (w *wmTracker) partStates() []PartMark {
	now := w.clock.Now()
	out := make([]PartMark, 0, len(w.parts))
	for p, pm := range w.parts {
		out = append(out, PartMark{Partition: p, WM: pm.cur, Has: pm.cur != math.MinInt64, Idle: w.isIdle(pm.lastRow, now)})
	}
	slices.SortFunc(out, func(a, b PartMark) int { return int(a.Partition) - int(b.Partition) })
	return out
}

package dataflow

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
)

// TestPartitionWatermarks: a partitioned reader's watermark is the minimum
// over its partitions; a partition without rows holds it back until it is
// idle; idle partitions do not count; when all are idle the watermark
// follows the clock; a restore brings the partitions' watermarks back.
func TestPartitionWatermarks(t *testing.T) {
	const s = int64(time.Second / time.Microsecond)
	clock := NewManualClock(time.Unix(1000, 0))
	parts := []int32{0, 1}
	newW := func() *wmTracker {
		w := newWMTracker(&stream.ScanWatermark{Col: 0, Expr: minus(0), IdleTimeout: 10 * time.Second},
			&expr.Context{Ctx: context.Background()}, clock, func(err error) { t.Fatal(err) })
		w.partitioned(func() []int32 { return parts })
		return w
	}
	w := newW()
	w.observePart(tsRec(50*s, 20*s), 0)
	if w.cur != math.MinInt64 {
		t.Fatalf("partition 1 has no rows yet: watermark %d", w.cur)
	}
	w.observePart(tsRec(30*s), 1)
	if w.cur != 30*s {
		t.Fatalf("min(50, 30): %d", w.cur)
	}
	w.observePart(tsRec(70*s), 1)
	if w.cur != 50*s {
		t.Fatalf("min(50, 70): %d", w.cur)
	}
	// Partition 0 goes quiet; partition 1 goes on: 0 stops holding it at
	// its timeout.
	clock.Advance(6 * time.Second)
	w.observePart(tsRec(80*s), 1)
	w.idle()
	if w.cur != 50*s {
		t.Fatalf("partition 0 not idle yet: %d", w.cur)
	}
	clock.Advance(5 * time.Second)
	w.idle()
	if w.cur != 80*s {
		t.Fatalf("partition 0 idle: %d, want 80 s", w.cur)
	}
	// A new partition holds it again (it has no rows), until idle.
	parts = []int32{0, 1, 2}
	w.observePart(tsRec(90*s), 1)
	if w.cur != 80*s {
		t.Fatalf("partition 2 joined: %d", w.cur)
	}
	marks := w.partMarks()
	if len(marks) != 2 || marks[0] != 50*s || marks[1] != 90*s {
		t.Fatalf("partMarks %v", marks)
	}
	// All idle: the watermark follows the clock from the highest one.
	clock.Advance(20 * time.Second)
	w.idle()
	if want := 90*s + 20*s; w.cur != want {
		t.Fatalf("all idle: %d, want %d", w.cur, want)
	}
	// Restored: each partition's watermark comes back; idleness counts
	// from the restart.
	r := newW()
	r.restore(80*s, marks)
	r.observePart(tsRec(95*s), 1)
	if r.cur != 80*s {
		t.Fatalf("restored: %d", r.cur)
	}
	clock.Advance(10 * time.Second)
	r.observePart(tsRec(96*s), 1)
	if r.cur != 96*s {
		t.Fatalf("restored, 0 and 2 idle: %d", r.cur)
	}
	// A reader that knows it has no partitions is idle at once.
	parts = []int32{}
	e := newW()
	e.restore(10*s, nil)
	clock.Advance(time.Second)
	e.idle()
	if e.cur != 11*s {
		t.Fatalf("no partitions: %d, want 11 s", e.cur)
	}
}

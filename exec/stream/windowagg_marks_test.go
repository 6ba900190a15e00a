package stream

import (
	"math"
	"testing"
)

// A runtime mark (a watermark of a negative column: a split reader ended
// or went idle) passes a WindowAgg unchanged, so that a partial window
// aggregate fused with its reader tells the merge above it; the
// aggregate's own watermarks are not moved by it.
func TestWindowAggPassesReaderMarks(t *testing.T) {
	w := simpleWinAgg(WindowSpec{Kind: Tumble, Size: 10}, EmitSpec{Mode: EmitOnWindowClose})
	h := newWinHarness(t, w)
	mark := Watermark{Col: -2, Value: 1 << 62}
	h.send(WatermarkMsg(mark))
	got := h.barrier()
	if len(got) != 1 || got[0].Kind != KindWatermark || got[0].Watermark != mark {
		t.Fatalf("epoch output %+v, want the mark %+v alone", got, mark)
	}
}

// A window aggregate told that its split reader ended (MarkEnded: it is a
// partial fused with the reader, and no row will follow) emits what it
// still holds before passing the mark on: under ON WINDOW CLOSE the rows
// of every open window, under ON UPDATE the changes since the barrier.
// Its output watermarks do not move (the final phase closes windows by
// the other instances' watermarks). Held back, these rows reached the
// final after it had closed their windows: Nexmark q7 at 8 readers lost
// its result when a reader's last group ended seconds of event time
// before the others'.
func TestWindowAggEndedEmitsWhatItHolds(t *testing.T) {
	ended := Watermark{Col: MarkEnded, Value: math.MaxInt64}
	for _, mode := range []EmitMode{EmitOnWindowClose, EmitOnUpdate} {
		w := simpleWinAgg(WindowSpec{Kind: Tumble, Size: 10}, EmitSpec{Mode: mode})
		h := newWinHarness(t, w)
		h.rows(nil, winRow{1, 3, 5}, winRow{1, 14, 7}, winRow{2, 25, 1})
		h.watermark(12) // closes [0, 10) only
		before := h.barrier()
		h.rows(nil, winRow{2, 27, 2})
		h.send(WatermarkMsg(ended))
		got := h.barrier()
		if last := got[len(got)-1]; last.Kind != KindWatermark || last.Watermark != ended {
			t.Fatalf("%v: the epoch ends with %+v, want the mark", mode, last)
		}
		for _, m := range got[:len(got)-1] {
			if m.Kind == KindWatermark {
				t.Fatalf("%v: output watermark %+v after the reader ended", mode, m.Watermark)
			}
		}
		// An ended reader's watermark still moves on (an idle timeout),
		// and the aggregate passes it.
		h.watermark(45)
		moved := h.barrier()
		if len(moved) == 0 || moved[len(moved)-1].Kind != KindWatermark || moved[len(moved)-1].Watermark.Value != 45 {
			t.Fatalf("%v: after a watermark of 45 the aggregate sent %+v", mode, moved)
		}
		// The rows at the end, whichever epoch brought them.
		if mode == EmitOnWindowClose {
			expectWinRows(t, "closed by the watermark", before, w.Cols, "insert 0|10|1|1|5")
			expectWinRows(t, "emitted when the reader ended", got, w.Cols, "insert 10|20|1|1|7", "insert 20|30|2|2|3")
		} else {
			expectWinRows(t, "changes when the reader ended", got, w.Cols, "update_before 20|30|2|1|1", "update_after 20|30|2|2|3")
		}
	}
}

package stream

import "testing"

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

package stream

import (
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

func intChunk(ops []Op, vals ...int64) *Chunk {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.AppendValues(vals, nil)
	cols := []types.Column{{Name: "a", Type: types.TInt8}}
	return &Chunk{Rec: array.NewRecordBatch(types.ArrowSchema(cols), []arrow.Array{b.NewArray()}, int64(len(vals))), Ops: ops}
}

func chunkVals(c *Chunk) []int64 {
	return c.Rec.Column(0).(*array.Int64).Int64Values()
}

// A Coalescer gathers an instance's rows from several chunks, in order
// and with their ops (a split update pair as a delete and an insert),
// until they are as many rows as the exchange's input chunks; a chunk
// that goes to one instance with nothing before it passes as it is.
func TestCoalescerGathersParts(t *testing.T) {
	c := NewCoalescer(2)
	c.Input(4)
	c.Add(intChunk(nil, 1, 2, 10), []int32{0, 0, 1}, -1)
	if c.Ready(0) || c.Ready(1) {
		t.Fatal("an instance is ready with fewer rows than the target")
	}
	// an update pair of rows 3 and 4 stays whole; 20's pair is split
	c.Add(intChunk([]Op{UpdateBefore, UpdateAfter, UpdateBefore, UpdateAfter}, 3, 4, 20, 5), []int32{0, 0, 1, 0}, -1)
	if !c.Ready(0) || c.Ready(1) {
		t.Fatal("instance 0 has 5 rows and is not ready, or instance 1 is")
	}
	p := c.Take(0)
	if got := chunkVals(p); !slices.Equal(got, []int64{1, 2, 3, 4, 5}) {
		t.Fatalf("rows %v", got)
	}
	if want := []Op{Insert, Insert, UpdateBefore, UpdateAfter, Insert}; !slices.Equal(p.Ops, want) {
		t.Fatalf("ops %v, want %v", p.Ops, want)
	}
	big := intChunk(nil, 5, 6, 7, 8)
	c.Add(big, nil, 0)
	if p := c.Take(0); p != big {
		t.Fatal("a chunk bound for one instance was not passed on as it is")
	}
	if p := c.Take(0); p != nil {
		t.Fatalf("instance 0 had nothing left, got %v", chunkVals(p))
	}
	p = c.Take(1)
	if p == nil || !slices.Equal(chunkVals(p), []int64{10, 20}) || !slices.Equal(p.Ops, []Op{Insert, Delete}) {
		t.Fatalf("instance 1's rows: %v %v", chunkVals(p), p.Ops)
	}
	if p := c.Take(1); p != nil {
		t.Fatal("Take returned rows twice")
	}
}

// A watermark is held only behind gathered rows and not for a reader's
// marks; it is released once every instance sent the rows gathered
// before it; a chunk with retractions, or whose watermarked column is
// not a timestamp above it, never passes a held watermark.
func TestCoalescerHoldsWatermarks(t *testing.T) {
	c := NewCoalescer(2)
	c.Input(4)
	if c.Hold(Watermark{Col: 0, Value: 5}) {
		t.Fatal("a watermark was held with no rows gathered")
	}
	c.Add(intChunk(nil, 1), nil, 0)
	if c.Hold(Watermark{Col: -2, Value: 5}) {
		t.Fatal("a reader's mark was held")
	}
	if !c.Hold(Watermark{Col: 0, Value: 5}) || !c.Hold(Watermark{Col: 0, Value: 7}) {
		t.Fatal("a watermark behind gathered rows was not held")
	}
	if c.Fits(intChunk(nil, 9)) {
		t.Fatal("a chunk whose watermarked column is not a timestamp fits")
	}
	if c.Fits(intChunk([]Op{Delete}, 9)) {
		t.Fatal("a chunk with a retraction fits")
	}
	c.Input(1)                      // a chunk of a quarter of the target: its watermark goes at once
	c.Add(intChunk(nil, 2), nil, 1) // after the watermark: does not hold it
	if c.Hold(Watermark{Col: 1, Value: 3}) {
		t.Fatal("a watermark after a small chunk was held")
	}
	if c.Take(1) == nil || c.Release() != nil {
		t.Fatal("released before instance 0 sent its row")
	}
	if c.Take(0) == nil {
		t.Fatal("instance 0's row is gone")
	}
	if h := c.Release(); len(h) != 1 || h[0].Value != 7 {
		t.Fatalf("released %v, want the one watermark 7", h)
	}
	if !c.Fits(intChunk([]Op{Delete}, 9)) {
		t.Fatal("with nothing held a chunk does not fit")
	}
}

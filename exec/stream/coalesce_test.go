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

// A Coalescer gathers an instance's parts, in order and with their ops,
// until they are as many rows as the exchange's input chunks; a part that
// large on its own passes as it is, and Take returns the rest.
func TestCoalescerGathersParts(t *testing.T) {
	c := NewCoalescer(2)
	c.Input(4)
	if p, err := c.Add(0, intChunk(nil, 1, 2)); err != nil || p != nil {
		t.Fatalf("2 of 4 rows went out: %v %v", p, err)
	}
	if p, _ := c.Add(1, intChunk([]Op{Delete}, 9)); p != nil {
		t.Fatal("instance 1's one row went out")
	}
	p, err := c.Add(0, intChunk([]Op{UpdateBefore, UpdateAfter}, 3, 4))
	if err != nil || p == nil {
		t.Fatalf("4 rows gathered, none went out (%v)", err)
	}
	if got := chunkVals(p); !slices.Equal(got, []int64{1, 2, 3, 4}) {
		t.Fatalf("rows %v", got)
	}
	if want := []Op{Insert, Insert, UpdateBefore, UpdateAfter}; !slices.Equal(p.Ops, want) {
		t.Fatalf("ops %v, want %v", p.Ops, want)
	}
	big := intChunk(nil, 5, 6, 7, 8)
	if p, _ := c.Add(0, big); p != big {
		t.Fatal("a part of the target's size was not passed on as it is")
	}
	if p, _ := c.Take(0); p != nil {
		t.Fatalf("instance 0 had nothing left, got %v", chunkVals(p))
	}
	p, _ = c.Take(1)
	if p == nil || !slices.Equal(chunkVals(p), []int64{9}) || !slices.Equal(p.Ops, []Op{Delete}) {
		t.Fatalf("instance 1's row: %+v", p)
	}
	if p, _ := c.Take(1); p != nil {
		t.Fatal("Take returned a part twice")
	}
}

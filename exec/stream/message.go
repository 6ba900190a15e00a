package stream

import (
	"github.com/apache/arrow-go/v18/arrow"
)

// Op is the change a row of a Chunk makes.
type Op uint8

// Row ops. An update travels as an UpdateBefore row immediately followed by
// its UpdateAfter row in the same chunk.
const (
	Insert Op = iota
	Delete
	UpdateBefore
	UpdateAfter
)

func (o Op) String() string {
	switch o {
	case Insert:
		return "insert"
	case Delete:
		return "delete"
	case UpdateBefore:
		return "update_before"
	case UpdateAfter:
		return "update_after"
	}
	return "?"
}

// Sign is +1 for rows that add (Insert, UpdateAfter), -1 for rows that retract.
func (o Op) Sign() int64 {
	if o == Delete || o == UpdateBefore {
		return -1
	}
	return 1
}

// Chunk is a batch of changes. Ops is nil when every row is an Insert
// (the common case of append-only sources), else it has one op per row.
// A Chunk is immutable once sent.
type Chunk struct {
	Rec arrow.RecordBatch
	Ops []Op
	// Part, when not nil, says that every row of Rec belongs to instance
	// Part.K of the hash exchange whose routing is Part.Of: a split
	// generator built it so (route.go), and that exchange passes it on
	// whole, with no hashing and no copy. Only a split reader sets it; an
	// operator that builds a chunk from another builds a new Chunk without
	// it, except Project and Filter, which keep its rows or some of them
	// (the runtime maps the exchange's key through them to the reader's
	// column: exec/dataflow/route.go); an exchange ignores a Part of
	// another routing.
	Part *Part
	// Recycle, when not nil, takes back the buffers of Rec for the reader
	// that built them (a generator's batch: connector.Recycler). Only the
	// runtime sets it, on a lending reader's batch. It travels with
	// this *Chunk only: an operator that builds a chunk from another
	// leaves it out, except Project, whose output holds the input's arrays
	// and nothing more of the reader's (project.go), and a fan-out (a
	// share's tee) strips it. The operator
	// that finally consumes the chunk calls ReturnBuffers once it is done
	// with it, if it keeps none of Rec's arrays (WindowAgg, HashAgg);
	// otherwise the buffers go to the garbage collector as any batch's.
	Recycle func(arrow.RecordBatch)
}

// ReturnBuffers hands Rec's buffers back to the reader that lent them
// (Recycle), if any. The caller must be the chunk's last reader, keep
// none of Rec's arrays and call it once; nothing may read the chunk
// afterwards.
func (c *Chunk) ReturnBuffers() {
	if c.Recycle != nil {
		c.Recycle(c.Rec)
	}
}

// Op returns the op of row i.
func (c *Chunk) Op(i int) Op {
	if c.Ops == nil {
		return Insert
	}
	return c.Ops[i]
}

// Len is the number of rows.
func (c *Chunk) Len() int { return int(c.Rec.NumRows()) }

// Watermark says that no later row will have a value below Value (µs since
// the Unix epoch) in column Col. A negative Col is a runtime mark
// (MarkEnded, MarkIdle) that a split reader sends through the operators
// fused with it to the merge above them.
type Watermark struct {
	Col   int
	Value int64
}

// The runtime marks (Watermark.Col). They pass the operators fused with a
// split reader and the exchanges above it, and never leave a merge.
const (
	// MarkEnded (value MaxInt64): the reader's input has ended, no row
	// will follow; the merge stops waiting for its watermark, and a
	// partial window aggregate fused with it first emits what it still
	// holds (WindowAgg).
	MarkEnded = -2
	// MarkIdle: the reader has no input (value 1: a Kafka reader without
	// partitions) or has some again (value 0); while idle it does not hold
	// the merged watermark back.
	MarkIdle = -3
)

// Barrier ends epoch Epoch. With Checkpoint set, operators snapshot their
// state when they forward it.
type Barrier struct {
	Epoch      uint64
	Checkpoint bool
}

// Kind tells which field of a Message is set.
type Kind uint8

// Message kinds.
const (
	KindChunk Kind = iota
	KindWatermark
	KindBarrier
)

// Message is what flows on a channel between operators.
type Message struct {
	Kind      Kind
	Chunk     *Chunk
	Watermark Watermark
	Barrier   Barrier
}

// ChunkMsg wraps a chunk.
func ChunkMsg(c *Chunk) Message { return Message{Kind: KindChunk, Chunk: c} }

// WatermarkMsg wraps a watermark.
func WatermarkMsg(w Watermark) Message { return Message{Kind: KindWatermark, Watermark: w} }

// BarrierMsg wraps a barrier.
func BarrierMsg(b Barrier) Message { return Message{Kind: KindBarrier, Barrier: b} }

// ChannelSize bounds every channel between operators (in messages).
const ChannelSize = 16

package stream

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// CoalesceMaxRows caps the size a Coalescer gathers parts up to.
const CoalesceMaxRows = 4096

// Coalescer gathers the parts a hash exchange sends to each of its n
// instances into chunks about as large as the exchange's input chunks
// (the largest seen, at most CoalesceMaxRows). Split over n instances, a
// chunk of r rows gives parts of about r/n rows: without it every
// instance would get n times as many chunks, n times smaller, and pay
// its per-chunk costs (a channel hand-off, often a goroutine wake-up, the
// operator's per-batch set-up) n times as often as the single operator.
//
// The caller sends what Take returns before any other message to the
// instance (a watermark, a barrier) and at the end, so rows never pass
// anything they came before; the parts keep their order and their ops.
// Owned by one goroutine (the exchange's).
type Coalescer struct {
	target  int
	parts   [][]*Chunk
	pending []int
}

// NewCoalescer returns a Coalescer for n instances.
func NewCoalescer(n int) *Coalescer {
	return &Coalescer{parts: make([][]*Chunk, n), pending: make([]int, n)}
}

// Input notes a chunk of rows the exchange got, before its parts are
// added: the size the parts are gathered up to follows it.
func (c *Coalescer) Input(rows int) {
	c.target = min(max(c.target, rows), CoalesceMaxRows)
}

// Add adds part p for instance k and returns a chunk to send to it now,
// or nil while the instance's parts are fewer rows than the target.
func (c *Coalescer) Add(k int, p *Chunk) (*Chunk, error) {
	if c.pending[k] == 0 && p.Len() >= c.target {
		return p, nil
	}
	c.parts[k] = append(c.parts[k], p)
	c.pending[k] += p.Len()
	if c.pending[k] < c.target {
		return nil, nil
	}
	return c.Take(k)
}

// Take returns instance k's gathered parts as one chunk and forgets them
// (nil: none).
func (c *Coalescer) Take(k int) (*Chunk, error) {
	ps := c.parts[k]
	if len(ps) == 0 {
		return nil, nil
	}
	defer func() {
		clear(c.parts[k])
		c.parts[k], c.pending[k] = c.parts[k][:0], 0
	}()
	if len(ps) == 1 {
		return ps[0], nil
	}
	return concatChunks(ps)
}

// concatChunks is the chunks' rows, in order, as one chunk (ops nil when
// every part's are: all inserts).
func concatChunks(ps []*Chunk) (*Chunk, error) {
	first := ps[0].Rec
	cols := make([]arrow.Array, first.NumCols())
	parts := make([]arrow.Array, len(ps))
	rows := 0
	for _, p := range ps {
		rows += p.Len()
	}
	for j := range cols {
		for i, p := range ps {
			parts[i] = p.Rec.Column(j)
		}
		a, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			return nil, fmt.Errorf("stream: exchange: gathering parts: %w", err)
		}
		cols[j] = a
	}
	out := &Chunk{Rec: array.NewRecordBatch(first.Schema(), cols, int64(rows))}
	for _, p := range ps {
		if p.Ops != nil {
			out.Ops = make([]Op, 0, rows)
			break
		}
	}
	if out.Ops != nil {
		for _, p := range ps {
			if p.Ops != nil {
				out.Ops = append(out.Ops, p.Ops...)
				continue
			}
			for range p.Len() {
				out.Ops = append(out.Ops, Insert)
			}
		}
	}
	return out, nil
}

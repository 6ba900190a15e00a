package stream

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec"
)

// CoalesceMaxRows caps the size a Coalescer gathers parts up to.
const CoalesceMaxRows = 4096

// Coalescer gathers the rows a hash exchange sends to each of its n
// instances into chunks about as large as the exchange's input chunks
// (the largest seen, at most CoalesceMaxRows). Split over n instances, a
// chunk of r rows gives parts of about r/n rows: without it every
// instance would get n times as many chunks, n times smaller, and pay
// its per-chunk costs (a channel hand-off, often a goroutine wake-up, the
// operator's per-batch set-up) n times as often as the single operator.
//
// The rows are not copied until an instance's chunk is full: Add notes,
// per instance, which rows of each input chunk go there, and Take copies
// them from every input chunk into one new chunk at once
// (exec.TakeRowsFrom). A chunk whose rows all go to one instance with
// nothing gathered before them is passed on as it is.
//
// The caller sends what Take returns before any other message to the
// instance (a barrier, a watermark it does not hold) and at the end, so
// rows never pass anything they came before; the rows keep their order
// and their ops (an update pair split over two instances becomes a
// delete in one and an insert in the other).
//
// Watermarks: a source's stream carries a watermark after every chunk,
// so sending the gathered rows before each would gather nothing. A
// watermark that comes while rows are gathered is held instead (Hold)
// and sent once every instance has sent the rows it had gathered before
// it (Release), as long as the chunks that come after it are not late
// for it (Fits: inserts whose watermarked column is above it), so that
// moving it after them changes no row's lateness: the stream each
// instance gets is one its source could have sent (those rows first,
// then the watermark). A chunk that does not fit sends everything
// gathered and the held watermarks first (the caller's flush).
// Owned by one goroutine (the exchange's).
type Coalescer struct {
	n       int
	target  int
	last    int           // rows of the last input chunk
	segs    [][]gatherSeg // per instance, the rows gathered, in order
	pending []int         // per instance, how many
	free    [][]int32     // index lists to reuse
	lists   [][]int32     // Add's scratch

	held   []Watermark // in order, at most one per column
	behind []bool      // per instance: has rows gathered before a held watermark
	takes  int         // chunks sent since the first held watermark
}

// gatherSeg is rows idx of c (every row when idx is nil), with their ops
// in the instance (nil: all inserts).
type gatherSeg struct {
	c   *Chunk
	idx []int32
	ops []Op
}

// NewCoalescer returns a Coalescer for n instances.
func NewCoalescer(n int) *Coalescer {
	return &Coalescer{n: n, segs: make([][]gatherSeg, n), pending: make([]int, n), behind: make([]bool, n)}
}

// Input notes a chunk of rows the exchange got, before its rows are
// added: the size the rows are gathered up to follows it.
func (c *Coalescer) Input(rows int) {
	c.target = min(max(c.target, rows), CoalesceMaxRows)
	c.last = rows
}

// Add gathers chunk ch's rows: row i for instance owner[i], or every row
// for instance only when only >= 0 (owner is then not read). owner is
// read during the call only.
func (c *Coalescer) Add(ch *Chunk, owner []int32, only int) {
	rows := ch.Len()
	if rows == 0 {
		return
	}
	if only >= 0 {
		c.segs[only] = append(c.segs[only], gatherSeg{c: ch, ops: ch.Ops})
		c.pending[only] += rows
		return
	}
	lists := c.lists[:0]
	for range c.n {
		lists = append(lists, c.idxList())
	}
	for i, o := range owner[:rows] {
		lists[o] = append(lists[o], int32(i))
	}
	for k, idx := range lists {
		if len(idx) == 0 {
			c.free = append(c.free, idx)
			continue
		}
		s := gatherSeg{c: ch, idx: idx}
		if ch.Ops != nil {
			s.ops = splitOps(ch.Ops, owner, idx)
		}
		c.segs[k] = append(c.segs[k], s)
		c.pending[k] += len(idx)
	}
	clear(lists)
	c.lists = lists
}

// splitOps is the ops of rows idx of a chunk (ops) in their instance: an
// update pair whose other half went to another instance (owner) becomes
// a delete or an insert.
func splitOps(ops []Op, owner []int32, idx []int32) []Op {
	out := make([]Op, len(idx))
	rows := len(ops)
	for r, i := range idx {
		op := ops[i]
		switch {
		case op == UpdateBefore && (int(i)+1 >= rows || owner[i+1] != owner[i]):
			op = Delete
		case op == UpdateAfter && (i == 0 || owner[i-1] != owner[i]):
			op = Insert
		}
		out[r] = op
	}
	return out
}

// idxList returns an empty index list, reused when one is free.
func (c *Coalescer) idxList() []int32 {
	if n := len(c.free); n > 0 {
		l := c.free[n-1]
		c.free = c.free[:n-1]
		return l[:0]
	}
	return make([]int32, 0, 256)
}

// Ready reports whether instance k has gathered a chunk's worth of rows.
func (c *Coalescer) Ready(k int) bool { return c.pending[k] > 0 && c.pending[k] >= c.target }

// Pending reports whether some instance has gathered rows.
func (c *Coalescer) Pending() bool {
	for _, n := range c.pending {
		if n > 0 {
			return true
		}
	}
	return false
}

// Take returns instance k's gathered rows as one chunk and forgets them
// (nil: none).
func (c *Coalescer) Take(k int) *Chunk {
	segs := c.segs[k]
	if len(segs) == 0 {
		return nil
	}
	defer func() {
		for i := range segs {
			if segs[i].idx != nil {
				c.free = append(c.free, segs[i].idx)
			}
			segs[i] = gatherSeg{}
		}
		c.segs[k], c.pending[k] = segs[:0], 0
		if c.behind[k] {
			c.behind[k] = false
		}
		if len(c.held) > 0 {
			c.takes++
		}
	}()
	if len(segs) == 1 && segs[0].idx == nil {
		return segs[0].c
	}
	recs := make([]arrow.RecordBatch, len(segs))
	idx := make([][]int32, len(segs))
	withOps := false
	for i, s := range segs {
		recs[i], idx[i] = s.c.Rec, s.idx
		withOps = withOps || s.ops != nil
	}
	out := &Chunk{Rec: exec.TakeRowsFrom(memory.DefaultAllocator, recs[0].Schema(), recs, idx)}
	if withOps {
		out.Ops = make([]Op, 0, c.pending[k])
		for _, s := range segs {
			n := len(s.idx)
			if s.idx == nil {
				n = s.c.Len()
			}
			if s.ops != nil {
				out.Ops = append(out.Ops, s.ops[:n]...)
				continue
			}
			for range n {
				out.Ops = append(out.Ops, Insert)
			}
		}
	}
	return out
}

// Hold holds watermark w behind the gathered rows and reports whether it
// did: not when no rows are gathered, nor for a reader's marks (negative
// columns), which the caller sends at once, nor after a chunk of less
// than half the target: a stream of small chunks (an aggregation's
// output, one row per window) would fill no instance soon and hold the
// watermark, and every consumer's state freed by it, until the barrier.
func (c *Coalescer) Hold(w Watermark) bool {
	if w.Col < 0 || !c.Pending() || 2*c.last < c.target {
		return false
	}
	if len(c.held) == 0 {
		c.takes = 0
	}
	for k, n := range c.pending {
		c.behind[k] = c.behind[k] || n > 0
	}
	for i := range c.held {
		if c.held[i].Col == w.Col {
			c.held[i].Value = max(c.held[i].Value, w.Value)
			return true
		}
	}
	c.held = append(c.held, w)
	return true
}

// Release returns the held watermarks, and forgets them, once no
// instance has rows gathered before them left to send (nil: none, or
// not yet).
func (c *Coalescer) Release() []Watermark {
	if len(c.held) == 0 {
		return nil
	}
	for _, b := range c.behind {
		if b {
			return nil
		}
	}
	return c.Held()
}

// Overdue reports whether watermarks have been held while every
// instance could have sent two chunks: an instance that gets few rows
// (a skewed key) must not hold them back longer; the caller then sends
// everything gathered and the held watermarks.
func (c *Coalescer) Overdue() bool { return len(c.held) > 0 && c.takes >= 2*c.n }

// Held returns the held watermarks and forgets them; the caller sends
// them after every instance's gathered rows (Take).
func (c *Coalescer) Held() []Watermark {
	h := c.held
	c.held = nil
	clear(c.behind)
	return h
}

// Fits reports whether chunk p may be gathered before the held
// watermarks: it holds only inserts, and each held watermark's column is
// a timestamp column with every value above the watermark (no row of p
// is late for it, whichever side of it p passes).
func (c *Coalescer) Fits(p *Chunk) bool {
	if len(c.held) == 0 {
		return true
	}
	if p.Ops != nil {
		return false
	}
	for _, w := range c.held {
		if w.Col >= int(p.Rec.NumCols()) {
			return false
		}
		ts, ok := p.Rec.Column(w.Col).(*array.Timestamp)
		if !ok || ts.NullN() > 0 {
			return false
		}
		for _, v := range ts.TimestampValues() {
			if int64(v) <= w.Value {
				return false
			}
		}
	}
	return true
}

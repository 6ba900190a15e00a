package stream

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

// WindowAgg's output: an entry's change as insert, update pair or delete,
// and the rows collected until a message's chunk is built.

// sameRes reports whether entry e's emitted values are target t's results.
func (r *waggRun) sameRes(e int32, t int) bool {
	for j, p := range r.prev {
		if !r.res[j][t].same(p.get(e)) {
			return false
		}
	}
	return true
}

// setPrev remembers target t's results as entry e's emitted values.
func (r *waggRun) setPrev(e int32, t int) {
	for j, p := range r.prev {
		p.set(e, r.res[j][t])
	}
	r.emitted[e] = true
}

// emitEntry emits entry e's change to target t's results (count n rows) in
// window [start, end): an insert, an update pair or a delete (n == 0).
func (r *waggRun) emitEntry(e int32, t int, n int64, start, end int64) {
	if r.ck != nil {
		r.ck.touchEntry(e) // its mark was cleared, if not its row
	}
	switch {
	case n == 0:
		if r.emitted[e] {
			r.ob.addPrev(r, Delete, e)
			r.emitted[e] = false
		}
	case !r.emitted[e]:
		r.estart[e], r.eend[e] = start, end
		r.ob.addRes(r, Insert, start, end, r.ekey[e], t)
		r.setPrev(e, t)
	case r.estart[e] != start || r.eend[e] != end || !r.sameRes(e, t):
		r.ob.addPrev(r, UpdateBefore, e)
		r.estart[e], r.eend[e] = start, end
		r.ob.addRes(r, UpdateAfter, start, end, r.ekey[e], t)
		r.setPrev(e, t)
	}
}

// outBuf collects output rows until they are built into a chunk: the
// window columns, then the GROUP BY columns, then the aggregates (cols).
// Owned by the run's goroutine. A chunk it builds owns its arrays and ops:
// outBuf starts new buffers for the rows after it, never writing into a
// chunk that went out.
type outBuf struct {
	ops   []Op
	mixed bool     // some op is not an Insert (else the chunk's Ops are nil)
	cols  []outCol // per output column; keys copied, as a key may be freed before the chunk is built
}

// init sets up a column buffer per output column of r.
func (o *outBuf) init(r *waggRun) {
	o.cols = make([]outCol, len(r.w.Cols))
	for i, c := range r.w.Cols {
		o.cols[i] = newOutCol(c.Type, r.schema.Field(i).Type)
	}
}

// vals is aggregate j's column.
func (o *outBuf) vals(r *waggRun, j int) *outCol { return &o.cols[2+r.nk+j] }

// addRes adds a row of target t's results.
func (o *outBuf) addRes(r *waggRun, op Op, start, end int64, k int32, t int) {
	o.add(r, op, start, end, k)
	for j := range r.res {
		o.vals(r, j).add(r.res[j][t])
	}
}

// addBlock adds one row per key of keys, key keys[t] with target t's
// results, all in window [start, end).
func (o *outBuf) addBlock(r *waggRun, op Op, start, end int64, keys []int32) {
	for range keys {
		o.ops = append(o.ops, op)
	}
	o.mixed = o.mixed || op != Insert
	o.cols[0].addWordN(start, len(keys))
	o.cols[1].addWordN(end, len(keys))
	for j, kc := range r.keyCells {
		o.cols[2+j].addKeys(kc, keys)
	}
	for j := range r.res {
		o.vals(r, j).addCells(r.res[j][:len(keys)])
	}
}

// addPrev adds entry e's emitted row.
func (o *outBuf) addPrev(r *waggRun, op Op, e int32) {
	o.add(r, op, r.estart[e], r.eend[e], r.ekey[e])
	for j, p := range r.prev {
		o.vals(r, j).add(p.get(e))
	}
}

func (o *outBuf) add(r *waggRun, op Op, start, end int64, k int32) {
	o.ops = append(o.ops, op)
	o.mixed = o.mixed || op != Insert
	o.cols[0].addWordN(start, 1)
	o.cols[1].addWordN(end, 1)
	for j, kc := range r.keyCells {
		o.cols[2+j].add(kc.get(k))
	}
}

// chunk builds the collected rows (nil when none) and empties o.
func (o *outBuf) chunk(r *waggRun) (*Chunk, error) {
	n := len(o.ops)
	if n == 0 {
		return nil, nil
	}
	mem := r.ectx.Allocator()
	cols := make([]arrow.Array, 0, len(o.cols))
	var err error
	for i := range o.cols {
		var a arrow.Array
		if a, err = o.cols[i].build(mem); err != nil {
			break
		}
		cols = append(cols, a)
	}
	var ops []Op
	if o.mixed {
		ops, o.ops = o.ops, nil // the chunk owns them
	} else {
		o.ops = o.ops[:0] // all inserts: the chunk has no ops
	}
	o.mixed = false
	if err != nil {
		for i := range o.cols {
			o.cols[i].reset()
		}
		for _, c := range cols {
			c.Release()
		}
		return nil, err
	}
	return &Chunk{Rec: array.NewRecordBatch(r.schema, cols, int64(n)), Ops: ops}, nil
}

// outCol is one output column's values until its array is built. A
// column of 64-bit values (bigint, float8, time, timestamps) keeps the raw
// words and hands them to the array it builds, which owns them from then
// on (no copy, no builder); any other type keeps cells.
type outCol struct {
	t     types.T
	dt    arrow.DataType // the words' array type (nil: cells)
	words []int64
	nulls []int32 // the NULL rows among words
	cells []cell
}

func newOutCol(t types.T, dt arrow.DataType) outCol {
	c := outCol{t: t}
	switch t.Kind {
	case types.Int8, types.Float8, types.Time, types.Timestamp, types.TimestampTZ:
		c.dt = dt // cell.a is the value's 64 bits (floatOf: a float's bits)
	}
	return c
}

func (c *outCol) add(x cell) {
	if c.dt == nil {
		c.cells = append(c.cells, x)
		return
	}
	if x.null {
		c.nulls = append(c.nulls, int32(len(c.words)))
	}
	c.words = append(c.words, x.a)
}

func (c *outCol) addCells(xs []cell) {
	if c.dt == nil {
		c.cells = append(c.cells, xs...)
		return
	}
	for _, x := range xs {
		if x.null {
			c.nulls = append(c.nulls, int32(len(c.words)))
		}
		c.words = append(c.words, x.a)
	}
}

// addWordN adds n rows of the (non-NULL) value v; only for word columns.
func (c *outCol) addWordN(v int64, n int) {
	if c.dt == nil {
		for range n {
			c.cells = append(c.cells, intCell(v))
		}
		return
	}
	for range n {
		c.words = append(c.words, v)
	}
}

// addKeys adds the values of keys from kc.
func (c *outCol) addKeys(kc *cellCol, keys []int32) {
	if c.dt == nil || (kc.st != stInt && kc.st != stFloat) {
		for _, k := range keys {
			c.add(kc.get(k))
		}
		return
	}
	for _, k := range keys {
		if kc.null.get(k) {
			c.nulls = append(c.nulls, int32(len(c.words)))
		}
		c.words = append(c.words, kc.a[k])
	}
}

// build makes the column's array and empties c; the array owns what it
// was built from.
func (c *outCol) build(mem memory.Allocator) (arrow.Array, error) {
	if c.dt == nil {
		a, err := buildCells(mem, c.t, c.cells)
		clear(c.cells) // drop the strings
		c.cells = c.cells[:0]
		return a, err
	}
	n := len(c.words)
	var vb *memory.Buffer
	if len(c.nulls) > 0 {
		bm := make([]byte, bitutil.BytesForBits(int64(n)))
		bitutil.SetBitsTo(bm, 0, int64(n), true)
		for _, i := range c.nulls {
			bitutil.ClearBit(bm, int(i))
		}
		vb = memory.NewBufferBytes(bm)
	}
	d := array.NewData(c.dt, n, []*memory.Buffer{vb, memory.NewBufferBytes(arrow.GetBytes(c.words[:n:n]))}, nil, len(c.nulls), 0)
	defer d.Release()
	c.words, c.nulls = make([]int64, 0, n), c.nulls[:0] // the array owns the old words
	return array.MakeFromData(d), nil
}

// reset empties c (after a failed build).
func (c *outCol) reset() {
	clear(c.cells)
	c.cells, c.words, c.nulls = c.cells[:0], nil, c.nulls[:0]
}

// addSat is a+b, saturated at the int64 range.
func addSat(a, b int64) int64 {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		if b > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return s
}

// alignDown is the largest t' <= t with t' ≡ off (mod n).
func alignDown(t, n, off int64) int64 {
	m := (t - off) % n
	if m < 0 {
		m += n
	}
	return t - m
}

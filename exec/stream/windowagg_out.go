package stream

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
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

// outBuf collects output rows until they are built into a chunk.
type outBuf struct {
	ops        []Op
	start, end []int64
	keys       [][]cell // per GROUP BY column (copied: the key may be freed before the chunk is built)
	vals       [][]cell // per aggregate
}

// addRes adds a row of target t's results.
func (o *outBuf) addRes(r *waggRun, op Op, start, end int64, k int32, t int) {
	o.add(r, op, start, end, k)
	for j := range o.vals {
		o.vals[j] = append(o.vals[j], r.res[j][t])
	}
}

// addBlock adds one row per key of keys, key keys[t] with target t's
// results, all in window [start, end).
func (o *outBuf) addBlock(r *waggRun, op Op, start, end int64, keys []int32) {
	for range keys {
		o.ops, o.start, o.end = append(o.ops, op), append(o.start, start), append(o.end, end)
	}
	for j, kc := range r.keyCells {
		for _, k := range keys {
			o.keys[j] = append(o.keys[j], kc.get(k))
		}
	}
	for j := range o.vals {
		o.vals[j] = append(o.vals[j], r.res[j][:len(keys)]...)
	}
}

// addPrev adds entry e's emitted row.
func (o *outBuf) addPrev(r *waggRun, op Op, e int32) {
	o.add(r, op, r.estart[e], r.eend[e], r.ekey[e])
	for j, p := range r.prev {
		o.vals[j] = append(o.vals[j], p.get(e))
	}
}

func (o *outBuf) add(r *waggRun, op Op, start, end int64, k int32) {
	o.ops, o.start, o.end = append(o.ops, op), append(o.start, start), append(o.end, end)
	for j, kc := range r.keyCells {
		o.keys[j] = append(o.keys[j], kc.get(k))
	}
}

// chunk builds the collected rows (nil when none) and empties o.
func (o *outBuf) chunk(r *waggRun) (*Chunk, error) {
	n := len(o.ops)
	if n == 0 {
		return nil, nil
	}
	mem := r.ectx.Allocator()
	cols := make([]arrow.Array, 0, len(r.w.Cols))
	fail := func(err error) (*Chunk, error) {
		for _, c := range cols {
			c.Release()
		}
		return nil, err
	}
	cells := make([]cell, n)
	for _, ts := range [][]int64{o.start, o.end} {
		for i, v := range ts {
			cells[i] = intCell(v)
		}
		a, err := buildCells(mem, r.tt, cells)
		if err != nil {
			return fail(err)
		}
		cols = append(cols, a)
	}
	for k, kc := range o.keys {
		a, err := buildCells(mem, r.w.Cols[2+k].Type, kc)
		if err != nil {
			return fail(err)
		}
		cols = append(cols, a)
		clear(kc)
		o.keys[k] = kc[:0]
	}
	for j, v := range o.vals {
		a, err := buildCells(mem, r.w.Cols[2+r.nk+j].Type, v)
		if err != nil {
			return fail(err)
		}
		cols = append(cols, a)
		clear(v)
		o.vals[j] = v[:0]
	}
	ops := o.ops
	o.ops, o.start, o.end = nil, o.start[:0], o.end[:0]
	return &Chunk{Rec: array.NewRecordBatch(r.schema, cols, int64(n)), Ops: ops}, nil
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

package stream

import (
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

// flushScratch is flush's working memory, kept between epochs.
type flushScratch struct {
	live    []int32  // touched groups that still hold rows, in id order
	changed []bool   // per live group: its row differs from the emitted one
	gone    []int32  // touched groups whose rows are all retracted
	res     [][]cell // per aggregate, per live group: its new result
	og      []int32  // per output row: its group
	src     []int32  // per output row: -1 for the emitted row, else its index in live
	cells   []cell
}

// flush builds the epoch's output chunk (nil when nothing changed) and
// frees the groups that became empty. It works a column at a time over the
// epoch's groups taken in id order, so that each pass reads one state
// array in address order.
func (r *aggRun) flush() (*Chunk, error) {
	if r.table == nil && !r.started {
		r.started = true
		if !r.mark[0] {
			r.mark[0] = true
			r.touched = append(r.touched, 0)
		}
	}
	if len(r.touched) == 0 {
		return nil, nil
	}
	f := &r.fl
	r.orderTouched()
	f.live, f.changed, f.gone = f.live[:0], f.changed[:0], f.gone[:0]
	for _, g := range r.touched {
		r.mark[g] = false
		r.markDirty(g)
		if r.table != nil && r.rows[g] == 0 {
			f.gone = append(f.gone, g)
		} else {
			f.live, f.changed = append(f.live, g), append(f.changed, !r.emitted[g])
		}
	}
	r.touched = r.touched[:0]
	for j, a := range r.aggs {
		f.res[j] = growSlice(f.res[j][:0], len(f.live))
		res := f.res[j]
		if err := a.results(f.live, res); err != nil {
			return nil, err
		}
		p := r.prev[j]
		for t, g := range f.live {
			if !f.changed[t] && !res[t].same(p.get(g)) {
				f.changed[t] = true
			}
		}
	}
	// The output rows, by group id: a Delete for an emptied group that
	// was emitted, an Insert for a new one, an update pair for a change.
	var ops []Op
	f.og, f.src = f.og[:0], f.src[:0]
	add := func(g, src int32, op Op) {
		f.og, f.src, ops = append(f.og, g), append(f.src, src), append(ops, op)
	}
	gi := 0
	deletes := func(below int32) {
		for ; gi < len(f.gone) && f.gone[gi] < below; gi++ {
			if g := f.gone[gi]; r.emitted[g] {
				add(g, -1, Delete)
			}
		}
	}
	for t, g := range f.live {
		deletes(g)
		switch {
		case !f.changed[t]:
		case r.emitted[g]:
			add(g, -1, UpdateBefore)
			add(g, int32(t), UpdateAfter)
		default:
			add(g, int32(t), Insert)
		}
	}
	deletes(1<<31 - 1)
	var out *Chunk
	if len(ops) > 0 {
		rec, err := r.output()
		if err != nil {
			return nil, err
		}
		out = &Chunk{Rec: rec, Ops: ops}
	}
	for j, p := range r.prev {
		res := f.res[j]
		for t, g := range f.live {
			if f.changed[t] {
				p.set(g, res[t])
			}
		}
	}
	for t, g := range f.live {
		if f.changed[t] {
			r.emitted[g] = true
		}
	}
	for _, g := range f.gone {
		r.free(g)
	}
	return out, nil
}

// orderTouched sorts the epoch's groups by id (scanning the marks when
// they are many).
func (r *aggRun) orderTouched() {
	if len(r.touched) <= r.ngroups/64 {
		slices.Sort(r.touched)
		return
	}
	r.touched = r.touched[:0]
	for g, m := range r.mark[:r.ngroups] {
		if m {
			r.touched = append(r.touched, int32(g))
		}
	}
}

// output builds the record of the rows listed in r.fl.og and r.fl.src.
func (r *aggRun) output() (arrow.RecordBatch, error) {
	f := &r.fl
	n := len(f.og)
	f.cells = growSlice(f.cells[:0], n)
	cells := f.cells
	mem := r.ectx.Allocator()
	cols := make([]arrow.Array, 0, len(r.h.Cols))
	release := func() {
		for _, c := range cols {
			c.Release()
		}
	}
	for k, kc := range r.keys {
		for i, g := range f.og {
			cells[i] = kc.get(g)
		}
		a, err := buildCells(mem, r.h.Cols[k].Type, cells)
		if err != nil {
			release()
			return nil, err
		}
		cols = append(cols, a)
	}
	for j, p := range r.prev {
		res := f.res[j]
		for i, g := range f.og {
			if s := f.src[i]; s < 0 {
				cells[i] = p.get(g)
			} else {
				cells[i] = res[s]
			}
		}
		a, err := buildCells(mem, r.h.Cols[len(r.keys)+j].Type, cells)
		if err != nil {
			release()
			return nil, err
		}
		cols = append(cols, a)
	}
	clear(cells) // drop the strings
	return array.NewRecordBatch(r.schema, cols, int64(n)), nil
}

// buildCells makes an array of type t from cells.
func buildCells(mem memory.Allocator, t types.T, cells []cell) (arrow.Array, error) {
	b := types.NewBuilder(mem, t)
	defer b.Release()
	b.Reserve(len(cells))
	switch x := b.(type) {
	case *array.Int64Builder:
		for _, c := range cells {
			if c.null {
				x.UnsafeAppendBoolToBitmap(false)
			} else {
				x.UnsafeAppend(c.a)
			}
		}
	case *array.Float64Builder:
		for _, c := range cells {
			if c.null {
				x.UnsafeAppendBoolToBitmap(false)
			} else {
				x.UnsafeAppend(floatOf(c))
			}
		}
	case *array.StringBuilder:
		size := 0
		for _, c := range cells {
			size += len(c.s)
			if c.wide {
				size += 20
			}
		}
		x.ReserveData(size)
		var buf []byte
		for _, c := range cells {
			switch {
			case c.null:
				x.AppendNull()
			case c.wide:
				buf = c.appendWide(buf[:0])
				x.BinaryBuilder.Append(buf)
			default:
				x.Append(c.s)
			}
		}
	default:
		for _, c := range cells {
			if err := appendCell(b, c, t); err != nil {
				return nil, err
			}
		}
	}
	return b.NewArray(), nil
}

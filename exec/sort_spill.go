package exec

import (
	"container/heap"
	"fmt"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/membudget"
	"github.com/streamsql/streamsql/types"
)

// External merge sort. When a Sort's kept input passes work_mem and the
// statement has a temporary directory (Context.TempDir), the input so far
// is sorted and written out as a run (an Arrow IPC file, unlinked at once
// so that nothing outlives the statement or a crash) and memory starts
// over. At the end the runs (and the last one, still in memory) are merged
// row by row, streaming: memory is one batch per run plus one output
// batch. Ties keep input order (runs hold consecutive input, and the merge
// prefers the earlier run), so the result equals the in-memory sort's.

// sortIter is a Sort's execution. Used by one goroutine.
type sortIter struct {
	ctx  *Context
	s    *Sort
	in   Iterator
	acct *membudget.Account
	out  Iterator // the sorted rows, once the input is read
	runs []*os.File
}

func (it *sortIter) Next() (_ arrow.RecordBatch, err error) {
	defer recoverErr(&err)
	if it.out == nil {
		if err := it.run(); err != nil {
			return nil, err
		}
	}
	return it.out.Next()
}

func (it *sortIter) Close() error {
	it.acct.Release()
	for _, f := range it.runs {
		f.Close()
	}
	it.runs = nil
	if it.out != nil {
		it.out.Close()
	}
	return it.in.Close()
}

// run reads the input, spilling sorted runs past work_mem.
func (it *sortIter) run() error {
	ctx, s := it.ctx, it.s
	cols := s.Input.Columns()
	spill := ctx != nil && ctx.TempDir != "" && budgetOf(ctx).WorkMem() > 0
	var bs []arrow.RecordBatch
	for {
		b, err := nextCharged(ctx, it.in, it.acct)
		if err != nil {
			return err
		}
		if b == nil {
			break
		}
		bs = append(bs, b)
		if spill && it.acct.OverWorkMem() {
			if err := it.spill(cols, bs); err != nil {
				return err
			}
			bs = nil
		}
	}
	// The sorted copy is as large as the input, and exists with it.
	if err := it.acct.Grow(it.acct.Used()); err != nil {
		return err
	}
	sorted, err := sortBatches(ctx, cols, bs, s.Keys)
	if err != nil {
		return err
	}
	if len(it.runs) == 0 {
		it.out = &sliceIter{bs: sorted}
		return nil
	}
	m, err := newMergeIter(ctx, cols, s.Keys, it.runs, sorted)
	if err != nil {
		return err
	}
	it.out = m
	return nil
}

// spill sorts bs and writes them as a run.
func (it *sortIter) spill(cols []types.Column, bs []arrow.RecordBatch) error {
	sorted, err := sortBatches(it.ctx, cols, bs, it.s.Keys)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(it.ctx.TempDir, "sort-*.arrow")
	if err != nil {
		return fmt.Errorf("exec: sort: create temporary file: %w", err)
	}
	os.Remove(f.Name()) // open files outlive their name; a crash leaves nothing
	it.runs = append(it.runs, f)
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(types.ArrowSchema(cols)), ipc.WithAllocator(alloc(it.ctx)))
	if err != nil {
		return fmt.Errorf("exec: sort: write run: %w", err)
	}
	for _, b := range sorted {
		if err := w.Write(b); err != nil {
			return fmt.Errorf("exec: sort: write run: %w", err)
		}
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("exec: sort: write run: %w", err)
	}
	it.acct.Release()
	return nil
}

// runCursor reads one sorted run batch by batch.
type runCursor struct {
	order int // the run's place in input order (ties go to the lower)
	next  func() (arrow.RecordBatch, error)
	batch arrow.RecordBatch
	keys  []arrow.Array
	row   int
}

// advance moves to the next row; false at the end of the run.
func (c *runCursor) advance(ctx *Context, es []expr.Expr) (bool, error) {
	c.row++
	for c.batch == nil || c.row >= int(c.batch.NumRows()) {
		b, err := c.next()
		if err != nil || b == nil {
			return false, err
		}
		keys, err := evalAll(ctx, es, b)
		if err != nil {
			return false, err
		}
		c.batch, c.keys, c.row = b, keys, 0
	}
	return true, nil
}

// mergeIter merges sorted runs.
type mergeIter struct {
	ctx    *Context
	cols   []types.Column
	keys   []SortKey
	es     []expr.Expr
	schema *arrow.Schema
	h      cursorHeap
	err    error
}

func newMergeIter(ctx *Context, cols []types.Column, keys []SortKey, runs []*os.File, last []arrow.RecordBatch) (*mergeIter, error) {
	m := &mergeIter{ctx: ctx, cols: cols, keys: keys, schema: types.ArrowSchema(cols)}
	m.h.m = m
	for _, k := range keys {
		m.es = append(m.es, k.E)
	}
	add := func(c *runCursor) error {
		c.row = -1
		ok, err := c.advance(ctx, m.es)
		if ok {
			m.h.cs = append(m.h.cs, c)
		}
		return err
	}
	for i, f := range runs {
		r, err := ipc.NewFileReader(f, ipc.WithAllocator(alloc(ctx)))
		if err != nil {
			return nil, fmt.Errorf("exec: sort: read run: %w", err)
		}
		n, k := r.NumRecords(), 0
		next := func() (arrow.RecordBatch, error) {
			if k >= n {
				return nil, nil
			}
			k++
			return r.RecordBatchAt(k - 1)
		}
		if err := add(&runCursor{order: i, next: next}); err != nil {
			return nil, err
		}
	}
	rest := last
	next := func() (arrow.RecordBatch, error) {
		if len(rest) == 0 {
			return nil, nil
		}
		b := rest[0]
		rest = rest[1:]
		return b, nil
	}
	if err := add(&runCursor{order: len(runs), next: next}); err != nil {
		return nil, err
	}
	heap.Init(&m.h)
	return m, nil
}

func (m *mergeIter) Next() (arrow.RecordBatch, error) {
	if len(m.h.cs) == 0 {
		return nil, nil
	}
	mem := alloc(m.ctx)
	bld := make([]array.Builder, len(m.cols))
	for i, c := range m.cols {
		bld[i] = types.NewBuilder(mem, c.Type)
		defer bld[i].Release()
	}
	n, size := 0, m.ctx.Size()
	for n < size && len(m.h.cs) > 0 {
		c := m.h.cs[0]
		for i := range bld {
			copyValue(bld[i], c.batch.Column(i), c.row)
		}
		n++
		ok, err := c.advance(m.ctx, m.es)
		if err != nil {
			return nil, err
		}
		if ok {
			heap.Fix(&m.h, 0)
		} else {
			heap.Pop(&m.h)
		}
		if m.err != nil {
			return nil, m.err
		}
	}
	arrs := make([]arrow.Array, len(bld))
	for i := range bld {
		arrs[i] = bld[i].NewArray()
	}
	return array.NewRecordBatch(m.schema, arrs, int64(n)), nil
}

func (m *mergeIter) Close() error { m.h.cs = nil; return nil }

// less orders the current rows of two cursors by the sort keys, then by
// run.
func (m *mergeIter) less(a, b *runCursor) bool {
	for k, key := range m.keys {
		t := key.E.Type()
		va := types.ValueAt(a.keys[k], a.row, t)
		vb := types.ValueAt(b.keys[k], b.row, t)
		var c int
		switch {
		case va == nil && vb == nil:
		case va == nil || vb == nil:
			// NULLs sort as nullsFirst says, whatever the direction.
			if (va == nil) == key.NullsFirst {
				return true
			}
			return false
		default:
			c = types.Compare(va, vb, t)
			if key.Desc {
				c = -c
			}
		}
		if c != 0 {
			return c < 0
		}
	}
	return a.order < b.order
}

// cursorHeap is a min-heap of run cursors by their current row.
type cursorHeap struct {
	m  *mergeIter
	cs []*runCursor
}

func (h *cursorHeap) Len() int           { return len(h.cs) }
func (h *cursorHeap) Less(i, j int) bool { return h.m.less(h.cs[i], h.cs[j]) }
func (h *cursorHeap) Swap(i, j int)      { h.cs[i], h.cs[j] = h.cs[j], h.cs[i] }
func (h *cursorHeap) Push(x any)         { h.cs = append(h.cs, x.(*runCursor)) }
func (h *cursorHeap) Pop() any {
	c := h.cs[len(h.cs)-1]
	h.cs = h.cs[:len(h.cs)-1]
	return c
}

package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/storage"
	"github.com/streamsql/streamsql/types"
)

// Columns returns the read columns, plus the row id when WithRowID.
func (s *Scan) Columns() []types.Column {
	if !s.WithRowID {
		return s.Cols
	}
	cols := make([]types.Column, len(s.Cols), len(s.Cols)+1)
	copy(cols, s.Cols)
	return append(cols, types.Column{Name: "ctid", Type: types.TInt8})
}

// Children returns nothing.
func (s *Scan) Children() []Node { return nil }

// Explain returns "Seq Scan on t" with the pushed-down filter.
func (s *Scan) Explain() string {
	e := "Seq Scan on " + s.Name
	if s.Key != nil {
		e = "Index Scan on " + s.Name + " (key: " + s.Key.String() + ")"
	}
	if s.Filter != nil {
		e += " (filter: " + s.Filter.String() + ")"
	}
	return e
}

// ExplainOutput is the read columns qualified by the table's name
// (EXPLAIN VERBOSE).
func (s *Scan) ExplainOutput() []string {
	cols := s.Columns()
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = s.Name + "." + c.Name
	}
	return out
}

// Open takes the table's snapshot; rows are read lazily from it.
func (s *Scan) Open(ctx *Context) (Iterator, error) {
	var snap storage.Snapshot
	switch {
	case s.Table != nil && ctx.Eval != nil && ctx.Eval.Tx != nil:
		snap = ctx.Eval.Tx.Snapshot(s.Table)
	case s.Table != nil:
		snap = s.Table.Snapshot()
	}
	if s.Key != nil && s.Table != nil {
		if chunks, ok := s.lookupChunks(ctx, snap); ok {
			snap.Chunks = chunks
		}
	}
	it := &scanIter{ctx: ctx, s: s, chunks: snap.Chunks, size: ctx.Size(), schema: types.ArrowSchema(s.Columns())}
	if s.Filter != nil {
		it.quals = QualList(s.Filter)
	}
	return it, nil
}

type scanIter struct {
	ctx     *Context
	s       *Scan
	chunks  []storage.Chunk
	size    int
	schema  *arrow.Schema // output, with the row id
	ci, row int           // position: chunk, row within it
	sel     []int32
	quals   []expr.Expr // s.Filter's parts (QualList)
}

func (it *scanIter) Next() (_ arrow.RecordBatch, err error) {
	defer recoverErr(&err)
	for it.ci < len(it.chunks) {
		if err := canceled(it.ctx); err != nil {
			return nil, err
		}
		ch := &it.chunks[it.ci]
		n := int(ch.Rec.NumRows())
		if it.row >= n {
			it.ci++
			it.row = 0
			continue
		}
		start := it.row
		end := min(start+it.size, n)
		it.row = end
		b := it.read(ch, start, end)
		if b == nil {
			continue
		}
		if it.s.Filter != nil {
			fb, err := applyFilter(it.ctx, b, it.quals)
			if err != nil {
				return nil, err
			}
			if fb == nil {
				continue
			}
			b = fb
		}
		return b, nil
	}
	return nil, nil
}

// read returns the live rows [start, end) of a chunk, projected, with the
// row id column last when asked for; nil when every row is deleted.
func (it *scanIter) read(ch *storage.Chunk, start, end int) arrow.RecordBatch {
	mem := alloc(it.ctx)
	cols := make([]arrow.Array, len(it.s.Proj), len(it.s.Proj)+1)
	var live []int32
	if ch.Deleted != nil {
		live = it.sel[:0]
		for i := start; i < end; i++ {
			if !bitutil.BitIsSet(ch.Deleted, i) {
				live = append(live, int32(i))
			}
		}
		it.sel = live
		if len(live) == 0 {
			return nil
		}
		if len(live) == end-start {
			live = nil
		}
	}
	n := end - start
	if live != nil {
		n = len(live)
	}
	for c, p := range it.s.Proj {
		a := ch.Rec.Column(p)
		if live != nil {
			cols[c] = takeArray(mem, a, live)
		} else {
			cols[c] = array.NewSlice(a, int64(start), int64(end))
		}
	}
	if it.s.WithRowID {
		ids := array.NewInt64Builder(mem)
		ids.Reserve(n)
		if live != nil {
			for _, i := range live {
				ids.UnsafeAppend(ch.FirstRowID + int64(i))
			}
		} else {
			for i := start; i < end; i++ {
				ids.UnsafeAppend(ch.FirstRowID + int64(i))
			}
		}
		cols = append(cols, ids.NewArray())
		ids.Release()
	}
	return array.NewRecordBatch(it.schema, cols, int64(n))
}

func (it *scanIter) Close() error { it.chunks = nil; return nil }

package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Columns returns the input's columns.
func (l *Limit) Columns() []types.Column { return l.Input.Columns() }

// Children returns the input.
func (l *Limit) Children() []Node { return []Node{l.Input} }

// Explain returns "Limit".
func (l *Limit) Explain() string {
	s := "Limit"
	if l.Limit != nil {
		s += " " + countString(l.Limit)
	}
	if l.WithTies != nil {
		s += " with ties"
	}
	if l.Offset != nil {
		s += " offset " + countString(l.Offset)
	}
	return s
}

// countString shows a constant count as a plain number, else the expression.
func countString(e expr.Expr) string {
	if c, ok := e.(*expr.Const); ok && c.V != nil {
		return fmt.Sprint(c.V)
	}
	return e.String()
}

// Open evaluates the count and offset, then opens the input (not at all
// when LIMIT is 0).
func (l *Limit) Open(ctx *Context) (Iterator, error) {
	it := &limitIter{ctx: ctx, left: -1, ties: l.WithTies}
	if l.Offset != nil {
		v, ok, err := constInt(ctx, l.Offset)
		if err != nil {
			return nil, err
		}
		if ok && v < 0 {
			return nil, pgerr.New(pgerr.InvalidRowCountInOffset, "OFFSET must not be negative")
		}
		it.skip = v
	}
	if l.Limit != nil {
		v, ok, err := constInt(ctx, l.Limit)
		if err != nil {
			return nil, err
		}
		if ok {
			if v < 0 {
				return nil, pgerr.New(pgerr.InvalidRowCountInLimit, "LIMIT must not be negative")
			}
			it.left = v
		}
	}
	if it.left == 0 {
		return &sliceIter{}, nil
	}
	if srt, ok := l.Input.(*Sort); ok && l.WithTies == nil && it.left > 0 && it.left+it.skip <= 1<<20 {
		// ORDER BY ... LIMIT: keep only the first rows while sorting.
		in, err := OpenNode(ctx, srt.Input)
		if err != nil {
			return nil, err
		}
		it.in = &blocking{in: in, run: (&topNIter{ctx: ctx, s: srt, in: in, keep: int(it.left + it.skip)}).run}
		return it, nil
	}
	in, err := OpenNode(ctx, l.Input)
	if err != nil {
		return nil, err
	}
	it.in = in
	return it, nil
}

type limitIter struct {
	ctx  *Context
	in   Iterator
	skip int64
	left int64 // -1: no limit
	// WITH TIES: the sort keys, and once the count is reached with the
	// batch used up, the key values of the last row passed (nil: done).
	ties    []SortKey
	tieLast []any
}

func (it *limitIter) Next() (_ arrow.RecordBatch, err error) {
	defer recoverErr(&err)
	if it.left == 0 && it.tieLast != nil {
		return it.nextTies()
	}
	for it.left != 0 {
		if err := canceled(it.ctx); err != nil {
			return nil, err
		}
		b, err := it.in.Next()
		if err != nil || b == nil {
			return nil, err
		}
		n := b.NumRows()
		if it.skip >= n {
			it.skip -= n
			continue
		}
		start := it.skip
		it.skip = 0
		end := n
		if it.left >= 0 && end-start > it.left {
			end = start + it.left
		}
		if it.left >= 0 {
			it.left -= end - start
		}
		if it.left == 0 && it.ties != nil && end > start {
			keys, err := evalAll(it.ctx, sortKeyExprs(it.ties), b)
			if err != nil {
				return nil, err
			}
			last := keyValues(keys, it.ties, int(end-1))
			for end < n && tiesWith(keys, it.ties, int(end), last) {
				end++
			}
			if end == n {
				it.tieLast = last // ties may go on in the next batch
			}
		}
		if start == 0 && end == n {
			return b, nil
		}
		return b.NewSlice(start, end), nil
	}
	return nil, nil
}

// nextTies passes the leading rows of the next batch that tie with the
// last row passed, and ends once a row does not.
func (it *limitIter) nextTies() (arrow.RecordBatch, error) {
	if err := canceled(it.ctx); err != nil {
		return nil, err
	}
	b, err := it.in.Next()
	if err != nil || b == nil {
		it.tieLast = nil
		return nil, err
	}
	keys, err := evalAll(it.ctx, sortKeyExprs(it.ties), b)
	if err != nil {
		return nil, err
	}
	n := int(b.NumRows())
	end := 0
	for end < n && tiesWith(keys, it.ties, end, it.tieLast) {
		end++
	}
	if end < n {
		it.tieLast = nil
	}
	if end == n {
		return b, nil
	}
	return b.NewSlice(0, int64(end)), nil
}

func sortKeyExprs(ks []SortKey) []expr.Expr {
	es := make([]expr.Expr, len(ks))
	for i, k := range ks {
		es[i] = k.E
	}
	return es
}

// keyValues returns the sort key values of row i.
func keyValues(keys []arrow.Array, ks []SortKey, i int) []any {
	vs := make([]any, len(ks))
	for k, key := range ks {
		vs[k] = types.ValueAt(keys[k], i, key.E.Type())
	}
	return vs
}

// tiesWith reports whether row i equals vs on every sort key (NULLs tie
// with NULLs, as the sort places them together).
func tiesWith(keys []arrow.Array, ks []SortKey, i int, vs []any) bool {
	for k, key := range ks {
		t := key.E.Type()
		v := types.ValueAt(keys[k], i, t)
		switch {
		case v == nil && vs[k] == nil:
		case v == nil || vs[k] == nil:
			return false
		case types.Compare(v, vs[k], t) != 0:
			return false
		}
	}
	return true
}

func (it *limitIter) Close() error {
	if it.in == nil {
		return nil
	}
	return it.in.Close()
}

// topNIter is a Sort whose consumer needs only its first keep rows: it
// sorts whenever enough input has accumulated and keeps only those rows,
// so memory stays proportional to keep. Stable like Sort: kept rows come
// before later input in the next round, and ties keep input order.
type topNIter struct {
	ctx  *Context
	s    *Sort
	in   Iterator
	keep int
}

func (it *topNIter) run() ([]arrow.RecordBatch, error) {
	cols := it.s.Input.Columns()
	var buf []arrow.RecordBatch
	rows := 0
	limit := max(2*it.keep, 1<<16)
	for {
		if err := canceled(it.ctx); err != nil {
			return nil, err
		}
		b, err := it.in.Next()
		if err != nil {
			return nil, err
		}
		if b == nil {
			break
		}
		buf = append(buf, b)
		rows += int(b.NumRows())
		if rows >= limit {
			sorted, err := sortBatches(it.ctx, cols, buf, it.s.Keys)
			if err != nil {
				return nil, err
			}
			buf, rows = firstRows(sorted, it.keep), it.keep
		}
	}
	sorted, err := sortBatches(it.ctx, cols, buf, it.s.Keys)
	if err != nil {
		return nil, err
	}
	return firstRows(sorted, it.keep), nil
}

// firstRows returns the first n rows of bs.
func firstRows(bs []arrow.RecordBatch, n int) []arrow.RecordBatch {
	var out []arrow.RecordBatch
	for _, b := range bs {
		if n <= 0 {
			break
		}
		if int(b.NumRows()) > n {
			b = b.NewSlice(0, int64(n))
		}
		out = append(out, b)
		n -= int(b.NumRows())
	}
	return out
}

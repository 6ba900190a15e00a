package exec

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// Columns returns the input's columns.
func (f *Filter) Columns() []types.Column { return f.Input.Columns() }

// Children returns the input.
func (f *Filter) Children() []Node { return []Node{f.Input} }

// Explain returns "Filter: cond".
func (f *Filter) Explain() string { return "Filter: " + f.Cond.String() }

// Open opens the input.
func (f *Filter) Open(ctx *Context) (Iterator, error) {
	in, err := OpenNode(ctx, f.Input)
	if err != nil {
		return nil, err
	}
	return &filterIter{ctx: ctx, f: f, in: in, quals: QualList(f.Cond)}, nil
}

type filterIter struct {
	ctx   *Context
	f     *Filter
	in    Iterator
	quals []expr.Expr // f.Cond's parts, in the order they are applied
}

func (it *filterIter) Next() (_ arrow.RecordBatch, err error) {
	defer recoverErr(&err)
	for {
		if err := canceled(it.ctx); err != nil {
			return nil, err
		}
		b, err := it.in.Next()
		if err != nil || b == nil {
			return nil, err
		}
		out, err := applyFilter(it.ctx, b, it.quals)
		if err != nil {
			return nil, err
		}
		if out != nil {
			return out, nil
		}
	}
}

func (it *filterIter) Close() error { return it.in.Close() }

// applyFilter keeps the rows of b where every qual of quals (a condition's
// QualList, computed once by the caller) is true; nil when none is. The
// quals are applied as PostgreSQL applies its list of quals (ExecQual after
// order_qual_clauses): in order, each on the rows every one before it
// kept, so a qual is never evaluated for a row an earlier one found false
// or NULL.
func applyFilter(ctx *Context, b arrow.RecordBatch, quals []expr.Expr) (arrow.RecordBatch, error) {
	for _, q := range quals {
		var err error
		if b, err = applyQual(ctx, b, q); err != nil || b == nil {
			return nil, err
		}
	}
	return b, nil
}

// QualList is cond's ANDed parts (nested ANDs flattened), cheapest first
// (expr.QualCost; ties in written order): the order PostgreSQL's
// order_qual_clauses applies a WHERE's quals in.
func QualList(cond expr.Expr) []expr.Expr {
	and, ok := cond.(*expr.And)
	if !ok {
		return []expr.Expr{cond}
	}
	var parts []expr.Expr
	var flatten func(e expr.Expr)
	flatten = func(e expr.Expr) {
		if a, ok := e.(*expr.And); ok {
			for _, x := range a.Args {
				flatten(x)
			}
			return
		}
		parts = append(parts, e)
	}
	flatten(and)
	slices.SortStableFunc(parts, func(x, y expr.Expr) int { return cmp.Compare(expr.QualCost(x), expr.QualCost(y)) })
	return parts
}

// applyQual keeps the rows of b where cond is true; nil when none is.
func applyQual(ctx *Context, b arrow.RecordBatch, cond expr.Expr) (arrow.RecordBatch, error) {
	m, err := eval(ctx, cond, b)
	if err != nil {
		return nil, err
	}
	mask, ok := m.(*array.Boolean)
	if !ok {
		return nil, fmt.Errorf("exec: filter condition is %s, not boolean", m.DataType())
	}
	return selectRows(alloc(ctx), b, mask), nil
}

// selectRows keeps the rows of b where mask is true (NULL is false); nil
// when no row is kept. b itself is returned when every row is kept.
func selectRows(mem memory.Allocator, b arrow.RecordBatch, mask *array.Boolean) arrow.RecordBatch {
	n := int(b.NumRows())
	idx := selection(mask, n, nil)
	switch len(idx) {
	case 0:
		return nil
	case n:
		return b
	}
	return takeBatch(mem, b.Schema(), b.Columns(), idx)
}

// selection appends to dst the indexes of the true rows of mask.
func selection(mask *array.Boolean, n int, dst []int32) []int32 {
	dst = dst[:0]
	if mask.NullN() == 0 {
		for i := 0; i < n; i++ {
			if mask.Value(i) {
				dst = append(dst, int32(i))
			}
		}
		return dst
	}
	for i := 0; i < n; i++ {
		if mask.IsValid(i) && mask.Value(i) {
			dst = append(dst, int32(i))
		}
	}
	return dst
}

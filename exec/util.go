package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/membudget"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// evalCtx returns the expression context of ctx, never nil.
func evalCtx(ctx *Context) *expr.Context {
	if ctx == nil || ctx.Eval == nil {
		return &expr.Context{}
	}
	return ctx.Eval
}

// alloc returns the allocator of ctx.
func alloc(ctx *Context) memory.Allocator { return evalCtx(ctx).Allocator() }

// canceled returns the statement context's error, if it was canceled.
func canceled(ctx *Context) error {
	ec := evalCtx(ctx)
	if ec.Ctx == nil {
		return nil
	}
	if err := ec.Ctx.Err(); err != nil {
		return fmt.Errorf("exec: statement canceled: %w", err)
	}
	return nil
}

// eval evaluates e over b; a plain column reference is read directly.
func eval(ctx *Context, e expr.Expr, b arrow.RecordBatch) (arrow.Array, error) {
	if c, ok := e.(*expr.ColRef); ok && c.Idx >= 0 && c.Idx < int(b.NumCols()) {
		a := b.Column(c.Idx)
		a.Retain()
		return a, nil
	}
	return e.Eval(evalCtx(ctx), b)
}

// evalAll evaluates each expression over b.
func evalAll(ctx *Context, es []expr.Expr, b arrow.RecordBatch) ([]arrow.Array, error) {
	out := make([]arrow.Array, len(es))
	for i, e := range es {
		a, err := eval(ctx, e, b)
		if err != nil {
			return nil, err
		}
		out[i] = a
	}
	return out, nil
}

// exprTypes returns the result types of es.
func exprTypes(es []expr.Expr) []types.T {
	ts := make([]types.T, len(es))
	for i, e := range es {
		ts[i] = e.Type()
	}
	return ts
}

// oneRowBatch is a batch with one row and no columns, over which constant
// expressions are evaluated.
func oneRowBatch() arrow.RecordBatch {
	return array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 1)
}

// newBatch makes a batch with the given SQL columns.
func newBatch(cols []types.Column, arrs []arrow.Array, n int) arrow.RecordBatch {
	return array.NewRecordBatch(types.ArrowSchema(cols), arrs, int64(n))
}

// rebatch re-labels b's arrays with the schema of cols (names may differ).
func rebatch(schema *arrow.Schema, b arrow.RecordBatch) arrow.RecordBatch {
	return array.NewRecordBatch(schema, b.Columns(), b.NumRows())
}

// sliceBatch returns rows [i, j) of b without copying.
func sliceBatch(b arrow.RecordBatch, i, j int) arrow.RecordBatch {
	return b.NewSlice(int64(i), int64(j))
}

// boolTrue reports whether row i of a boolean array is true (NULL is false).
func boolTrue(a *array.Boolean, i int) bool { return a.IsValid(i) && a.Value(i) }

// constInt evaluates a constant integer expression (LIMIT, OFFSET, frame
// offsets, ntile). ok is false when it is NULL.
func constInt(ctx *Context, e expr.Expr) (v int64, ok bool, err error) {
	a, err := eval(ctx, e, oneRowBatch())
	if err != nil {
		return 0, false, err
	}
	if a.Len() == 0 || a.IsNull(0) {
		return 0, false, nil
	}
	switch x := a.(type) {
	case *array.Int64:
		return x.Value(0), true, nil
	case *array.Int32:
		return int64(x.Value(0)), true, nil
	case *array.Int16:
		return int64(x.Value(0)), true, nil
	case *array.Float64:
		return int64(x.Value(0)), true, nil
	}
	return 0, false, fmt.Errorf("exec: constant of arrow type %s is not an integer", a.DataType())
}

// drainAll reads every batch of it and closes it.
func drainAll(ctx *Context, it Iterator) ([]arrow.RecordBatch, error) {
	return drainInto(ctx, it, nil)
}

// budgetOf returns the statement's memory budget (nil: unlimited).
func budgetOf(ctx *Context) *membudget.Query { return evalCtx(ctx).Budget }

// nextCharged returns it's next batch (nil at the end) after checking for
// cancellation, charging the batch to acct (nil: none) since the caller
// keeps it.
func nextCharged(ctx *Context, it Iterator, acct *membudget.Account) (arrow.RecordBatch, error) {
	if err := canceled(ctx); err != nil {
		return nil, err
	}
	b, err := it.Next()
	if err != nil || b == nil {
		return nil, err
	}
	if err := acct.Grow(membudget.BatchBytes(b)); err != nil {
		return nil, err
	}
	return b, nil
}

// drainInto is drainAll charging each batch kept to acct (nil: none).
func drainInto(ctx *Context, it Iterator, acct *membudget.Account) ([]arrow.RecordBatch, error) {
	defer it.Close()
	var out []arrow.RecordBatch
	for {
		b, err := nextCharged(ctx, it, acct)
		if err != nil {
			return nil, err
		}
		if b == nil {
			return out, nil
		}
		out = append(out, b)
	}
}

// Drain reads every batch of it, then closes it.
func Drain(it Iterator) ([]arrow.RecordBatch, error) { return drainAll(nil, it) }

// materialize concatenates batches column by column into arrays of n rows.
func materialize(mem memory.Allocator, cols []types.Column, bs []arrow.RecordBatch) ([]arrow.Array, int, error) {
	n := 0
	for _, b := range bs {
		n += int(b.NumRows())
	}
	out := make([]arrow.Array, len(cols))
	for c := range cols {
		if len(bs) == 1 {
			out[c] = bs[0].Column(c)
			continue
		}
		if len(bs) == 0 {
			out[c] = emptyArray(mem, cols[c].Type)
			continue
		}
		parts := make([]arrow.Array, len(bs))
		for i, b := range bs {
			parts[i] = b.Column(c)
		}
		a, err := array.Concatenate(parts, mem)
		if err != nil {
			return nil, 0, fmt.Errorf("exec: concatenating column %d: %w", c, err)
		}
		out[c] = a
	}
	return out, n, nil
}

// emptyArray returns a zero-length array of t's storage type.
func emptyArray(mem memory.Allocator, t types.T) arrow.Array {
	b := types.NewBuilder(mem, t)
	defer b.Release()
	return b.NewArray()
}

// nullArray returns n NULLs of t's storage type.
func nullArray(mem memory.Allocator, t types.T, n int) arrow.Array {
	b := types.NewBuilder(mem, t)
	defer b.Release()
	b.AppendNulls(n)
	return b.NewArray()
}

// batchQueue holds output batches not yet returned by Next.
type batchQueue struct {
	q []arrow.RecordBatch
}

func (q *batchQueue) push(b arrow.RecordBatch) {
	if b != nil && b.NumRows() > 0 {
		q.q = append(q.q, b)
	}
}

func (q *batchQueue) pop() arrow.RecordBatch {
	if len(q.q) == 0 {
		return nil
	}
	b := q.q[0]
	q.q[0] = nil
	q.q = q.q[1:]
	return b
}

// blocking is the iterator of an operator that consumes its whole input
// before producing (aggregation, sort, window, set operations): run computes
// every output batch on the first Next. in (nil for operators that open
// their inputs inside run) is closed by Close.
type blocking struct {
	// acct holds what run keeps (nil: not counted); released at Close.
	acct *membudget.Account
	in   Iterator
	run  func() ([]arrow.RecordBatch, error)
	out  *sliceIter
}

func (b *blocking) Next() (_ arrow.RecordBatch, err error) {
	defer recoverErr(&err)
	if b.out == nil {
		bs, err := b.run()
		if err != nil {
			return nil, err
		}
		b.out = &sliceIter{bs: bs}
	}
	return b.out.Next()
}

func (b *blocking) Close() error {
	b.acct.Release()
	if b.in == nil {
		return nil
	}
	return b.in.Close()
}

// NewSliceIter returns an Iterator over batches already in memory (empty
// batches are skipped).
func NewSliceIter(batches []arrow.RecordBatch) Iterator { return &sliceIter{bs: batches} }

// sliceIter serves precomputed batches.
type sliceIter struct {
	bs []arrow.RecordBatch
}

func (s *sliceIter) Next() (arrow.RecordBatch, error) {
	for len(s.bs) > 0 {
		b := s.bs[0]
		s.bs = s.bs[1:]
		if b.NumRows() > 0 {
			return b, nil
		}
	}
	return nil, nil
}

func (s *sliceIter) Close() error { s.bs = nil; return nil }

// chunkArrays emits arrays of n rows as batches of at most size rows.
func chunkArrays(schema *arrow.Schema, arrs []arrow.Array, n, size int) []arrow.RecordBatch {
	if n == 0 {
		return nil
	}
	full := array.NewRecordBatch(schema, arrs, int64(n))
	if n <= size {
		return []arrow.RecordBatch{full}
	}
	var out []arrow.RecordBatch
	for i := 0; i < n; i += size {
		out = append(out, full.NewSlice(int64(i), int64(min(i+size, n))))
	}
	return out
}

// recoverErr turns a panic inside an operator into an internal error, so
// that a bug fails one statement instead of crossing the package boundary.
func recoverErr(err *error) {
	if r := recover(); r != nil {
		*err = pgerr.Internal("exec: internal error: %v", r)
	}
}

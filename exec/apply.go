package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// Apply is a LATERAL join the planner could not turn into a plain join: for
// each row of Left it runs Right with that row as the innermost outer row
// (Right reads it through expr.OuterRef, depth 1 at its top), keeps the
// combined rows where Cond holds (nil: all), and, for a LeftJoin, emits
// the left row with NULLs when none does. Kind is InnerJoin or LeftJoin.
// Cols are the left columns followed by the right ones. Immutable.
type Apply struct {
	Left, Right Node
	Kind        JoinKind
	Cond        expr.Expr
	Cols        []types.Column
}

// Columns returns the output columns.
func (a *Apply) Columns() []types.Column { return a.Cols }

// Children returns the left and right inputs.
func (a *Apply) Children() []Node { return []Node{a.Left, a.Right} }

// Explain returns "Nested Loop Apply (kind) [on cond]".
func (a *Apply) Explain() string {
	s := "Nested Loop Apply (" + a.Kind.String() + ")"
	if a.Cond != nil {
		s += " on " + a.Cond.String()
	}
	return s
}

// Open opens the left input; the right one is opened once per left row.
func (a *Apply) Open(ctx *Context) (Iterator, error) {
	in, err := OpenNode(ctx, a.Left)
	if err != nil {
		return nil, err
	}
	it := &applyIter{ctx: ctx, a: a, in: in}
	if a.Cond != nil {
		it.quals = QualList(a.Cond)
	}
	return it, nil
}

type applyIter struct {
	ctx   *Context
	a     *Apply
	in    Iterator
	quals []expr.Expr // a.Cond's parts (QualList)
}

func (it *applyIter) Next() (_ arrow.RecordBatch, err error) {
	defer recoverErr(&err)
	for {
		if err := canceled(it.ctx); err != nil {
			return nil, err
		}
		b, err := it.in.Next()
		if err != nil || b == nil {
			return nil, err
		}
		var out []arrow.RecordBatch
		for i := 0; i < int(b.NumRows()); i++ {
			rows, err := it.row(b, i)
			if err != nil {
				return nil, err
			}
			out = append(out, rows...)
		}
		if len(out) == 0 {
			continue
		}
		return concatRecords(alloc(it.ctx), it.a.Cols, out)
	}
}

// row returns the output rows of left row i of b.
func (it *applyIter) row(b arrow.RecordBatch, i int) ([]arrow.RecordBatch, error) {
	ev := evalCtx(it.ctx)
	saved := ev.Outer
	ev.Outer = append(saved[:len(saved):len(saved)], expr.OuterRow{Batch: b, Row: i})
	rights, err := it.runRight()
	ev.Outer = saved
	if err != nil {
		return nil, err
	}
	mem := alloc(it.ctx)
	nl := len(it.a.Left.Columns())
	var out []arrow.RecordBatch
	for _, r := range rights {
		n := int(r.NumRows())
		idx := make([]int32, n)
		for k := range idx {
			idx[k] = int32(i)
		}
		cols := make([]arrow.Array, 0, len(it.a.Cols))
		for c := 0; c < nl; c++ {
			cols = append(cols, takeArray(mem, b.Column(c), idx))
		}
		cols = append(cols, r.Columns()...)
		joined := newBatch(it.a.Cols, cols, n)
		if it.a.Cond != nil {
			if joined, err = applyFilter(it.ctx, joined, it.quals); err != nil {
				return nil, err
			}
			if joined == nil {
				continue
			}
		}
		out = append(out, joined)
	}
	if len(out) == 0 && it.a.Kind == LeftJoin {
		cols := make([]arrow.Array, 0, len(it.a.Cols))
		for c := 0; c < nl; c++ {
			cols = append(cols, takeArray(mem, b.Column(c), []int32{int32(i)}))
		}
		for _, c := range it.a.Cols[nl:] {
			cols = append(cols, nullArray(mem, c.Type, 1))
		}
		out = append(out, newBatch(it.a.Cols, cols, 1))
	}
	return out, nil
}

// runRight runs the right input to the end for the current outer row.
func (it *applyIter) runRight() ([]arrow.RecordBatch, error) {
	r, err := OpenNode(it.ctx, it.a.Right)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return drainAll(it.ctx, r)
}

func (it *applyIter) Close() error { return it.in.Close() }

// concatRecords joins batches of the given columns into one.
func concatRecords(mem memory.Allocator, cols []types.Column, bs []arrow.RecordBatch) (arrow.RecordBatch, error) {
	if len(bs) == 1 {
		return bs[0], nil
	}
	arrs, n, err := materialize(mem, cols, bs)
	if err != nil {
		return nil, err
	}
	return newBatch(cols, arrs, n), nil
}

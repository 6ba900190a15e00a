package exec

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// ProjectSet evaluates a set-returning function (generate_series, unnest)
// of a select list for each input row and emits that row once per value the
// function returns, with the value appended as a last column (PostgreSQL's
// ProjectSet with one function). Built by planner/, which owns this file.
type ProjectSet struct {
	Input Node
	Name  string      // function name, for EXPLAIN
	Args  []expr.Expr // over the input columns
	// Expand returns the function's values for one row's arguments (in the
	// Go form of types.Value; nil is NULL). It must be safe for concurrent use.
	Expand func(args []types.Value) ([]types.Value, error)
	Cols   []types.Column // input columns, then the function's column
}

// Columns returns the input columns and the function's column.
func (p *ProjectSet) Columns() []types.Column { return p.Cols }

// Children returns the input.
func (p *ProjectSet) Children() []Node { return []Node{p.Input} }

// Explain renders "ProjectSet: name(args)".
func (p *ProjectSet) Explain() string {
	parts := make([]string, len(p.Args))
	for i, a := range p.Args {
		parts[i] = a.String()
	}
	return "ProjectSet: " + p.Name + "(" + strings.Join(parts, ", ") + ")"
}

// Open starts the input.
func (p *ProjectSet) Open(ctx *Context) (Iterator, error) {
	in, err := p.Input.Open(ctx)
	if err != nil {
		return nil, err
	}
	return &projectSetIter{p: p, ctx: ctx, in: in, schema: types.ArrowSchema(p.Cols)}, nil
}

type projectSetIter struct {
	p      *ProjectSet
	ctx    *Context
	in     Iterator
	schema *arrow.Schema
}

func (it *projectSetIter) Next() (arrow.RecordBatch, error) {
	for {
		b, err := it.in.Next()
		if err != nil || b == nil {
			return nil, err
		}
		out, err := it.expand(b)
		b.Release()
		if err != nil {
			return nil, err
		}
		if out != nil {
			return out, nil
		}
	}
}

func (it *projectSetIter) expand(b arrow.RecordBatch) (arrow.RecordBatch, error) {
	p := it.p
	var ec *expr.Context
	if it.ctx != nil {
		ec = it.ctx.Eval
	}
	args := make([]arrow.Array, len(p.Args))
	for i, a := range p.Args {
		arr, err := a.Eval(ec, b)
		if err != nil {
			return nil, err
		}
		defer arr.Release()
		args[i] = arr
	}
	t := p.Cols[len(p.Cols)-1].Type
	bld := types.NewBuilder(ec.Allocator(), t)
	defer bld.Release()
	var idx []int32
	vals := make([]types.Value, len(args))
	for r := 0; r < int(b.NumRows()); r++ {
		for i, a := range args {
			vals[i] = types.ValueAt(a, r, p.Args[i].Type())
		}
		out, err := p.Expand(vals)
		if err != nil {
			return nil, err
		}
		for _, v := range out {
			if err := types.AppendValue(bld, v, t); err != nil {
				return nil, err
			}
			idx = append(idx, int32(r))
		}
	}
	if len(idx) == 0 {
		return nil, nil
	}
	cols := make([]arrow.Array, 0, len(p.Cols))
	for c := 0; c < int(b.NumCols()); c++ {
		cols = append(cols, takeArray(ec.Allocator(), b.Column(c), idx))
	}
	cols = append(cols, bld.NewArray())
	return array.NewRecordBatch(it.schema, cols, int64(len(idx))), nil
}

func (it *projectSetIter) Close() error { return it.in.Close() }

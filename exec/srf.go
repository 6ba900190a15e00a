package exec

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// ProjectSet evaluates the set-returning functions (generate_series,
// unnest...) of a select list for each input row and emits that row once
// per value, with one column per function appended (PostgreSQL's
// ProjectSet): the functions run in lockstep, and one that runs out of
// values gives NULL while the others continue. Built by planner/, which
// owns this file.
type ProjectSet struct {
	Input Node
	Funcs []SetFunc
	Cols  []types.Column // input columns, then one column per function
}

// SetFunc is one set-returning function of a ProjectSet.
type SetFunc struct {
	Name string      // for EXPLAIN
	Args []expr.Expr // over the input columns
	// Expand returns the function's values for one row's arguments (in the
	// Go form of types.Value; nil is NULL). It must be safe for concurrent use.
	Expand func(args []types.Value) ([]types.Value, error)
}

// Columns returns the input columns and the function's column.
func (p *ProjectSet) Columns() []types.Column { return p.Cols }

// Children returns the input.
func (p *ProjectSet) Children() []Node { return []Node{p.Input} }

// Explain renders "ProjectSet: f(args), ...".
func (p *ProjectSet) Explain() string {
	fs := make([]string, len(p.Funcs))
	for i, f := range p.Funcs {
		parts := make([]string, len(f.Args))
		for j, a := range f.Args {
			parts[j] = a.String()
		}
		fs[i] = f.Name + "(" + strings.Join(parts, ", ") + ")"
	}
	return "ProjectSet: " + strings.Join(fs, ", ")
}

// Open starts the input.
func (p *ProjectSet) Open(ctx *Context) (Iterator, error) {
	in, err := OpenNode(ctx, p.Input)
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
	nIn := len(p.Cols) - len(p.Funcs)
	args := make([][]arrow.Array, len(p.Funcs))
	blds := make([]array.Builder, len(p.Funcs))
	for f, fn := range p.Funcs {
		for _, a := range fn.Args {
			arr, err := a.Eval(ec, b)
			if err != nil {
				return nil, err
			}
			defer arr.Release()
			args[f] = append(args[f], arr)
		}
		blds[f] = types.NewBuilder(ec.Allocator(), p.Cols[nIn+f].Type)
		defer blds[f].Release()
	}
	var idx []int32
	outs := make([][]types.Value, len(p.Funcs))
	for r := 0; r < int(b.NumRows()); r++ {
		n := 0
		for f, fn := range p.Funcs {
			vals := make([]types.Value, len(fn.Args))
			for i, a := range args[f] {
				vals[i] = types.ValueAt(a, r, fn.Args[i].Type())
			}
			out, err := fn.Expand(vals)
			if err != nil {
				return nil, err
			}
			outs[f] = out
			n = max(n, len(out))
		}
		for k := 0; k < n; k++ {
			for f := range p.Funcs {
				var v types.Value
				if k < len(outs[f]) {
					v = outs[f][k]
				}
				if err := types.AppendValue(blds[f], v, p.Cols[nIn+f].Type); err != nil {
					return nil, err
				}
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
	for _, bld := range blds {
		cols = append(cols, bld.NewArray())
	}
	return array.NewRecordBatch(it.schema, cols, int64(len(idx))), nil
}

func (it *projectSetIter) Close() error { return it.in.Close() }

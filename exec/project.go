package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

// Columns returns the projected columns.
func (p *Project) Columns() []types.Column { return p.Cols }

// Children returns the input.
func (p *Project) Children() []Node { return []Node{p.Input} }

// Explain returns "Project: e1, e2".
func (p *Project) Explain() string { return "Project: " + exprList(p.Exprs) }

// Open opens the input.
func (p *Project) Open(ctx *Context) (Iterator, error) {
	in, err := OpenNode(ctx, p.Input)
	if err != nil {
		return nil, err
	}
	return &projectIter{ctx: ctx, p: p, in: in, schema: types.ArrowSchema(p.Cols)}, nil
}

type projectIter struct {
	ctx    *Context
	p      *Project
	in     Iterator
	schema *arrow.Schema
}

func (it *projectIter) Next() (_ arrow.RecordBatch, err error) {
	defer recoverErr(&err)
	if err := canceled(it.ctx); err != nil {
		return nil, err
	}
	b, err := it.in.Next()
	if err != nil || b == nil {
		return nil, err
	}
	cols, err := evalAll(it.ctx, it.p.Exprs, b)
	if err != nil {
		return nil, err
	}
	return array.NewRecordBatch(it.schema, cols, b.NumRows()), nil
}

func (it *projectIter) Close() error { return it.in.Close() }

// ExplainOutput is the projection's expressions (EXPLAIN VERBOSE).
func (p *Project) ExplainOutput() []string {
	out := make([]string, len(p.Exprs))
	for i, e := range p.Exprs {
		out[i] = e.String()
	}
	return out
}

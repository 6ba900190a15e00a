package exec

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/types"
)

// Columns returns the output columns.
func (a *Append) Columns() []types.Column { return a.Cols }

// Children returns the inputs.
func (a *Append) Children() []Node { return a.Inputs }

// Explain returns "Append".
func (a *Append) Explain() string { return "Append" }

// Open opens the inputs one after the other, lazily.
func (a *Append) Open(ctx *Context) (Iterator, error) {
	return &appendIter{ctx: ctx, a: a, schema: types.ArrowSchema(a.Cols)}, nil
}

type appendIter struct {
	ctx    *Context
	a      *Append
	schema *arrow.Schema
	i      int
	cur    Iterator
}

func (it *appendIter) Next() (_ arrow.RecordBatch, err error) {
	defer recoverErr(&err)
	for {
		if err := canceled(it.ctx); err != nil {
			return nil, err
		}
		if it.cur == nil {
			if it.i >= len(it.a.Inputs) {
				return nil, nil
			}
			in, err := OpenNode(it.ctx, it.a.Inputs[it.i])
			if err != nil {
				return nil, err
			}
			it.cur = in
			it.i++
		}
		b, err := it.cur.Next()
		if err != nil {
			return nil, err
		}
		if b == nil {
			if err := it.cur.Close(); err != nil {
				return nil, err
			}
			it.cur = nil
			continue
		}
		return rebatch(it.schema, b), nil
	}
}

func (it *appendIter) Close() error {
	if it.cur != nil {
		err := it.cur.Close()
		it.cur = nil
		return err
	}
	return nil
}

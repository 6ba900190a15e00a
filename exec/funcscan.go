package exec

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/types"
)

// Columns returns the function's columns.
func (f *FuncScan) Columns() []types.Column { return f.Cols }

// Children returns nothing.
func (f *FuncScan) Children() []Node { return nil }

// Explain returns "Function Scan on name", or Scan's label for it (the
// label alone without a name).
func (f *FuncScan) Explain() string {
	switch {
	case f.Scan != "" && f.Name == "":
		return f.Scan
	case f.Scan != "":
		return f.Scan + " on " + f.Name
	}
	return "Function Scan on " + f.Name
}

// Open calls Stream, or Produce and serves its batches, relabelled with Cols.
func (f *FuncScan) Open(ctx *Context) (Iterator, error) {
	if f.Stream != nil {
		return f.Stream(ctx)
	}
	bs, err := f.Produce(ctx)
	if err != nil {
		return nil, err
	}
	schema := types.ArrowSchema(f.Cols)
	out := make([]arrow.RecordBatch, 0, len(bs))
	for _, b := range bs {
		if b != nil && b.NumRows() > 0 {
			out = append(out, rebatch(schema, b))
		}
	}
	return &sliceIter{bs: out}, nil
}

package exec

import (
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

// Columns returns the VALUES columns.
func (v *Values) Columns() []types.Column { return v.Cols }

// Children returns nothing.
func (v *Values) Children() []Node { return nil }

// Explain returns "Values Scan (n rows)" or "Result" for a SELECT without FROM.
func (v *Values) Explain() string {
	if len(v.Cols) == 0 {
		return "Result"
	}
	return "Values Scan (" + strconv.Itoa(len(v.Rows)) + " rows)"
}

// Open evaluates every row's expressions over a one-row empty batch.
func (v *Values) Open(ctx *Context) (Iterator, error) {
	schema := types.ArrowSchema(v.Cols)
	if len(v.Rows) == 0 {
		return &sliceIter{}, nil
	}
	if len(v.Cols) == 0 {
		return &sliceIter{bs: []arrow.RecordBatch{array.NewRecordBatch(schema, nil, int64(len(v.Rows)))}}, nil
	}
	one := oneRowBatch()
	mem := alloc(ctx)
	parts := make([][]arrow.Array, len(v.Cols))
	for _, row := range v.Rows {
		if len(row) != len(v.Cols) {
			return nil, fmt.Errorf("exec: VALUES row has %d expressions, want %d", len(row), len(v.Cols))
		}
		for c, e := range row {
			a, err := eval(ctx, e, one)
			if err != nil {
				return nil, err
			}
			parts[c] = append(parts[c], a)
		}
	}
	arrs := make([]arrow.Array, len(v.Cols))
	for c, col := range v.Cols {
		// An untyped NULL may arrive in another storage type: it is NULL of
		// the column's type.
		want := col.Type.ArrowType()
		for i, a := range parts[c] {
			if !arrow.TypeEqual(a.DataType(), want) {
				if a.NullN() != a.Len() {
					return nil, fmt.Errorf("exec: VALUES column %d is %s, want %s", c+1, a.DataType(), want)
				}
				parts[c][i] = nullArray(mem, col.Type, a.Len())
			}
		}
		if len(parts[c]) == 1 {
			arrs[c] = parts[c][0]
			continue
		}
		a, err := array.Concatenate(parts[c], mem)
		if err != nil {
			return nil, fmt.Errorf("exec: VALUES column %d: %w", c+1, err)
		}
		arrs[c] = a
	}
	return &sliceIter{bs: chunkArrays(schema, arrs, len(v.Rows), ctx.Size())}, nil
}

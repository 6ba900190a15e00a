package planner

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// constValues turns a VALUES list whose cells are all constants (the usual
// multi-row INSERT) into a FuncScan that builds the columns directly,
// instead of evaluating every cell as an expression. It returns nil when
// some cell is not a constant of its column's type.
func constValues(v *exec.Values) *exec.FuncScan {
	for _, row := range v.Rows {
		for j, e := range row {
			c, ok := e.(*expr.Const)
			if !ok || !c.T.Equal(v.Cols[j].Type) {
				return nil
			}
		}
	}
	cols, rows := v.Cols, v.Rows
	return &exec.FuncScan{Name: "VALUES", Cols: cols, Produce: func(ctx *exec.Context) ([]arrow.RecordBatch, error) {
		var ec *expr.Context
		if ctx != nil {
			ec = ctx.Eval
		}
		schema := types.ArrowSchema(cols)
		size := ctx.Size()
		var out []arrow.RecordBatch
		for start := 0; start < len(rows); start += size {
			end := min(start+size, len(rows))
			arrs := make([]arrow.Array, len(cols))
			for j, c := range cols {
				bld := types.NewBuilder(ec.Allocator(), c.Type)
				bld.Reserve(end - start)
				for _, row := range rows[start:end] {
					if err := types.AppendValue(bld, row[j].(*expr.Const).V, c.Type); err != nil {
						bld.Release()
						return nil, err
					}
				}
				arrs[j] = bld.NewArray()
				bld.Release()
			}
			out = append(out, array.NewRecordBatch(schema, arrs, int64(end-start)))
		}
		return out, nil
	}}
}

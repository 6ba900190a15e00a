package engine

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// textRows is a one-column text result (EXPLAIN, SHOW).
func textRows(tag string, cols []types.Column, lines []string) *Result {
	rows := make([][]string, len(lines))
	for i, l := range lines {
		rows[i] = []string{l}
	}
	return tableRows(tag, cols, rows)
}

// tableRows builds a small all-text result.
func tableRows(tag string, cols []types.Column, rows [][]string) *Result {
	schema := types.ArrowSchema(cols)
	bs := make([]*array.StringBuilder, len(cols))
	arrs := make([]arrow.Array, len(cols))
	for i := range cols {
		bs[i] = array.NewStringBuilder(memory.DefaultAllocator)
		for _, r := range rows {
			bs[i].Append(r[i])
		}
		arrs[i] = bs[i].NewArray()
	}
	rec := array.NewRecordBatch(schema, arrs, int64(len(rows)))
	return &Result{Tag: tag, Columns: cols, Rows: exec.NewSliceIter([]arrow.RecordBatch{rec})}
}

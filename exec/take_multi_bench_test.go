package exec

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// BenchmarkTakeRowsFrom gathers half the rows of two 4096-row batches of
// three int64 columns (a hash exchange's gather for one of two
// instances), with the sources hot in cache.
func BenchmarkTakeRowsFrom(b *testing.B) {
	fields := []arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}, {Name: "b", Type: arrow.PrimitiveTypes.Int64}, {Name: "c", Type: arrow.PrimitiveTypes.Int64}}
	schema := arrow.NewSchema(fields, nil)
	const rows = 4096
	var recs []arrow.RecordBatch
	var idx [][]int32
	for range 2 {
		cols := make([]arrow.Array, len(fields))
		for c := range cols {
			bld := array.NewInt64Builder(memory.DefaultAllocator)
			for r := range rows {
				bld.Append(int64(r * (c + 1)))
			}
			cols[c] = bld.NewArray()
		}
		recs = append(recs, array.NewRecordBatch(schema, cols, rows))
		var ix []int32
		for r := int32(0); r < rows; r++ {
			if (uint32(r)*2654435761)>>7&1 == 0 {
				ix = append(ix, r)
			}
		}
		idx = append(idx, ix)
	}
	b.ReportAllocs()
	for b.Loop() {
		TakeRowsFrom(memory.DefaultAllocator, schema, recs, idx).Release()
	}
}

package stream

import (
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

// BenchmarkGatherAlternating gathers 4096 rows of an int64 and a text
// column whose rows alternate at random between two stored chunks (a
// join instance's matches at parallelism 2, whose stored side comes from
// two senders).
func BenchmarkGatherAlternating(b *testing.B) {
	const rows = 4096
	schema := arrow.NewSchema([]arrow.Field{{Name: "i", Type: arrow.PrimitiveTypes.Int64}, {Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	var recs []arrow.RecordBatch
	for range 2 {
		ib := array.NewInt64Builder(memory.DefaultAllocator)
		sb := array.NewStringBuilder(memory.DefaultAllocator)
		for r := range rows {
			ib.Append(int64(r))
			sb.Append("item-name")
		}
		recs = append(recs, array.NewRecordBatch(schema, []arrow.Array{ib.NewArray(), sb.NewArray()}, rows))
	}
	rng := rand.New(rand.NewSource(1))
	refs := make([]ref, rows)
	for k := range refs {
		refs[k] = ref{seg: int32(rng.Intn(2)), row: int32(rng.Intn(rows))}
	}
	b.ReportAllocs()
	for b.Loop() {
		gather(types.TInt8, recs, 0, refs).Release()
		gather(types.TText, recs, 1, refs).Release()
	}
}

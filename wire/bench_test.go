package wire

import (
	"context"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5"

	"github.com/streamsql/streamsql/types"
)

// benchColumns / benchBatches are the result of "select * from wire_bench":
// 100 batches of 4096 rows (int8, text, float8).
var benchColumns = []types.Column{{Name: "id", Type: types.TInt8}, {Name: "name", Type: types.TText}, {Name: "score", Type: types.TFloat8}}

var (
	benchOnce sync.Once
	benchData []arrow.RecordBatch
)

// benchBatches returns the shared batches, retained for one more reader.
func benchBatches() []arrow.RecordBatch {
	benchOnce.Do(func() { benchData = makeBenchBatches() })
	for _, b := range benchData {
		b.Retain()
	}
	return benchData
}

func makeBenchBatches() []arrow.RecordBatch {
	var out []arrow.RecordBatch
	schema := types.ArrowSchema(benchColumns)
	for b := 0; b < 100; b++ {
		ids := array.NewInt64Builder(memory.DefaultAllocator)
		names := array.NewStringBuilder(memory.DefaultAllocator)
		scores := array.NewFloat64Builder(memory.DefaultAllocator)
		for i := 0; i < 4096; i++ {
			n := b*4096 + i
			ids.Append(int64(n))
			names.Append("name-of-some-row")
			scores.Append(float64(n) / 7)
		}
		out = append(out, array.NewRecordBatch(schema, []arrow.Array{ids.NewArray(), names.NewArray(), scores.NewArray()}, 4096))
	}
	return out
}

func benchmarkRows(b *testing.B, mode pgx.QueryExecMode) {
	_, addr, _ := startFake(b, Options{})
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, fakeURL(addr))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	benchBatches()
	b.ResetTimer()
	rows := 0
	for i := 0; i < b.N; i++ {
		r, err := conn.Query(ctx, "select * from wire_bench", mode)
		if err != nil {
			b.Fatal(err)
		}
		for r.Next() {
			rows++
		}
		if err := r.Err(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkRowsBinary: pgx's default extended protocol, binary results.
func BenchmarkRowsBinary(b *testing.B) { benchmarkRows(b, pgx.QueryExecModeCacheStatement) }

// BenchmarkRowsText: simple protocol, text results (float8 through types).
func BenchmarkRowsText(b *testing.B) { benchmarkRows(b, pgx.QueryExecModeSimpleProtocol) }

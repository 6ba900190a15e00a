package expr

import (
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

const benchRows = 1 << 20

func benchBatch(b *testing.B) arrow.RecordBatch {
	b.Helper()
	mem := memory.DefaultAllocator
	x := array.NewInt64Builder(mem)
	y := array.NewInt64Builder(mem)
	s := array.NewStringBuilder(mem)
	for i := 0; i < benchRows; i++ {
		x.Append(int64(i))
		y.Append(int64(i % 1000))
		s.Append("key-" + strconv.Itoa(i%1000))
	}
	cols := []arrow.Array{x.NewArray(), y.NewArray(), s.NewArray()}
	schema := types.ArrowSchema([]types.Column{{Name: "x", Type: types.TInt8}, {Name: "y", Type: types.TInt8}, {Name: "s", Type: types.TText}})
	return array.NewRecordBatch(schema, cols, benchRows)
}

func runBench(b *testing.B, e Expr) {
	batch := benchBatch(b)
	ctx := testCtx()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a, err := e.Eval(ctx, batch)
		if err != nil {
			b.Fatal(err)
		}
		a.Release()
	}
	b.ReportMetric(float64(b.N*benchRows)/b.Elapsed().Seconds()/1e6, "Mrows/s")
}

func BenchmarkInt64Add(b *testing.B) {
	e, _ := NewBinary("+", &ColRef{Idx: 0, T: types.TInt8}, &ColRef{Idx: 1, T: types.TInt8})
	runBench(b, e)
}

func BenchmarkInt64Compare(b *testing.B) {
	e, _ := NewBinary("<", &ColRef{Idx: 0, T: types.TInt8}, &ColRef{Idx: 1, T: types.TInt8})
	runBench(b, e)
}

func BenchmarkInt64CompareConst(b *testing.B) {
	e, _ := NewBinary("<", &ColRef{Idx: 0, T: types.TInt8}, &Const{V: int64(500000), T: types.TInt8})
	runBench(b, e)
}

func BenchmarkTextEqual(b *testing.B) {
	e, _ := NewBinary("=", &ColRef{Idx: 2, T: types.TText}, &Const{V: "key-7", T: types.TText})
	runBench(b, e)
}

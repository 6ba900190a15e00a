package exec

import (
	"context"
	"math/rand"
	"runtime"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// benchSource builds n rows of (k int8 in [0, keys), v int8) in 4096-row batches.
func benchSource(n, keys int, seed int64) *srcNode {
	r := rand.New(rand.NewSource(seed))
	cs := cols(types.TInt8, types.TInt8)
	s := &srcNode{cols: cs}
	for start := 0; start < n; start += DefaultBatchSize {
		m := min(DefaultBatchSize, n-start)
		kb, vb := array.NewInt64Builder(mem), array.NewInt64Builder(mem)
		for i := 0; i < m; i++ {
			kb.Append(int64(r.Intn(keys)))
			vb.Append(int64(r.Intn(1000000)))
		}
		s.batches = append(s.batches, newBatch(cs, []arrow.Array{kb.NewArray(), vb.NewArray()}, m))
	}
	return s
}

// benchRun runs n b.N times with as many workers as GOMAXPROCS allows
// (go test -cpu 1,2 measures the serial and the parallel paths).
func benchRun(b *testing.B, n Node) int {
	rowsOut := 0
	for i := 0; i < b.N; i++ {
		it, err := n.Open(&Context{Eval: &expr.Context{Ctx: context.Background()}, Workers: runtime.GOMAXPROCS(0)})
		if err != nil {
			b.Fatal(err)
		}
		bs, err := Drain(it)
		if err != nil {
			b.Fatal(err)
		}
		rowsOut = 0
		for _, x := range bs {
			rowsOut += int(x.NumRows())
		}
	}
	return rowsOut
}

// SELECT k, count(*), sum(v), avg(v) FROM t GROUP BY k: 10M rows, 10k keys.
func BenchmarkHashAgg10M(b *testing.B) {
	s := benchSource(10_000_000, 10_000, 1)
	k, v := col(0, types.TInt8), col(1, types.TInt8)
	cnt, _ := ResolveAggregate("count", nil, true)
	sum, _ := ResolveAggregate("sum", []types.T{types.TInt8}, false)
	avg, _ := ResolveAggregate("avg", []types.T{types.TInt8}, false)
	h := &HashAgg{Input: s, GroupBy: []expr.Expr{k}, Aggs: []AggCall{{Fn: cnt}, {Fn: sum, Args: []expr.Expr{v}}, {Fn: avg, Args: []expr.Expr{v}}},
		Cols: cols(types.TInt8, types.TInt8, types.TNumeric, types.TNumeric)}
	b.ResetTimer()
	if got := benchRun(b, h); got != 10_000 {
		b.Fatalf("%d groups", got)
	}
}

// SELECT * FROM big JOIN small USING (k): 1M probe rows x 100k build rows.
func BenchmarkHashJoin1Mx100k(b *testing.B) {
	big := benchSource(1_000_000, 100_000, 2)
	small := &srcNode{cols: cols(types.TInt8, types.TInt8)}
	for start := 0; start < 100_000; start += DefaultBatchSize {
		m := min(DefaultBatchSize, 100_000-start)
		kb := array.NewInt64Builder(mem)
		for i := 0; i < m; i++ {
			kb.Append(int64(start + i))
		}
		ka := kb.NewArray()
		small.batches = append(small.batches, newBatch(small.cols, []arrow.Array{ka, ka}, m))
	}
	j := &HashJoin{Left: big, Right: small, Kind: InnerJoin, LeftKeys: []expr.Expr{col(0, types.TInt8)}, RightKeys: []expr.Expr{col(0, types.TInt8)},
		Cols: cols(types.TInt8, types.TInt8, types.TInt8, types.TInt8)}
	b.ResetTimer()
	if got := benchRun(b, j); got != 1_000_000 {
		b.Fatalf("%d rows", got)
	}
}

// SELECT * FROM t ORDER BY v: 1M rows.
func BenchmarkSort1M(b *testing.B) {
	s := benchSource(1_000_000, 1000, 3)
	srt := &Sort{Input: s, Keys: []SortKey{{E: col(1, types.TInt8)}}}
	b.ResetTimer()
	if got := benchRun(b, srt); got != 1_000_000 {
		b.Fatalf("%d rows", got)
	}
}

// SELECT * FROM t ORDER BY k DESC, v: 1M rows, two keys (generic comparator).
func BenchmarkSort1MTwoKeys(b *testing.B) {
	s := benchSource(1_000_000, 1000, 3)
	srt := &Sort{Input: s, Keys: []SortKey{{E: col(0, types.TInt8), Desc: true, NullsFirst: true}, {E: col(1, types.TInt8)}}}
	b.ResetTimer()
	if got := benchRun(b, srt); got != 1_000_000 {
		b.Fatalf("%d rows", got)
	}
}

// SELECT k, count(*) FROM t GROUP BY k: 10M rows, 1M keys (cache-missing table).
func BenchmarkHashAggHighCard(b *testing.B) {
	s := benchSource(10_000_000, 1_000_000, 4)
	cnt, _ := ResolveAggregate("count", nil, true)
	h := &HashAgg{Input: s, GroupBy: []expr.Expr{col(0, types.TInt8)}, Aggs: []AggCall{{Fn: cnt}}, Cols: cols(types.TInt8, types.TInt8)}
	b.ResetTimer()
	if got := benchRun(b, h); got < 999_000 {
		b.Fatalf("%d groups", got)
	}
}

// SELECT avg(v) OVER (ORDER BY v ROWS BETWEEN 99 PRECEDING AND CURRENT ROW): 1M rows.
func BenchmarkWindowMovingAvg1M(b *testing.B) {
	s := benchSource(1_000_000, 1000, 5)
	f, _ := ResolveWindow("avg", []types.T{types.TInt8}, false)
	fr := Frame{Mode: FrameRows, Start: FrameBound{Kind: Preceding, Offset: konst(types.TInt8, int64(99))}, End: FrameBound{Kind: CurrentRow}}
	w := &Window{Input: s, Calls: []WindowCall{{Fn: f, Args: []expr.Expr{col(1, types.TInt8)}, OrderBy: []SortKey{{E: col(1, types.TInt8)}}, Frame: fr}},
		Cols: cols(types.TInt8, types.TInt8, types.TNumeric)}
	b.ResetTimer()
	if got := benchRun(b, w); got != 1_000_000 {
		b.Fatalf("%d rows", got)
	}
}

// SELECT s, count(*), sum(v) FROM t GROUP BY s: 2M rows, 10k text keys.
func BenchmarkHashAggText2M(b *testing.B) {
	r := rand.New(rand.NewSource(6))
	cs := cols(types.TText, types.TInt8)
	s := &srcNode{cols: cs}
	for start := 0; start < 2_000_000; start += DefaultBatchSize {
		kb, vb := array.NewStringBuilder(mem), array.NewInt64Builder(mem)
		for i := 0; i < DefaultBatchSize; i++ {
			kb.Append("customer-" + strconv.Itoa(r.Intn(10_000)))
			vb.Append(int64(r.Intn(1000)))
		}
		s.batches = append(s.batches, newBatch(cs, []arrow.Array{kb.NewArray(), vb.NewArray()}, DefaultBatchSize))
	}
	cnt, _ := ResolveAggregate("count", nil, true)
	sum, _ := ResolveAggregate("sum", []types.T{types.TInt8}, false)
	h := &HashAgg{Input: s, GroupBy: []expr.Expr{col(0, types.TText)}, Aggs: []AggCall{{Fn: cnt}, {Fn: sum, Args: []expr.Expr{col(1, types.TInt8)}}},
		Cols: cols(types.TText, types.TInt8, types.TNumeric)}
	b.ResetTimer()
	if got := benchRun(b, h); got != 10_000 {
		b.Fatalf("%d groups", got)
	}
}

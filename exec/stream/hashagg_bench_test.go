package stream

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// Benchmarks feed benchRows rows (k int8, v int8, f float8) in chunks of
// benchChunk rows through consume, with a barrier every benchEpoch chunks,
// and report rows/s.
const (
	benchRows  = 10_000_000
	benchChunk = 1024
	benchEpoch = 100
)

var benchIn = []types.Column{{Name: "k", Type: types.TInt8}, {Name: "v", Type: types.TInt8}, {Name: "f", Type: types.TFloat8}}

// benchChunks makes nchunks distinct chunks of random rows with keys in
// [0, groups); with retract, a third of the rows retract an earlier row.
func benchChunks(groups, nchunks int, retract bool) []*Chunk {
	rng := rand.New(rand.NewSource(1))
	var live [][3]int64
	out := make([]*Chunk, nchunks)
	for c := range out {
		kb := array.NewInt64Builder(memory.DefaultAllocator)
		vb := array.NewInt64Builder(memory.DefaultAllocator)
		fb := array.NewFloat64Builder(memory.DefaultAllocator)
		var ops []Op
		if retract {
			ops = make([]Op, 0, benchChunk)
		}
		for i := 0; i < benchChunk; i++ {
			row := [3]int64{rng.Int63n(int64(groups)), rng.Int63n(1_000_000), rng.Int63n(1000)}
			if retract {
				if len(live) > 0 && rng.Intn(3) == 0 {
					j := rng.Intn(len(live))
					row = live[j]
					live[j] = live[len(live)-1]
					live = live[:len(live)-1]
					ops = append(ops, Delete)
				} else {
					live = append(live, row)
					ops = append(ops, Insert)
				}
			}
			kb.Append(row[0])
			vb.Append(row[1])
			fb.Append(float64(row[2]) / 4)
		}
		out[c] = &Chunk{Rec: array.NewRecordBatch(types.ArrowSchema(benchIn),
			[]arrow.Array{kb.NewArray(), vb.NewArray(), fb.NewArray()}, benchChunk), Ops: ops}
	}
	return out
}

// benchAgg is SELECT k, count(*), sum(v), avg(f), max(v) GROUP BY k; with
// avgInt, avg(v) (numeric) instead of avg(f).
func benchAgg(appendOnly, avgInt bool) *HashAgg {
	k := &expr.ColRef{Idx: 0, T: types.TInt8, Name: "k"}
	v := &expr.ColRef{Idx: 1, T: types.TInt8, Name: "v"}
	f := &expr.ColRef{Idx: 2, T: types.TFloat8, Name: "f"}
	avg := AggSpec{Kind: AggAvg, Arg: f}
	if avgInt {
		avg.Arg = v
	}
	return newBenchAgg(&HashAgg{GroupBy: []expr.Expr{k}, AppendOnly: appendOnly, Aggs: []AggSpec{
		{Kind: AggCountStar}, {Kind: AggSum, Arg: v}, avg, {Kind: AggMax, Arg: v},
	}})
}

func newBenchAgg(h *HashAgg) *HashAgg {
	for _, g := range h.GroupBy {
		h.Cols = append(h.Cols, types.Column{Name: g.String(), Type: g.Type()})
	}
	for i, a := range h.Aggs {
		rt, err := a.ResultType()
		if err != nil {
			panic(err)
		}
		h.Cols = append(h.Cols, types.Column{Name: fmt.Sprintf("a%d", i), Type: rt})
	}
	return h
}

// runBench feeds chunks through a pipeline of HashAggs (each one's output
// at a barrier is the next one's input) and reports input rows/s.
func runBench(b *testing.B, chunks []*Chunk, hs ...*HashAgg) {
	rows := 0
	for _, c := range chunks {
		rows += c.Len()
	}
	b.ResetTimer()
	cpu0 := cpuTime()
	for it := 0; it < b.N; it++ {
		rs := make([]*aggRun, len(hs))
		for i, h := range hs {
			r, err := h.newRun(&Env{})
			if err != nil {
				b.Fatal(err)
			}
			rs[i] = r
		}
		barrier := func() {
			for i, r := range rs {
				out, err := r.flush()
				if err != nil {
					b.Fatal(err)
				}
				if out != nil && i+1 < len(rs) {
					if err := rs[i+1].consume(out); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
		for c, ch := range chunks {
			if err := rs[0].consume(ch); err != nil {
				b.Fatal(err)
			}
			if c%benchEpoch == benchEpoch-1 {
				barrier()
			}
		}
		barrier()
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	// The machine is shared: rows per second of this process's CPU time
	// is the steadier figure.
	b.ReportMetric(float64(rows)*float64(b.N)/(cpuTime()-cpu0).Seconds(), "rows/cpu-s")
}

func benchGroups(b *testing.B, groups int, retract, appendOnly, avgInt bool) {
	runBench(b, benchChunks(groups, benchRows/benchChunk, retract), benchAgg(appendOnly, avgInt))
}

// 10M rows, count(*), sum(v), avg(f), max(v) GROUP BY k, k in 1k or 1M
// values; "Hint" runs set HashAgg.AppendOnly (max keeps its extreme only).
func BenchmarkHashAggAppendOnly1kGroups(b *testing.B)     { benchGroups(b, 1000, false, false, false) }
func BenchmarkHashAggAppendOnly1MGroups(b *testing.B)     { benchGroups(b, 1_000_000, false, false, false) }
func BenchmarkHashAggAppendOnlyHint1kGroups(b *testing.B) { benchGroups(b, 1000, false, true, false) }
func BenchmarkHashAggAppendOnlyHint1MGroups(b *testing.B) {
	benchGroups(b, 1_000_000, false, true, false)
}
func BenchmarkHashAggAvgInt1kGroups(b *testing.B) { benchGroups(b, 1000, false, true, true) }

// A third of the rows retract an earlier live row.
func BenchmarkHashAggRetracting1kGroups(b *testing.B) { benchGroups(b, 1000, true, false, false) }
func BenchmarkHashAggRetracting1MGroups(b *testing.B) { benchGroups(b, 1_000_000, true, false, false) }

// BenchmarkHashAggQ5Like is Nexmark q5's inner count: SELECT auction,
// window_start, count(*) GROUP BY auction, window_start over bids of 10k
// auctions in 10-second windows.
func BenchmarkHashAggQ5Like(b *testing.B) {
	cols := []types.Column{{Name: "auction", Type: types.TInt8}, {Name: "window_start", Type: types.TTimestamp}}
	rng := rand.New(rand.NewSource(2))
	chunks := make([]*Chunk, benchRows/benchChunk)
	for c := range chunks {
		ab := array.NewInt64Builder(memory.DefaultAllocator)
		wb := array.NewTimestampBuilder(memory.DefaultAllocator, &arrow.TimestampType{Unit: arrow.Microsecond})
		for i := 0; i < benchChunk; i++ {
			ab.Append(rng.Int63n(10_000))
			row := c*benchChunk + i
			wb.Append(arrow.Timestamp(int64(row/100_000) * 10_000_000)) // 100k bids per window
		}
		chunks[c] = &Chunk{Rec: array.NewRecordBatch(types.ArrowSchema(cols), []arrow.Array{ab.NewArray(), wb.NewArray()}, benchChunk)}
	}
	h := newBenchAgg(&HashAgg{AppendOnly: true, GroupBy: []expr.Expr{
		&expr.ColRef{Idx: 0, T: types.TInt8, Name: "auction"}, &expr.ColRef{Idx: 1, T: types.TTimestamp, Name: "window_start"},
	}, Aggs: []AggSpec{{Kind: AggCountStar}}})
	runBench(b, chunks, h)
}

// BenchmarkHashAggQ4Like is Nexmark q4's two aggregations over the join of
// auctions and bids: SELECT category, avg(final) FROM (SELECT id,
// category, max(price) AS final GROUP BY id, category) GROUP BY category,
// the outer one fed the inner one's update pairs.
func BenchmarkHashAggQ4Like(b *testing.B) {
	cols := []types.Column{{Name: "id", Type: types.TInt8}, {Name: "category", Type: types.TInt8}, {Name: "price", Type: types.TInt8}}
	rng := rand.New(rand.NewSource(3))
	chunks := make([]*Chunk, benchRows/benchChunk)
	for c := range chunks {
		ib := array.NewInt64Builder(memory.DefaultAllocator)
		cb := array.NewInt64Builder(memory.DefaultAllocator)
		pb := array.NewInt64Builder(memory.DefaultAllocator)
		for i := 0; i < benchChunk; i++ {
			row := c*benchChunk + i
			id := int64(row/100) + rng.Int63n(1000) // auctions open for a while: ~1000 live ones
			ib.Append(id)
			cb.Append(id % 10)
			pb.Append(rng.Int63n(10_000_000))
		}
		chunks[c] = &Chunk{Rec: array.NewRecordBatch(types.ArrowSchema(cols), []arrow.Array{ib.NewArray(), cb.NewArray(), pb.NewArray()}, benchChunk)}
	}
	inner := newBenchAgg(&HashAgg{AppendOnly: true, GroupBy: []expr.Expr{
		&expr.ColRef{Idx: 0, T: types.TInt8, Name: "id"}, &expr.ColRef{Idx: 1, T: types.TInt8, Name: "category"},
	}, Aggs: []AggSpec{{Kind: AggMax, Arg: &expr.ColRef{Idx: 2, T: types.TInt8, Name: "price"}}}})
	outer := newBenchAgg(&HashAgg{GroupBy: []expr.Expr{&expr.ColRef{Idx: 1, T: types.TInt8, Name: "category"}},
		Aggs: []AggSpec{{Kind: AggAvg, Arg: &expr.ColRef{Idx: 2, T: types.TInt8, Name: "final"}}}})
	runBench(b, chunks, inner, outer)
}

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

// benchAgg is SELECT k, count(*), sum(v), avg(f), max(v) GROUP BY k.
func benchAgg() *HashAgg {
	k := &expr.ColRef{Idx: 0, T: types.TInt8, Name: "k"}
	v := &expr.ColRef{Idx: 1, T: types.TInt8, Name: "v"}
	f := &expr.ColRef{Idx: 2, T: types.TFloat8, Name: "f"}
	h := &HashAgg{GroupBy: []expr.Expr{k}, Aggs: []AggSpec{
		{Kind: AggCountStar}, {Kind: AggSum, Arg: v}, {Kind: AggAvg, Arg: f}, {Kind: AggMax, Arg: v},
	}, Cols: []types.Column{{Name: "k", Type: types.TInt8}}}
	for i, a := range h.Aggs {
		rt, err := a.ResultType()
		if err != nil {
			panic(err)
		}
		h.Cols = append(h.Cols, types.Column{Name: fmt.Sprintf("a%d", i), Type: rt})
	}
	return h
}

func runBench(b *testing.B, h *HashAgg, groups int, retract bool) {
	chunks := benchChunks(groups, 256, retract)
	if retract {
		// retractions must name live rows: replay the one changelog
		chunks = benchChunks(groups, benchRows/benchChunk, true)
	}
	b.ResetTimer()
	cpu0 := cpuTime()
	for it := 0; it < b.N; it++ {
		r, err := h.newRun(&Env{})
		if err != nil {
			b.Fatal(err)
		}
		for c := 0; c < benchRows/benchChunk; c++ {
			if err := r.consume(chunks[c%len(chunks)]); err != nil {
				b.Fatal(err)
			}
			if c%benchEpoch == benchEpoch-1 {
				if _, err := r.flush(); err != nil {
					b.Fatal(err)
				}
			}
		}
		if _, err := r.flush(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	// The machine is shared: rows per second of this process's CPU time
	// is the steadier figure.
	b.ReportMetric(float64(benchRows)*float64(b.N)/(cpuTime()-cpu0).Seconds(), "rows/cpu-s")
}

func BenchmarkHashAggAppendOnly1kGroups(b *testing.B) { runBench(b, benchAgg(), 1000, false) }
func BenchmarkHashAggAppendOnly1MGroups(b *testing.B) { runBench(b, benchAgg(), 1_000_000, false) }
func BenchmarkHashAggRetracting1kGroups(b *testing.B) { runBench(b, benchAgg(), 1000, true) }
func BenchmarkHashAggRetracting1MGroups(b *testing.B) { runBench(b, benchAgg(), 1_000_000, true) }

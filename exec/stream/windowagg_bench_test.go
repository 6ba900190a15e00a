package stream

import (
	"math/rand"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// Windowed aggregation benchmarks: SELECT window_start, window_end, k,
// count(*), sum(v), avg(f), max(v) GROUP BY window, k EMIT ON WINDOW CLOSE
// over rows (k in 10k keys, event times 100 µs apart, up to 1 s out of
// order), a watermark of max time - 1 s after each 1024-row chunk, a
// barrier every 100 chunks. Reported: input rows per second (wall and CPU)
// and the live heap (after a GC, input pool included) a quarter into the
// run and at its end: flat when the state of closed windows is freed.

var wbenchIn = []types.Column{{Name: "k", Type: types.TInt8}, {Name: "ts", Type: types.TTimestamp},
	{Name: "v", Type: types.TInt8}, {Name: "f", Type: types.TFloat8}}

const (
	wbenchKeys = 10_000
	wbenchStep = 100       // µs of event time per row
	wbenchLag  = 1_000_000 // µs: out of order by up to this, the watermark this far behind
	wbenchPool = 128       // distinct key/value chunks, reused with fresh times
)

func wbenchAgg(ws WindowSpec, emit EmitSpec) *WindowAgg {
	ws.TimeCol = 1
	k := &expr.ColRef{Idx: 0, T: types.TInt8, Name: "k"}
	v := &expr.ColRef{Idx: 2, T: types.TInt8, Name: "v"}
	f := &expr.ColRef{Idx: 3, T: types.TFloat8, Name: "f"}
	w := &WindowAgg{Input: &winSource{wbenchIn}, Window: ws, Emit: emit, AppendOnly: true,
		GroupBy: []expr.Expr{k},
		Aggs:    []AggSpec{{Kind: AggCountStar}, {Kind: AggSum, Arg: v}, {Kind: AggAvg, Arg: f}, {Kind: AggMax, Arg: v}},
		Cols: []types.Column{{Name: "window_start", Type: types.TTimestamp}, {Name: "window_end", Type: types.TTimestamp},
			{Name: "k", Type: types.TInt8}}}
	for _, a := range w.Aggs {
		rt, err := a.ResultType()
		if err != nil {
			panic(err)
		}
		w.Cols = append(w.Cols, types.Column{Name: a.String(), Type: rt})
	}
	return w
}

// wbenchSource makes the input chunks: key and value columns from a pool,
// a fresh time column per chunk.
type wbenchSource struct {
	keys, vals, floats []arrow.Array
	jitter             [][]int64
	ts                 []int64
}

func newWBenchSource() *wbenchSource {
	rng := rand.New(rand.NewSource(1))
	s := &wbenchSource{ts: make([]int64, benchChunk)}
	for p := 0; p < wbenchPool; p++ {
		kb := array.NewInt64Builder(memory.DefaultAllocator)
		vb := array.NewInt64Builder(memory.DefaultAllocator)
		fb := array.NewFloat64Builder(memory.DefaultAllocator)
		j := make([]int64, benchChunk)
		for i := 0; i < benchChunk; i++ {
			kb.Append(rng.Int63n(wbenchKeys))
			vb.Append(rng.Int63n(1_000_000))
			fb.Append(float64(rng.Int63n(1000)) / 4)
			j[i] = rng.Int63n(wbenchLag)
		}
		s.keys, s.vals, s.floats = append(s.keys, kb.NewArray()), append(s.vals, vb.NewArray()), append(s.floats, fb.NewArray())
		s.jitter = append(s.jitter, j)
	}
	return s
}

// chunk returns chunk c and the watermark after it.
func (s *wbenchSource) chunk(c int) (*Chunk, int64) {
	p := c % wbenchPool
	base := int64(c) * benchChunk * wbenchStep
	for i, j := range s.jitter[p] {
		s.ts[i] = base + int64(i)*wbenchStep - j
	}
	tb := array.NewTimestampBuilder(memory.DefaultAllocator, &arrow.TimestampType{Unit: arrow.Microsecond})
	ts := make([]arrow.Timestamp, len(s.ts))
	for i, v := range s.ts {
		ts[i] = arrow.Timestamp(v)
	}
	tb.AppendValues(ts, nil)
	rec := array.NewRecordBatch(types.ArrowSchema(wbenchIn), []arrow.Array{s.keys[p], tb.NewArray(), s.vals[p], s.floats[p]}, benchChunk)
	tb.Release()
	return &Chunk{Rec: rec}, base + benchChunk*wbenchStep - wbenchLag
}

func liveHeapMB() float64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc) / (1 << 20)
}

func runWindowBench(b *testing.B, ws WindowSpec, emit EmitSpec, rows int) {
	src := newWBenchSource()
	w := wbenchAgg(ws, emit)
	nchunks := rows / benchChunk
	var quarter, end float64
	out := 0
	b.ResetTimer()
	cpu0 := cpuTime()
	for it := 0; it < b.N; it++ {
		r, err := w.newRun(&Env{})
		if err != nil {
			b.Fatal(err)
		}
		for c := 0; c < nchunks; c++ {
			ch, wm := src.chunk(c)
			if err := r.consume(ch); err != nil {
				b.Fatal(err)
			}
			o, err := r.advance(wm)
			if err != nil {
				b.Fatal(err)
			}
			if o != nil {
				out += o.Len()
			}
			if c%benchEpoch == benchEpoch-1 {
				o, err := r.barrier()
				if err != nil {
					b.Fatal(err)
				}
				if o != nil {
					out += o.Len()
				}
			}
			if it == 0 && (c == nchunks/4 || c == nchunks-1) {
				b.StopTimer()
				if c == nchunks/4 {
					quarter = liveHeapMB()
				} else {
					end = liveHeapMB()
				}
				b.StartTimer()
			}
		}
		runtime.KeepAlive(r)
	}
	b.ReportMetric(float64(nchunks*benchChunk)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(nchunks*benchChunk)*float64(b.N)/(cpuTime()-cpu0).Seconds(), "rows/cpu-s")
	b.ReportMetric(quarter, "MB-heap-quarter")
	b.ReportMetric(end, "MB-heap-end")
	b.ReportMetric(float64(out)/float64(b.N), "out-rows")
}

// 10M rows: 1000 s of event time, 100 tumbling windows of 10 s.
func BenchmarkWindowAggTumbleEOWC(b *testing.B) {
	runWindowBench(b, WindowSpec{Kind: Tumble, Size: 10_000_000}, EmitSpec{Mode: EmitOnWindowClose}, benchRows)
}

// The same under EMIT ON UPDATE: every epoch's changed (window, key) rows
// go out as update pairs.
func BenchmarkWindowAggTumbleOnUpdate(b *testing.B) {
	runWindowBench(b, WindowSpec{Kind: Tumble, Size: 10_000_000}, EmitSpec{Mode: EmitOnUpdate}, benchRows)
}

// 10M rows, HOP(slide 2 s, size 10 s): 500 windows of 5 panes.
func BenchmarkWindowAggHopEOWC(b *testing.B) {
	runWindowBench(b, WindowSpec{Kind: Hop, Size: 10_000_000, Slide: 2_000_000}, EmitSpec{Mode: EmitOnWindowClose}, benchRows)
}

// 50M rows of HOP, for memory over a long run.
func BenchmarkWindowAggHopEOWCLong(b *testing.B) {
	runWindowBench(b, WindowSpec{Kind: Hop, Size: 10_000_000, Slide: 2_000_000}, EmitSpec{Mode: EmitOnWindowClose}, 5*benchRows)
}

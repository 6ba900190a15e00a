package stream

import (
	"math/rand"
	"runtime"
	"testing"
	"time"

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

// runWindowBench runs the benchmark; with snapshots, an incremental
// snapshot (into a counting writer) follows every barrier.
func runWindowBench(b *testing.B, ws WindowSpec, emit EmitSpec, rows int, snapshots ...bool) {
	env := &Env{}
	if len(snapshots) > 0 && snapshots[0] {
		env.Checkpoints = newMemCheckpoints()
	}
	var sw ktCountWriter
	src := newWBenchSource()
	w := wbenchAgg(ws, emit)
	nchunks := rows / benchChunk
	var quarter, end float64
	out := 0
	b.ResetTimer()
	cpu0 := cpuTime()
	for it := 0; it < b.N; it++ {
		r, err := w.newRun(env)
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
				if env.Checkpoints != nil {
					if err := (waggState{r}).Snapshot(&sw, false); err != nil {
						b.Fatal(err)
					}
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
	if env.Checkpoints != nil {
		b.ReportMetric(float64(sw.bytes)/float64(b.N), "snapshot-bytes")
	}
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

// The same with an incremental snapshot after every barrier (every 100
// chunks: 10 s of event time), for the cost of checkpoints on the hot path.
func BenchmarkWindowAggHopEOWCSnapshots(b *testing.B) {
	runWindowBench(b, WindowSpec{Kind: Hop, Size: 10_000_000, Slide: 2_000_000}, EmitSpec{Mode: EmitOnWindowClose}, benchRows, true)
}

// TUMBLE under EMIT ON UPDATE with an incremental snapshot after every
// barrier.
func BenchmarkWindowAggTumbleOnUpdateSnapshots(b *testing.B) {
	runWindowBench(b, WindowSpec{Kind: Tumble, Size: 10_000_000}, EmitSpec{Mode: EmitOnUpdate}, benchRows, true)
}

// 50M rows of HOP, for memory over a long run.
func BenchmarkWindowAggHopEOWCLong(b *testing.B) {
	runWindowBench(b, WindowSpec{Kind: Hop, Size: 10_000_000, Slide: 2_000_000}, EmitSpec{Mode: EmitOnWindowClose}, 5*benchRows)
}

// wbenchKeysChunk is a chunk of rows for keys ks at times ts (values from
// the key).
func wbenchKeysChunk(ks, ts []int64) *Chunk {
	kb := array.NewInt64Builder(memory.DefaultAllocator)
	tb := array.NewTimestampBuilder(memory.DefaultAllocator, &arrow.TimestampType{Unit: arrow.Microsecond})
	vb := array.NewInt64Builder(memory.DefaultAllocator)
	fb := array.NewFloat64Builder(memory.DefaultAllocator)
	for i, k := range ks {
		kb.Append(k)
		tb.Append(arrow.Timestamp(ts[i]))
		vb.Append(k * 7 % 1000)
		fb.Append(float64(k%400) / 4)
	}
	return &Chunk{Rec: array.NewRecordBatch(types.ArrowSchema(wbenchIn),
		[]arrow.Array{kb.NewArray(), tb.NewArray(), vb.NewArray(), fb.NewArray()}, int64(len(ks)))}
}

// BenchmarkWindowAggSnapshot: the snapshot of a large open-window state
// (count, sum, avg, max per window and key): TUMBLE(1 h) EMIT ON UPDATE
// over 1M keys (1M groups, 1M emitted rows, 1M keys), and HOP(10 s, 2 s)
// EMIT ON WINDOW CLOSE over 200k keys in 5 panes (1M groups). Each
// incremental snapshot follows an epoch of 10k rows of random keys (about
// 1% of the groups); full ones write everything. The writer only counts.
func BenchmarkWindowAggSnapshot(b *testing.B) {
	for _, c := range []struct {
		name  string
		ws    WindowSpec
		emit  EmitSpec
		keys  int64
		panes int64
	}{
		{"tumble-1h-on-update-1M-keys", WindowSpec{Kind: Tumble, Size: 3600_000_000}, EmitSpec{Mode: EmitOnUpdate}, 1_000_000, 1},
		{"hop-10s-2s-eowc-200k-keys", WindowSpec{Kind: Hop, Size: 10_000_000, Slide: 2_000_000}, EmitSpec{Mode: EmitOnWindowClose}, 200_000, 5},
	} {
		b.Run(c.name, func(b *testing.B) {
			w := wbenchAgg(c.ws, c.emit)
			r, err := w.newRun(&Env{Ctx: b.Context(), Checkpoints: newMemCheckpoints()})
			if err != nil {
				b.Fatal(err)
			}
			const slide = 2_000_000
			ks, ts := make([]int64, 0, benchChunk), make([]int64, 0, benchChunk)
			flush := func() {
				if len(ks) > 0 {
					if err := r.consume(wbenchKeysChunk(ks, ts)); err != nil {
						b.Fatal(err)
					}
					ks, ts = ks[:0], ts[:0]
				}
			}
			for p := int64(0); p < c.panes; p++ {
				for k := int64(0); k < c.keys; k++ {
					ks, ts = append(ks, k), append(ts, p*slide+k%slide)
					if len(ks) == benchChunk {
						flush()
					}
				}
			}
			flush()
			if _, err := r.barrier(); err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewSource(1))
			step := func() {
				for i := 0; i < 10_000; i++ {
					ks, ts = append(ks, rng.Int63n(c.keys)), append(ts, rng.Int63n(c.panes)*slide+rng.Int63n(slide))
					if len(ks) == benchChunk {
						flush()
					}
				}
				flush()
				if _, err := r.barrier(); err != nil {
					b.Fatal(err)
				}
			}
			for _, full := range []bool{false, true} {
				b.Run(map[bool]string{false: "incremental", true: "full"}[full], func(b *testing.B) {
					if err := (waggState{r}).Snapshot(&ktCountWriter{}, true); err != nil {
						b.Fatal(err)
					}
					var w ktCountWriter
					var cpu time.Duration
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						b.StopTimer()
						step()
						b.StartTimer()
						cpu0 := cpuTime()
						if err := (waggState{r}).Snapshot(&w, full); err != nil {
							b.Fatal(err)
						}
						cpu += cpuTime() - cpu0
					}
					b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
					b.ReportMetric(float64(w.pairs)/float64(b.N), "pairs/op")
					b.ReportMetric(float64(w.bytes)/float64(b.N), "bytes/op")
					b.ReportMetric(float64(r.liveGroups()), "groups")
				})
			}
		})
	}
}

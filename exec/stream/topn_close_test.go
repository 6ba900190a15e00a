package stream

import (
	"fmt"
	"math/rand"
	"runtime"
	"slices"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// Top-N per window: rows (ws timestamp, k int8, v int8), partitioned by ws
// (closing with its watermark) and k, the 2 highest v.
var twIn = []types.Column{{Name: "ws", Type: types.TTimestamp}, {Name: "k", Type: types.TInt8}, {Name: "v", Type: types.TInt8}}

func newWindowTopN(ch chan Message, eowc, appendOnly bool, limit int64) *TopN {
	return &TopN{Input: &tnSource{ch: ch, cols: twIn},
		PartitionBy: []expr.Expr{&expr.ColRef{Idx: 0, T: types.TTimestamp, Name: "ws"}, &expr.ColRef{Idx: 1, T: types.TInt8, Name: "k"}},
		Order:       []exec.SortKey{{E: &expr.ColRef{Idx: 2, T: types.TInt8, Name: "v"}, Desc: true, NullsFirst: true}},
		Limit:       limit, RankCol: true, AppendOnly: appendOnly,
		Cols:  append(slices.Clone(twIn), types.Column{Name: "rn", Type: types.TInt8}),
		Close: &TopNClose{Part: 0, Col: 0, EOWC: eowc}}
}

// TestTopNCloseRandom feeds random rows and watermarks on ws and checks,
// at every barrier, the output against the top-n of the rows that were not
// late (by brute force): under ON UPDATE for every partition, under EOWC
// for the closed ones only, each emitted once; late rows are counted. In
// both modes a row is late once a watermark past its partition arrived,
// barrier or not.
func TestTopNCloseRandom(t *testing.T) {
	for _, eowc := range []bool{false, true} {
		for _, appendOnly := range []bool{false, true} {
			t.Run(fmt.Sprintf("eowc=%v/appendOnly=%v", eowc, appendOnly), func(t *testing.T) {
				for seed := int64(1); seed <= 20; seed++ {
					testTopNClose(t, seed, eowc, appendOnly)
				}
			})
		}
	}
}

func testTopNClose(t *testing.T, seed int64, eowc, appendOnly bool) {
	rng := rand.New(rand.NewSource(seed))
	ch := make(chan Message, ChannelSize)
	top := newWindowTopN(ch, eowc, appendOnly, 2)
	var late int
	h := newTnHarness(t, top)
	h.env.OnLate = func(rows arrow.RecordBatch, _ uint64) { late += int(rows.NumRows()) }
	var live [][]types.Value // rows not late, still counted
	wm := int64(0)           // the watermark on ws
	wantLate := 0
	closeBelow := int64(-1 << 62)
	ch <- WatermarkMsg(Watermark{Col: 0, Value: wm})
	closeBelow = wm // in both modes a watermark makes the rows below it late at once
	for step := 0; step < 40; step++ {
		var rows [][]types.Value
		var ops []Op
		for i := rng.Intn(6); i > 0; i-- {
			ws := wm + int64(rng.Intn(4)-1)*10 // sometimes a closed window: late
			ws -= ws % 10
			row := []types.Value{types.TimestampValue(ws), int64(rng.Intn(2)), int64(rng.Intn(10))}
			op := Insert
			if !appendOnly && len(live) > 0 && rng.Intn(4) == 0 {
				row, op = live[rng.Intn(len(live))], Delete
			}
			if int64(row[0].(types.TimestampValue)) < closeBelow {
				wantLate++
			} else if op == Insert {
				live = append(live, row)
			} else {
				j := slices.IndexFunc(live, func(r []types.Value) bool { return tnRender(r) == tnRender(row) })
				live = slices.Delete(live, j, j+1)
			}
			rows, ops = append(rows, row), append(ops, op)
		}
		if len(rows) > 0 {
			if appendOnly {
				ops = nil
			}
			ch <- ChunkMsg(tnChunk(t, twIn, ops, rows))
		}
		if rng.Intn(3) == 0 {
			wm += int64(rng.Intn(25))
			ch <- WatermarkMsg(Watermark{Col: 0, Value: wm})
			closeBelow = wm
		}
		h.barrier()
		var done [][]types.Value
		for _, r := range live {
			if !eowc || int64(r[0].(types.TimestampValue)) < wm {
				done = append(done, r)
			}
		}
		want := twExpect(done, 2)
		if !mapsEqual(h.acc, want) {
			t.Fatalf("seed %d step %d: got %v, want %v", seed, step, h.acc, want)
		}
		if late != wantLate {
			t.Fatalf("seed %d step %d: %d late rows, want %d", seed, step, late, wantLate)
		}
	}
}

// twExpect renders the top-n of rows per (ws, k), with ranks.
func twExpect(rows [][]types.Value, n int) map[string]int {
	parts := map[string][][]types.Value{}
	for _, r := range rows {
		k := fmt.Sprint(r[0], r[1])
		parts[k] = append(parts[k], r)
	}
	want := map[string]int{}
	for _, p := range parts {
		sort.SliceStable(p, func(i, j int) bool {
			if p[i][2].(int64) != p[j][2].(int64) {
				return p[i][2].(int64) > p[j][2].(int64)
			}
			return tnRender(p[i]) < tnRender(p[j])
		})
		for i, r := range p[:min(n, len(p))] {
			want[tnRender(append(slices.Clone(r), int64(i+1)))]++
		}
	}
	return want
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// BenchmarkTopNWindowState runs a top-3 per 1-second tumbling window and
// auction over an endless append-only stream (1000 auctions, 10k rows a
// second of event time, a watermark and a barrier every 10k rows) under
// EMIT ON WINDOW CLOSE, and reports the live heap after the first and the
// last tenth of the run: flat when closed windows are freed (close=false:
// the same top-N without TopNClose, for comparison).
func BenchmarkTopNWindowState(b *testing.B) {
	for _, closing := range []bool{true, false} {
		b.Run(fmt.Sprintf("close=%v", closing), func(b *testing.B) { benchTopNWindowState(b, closing) })
	}
}

func benchTopNWindowState(b *testing.B, closing bool) {
	cols := twIn
	const chunkRows, perSecond, auctions = 1000, 10000, 1000
	for n := 0; n < b.N; n++ {
		ch := make(chan Message, ChannelSize)
		top := newWindowTopN(ch, true, true, 3)
		if !closing {
			top.Close = nil
		}
		env := NewEnv(b.Context(), expr.Context{})
		out := top.Start(env, []<-chan Message{ch})
		done := make(chan int)
		go func() {
			emitted := 0
			for m := range out {
				if m.Kind == KindChunk {
					emitted += m.Chunk.Len()
				}
			}
			done <- emitted
		}()
		rng := rand.New(rand.NewSource(1))
		const total = 5_000_000
		var heapFirst, heapLast float64
		t := int64(0) // µs of event time
		for i := 0; i < total; i += chunkRows {
			var rows [][]types.Value
			for j := 0; j < chunkRows; j++ {
				t += 1_000_000 / perSecond
				ws := t - t%1_000_000
				rows = append(rows, []types.Value{types.TimestampValue(ws), rng.Int63n(auctions), rng.Int63n(1_000_000)})
			}
			ch <- ChunkMsg(tnChunk(b, cols, nil, rows))
			if (i/chunkRows)%10 == 9 {
				ch <- WatermarkMsg(Watermark{Col: 0, Value: t - t%1_000_000})
				ch <- BarrierMsg(Barrier{Epoch: uint64(i)})
			}
			if i == total/10 || i+chunkRows >= total {
				var ms runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&ms)
				if i == total/10 {
					heapFirst = float64(ms.HeapInuse) / (1 << 20)
				} else {
					heapLast = float64(ms.HeapInuse) / (1 << 20)
				}
			}
		}
		close(ch)
		emitted := <-done
		if err := env.Err(); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(heapFirst, "heap-MB-at-10%")
		b.ReportMetric(heapLast, "heap-MB-at-end")
		b.ReportMetric(float64(emitted), "out-rows")
	}
}

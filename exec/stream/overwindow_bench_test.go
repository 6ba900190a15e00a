package stream

import (
	"fmt"
	"math/rand"
	"runtime"
	"testing"
	"time"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// BenchmarkOverWindow measures an OverWindow (lag, a ROWS frame sum and
// row_number per key, ordered by time) over 200k append-only rows in
// chunks of 1000 and epochs of 10 chunks: ON UPDATE recomputes every
// touched partition per epoch (partitions of rows/keys rows at the end);
// EOWC (a watermark per epoch) computes each row once and frees the rows
// no frame reaches. It reports rows per second (of wall and of process
// CPU time) and the live heap at the end of the run.
func BenchmarkOverWindow(b *testing.B) {
	for _, c := range []struct {
		eowc bool
		keys int
	}{{false, 10000}, {false, 1000}, {true, 1000}, {true, 10}} {
		b.Run(fmt.Sprintf("eowc=%v/keys=%d", c.eowc, c.keys), func(b *testing.B) { benchOverWindow(b, c.eowc, c.keys) })
	}
}

func benchOverWindow(b *testing.B, eowc bool, keys int) {
	k, ts, v, id := owCol(0), owCol(1), owCol(2), owCol(3)
	part := []expr.Expr{k}
	byTime := []exec.SortKey{{E: ts}, {E: id}}
	calls := []exec.WindowCall{
		owCall(b, "row_number", nil, part, byTime, owDefault),
		owCall(b, "lag", []expr.Expr{v}, part, byTime, owDefault),
		owCall(b, "sum", []expr.Expr{v}, part, byTime, owRows1),
	}
	const rows, chunkRows = 200_000, 1000
	rng := rand.New(rand.NewSource(1))
	var chunks []*Chunk
	for i := 0; i < rows; i += chunkRows {
		var batch [][]types.Value
		for j := i; j < i+chunkRows; j++ {
			batch = append(batch, []types.Value{rng.Int63n(int64(keys)), types.TimestampValue(j), rng.Int63n(1000), int64(j)})
		}
		chunks = append(chunks, tnChunk(b, owIn, nil, batch))
	}
	b.ResetTimer()
	var heap float64
	var cpu time.Duration // process CPU time: the machine may be shared
	for n := 0; n < b.N; n++ {
		cpu0 := cpuTime()
		ch := make(chan Message, ChannelSize)
		w := newOverWindow(ch, calls)
		if eowc {
			w.EOWC = &OverEOWC{TimeCol: 1}
		}
		env := NewEnv(b.Context(), expr.Context{})
		out := w.Start(env, []<-chan Message{ch})
		done := make(chan struct{})
		go func() {
			for range out {
			}
			close(done)
		}()
		for i, c := range chunks {
			ch <- ChunkMsg(c)
			if i%10 == 9 {
				if eowc {
					ch <- WatermarkMsg(Watermark{Col: 1, Value: int64((i + 1) * chunkRows)})
				}
				ch <- BarrierMsg(Barrier{Epoch: uint64(i)})
			}
		}
		cpu += cpuTime() - cpu0
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		heap = float64(ms.HeapInuse) / (1 << 20)
		close(ch)
		<-done
		if err := env.Err(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(rows)*float64(b.N)/cpu.Seconds(), "rows/cpu-s")
	b.ReportMetric(heap, "heap-MB")
}

package stream

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// BenchmarkTopNNexmark is Nexmark-like group top-n: 1M bids (auction,
// bidder, price, date_time) over 10k auctions, the 3 highest prices per
// auction, a barrier every 16 chunks of 1024 rows.
func BenchmarkTopNNexmark(b *testing.B) {
	cols := []types.Column{{Name: "auction", Type: types.TInt8}, {Name: "bidder", Type: types.TInt8}, {Name: "price", Type: types.TInt8}, {Name: "date_time", Type: types.TTimestamp}}
	const rows, chunkRows, auctions = 1 << 20, 1024, 10000
	rng := rand.New(rand.NewSource(1))
	var chunks []*Chunk
	for i := 0; i < rows; i += chunkRows {
		var batch [][]types.Value
		for j := 0; j < chunkRows; j++ {
			batch = append(batch, []types.Value{rng.Int63n(auctions), rng.Int63n(100000), 100 + rng.Int63n(1_000_000), types.TimestampValue(int64(i+j) * 1000)})
		}
		chunks = append(chunks, tnChunk(b, cols, nil, batch))
	}
	for _, appendOnly := range []bool{true, false} {
		b.Run(fmt.Sprintf("appendOnly=%v", appendOnly), func(b *testing.B) {
			var cpu time.Duration // process CPU time: the machine may be shared
			outRows := 0
			for n := 0; n < b.N; n++ {
				ch := make(chan Message, ChannelSize)
				top := &TopN{Input: &tnSource{ch: ch, cols: cols},
					PartitionBy: []expr.Expr{&expr.ColRef{Idx: 0, T: types.TInt8, Name: "auction"}},
					Order:       []exec.SortKey{{E: &expr.ColRef{Idx: 2, T: types.TInt8, Name: "price"}, Desc: true, NullsFirst: true}},
					Limit:       3, RankCol: true, AppendOnly: appendOnly,
					Cols: append(slices.Clone(cols), types.Column{Name: "rn", Type: types.TInt8})}
				cpu0 := cpuTime()
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
				for i, c := range chunks {
					ch <- ChunkMsg(c)
					if i%16 == 15 {
						ch <- BarrierMsg(Barrier{Epoch: uint64(i)})
					}
				}
				ch <- BarrierMsg(Barrier{Epoch: uint64(len(chunks))})
				close(ch)
				outRows += <-done
				if err := env.Err(); err != nil {
					b.Fatal(err)
				}
				cpu += cpuTime() - cpu0
			}
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(rows)*float64(b.N)/cpu.Seconds(), "rows/cpu-s")
			b.ReportMetric(float64(outRows)/float64(b.N), "out-rows/op")
		})
	}
}

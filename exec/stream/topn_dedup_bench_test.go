package stream

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// BenchmarkTopNDedup is Nexmark q18's dedup: 512K bids (auction, bidder,
// price, channel, url, date_time, extra) keeping the latest bid per
// (bidder, auction), over 100k bidders x 1k auctions drawn with a skew,
// a barrier every 16 chunks of 1024 rows.
func BenchmarkTopNDedup(b *testing.B) {
	cols := []types.Column{{Name: "auction", Type: types.TInt8}, {Name: "bidder", Type: types.TInt8}, {Name: "price", Type: types.TInt8},
		{Name: "channel", Type: types.TText}, {Name: "url", Type: types.TText}, {Name: "date_time", Type: types.TTimestamp}, {Name: "extra", Type: types.TText}}
	const rows, chunkRows = 1 << 19, 1024
	rng := rand.New(rand.NewSource(1))
	extra := make([]byte, 4096)
	for i := range extra {
		extra[i] = byte('a' + rng.Intn(26))
	}
	var chunks []*Chunk
	for i := 0; i < rows; i += chunkRows {
		var batch [][]types.Value
		for j := 0; j < chunkRows; j++ {
			ch := rng.Int63n(10000)
			off := rng.Intn(len(extra) - 200)
			batch = append(batch, []types.Value{1000 + rng.Int63n(1000), 1000 + rng.Int63n(1000)*rng.Int63n(100), 100 + rng.Int63n(1_000_000),
				fmt.Sprintf("channel-%d", ch), fmt.Sprintf("https://www.nexmark.com/abc/def/ghi/item.htm?query=1&channel_id=%d", ch),
				types.TimestampValue(int64(i+j) * 100), string(extra[off : off+80+rng.Intn(100)])})
		}
		chunks = append(chunks, tnChunk(b, cols, nil, batch))
	}
	var cpu time.Duration // process CPU time: the machine may be shared
	for n := 0; n < b.N; n++ {
		ch := make(chan Message, ChannelSize)
		top := &TopN{Input: &tnSource{ch: ch, cols: cols},
			PartitionBy: []expr.Expr{&expr.ColRef{Idx: 1, T: types.TInt8, Name: "bidder"}, &expr.ColRef{Idx: 0, T: types.TInt8, Name: "auction"}},
			Order:       []exec.SortKey{{E: &expr.ColRef{Idx: 5, T: types.TTimestamp, Name: "date_time"}, Desc: true}},
			Limit:       1, AppendOnly: true, Cols: cols}
		cpu0 := cpuTime()
		env := NewEnv(b.Context(), expr.Context{})
		out := top.Start(env, []<-chan Message{ch})
		done := make(chan struct{})
		go func() {
			for range out {
			}
			close(done)
		}()
		for i, c := range chunks {
			ch <- ChunkMsg(c)
			if i%16 == 15 {
				ch <- BarrierMsg(Barrier{Epoch: uint64(i)})
			}
		}
		ch <- BarrierMsg(Barrier{Epoch: uint64(len(chunks))})
		close(ch)
		<-done
		if err := env.Err(); err != nil {
			b.Fatal(err)
		}
		cpu += cpuTime() - cpu0
	}
	b.ReportMetric(float64(rows)*float64(b.N)/cpu.Seconds(), "rows/cpu-s")
}

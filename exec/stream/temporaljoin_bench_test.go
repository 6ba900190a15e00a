package stream

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// BenchmarkTemporalJoin looks 1M stream rows (auction, price) up in a
// table of 10,000 rows (key, value), as Nexmark q13 does, in chunks of
// 1024 rows; with miss, half the stream keys are not in the table (the
// left join pads them). rows/s counts stream rows.
func BenchmarkTemporalJoin(b *testing.B) {
	for _, miss := range []bool{false, true} {
		b.Run(fmt.Sprintf("miss=%v", miss), func(b *testing.B) { benchTemporalJoin(b, miss) })
	}
}

func benchTemporalJoin(b *testing.B, miss bool) {
	const tableRows, streamRows, chunkRows = 10_000, 1_000_000, 1024
	tableCols := []types.Column{{Name: "key", Type: types.TInt8}, {Name: "value", Type: types.TText}}
	streamCols := []types.Column{{Name: "auction", Type: types.TInt8}, {Name: "price", Type: types.TInt8}}
	kb, vb := array.NewInt64Builder(memory.DefaultAllocator), array.NewStringBuilder(memory.DefaultAllocator)
	for k := 0; k < tableRows; k++ {
		kb.Append(int64(k))
		vb.Append(fmt.Sprint(k))
	}
	table := &Chunk{Rec: array.NewRecordBatch(types.ArrowSchema(tableCols), []arrow.Array{kb.NewArray(), vb.NewArray()}, tableRows)}
	rng := rand.New(rand.NewSource(1))
	span := tableRows
	if miss {
		span *= 2
	}
	var chunks []*Chunk
	for start := 0; start < streamRows; start += chunkRows {
		n := min(chunkRows, streamRows-start)
		ab, pb := array.NewInt64Builder(memory.DefaultAllocator), array.NewInt64Builder(memory.DefaultAllocator)
		for i := 0; i < n; i++ {
			ab.Append(int64(rng.Intn(span)))
			pb.Append(int64(rng.Intn(1000)))
		}
		chunks = append(chunks, &Chunk{Rec: array.NewRecordBatch(types.ArrowSchema(streamCols), []arrow.Array{ab.NewArray(), pb.NewArray()}, int64(n))})
	}
	b.ResetTimer()
	cpu0 := cpuTime()
	for it := 0; it < b.N; it++ {
		s, t := make(chan Message, ChannelSize), make(chan Message, ChannelSize)
		j := &TemporalJoin{Stream: &jsrc{s, streamCols}, Table: &jsrc{t, tableCols}, Kind: exec.LeftJoin,
			StreamKeys: []expr.Expr{jCol(0, streamCols[0])}, TableKeys: []expr.Expr{jCol(0, tableCols[0])},
			Cols: append(append([]types.Column(nil), streamCols...), tableCols...)}
		env := NewEnv(context.Background(), expr.Context{})
		out := j.Start(env, []<-chan Message{s, t})
		go func() {
			t <- ChunkMsg(table)
			t <- BarrierMsg(Barrier{Epoch: 1})
			s <- BarrierMsg(Barrier{Epoch: 1})
			for _, c := range chunks {
				s <- ChunkMsg(c)
			}
			close(s)
			close(t)
		}()
		rows := 0
		for m := range out {
			if m.Kind == KindChunk {
				rows += m.Chunk.Len()
			}
		}
		if err := env.Err(); err != nil {
			b.Fatal(err)
		}
		if rows != streamRows {
			b.Fatalf("%d output rows, want %d", rows, streamRows)
		}
	}
	in := float64(streamRows) * float64(b.N)
	b.ReportMetric(in/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(in/(cpuTime()-cpu0).Seconds(), "rows/cpu-s")
}

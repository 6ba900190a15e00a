package netx

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/stream"
)

// BenchmarkLoopback measures one stream over loopback TCP: chunks of
// 1024 rows (int64, text, float64, with ops), a barrier every 16 chunks,
// the default credit. It reports rows/s and, through SetBytes, the Arrow
// IPC bytes per second.
func BenchmarkLoopback(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	chunks := make([]*stream.Chunk, 16)
	for i := range chunks {
		chunks[i] = randChunk(rng, testSchema, 1024, false)
	}
	b.SetBytes(ipcSize(b, chunks[0].Rec))
	opt := Options{Timeout: 10 * time.Second}
	srv, err := Listen("127.0.0.1:0", opt)
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	r, _ := srv.Expect("bench")
	s, err := Dial(ctx, srv.Addr(), "bench", opt)
	if err != nil {
		b.Fatal(err)
	}
	got := make(chan int)
	go func() {
		rows := 0
		for {
			m, ok, err := r.Recv(ctx)
			if err != nil || !ok {
				got <- rows
				return
			}
			if m.Kind == stream.KindChunk {
				rows += m.Chunk.Len()
			}
		}
	}()
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		if err := s.Send(ctx, stream.ChunkMsg(chunks[i%len(chunks)])); err != nil {
			b.Fatal(err)
		}
		if i%16 == 15 {
			if err := s.Send(ctx, stream.BarrierMsg(stream.Barrier{Epoch: uint64(i)})); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := s.Close(ctx); err != nil {
		b.Fatal(err)
	}
	rows := <-got
	b.ReportMetric(float64(rows)/time.Since(start).Seconds(), "rows/s")
	if rows != b.N*1024 {
		b.Fatalf("%d rows arrived, want %d", rows, b.N*1024)
	}
}

// ipcSize is the size of rec as one Arrow IPC record batch message (the
// schema message left out) plus its ops, as a chunk frame carries it.
func ipcSize(b *testing.B, rec arrow.RecordBatch) int64 {
	var e encoder
	if _, _, err := e.encode(stream.ChunkMsg(&stream.Chunk{Rec: rec})); err != nil {
		b.Fatal(err)
	}
	e.buf.Reset()
	if err := e.ipc.Write(rec); err != nil {
		b.Fatal(err)
	}
	return int64(e.buf.Len()) + rec.NumRows()
}

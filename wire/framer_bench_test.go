package wire

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// BenchmarkInputSmallMessages: 1000 pipelined statements per op (Parse,
// Bind, Describe, Execute, Sync each), the framer's pass-through path.
func BenchmarkInputSmallMessages(b *testing.B) {
	_, addr, _ := startFake(b, Options{})
	ctx := context.Background()
	c, err := pgx.Connect(ctx, "postgres://alice@"+addr+"/db?sslmode=disable")
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(ctx)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		batch := &pgx.Batch{}
		for j := 0; j < 1000; j++ {
			batch.Queue("select $1::int4", j)
		}
		if err := c.SendBatch(ctx, batch).Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInputLargeMessage: a 4 MiB Bind parameter per op, which the
// framer collects before the Backend reads it.
func BenchmarkInputLargeMessage(b *testing.B) {
	_, addr, _ := startFake(b, Options{})
	ctx := context.Background()
	c, err := pgx.Connect(ctx, "postgres://alice@"+addr+"/db?sslmode=disable")
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(ctx)
	long := strings.Repeat("x", 4<<20)
	b.SetBytes(int64(len(long)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var got string
		if err := c.QueryRow(ctx, "select $1::text", long).Scan(&got); err != nil || len(got) != len(long) {
			b.Fatal(len(got), err != nil)
		}
	}
}

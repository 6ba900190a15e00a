package stream

import (
	"context"
	"fmt"
	"math/rand"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// BenchmarkHashJoinNexmarkQ3 joins append-only person (id, name, city,
// state) and auction (id, seller, category) streams on person.id =
// auction.seller, as Nexmark q3 does before its filters: 200k persons and
// 1M auctions in chunks of 1024 rows, one person chunk per five auction
// chunks, each auction's seller a person seen so far (or about to be).
// rows/s counts input rows.
func BenchmarkHashJoinNexmarkQ3(b *testing.B) {
	const persons, auctions, chunkRows = 200_000, 1_000_000, 1024
	personCols := []types.Column{{Name: "id", Type: types.TInt8}, {Name: "name", Type: types.TText},
		{Name: "city", Type: types.TText}, {Name: "state", Type: types.TText}}
	auctionCols := []types.Column{{Name: "id", Type: types.TInt8}, {Name: "seller", Type: types.TInt8},
		{Name: "category", Type: types.TInt8}}
	rng := rand.New(rand.NewSource(1))
	states := []string{"AZ", "CA", "ID", "OR", "WA", "WY"}
	cities := []string{"Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"}
	var pChunks, aChunks []*Chunk
	for start := 0; start < persons; start += chunkRows {
		n := min(chunkRows, persons-start)
		id, name, city, state := array.NewInt64Builder(memory.DefaultAllocator), array.NewStringBuilder(memory.DefaultAllocator),
			array.NewStringBuilder(memory.DefaultAllocator), array.NewStringBuilder(memory.DefaultAllocator)
		for i := start; i < start+n; i++ {
			id.Append(int64(i))
			name.Append(fmt.Sprintf("person %d", i))
			city.Append(cities[rng.Intn(len(cities))])
			state.Append(states[rng.Intn(len(states))])
		}
		arrs := []arrow.Array{id.NewArray(), name.NewArray(), city.NewArray(), state.NewArray()}
		pChunks = append(pChunks, &Chunk{Rec: array.NewRecordBatch(types.ArrowSchema(personCols), arrs, int64(n))})
	}
	for start := 0; start < auctions; start += chunkRows {
		n := min(chunkRows, auctions-start)
		seen := min(persons, (start/chunkRows/5+1)*chunkRows)
		id, seller, cat := array.NewInt64Builder(memory.DefaultAllocator), array.NewInt64Builder(memory.DefaultAllocator),
			array.NewInt64Builder(memory.DefaultAllocator)
		for i := start; i < start+n; i++ {
			id.Append(int64(i))
			seller.Append(int64(rng.Intn(seen)))
			cat.Append(int64(10 + rng.Intn(5)))
		}
		arrs := []arrow.Array{id.NewArray(), seller.NewArray(), cat.NewArray()}
		aChunks = append(aChunks, &Chunk{Rec: array.NewRecordBatch(types.ArrowSchema(auctionCols), arrs, int64(n))})
	}
	b.ResetTimer()
	cpu0 := cpuTime()
	for it := 0; it < b.N; it++ {
		p, a := make(chan Message, ChannelSize), make(chan Message, ChannelSize)
		j := &HashJoin{Left: &jsrc{p, personCols}, Right: &jsrc{a, auctionCols}, Kind: exec.InnerJoin,
			LeftKeys:  []expr.Expr{jCol(0, personCols[0])},
			RightKeys: []expr.Expr{jCol(1, auctionCols[1])},
			Cols:      append(append([]types.Column(nil), personCols...), auctionCols...)}
		env := NewEnv(context.Background(), expr.Context{})
		out := j.Start(env, []<-chan Message{p, a})
		go func() {
			for k, c := range aChunks {
				if k%5 == 0 && k/5 < len(pChunks) {
					p <- ChunkMsg(pChunks[k/5])
				}
				a <- ChunkMsg(c)
			}
			for k := (len(aChunks) + 4) / 5; k < len(pChunks); k++ {
				p <- ChunkMsg(pChunks[k])
			}
			close(p)
			close(a)
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
		if rows != auctions {
			b.Fatalf("%d output rows, want %d", rows, auctions)
		}
	}
	in := float64(persons+auctions) * float64(b.N)
	b.ReportMetric(in/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(in/(cpuTime()-cpu0).Seconds(), "rows/cpu-s")
}

// cpuTime is the CPU time (user and system) the process used so far: on a
// shared machine rows per CPU second is steadier than rows per second.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

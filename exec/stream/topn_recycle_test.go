package stream

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// tnRecycleRow is a row of partition p whose text is n bytes.
func tnRecycleRow(rng *rand.Rand, p int64, n int) []types.Value {
	return []types.Value{p, int64(rng.Intn(50)), strings.Repeat(string(rune('a'+rng.Intn(26))), n), float64(rng.Intn(4))}
}

// TestTopNRecycleMatchesRecomputation: append-only group top-1 (a dedup)
// and top-3, with and without the rank column, whose rows displace each
// other within and across epochs (texts of many size classes, duplicates,
// rows that do not make it): the result is the brute force's at every
// barrier, with a collection between epochs, while displaced entries are
// reused (topn_recycle.go).
func TestTopNRecycleMatchesRecomputation(t *testing.T) {
	for _, limit := range []int64{1, 3} {
		for _, rank := range []bool{false, true} {
			rng := rand.New(rand.NewSource(limit))
			top := newTopN(make(chan Message, ChannelSize), true, []exec.SortKey{{E: tnCol(1), Desc: true}}, limit, 0, rank, true)
			h := newTnHarness(t, top)
			var model [][]types.Value
			for epoch := 0; epoch < 30; epoch++ {
				for c := 1 + rng.Intn(3); c > 0; c-- {
					var rows [][]types.Value
					for n := rng.Intn(40); n > 0; n-- {
						row := tnRecycleRow(rng, int64(rng.Intn(6)), rng.Intn(300))
						if rng.Intn(8) == 0 && len(model) > 0 {
							row = model[rng.Intn(len(model))] // a duplicate
						}
						rows = append(rows, row)
					}
					model = append(model, rows...)
					h.in <- ChunkMsg(tnChunk(t, tnIn, nil, rows))
				}
				h.barrierGC(model)
			}
		}
	}
}

// TestTopNRecycleReuses: a dedup whose every row displaces its partition's
// row takes its entries from the ones it displaced (once the epoch that
// emitted them is out) instead of allocating them; a non-append-only
// TopN does not recycle.
func TestTopNRecycleReuses(t *testing.T) {
	top := newTopN(make(chan Message, ChannelSize), true, []exec.SortKey{{E: tnCol(1), Desc: true}}, 1, 0, false, true)
	r, err := top.newRun(newEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	if r.pool == nil {
		t.Fatal("an append-only top-1 does not recycle")
	}
	rng := rand.New(rand.NewSource(1))
	seen := map[*tnEntry]bool{}
	reused := 0
	for epoch := 0; epoch < 6; epoch++ {
		var rows [][]types.Value
		for i := 0; i < 3; i++ { // three rows a partition, each better than the last
			for p := int64(0); p < 4; p++ {
				row := tnRecycleRow(rng, p, 20)
				row[1] = int64(epoch*10 + i)
				rows = append(rows, row)
			}
		}
		c := tnChunk(t, tnIn, nil, rows)
		if err := r.consume(c); err != nil {
			t.Fatal(err)
		}
		c.Rec.Release()
		out, err := r.flush()
		if err != nil {
			t.Fatal(err)
		}
		if want := 4 + 4*btoi(epoch > 0); out == nil || out.Len() != want {
			t.Fatalf("epoch %d: %v output rows, want %d", epoch, out, want)
		}
		out.Rec.Release()
		if r.dedup == nil || r.dedup.n != 4 || len(r.parts.short)+len(r.parts.long) != 0 {
			t.Fatalf("a dedup of 4 short partitions is not a table of them: %+v", r.dedup)
		}
		r.dedup.eachSlot(func(s *tnDedupSlot) {
			e := s.cur
			if seen[e] {
				reused++
			}
			seen[e] = true
			if got := r.order.rowVal(e, 1).(int64); got != int64(epoch*10+2) {
				t.Fatalf("epoch %d: partition %q holds a = %d, want %d", epoch, s.key(), got, epoch*10+2)
			}
		})
	}
	// Of the 12 entries an epoch builds, the 8 displaced within it and the
	// 4 emitted by the previous epoch are free by the next: from the third
	// epoch on, a partition's row is mostly in an entry that held another
	// row before (seen keeps every entry alive: a new one is never at an
	// address seen before).
	if reused < 12 {
		t.Fatalf("%d of 16 partitions' rows were in reused entries, want at least 12", reused)
	}
	ret := newTopN(make(chan Message, ChannelSize), true, []exec.SortKey{{E: tnCol(1), Desc: true}}, 1, 0, false, false)
	if r, err := ret.newRun(newEnv(t)); err != nil || r.pool != nil {
		t.Fatalf("a retracting top-n recycles (%v)", err)
	}
}

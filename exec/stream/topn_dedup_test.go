package stream

import (
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// tnDedupTop is a dedup of tnIn rows by (p, b) ordered by a DESC, f.
func tnDedupTop(ch chan Message, rank bool) *TopN {
	top := newTopN(ch, true, []exec.SortKey{{E: tnCol(1), Desc: true}, {E: tnCol(3)}}, 1, 0, rank, true)
	top.PartitionBy = []expr.Expr{tnCol(0), tnCol(2)}
	return top
}

// tnDedupRows is n random rows for tnDedupTop: texts of 0 to 60 bytes, so
// that some partitions' encodings fit a dedup slot and others do not.
func tnDedupRows(rng *rand.Rand, n, parts int) [][]types.Value {
	var rows [][]types.Value
	for ; n > 0; n-- {
		k := rng.Intn(parts)
		var b types.Value = fmt.Sprint(k) + strings.Repeat("x", k%61)
		if k%7 == 0 {
			b = nil
		}
		var p types.Value = int64(k % 5)
		if k%11 == 0 {
			p = nil
		}
		rows = append(rows, []types.Value{p, int64(rng.Intn(30)), b, float64(rng.Intn(3))})
	}
	return rows
}

// TestTopNDedupMatchesRecomputation: a dedup by two columns over short and
// long partition encodings (a table of slots and tnParts side by side),
// thousands of partitions an epoch (the table grows while partitions are
// touched), duplicates and rows that tie on the first sort key: the result
// is the brute force's at every barrier.
func TestTopNDedupMatchesRecomputation(t *testing.T) {
	for _, rank := range []bool{false, true} {
		rng := rand.New(rand.NewSource(7))
		top := tnDedupTop(make(chan Message, ChannelSize), rank)
		h := newTnHarness(t, top)
		var model [][]types.Value
		for epoch := 0; epoch < 12; epoch++ {
			rows := tnDedupRows(rng, 1+rng.Intn(3000), 5000)
			for i := range rows {
				if rng.Intn(10) == 0 && len(model) > 0 {
					rows[i] = model[rng.Intn(len(model))]
				}
			}
			model = append(model, rows...)
			h.in <- ChunkMsg(tnChunk(t, tnIn, nil, rows))
			h.barrier()
			// The brute force: the first row of each (p, b) by the order.
			parts := map[string][][]types.Value{}
			for _, r := range model {
				k := fmt.Sprint(r[0], "|", r[2])
				parts[k] = append(parts[k], r)
			}
			want := map[string]int{}
			for _, rs := range parts {
				rs = slices.Clone(rs)
				sort.SliceStable(rs, func(i, j int) bool { return tnLess(top.Order, rs[i], rs[j]) })
				r := rs[0]
				if rank {
					r = append(slices.Clone(r), int64(1))
				}
				want[tnRender(r)]++
			}
			if len(want) != len(h.acc) {
				t.Fatalf("rank %v epoch %d: %d rows, want %d", rank, epoch, len(h.acc), len(want))
			}
			for r, n := range want {
				if h.acc[r] != n {
					t.Fatalf("rank %v epoch %d: row %s: %d copies, want %d", rank, epoch, r, h.acc[r], n)
				}
			}
		}
		r, err := top.newRun(newEnv(t))
		if err != nil || r.dedup == nil {
			t.Fatalf("not a dedup (%v)", err)
		}
	}
}

// TestTopNDedupCheckpoint: the dedup's checkpoints (incremental and full,
// short and long partitions) restore to the same output and state from
// every checkpoint.
func TestTopNDedupCheckpoint(t *testing.T) {
	for seed := int64(0); seed < 20; seed++ {
		rng := rand.New(rand.NewSource(seed))
		rank := seed%2 == 0
		var script []ktMsg
		var epoch uint64
		for e := 0; e < 10; e++ {
			for c := rng.Intn(3); c > 0; c-- {
				script = append(script, ktChunk(nil, tnDedupRows(rng, 1+rng.Intn(40), 60)...))
			}
			script = ktBarrier(rng, script, &epoch)
		}
		ktCheck(t, rng, func(ch chan Message) Node { return tnDedupTop(ch, rank) }, script)
	}
}

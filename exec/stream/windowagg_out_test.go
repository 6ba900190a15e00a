package stream

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

// winChunkNullKeys is winChunk with a NULL key where k < 0.
func winChunkNullKeys(ops []Op, rows ...winRow) *Chunk {
	kb := array.NewInt64Builder(memory.DefaultAllocator)
	tb := array.NewTimestampBuilder(memory.DefaultAllocator, &arrow.TimestampType{Unit: arrow.Microsecond})
	vb := array.NewInt64Builder(memory.DefaultAllocator)
	for _, r := range rows {
		if r.k < 0 {
			kb.AppendNull()
		} else {
			kb.Append(r.k)
		}
		tb.Append(arrow.Timestamp(r.ts))
		vb.Append(r.v)
	}
	return &Chunk{Rec: array.NewRecordBatch(types.ArrowSchema(winIn),
		[]arrow.Array{kb.NewArray(), tb.NewArray(), vb.NewArray()}, int64(len(rows))), Ops: ops}
}

// TestWindowAggChunksKeepTheirRows checks that a chunk the operator sent
// is not written to afterwards (its arrays and ops belong to the consumer,
// while the operator's output buffers go on collecting rows), and that
// the rows are right: TUMBLE ON WINDOW CLOSE (blocks of inserts, no ops)
// and ON UPDATE with retractions (update pairs and deletes), with NULL
// keys, against a brute-force count and sum per window and key.
func TestWindowAggChunksKeepTheirRows(t *testing.T) {
	for _, mode := range []EmitMode{EmitOnWindowClose, EmitOnUpdate} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			w := simpleWinAgg(WindowSpec{Kind: Tumble, Size: 10}, EmitSpec{Mode: mode})
			h := newWinHarness(t, w)
			rng := rand.New(rand.NewPCG(7, uint64(mode)))
			type sent struct {
				c    *Chunk
				seen []string // as rendered when received
			}
			var all []sent
			var live []winRow // inserted and not retracted
			collect := func() {
				for _, m := range h.barrier() {
					if m.Kind == KindChunk {
						all = append(all, sent{m.Chunk, outRows([]Message{m}, w.Cols)})
					}
				}
			}
			for epoch := 0; epoch < 12; epoch++ {
				base := int64(epoch) * 10
				for part := 0; part < 2; part++ {
					var rows []winRow
					var ops []Op
					if part == 1 {
						// retract every row of one key of this window: a
						// delete under ON UPDATE
						k := int64(rng.IntN(6)) - 1
						for i := len(live) - 1; i >= 0; i-- {
							if r := live[i]; r.k == k && r.ts >= base {
								rows, ops = append(rows, r), append(ops, Delete)
								live = slices.Delete(live, i, i+1)
							}
						}
					}
					for i := 0; i < 5+rng.IntN(20); i++ {
						r := winRow{k: int64(rng.IntN(6)) - 1, ts: base + int64(rng.IntN(10)), v: int64(rng.IntN(100))}
						rows, ops = append(rows, r), append(ops, Insert)
						live = append(live, r)
					}
					h.send(ChunkMsg(winChunkNullKeys(ops, rows...)))
					if part == 1 {
						h.watermark(base + 10) // closes and frees this epoch's window
					}
					collect() // ON UPDATE: inserts, then update pairs and deletes
				}
			}
			var got []string
			for i, s := range all {
				now := outRows([]Message{ChunkMsg(s.c)}, w.Cols)
				if strings.Join(now, "\n") != strings.Join(s.seen, "\n") {
					t.Fatalf("chunk %d changed after it was sent:\nthen\n  %s\nnow\n  %s", i,
						strings.Join(s.seen, "\n  "), strings.Join(now, "\n  "))
				}
				got = append(got, now...)
			}
			if j := strings.Join(got, "\n"); mode == EmitOnUpdate && (!strings.Contains(j, "update_before") || !strings.Contains(j, "delete")) {
				t.Fatalf("no update pair or no delete: the test misses the ops")
			}
			// the view the changes leave, against the brute force
			view := map[string]string{}
			for _, g := range got {
				op, row, _ := strings.Cut(g, " ")
				parts := strings.Split(row, "|")
				id := strings.Join(parts[:3], "|")
				switch op {
				case "insert", "update_after":
					view[id] = row
				default:
					if view[id] != row {
						t.Fatalf("%s of a row the view does not hold (%q)", g, view[id])
					}
					delete(view, id)
				}
			}
			type agg struct{ n, sum int64 }
			want := map[string]*agg{}
			for _, r := range live {
				s := alignDown(r.ts, 10, 0)
				k := fmt.Sprint(r.k)
				if r.k < 0 {
					k = "<nil>"
				}
				id := fmt.Sprintf("%d|%d|%s", s, s+10, k)
				if want[id] == nil {
					want[id] = &agg{}
				}
				want[id].n++
				want[id].sum += r.v
			}
			if len(view) != len(want) {
				t.Fatalf("%d rows in the view, want %d", len(view), len(want))
			}
			for id, a := range want {
				if exp := fmt.Sprintf("%s|%d|%d", id, a.n, a.sum); view[id] != exp {
					t.Fatalf("row %s: got %q, want %q", id, view[id], exp)
				}
			}
		})
	}
}

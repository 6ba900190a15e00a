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
			applyShown(t, view, got)
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

// TestWindowAggSessionTimesOutOfOrder feeds SESSION rows whose times come
// in descending blocks, many at one key (so that times added out of order
// pile up past pendMax and are merged into the key's times), with repeated
// times and retractions, and compares the view after every epoch with
// sessions computed by brute force.
func TestWindowAggSessionTimesOutOfOrder(t *testing.T) {
	const gap = 5
	w := simpleWinAgg(WindowSpec{Kind: Session, Gap: gap}, EmitSpec{Mode: EmitOnUpdate})
	h := newWinHarness(t, w)
	rng := rand.New(rand.NewPCG(3, 11))
	var live []winRow
	view := map[string]string{}
	check := func(epoch int) {
		t.Helper()
		checkSessions(t, fmt.Sprintf("epoch %d", epoch), view, bruteSessions(live, gap))
	}
	for epoch := 0; epoch < 8; epoch++ {
		// four blocks of 100 rows, each block earlier than the one before
		for b := 3; b >= 0; b-- {
			var rows []winRow
			for i := 0; i < 100; i++ {
				r := winRow{k: int64(rng.IntN(2)), ts: int64(epoch*4000 + b*1000 + rng.IntN(1000)), v: int64(rng.IntN(50))}
				if i > 0 && rng.IntN(10) == 0 {
					r.ts = rows[rng.IntN(i)].ts // a time seen already
				}
				rows = append(rows, r)
			}
			live = append(live, rows...)
			h.rows(nil, rows...)
		}
		if epoch%2 == 1 { // retractions split sessions
			var rows []winRow
			var ops []Op
			for i := 0; i < 40; i++ {
				j := rng.IntN(len(live))
				rows, ops = append(rows, live[j]), append(ops, Delete)
				live = slices.Delete(live, j, j+1)
			}
			h.rows(ops, rows...)
		}
		applyShown(t, view, outRows(h.barrier(), w.Cols))
		check(epoch)
	}
}

// TestWindowAggSessionKeysReused frees every key's sessions each round
// (the watermark passes them) and gives rows to the keys again, so that
// keys are made from freed ones (newKey), one of them (key 0) with more
// times than a freed key keeps room for (smallKeep); rows come in two
// blocks, the later first. The view after each round must hold every
// session of every round, computed by brute force: a freed key that kept
// anything of its last life would merge with, or add to, its new
// sessions, and one that kept its wake-up time would not be woken to
// emit them (ON WINDOW CLOSE).
func TestWindowAggSessionKeysReused(t *testing.T) {
	for _, emit := range []EmitSpec{{Mode: EmitOnUpdate}, {Mode: EmitOnWindowClose}} {
		t.Run(fmt.Sprint(emit.Mode), func(t *testing.T) { sessionKeysReused(t, emit) })
	}
}

func sessionKeysReused(t *testing.T, emit EmitSpec) {
	const gap = 5
	w := simpleWinAgg(WindowSpec{Kind: Session, Gap: gap}, emit)
	h := newWinHarness(t, w)
	rng := rand.New(rand.NewPCG(5, 17))
	var all []winRow
	view := map[string]string{}
	for round := int64(0); round < 12; round++ {
		base := round * 10000
		var later, earlier []winRow
		for i := 0; i < 1000; i++ {
			k := int64(rng.IntN(20))
			if i%2 == 0 {
				k = 0 // the hot key
			}
			r := winRow{k: k, ts: base + int64(rng.IntN(4000)), v: int64(rng.IntN(50))}
			if r.ts >= base+2000 {
				later = append(later, r)
			} else {
				earlier = append(earlier, r)
			}
		}
		byTime := func(a, b winRow) int { return int(a.ts - b.ts) }
		slices.SortFunc(later, byTime) // each block in order, as a reader's step
		slices.SortFunc(earlier, byTime)
		h.rows(nil, later...)
		h.rows(nil, earlier...)
		all = append(all, later...)
		all = append(all, earlier...)
		applyShown(t, view, outRows(h.barrier(), w.Cols))
		h.watermark(base + 9000) // every session of the round is freed
		applyShown(t, view, outRows(h.barrier(), w.Cols))
		checkSessions(t, fmt.Sprintf("round %d", round), view, bruteSessions(all, gap))
	}
}

// checkSessions fails unless view holds exactly the sessions want.
func checkSessions(t *testing.T, at string, view, want map[string]string) {
	t.Helper()
	if len(view) != len(want) {
		t.Fatalf("%s: %d sessions in the view, want %d", at, len(view), len(want))
	}
	for id, row := range want {
		if view[id] != row {
			t.Fatalf("%s: session %s is %q in the view", at, row, view[id])
		}
	}
}

// bruteSessions is the sessions of rows (gap apart) per key, as rows
// "start|end|key|count|sum" by "start|end|key".
func bruteSessions(rows []winRow, gap int64) map[string]string {
	byKey := map[int64][]winRow{}
	for _, r := range rows {
		byKey[r.k] = append(byKey[r.k], r)
	}
	want := map[string]string{}
	for k, ts := range byKey {
		slices.SortFunc(ts, func(a, b winRow) int { return int(a.ts - b.ts) })
		for i := 0; i < len(ts); {
			j, n, sum := i, int64(0), int64(0)
			for ; j < len(ts) && (j == i || ts[j].ts < ts[j-1].ts+gap); j++ {
				n++
				sum += ts[j].v
			}
			id := fmt.Sprintf("%d|%d|%d", ts[i].ts, ts[j-1].ts+gap, k)
			want[id] = fmt.Sprintf("%s|%d|%d", id, n, sum)
			i = j
		}
	}
	return want
}

// TestSchedHeap pushes and pops random times (repeats included) and
// checks that pops come in time order with every entry once.
func TestSchedHeap(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 2))
	var h schedHeap
	var all []int64
	for round := 0; round < 200; round++ {
		for i := rng.IntN(20); i > 0; i-- {
			x := schedAt{t: int64(rng.IntN(100)), k: int32(i)}
			h.push(x)
			all = append(all, x.t)
		}
		slices.Sort(all)
		for i := rng.IntN(15); i > 0 && len(h) > 0; i-- {
			if got := h.pop().t; got != all[0] {
				t.Fatalf("round %d: popped %d, the earliest is %d", round, got, all[0])
			}
			all = all[1:]
		}
		if len(h) != len(all) {
			t.Fatalf("round %d: %d entries, want %d", round, len(h), len(all))
		}
	}
}

// applyShown applies rows as outRows shows them (op, then the row; the
// first three columns identify it) to view, checking that each retraction
// is of the row the view holds.
func applyShown(t *testing.T, view map[string]string, rows []string) {
	t.Helper()
	for _, g := range rows {
		op, row, _ := strings.Cut(g, " ")
		id := strings.Join(strings.Split(row, "|")[:3], "|")
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
}

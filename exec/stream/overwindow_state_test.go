package stream

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// TestOverWindowCheckpointRandom: window functions over random changelogs
// (inserts, deletes, duplicate copies: the generator of
// TestOverWindowRandom), restored at every checkpoint.
func TestOverWindowCheckpointRandom(t *testing.T) {
	seeds := 25
	if testing.Short() {
		seeds = 8
	}
	calls := owCalls(t)
	mk := func(ch chan Message) Node { return newOverWindow(ch, calls) }
	for seed := int64(1); seed <= int64(seeds); seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			var script []ktMsg
			var live [][]types.Value
			nextID := int64(0)
			var epoch uint64
			for e := 0; e < 14; e++ {
				for c := rng.Intn(3); c >= 0; c-- {
					var rows [][]types.Value
					var ops []Op
					for i := rng.Intn(5); i > 0; i-- {
						switch r := rng.Intn(6); {
						case r == 0 && len(live) > 0:
							j := rng.Intn(len(live))
							rows, ops = append(rows, live[j]), append(ops, Delete)
							live = slices.Delete(live, j, j+1)
						case r == 1 && len(live) > 0:
							row := live[rng.Intn(len(live))]
							rows, ops = append(rows, row), append(ops, Insert)
							live = append(live, row)
						default:
							nextID++
							row := []types.Value{int64(rng.Intn(3)), types.TimestampValue(rng.Intn(20)), int64(rng.Intn(10)), nextID}
							rows, ops = append(rows, row), append(ops, Insert)
							live = append(live, row)
						}
					}
					if len(rows) > 0 {
						script = append(script, ktChunk(ops, rows...))
					}
				}
				if rng.Intn(3) == 0 {
					script = append(script, ktMark(1, int64(e)))
				}
				script = ktBarrier(rng, script, &epoch)
			}
			ktCheck(t, rng, mk, script)
		})
	}
}

// TestOverWindowEOWCCheckpointRandom: EMIT ON WINDOW CLOSE over an
// append-only stream with a rising watermark and late rows (the generator
// of TestOverWindowEOWCRandom), with and without frames that free nothing,
// restored at every checkpoint.
func TestOverWindowEOWCCheckpointRandom(t *testing.T) {
	seeds := 12
	if testing.Short() {
		seeds = 4
	}
	for _, unbounded := range []bool{false, true} {
		for _, delay := range []int64{0, 3} {
			calls, _ := owEOWCCalls(t, unbounded)
			mk := func(ch chan Message) Node {
				w := newOverWindow(ch, calls)
				w.EOWC = &OverEOWC{TimeCol: 1, Delay: delay}
				return w
			}
			for seed := int64(1); seed <= int64(seeds); seed++ {
				t.Run(fmt.Sprintf("unbounded=%v/delay=%d/seed%d", unbounded, delay, seed), func(t *testing.T) {
					rng := rand.New(rand.NewSource(seed))
					var script []ktMsg
					maxTS := int64(0)
					nextID := int64(0)
					var epoch uint64
					for step := 0; step < 40; step++ {
						var rows [][]types.Value
						for i := rng.Intn(4); i > 0; i-- {
							nextID++
							ts := maxTS + int64(rng.Intn(6)) - 3
							rows = append(rows, []types.Value{int64(rng.Intn(3)), types.TimestampValue(ts), int64(rng.Intn(10)), nextID})
							maxTS = max(maxTS, ts)
						}
						if len(rows) > 0 {
							script = append(script, ktChunk(nil, rows...))
						}
						if rng.Intn(2) == 0 {
							script = append(script, ktMark(1, maxTS-2))
						}
						if rng.Intn(5) == 0 {
							script = append(script, ktMark(2, maxTS)) // not the time column: dropped
						}
						if rng.Intn(2) == 0 {
							script = ktBarrier(rng, script, &epoch)
						}
					}
					script = ktBarrier(rng, script, &epoch)
					ktCheck(t, rng, mk, script)
				})
			}
		}
	}
}

// BenchmarkOverWindowSnapshot: 100k rows in 1000 partitions with a
// running sum and row_number; each snapshot follows 100 new rows (each
// last in its partition: only they get results).
func BenchmarkOverWindowSnapshot(b *testing.B) {
	k, ts, v, id := owCol(0), owCol(1), owCol(2), owCol(3)
	byID := []exec.SortKey{{E: id}}
	calls := []exec.WindowCall{
		owCall(b, "sum", []expr.Expr{v}, []expr.Expr{k}, byID, owDefault),
		owCall(b, "row_number", nil, []expr.Expr{k}, []exec.SortKey{{E: ts}, {E: id}}, owDefault),
	}
	w := newOverWindow(nil, calls)
	r, err := w.newRun(NewEnv(b.Context(), expr.Context{}))
	if err != nil {
		b.Fatal(err)
	}
	r.env.Checkpoints = newMemCheckpoints()
	next := int64(0)
	add := func(n int) {
		rows := make([][]types.Value, n)
		for j := range rows {
			rows[j] = []types.Value{next % 1000, types.TimestampValue(next), next % 10, next}
			next++
		}
		if err := r.consume(tnChunk(b, owIn, nil, rows)); err != nil {
			b.Fatal(err)
		}
		if _, err := r.flush(); err != nil {
			b.Fatal(err)
		}
	}
	add(100_000)
	ktBenchSnapshot(b, func(int) { add(100) }, r.Snapshot)
}

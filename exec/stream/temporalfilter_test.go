package stream

import (
	"fmt"
	"maps"
	"math/rand"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// tfCols are the temporal filter tests' rows: a time and a value.
var tfCols = []types.Column{{Name: "ts", Type: types.TTimestampTZ}, {Name: "v", Type: types.TInt8}}

// nowMinus is the bound now() - D µs.
type nowMinus struct{ D int64 }

func (n nowMinus) Type() types.T  { return types.TTimestampTZ }
func (n nowMinus) String() string { return fmt.Sprintf("now() - %dus", n.D) }
func (n nowMinus) Eval(ctx *expr.Context, b arrow.RecordBatch) (arrow.Array, error) {
	tb := array.NewTimestampBuilder(memory.DefaultAllocator, types.TTimestampTZ.ArrowType().(*arrow.TimestampType))
	defer tb.Release()
	for i := 0; i < int(b.NumRows()); i++ {
		tb.Append(arrow.Timestamp(ctx.Now.UnixMicro() - n.D))
	}
	return tb.NewArray(), nil
}

// stepClock is a clock whose k-th reading is times[base+k] (the last one
// after the end): a TemporalFilter reads it once at Start and once per
// barrier, so times[e] is the clock at barrier e.
type stepClock struct {
	mu    sync.Mutex
	times []int64
	i     int
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := min(c.i, len(c.times)-1)
	c.i++
	return time.UnixMicro(c.times[i])
}

func (c *stepClock) After(time.Duration) <-chan time.Time { return nil }

func tfPass(op string, t, b int64) bool {
	switch op {
	case ">":
		return t > b
	case ">=":
		return t >= b
	case "<":
		return t < b
	}
	return t <= b
}

// TestTemporalFilterMatchesBruteForce: random changelogs (inserts,
// deletes and update pairs of rows in the input, NULL times) and clock
// steps; after every message the output, folded, must equal the input
// rows that pass against the bound of the last barrier, and the state
// must hold only the rows it can still emit or retract.
func TestTemporalFilterMatchesBruteForce(t *testing.T) {
	for _, op := range []string{">", ">=", "<", "<="} {
		for seed := int64(1); seed <= 25; seed++ {
			rng := rand.New(rand.NewSource(seed))
			d := int64(rng.Intn(4))
			clock := &stepClock{times: []int64{100}}
			env := newEnv(t)
			env.Clock = clock
			f := &TemporalFilter{Input: &tnSource{cols: tfCols}, Lhs: &expr.ColRef{Idx: 0, T: types.TTimestampTZ}, Op: op, Bound: nowMinus{d}}
			r, err := f.newRun(env)
			if err != nil {
				t.Fatal(err)
			}
			now := int64(100)
			bound := now - d
			in := map[string]int{}  // input multiset
			out := map[string]int{} // folded output
			var rows [][]types.Value
			key := func(row []types.Value) string { return tnRender(row) }
			apply := func(msgs []Message) {
				for _, m := range msgs {
					if m.Kind != KindChunk {
						continue
					}
					got, ops := tnRows(m.Chunk, tfCols)
					for i, row := range got {
						out[key(row)] += int(ops[i].Sign())
						if out[key(row)] < 0 {
							t.Fatalf("%s seed %d: output retracts %s, not in it", op, seed, key(row))
						}
						if out[key(row)] == 0 {
							delete(out, key(row))
						}
					}
				}
			}
			for step := 0; step < 200; step++ {
				var msgs []Message
				if rng.Intn(4) == 0 {
					now += int64(rng.Intn(4))
					clock.mu.Lock()
					clock.times = append(clock.times, now)
					clock.mu.Unlock()
					bound = now - d
					msgs, err = r.handle(BarrierMsg(Barrier{Epoch: uint64(step)}))
				} else {
					var crows [][]types.Value
					var cops []Op
					for n := 1 + rng.Intn(4); n > 0; n-- {
						mk := func() []types.Value {
							var ts types.Value = types.TimestampValue(now - 6 + int64(rng.Intn(14)))
							if rng.Intn(15) == 0 {
								ts = nil
							}
							return []types.Value{ts, int64(rng.Intn(3))}
						}
						switch x := rng.Intn(6); {
						case x < 2 && len(rows) > 0:
							k := rng.Intn(len(rows))
							row := rows[k]
							if in[key(row)] == 0 {
								continue
							}
							in[key(row)]--
							if x == 0 {
								crows, cops = append(crows, row), append(cops, Delete)
								continue
							}
							nr := mk()
							in[key(nr)]++
							rows = append(rows, nr)
							crows, cops = append(crows, row, nr), append(cops, UpdateBefore, UpdateAfter)
						default:
							nr := mk()
							in[key(nr)]++
							rows = append(rows, nr)
							crows, cops = append(crows, nr), append(cops, Insert)
						}
					}
					if len(crows) == 0 {
						continue
					}
					msgs, err = r.handle(ChunkMsg(tnChunk(t, tfCols, cops, crows)))
				}
				if err != nil {
					t.Fatal(err)
				}
				apply(msgs)
				want := map[string]int{}
				keep := 0 // distinct rows the state must hold
				seen := map[string]bool{}
				for _, row := range rows {
					k := key(row)
					if in[k] == 0 || seen[k] {
						continue
					}
					seen[k] = true
					ts, ok := row[0].(types.TimestampValue)
					p := ok && tfPass(op, int64(ts), bound)
					if p {
						want[k] = in[k]
					}
					if ok && p == (op == ">" || op == ">=") {
						keep++
					}
				}
				if !maps.Equal(out, want) {
					t.Fatalf("%s seed %d step %d (bound %d): output %v, want %v", op, seed, step, bound, out, want)
				}
				if len(r.rows) != keep {
					t.Fatalf("%s seed %d step %d: state holds %d rows, want %d", op, seed, step, len(r.rows), keep)
				}
			}
		}
	}
}

// TestTemporalFilterCheckpointRandom: random changelogs and clock steps,
// restored at every checkpoint: the output after it must equal the
// uninterrupted run's, and later checkpoints fold to the same state.
func TestTemporalFilterCheckpointRandom(t *testing.T) {
	seeds := 40
	if testing.Short() {
		seeds = 10
	}
	for _, op := range []string{">", "<="} {
		for seed := int64(1); seed <= int64(seeds); seed++ {
			t.Run(fmt.Sprint(op, seed), func(t *testing.T) {
				rng := rand.New(rand.NewSource(seed))
				var script []ktMsg
				var seen [][]types.Value
				var epoch uint64
				times := []int64{50} // times[e]: the clock at barrier e
				now := int64(50)
				for step := 0; step < 60; step++ {
					if rng.Intn(3) == 0 {
						script = ktBarrier(rng, script, &epoch)
						now += int64(rng.Intn(4))
						times = append(times, now)
						continue
					}
					if rng.Intn(8) == 0 {
						script = append(script, ktMark(0, now))
						continue
					}
					var rows [][]types.Value
					var ops []Op
					for i := 1 + rng.Intn(4); i > 0; i-- {
						if len(seen) > 0 && rng.Intn(3) == 0 {
							k := rng.Intn(len(seen))
							rows, ops = append(rows, seen[k]), append(ops, Delete)
							seen = append(seen[:k], seen[k+1:]...)
							continue
						}
						r := []types.Value{types.TimestampValue(now - 5 + int64(rng.Intn(12))), int64(rng.Intn(3))}
						seen = append(seen, r)
						rows, ops = append(rows, r), append(ops, Insert)
					}
					script = append(script, ktChunk(ops, rows...))
				}
				script = ktBarrier(rng, script, &epoch)
				times = append(times, now+3)
				ktNewClock = func(s []ktMsg) Clock {
					base := 0
					for _, m := range s {
						if m.kind == KindBarrier {
							base = int(m.barrier.Epoch) - 1
							break
						}
					}
					ts := append([]int64(nil), times[base:]...)
					if base > 0 {
						ts[0] -= 10 // a restart's clock behind the checkpoint: the bound must not move back
					}
					return &stepClock{times: ts}
				}
				defer func() { ktNewClock = nil }()
				mk := func(ch chan Message) Node {
					return &TemporalFilter{Input: &tnSource{ch: ch, cols: tfCols}, Lhs: &expr.ColRef{Idx: 0, T: types.TTimestampTZ}, Op: op, Bound: nowMinus{2}}
				}
				ktCheck(t, rng, mk, script)
			})
		}
	}
}

// BenchmarkTemporalFilterSliding: a sliding window of about 100k rows;
// each iteration is a chunk of 1024 new rows and a barrier whose bound
// expires 1024 old ones (ns/op per chunk).
func BenchmarkTemporalFilterSliding(b *testing.B) {
	clock := &stepClock{times: []int64{0}}
	env := NewEnv(b.Context(), expr.Context{})
	env.Clock = clock
	f := &TemporalFilter{Input: &tnSource{cols: tfCols}, Lhs: &expr.ColRef{Idx: 0, T: types.TTimestampTZ}, Op: ">", Bound: nowMinus{100_000}}
	r, err := f.newRun(env)
	if err != nil {
		b.Fatal(err)
	}
	next := int64(0)
	step := func() {
		rows := make([][]types.Value, 1024)
		for k := range rows {
			rows[k] = []types.Value{types.TimestampValue(next), next % 97}
			next++
		}
		if _, err := r.handle(ChunkMsg(tnChunk(b, tfCols, nil, rows))); err != nil {
			b.Fatal(err)
		}
		clock.mu.Lock()
		clock.times = append(clock.times, next)
		clock.mu.Unlock()
		if _, err := r.handle(BarrierMsg(Barrier{})); err != nil {
			b.Fatal(err)
		}
	}
	for next < 100_000 {
		step()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		step()
	}
	b.ReportMetric(float64(len(r.rows)), "rows_kept")
}

// TestTemporalFilterRestoreClockAhead: a row held by a lower-kind filter
// (HAVING max(ts) <= now() - 2) at a checkpoint, then a restart whose
// clock is past it (the downtime of a crash): the replayed retraction of
// that row cancels the held copy, and no delete of a row that never went
// out is sent (a view would fail on it); the replayed insert of its new
// version goes out.
func TestTemporalFilterRestoreClockAhead(t *testing.T) {
	mk := func(ch chan Message) Node {
		return &TemporalFilter{Input: &tnSource{ch: ch, cols: tfCols}, Lhs: &expr.ColRef{Idx: 0, T: types.TTimestampTZ}, Op: "<=", Bound: nowMinus{2}}
	}
	old := []types.Value{types.TimestampValue(60), int64(1)}
	next := []types.Value{types.TimestampValue(65), int64(1)}
	first := []ktMsg{ktChunk([]Op{Insert}, old), {kind: KindBarrier, barrier: Barrier{Epoch: 1, Checkpoint: true}}}
	ktNewClock = func([]ktMsg) Clock { return &stepClock{times: []int64{50}} } // bound 48: held
	orig := ktExec(t, mk, first, nil, func(uint64) bool { return true })
	ktNewClock = func([]ktMsg) Clock { return &stepClock{times: []int64{100}} } // bound 98: both pass
	defer func() { ktNewClock = nil }()
	replay := []ktMsg{ktChunk([]Op{Delete, Insert}, old, next), {kind: KindBarrier, barrier: Barrier{Epoch: 2}}}
	got := ktExec(t, mk, replay, maps.Clone(orig.states[1]), func(uint64) bool { return true })
	var inserts, deletes int
	for _, l := range got.log {
		inserts += strings.Count(l, "insert ")
		deletes += strings.Count(l, "delete ")
	}
	if deletes != 0 || inserts != 1 {
		t.Fatalf("after the restart: %d inserts and %d deletes, want 1 and 0:\n%s", inserts, deletes, strings.Join(got.log, "\n"))
	}
}

package stream

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// eowcCkCols are the checkpoint test's rows: a time, and values whose
// identity matters to retractions (NaN, -0, text).
var eowcCkCols = []types.Column{{Name: "ts", Type: types.TTimestamp}, {Name: "v", Type: types.TInt8},
	{Name: "f", Type: types.TFloat8}, {Name: "s", Type: types.TText}}

// TestEOWCCheckpointRandom: inserts, retractions of held, emitted and
// never-seen rows, late rows and watermarks (the generator of
// TestEOWCMatchesBruteForce), restored at every checkpoint.
func TestEOWCCheckpointRandom(t *testing.T) {
	seeds := 60
	if testing.Short() {
		seeds = 20
	}
	for seed := int64(1); seed <= int64(seeds); seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			delay := int64(rng.Intn(3))
			mk := func(ch chan Message) Node {
				return &EOWC{Input: &tnSource{ch: ch, cols: eowcCkCols}, TimeCol: 0, Delay: delay}
			}
			var script []ktMsg
			var seen [][]types.Value
			base := int64(0)
			var epoch uint64
			for step := 0; step < 50; step++ {
				switch x := rng.Intn(8); {
				case x == 0:
					base += int64(rng.Intn(4))
					script = append(script, ktMark(0, base))
					continue
				case x == 1:
					script = append(script, ktMark(1, base)) // dropped: not the time column
					continue
				case x < 4:
					script = ktBarrier(rng, script, &epoch)
					continue
				}
				var rows [][]types.Value
				var ops []Op
				for i := 1 + rng.Intn(4); i > 0; i-- {
					if len(seen) > 0 && rng.Intn(3) == 0 {
						rows, ops = append(rows, seen[rng.Intn(len(seen))]), append(ops, Delete)
						continue
					}
					var ts types.Value = types.TimestampValue(base + int64(rng.Intn(6)) - 2)
					if rng.Intn(20) == 0 {
						ts = nil
					}
					f := []types.Value{nil, 0.0, math.Copysign(0, -1), math.NaN(), 1.5}[rng.Intn(5)]
					r := []types.Value{ts, int64(rng.Intn(3)), f, []types.Value{"a", "b", nil}[rng.Intn(3)]}
					seen = append(seen, r)
					rows, ops = append(rows, r), append(ops, Insert)
				}
				script = append(script, ktChunk(ops, rows...))
			}
			script = ktBarrier(rng, script, &epoch)
			ktCheck(t, rng, mk, script)
		})
	}
}

// BenchmarkEOWCSnapshot: 100k held rows; each snapshot follows 100 new
// rows and a watermark releasing about 100.
func BenchmarkEOWCSnapshot(b *testing.B) {
	e := &EOWC{Input: &tnSource{cols: eowcCkCols}, TimeCol: 0}
	r, err := e.newRun(NewEnv(b.Context(), expr.Context{}))
	if err != nil {
		b.Fatal(err)
	}
	r.env.Checkpoints = newMemCheckpoints()
	next := 0
	add := func(n int) {
		rows := make([][]types.Value, n)
		for k := range rows {
			rows[k] = []types.Value{types.TimestampValue(next), int64(next % 7), float64(next), "x"}
			next++
		}
		if err := r.consume(tnChunk(b, eowcCkCols, nil, rows)); err != nil {
			b.Fatal(err)
		}
	}
	add(100_000)
	ktBenchSnapshot(b, func(int) {
		add(100)
		if _, err := r.handle(WatermarkMsg(Watermark{Col: 0, Value: int64(next - 100_000)})); err != nil {
			b.Fatal(err)
		}
	}, r.Snapshot)
}

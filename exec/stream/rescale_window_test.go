package stream

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// Rescaling by restart of the windowed operators (rescale_test.go has the
// harness): window aggregations, window functions (plain and EMIT ON
// WINDOW CLOSE) and window joins.

// TestEncodedVNode: the vnode of a key read back from its encodeKey
// encoding (an EOWC window function's partition record) is the one the
// exchange computes from the values, for every storage of a key.
func TestEncodedVNode(t *testing.T) {
	texts := map[types.T][]string{
		types.TInt2: {"0", "-1", "7", "-32768"}, types.TInt4: {"0", "-5", "123456"}, types.TInt8: {"-9000000000", "3", "0"},
		types.TFloat4: {"0", "-0", "1.5", "NaN"}, types.TFloat8: {"-0", "0", "2.25", "-1e300", "NaN"},
		types.TBool: {"t", "f"}, types.TDate: {"2024-02-29", "1969-12-31", "1900-01-01"}, types.TTime: {"00:00:01", "23:59:59.5"},
		types.TTimestamp: {"2024-01-01 00:00:00", "1960-06-01 12:00:00"}, types.TTimestampTZ: {"2024-01-01 00:00:00+00"},
		types.TInterval: {"1 mon", "30 days", "1 day 02:00:00", "-3 hours"}, types.TText: {"", "x", "a longer text than eight bytes"},
		types.TBpchar: {"ab  ", "ab"}, types.TNumeric: {"1.50", "1.5", "-0.001", "0"}, types.TBytea: {"\\x00ff", "\\x"},
		types.TOid: {"0", "4000000000"}, types.ArrayOf(types.TInt4): {"{1,2}", "{}", "{NULL}"},
	}
	var ts []types.T
	for typ := range texts {
		ts = append(ts, typ)
	}
	slices.SortFunc(ts, func(a, b types.T) int { return int(a.Kind) - int(b.Kind) })
	rng := rand.New(rand.NewSource(1))
	for round := 0; round < 200; round++ {
		n := 1 + rng.Intn(3)
		kt := make([]types.T, n)
		arrs := make([]arrow.Array, n)
		for i := range kt {
			kt[i] = ts[rng.Intn(len(ts))]
			var v types.Value
			if rng.Intn(6) != 0 {
				opts := texts[kt[i]]
				var err error
				if v, err = types.ParseText(opts[rng.Intn(len(opts))], kt[i], nil); err != nil {
					t.Fatalf("%s: %v", kt[i], err)
				}
			}
			a, err := types.MakeArray(memory.DefaultAllocator, kt[i], []types.Value{v})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Release()
			arrs[i] = a
		}
		var h VNodeHasher
		want := h.VNodes(arrs, kt, 1, nil)[0]
		var enc []byte
		for i, a := range arrs {
			enc = encodeKey(enc, a, 0, kt[i])
		}
		parts, err := encodedKeyParts(enc, kt)
		if err != nil {
			t.Fatalf("%v: %v", kt, err)
		}
		got, err := encodedVNode(parts, kt)
		if err != nil || got != want {
			t.Fatalf("%v %q: vnode %d (%v), the exchange's %d", kt, enc, got, err, want)
		}
	}
}

// TestWindowAggRescale: window aggregations of every window kind and EMIT
// mode of the property test (GROUP BY k1 or k1, k2 besides the window;
// without them it runs single), over random changelogs with watermarks,
// late rows and processing-time ticks, routed by their plain GROUP BY
// columns.
func TestWindowAggRescale(t *testing.T) {
	seeds, epochs := int64(2), 20
	if testing.Short() {
		seeds, epochs = 1, 12
	}
	for ci, cfg := range wpConfigs() {
		if len(cfg.groupBy) == 0 {
			continue
		}
		for seed := int64(1); seed <= seeds; seed++ {
			t.Run(fmt.Sprintf("%s/%v/seed=%d", cfg.name, cfg.groupBy, seed), func(t *testing.T) {
				w, _ := wpPlans(t, cfg)
				keys, ok := ColumnKeys(w.GroupBy)
				if !ok {
					t.Fatal("group keys are not columns")
				}
				ts := make([]types.T, len(keys))
				for i, g := range w.GroupBy {
					ts[i] = g.Type()
				}
				period := time.Duration(cfg.emit.EarlyEvery+cfg.emit.Every) * time.Microsecond
				gen := func() []sideMsg {
					// the same script at every call, its records made anew
					rng := rand.New(rand.NewSource(int64(ci)*7919 + seed))
					var out []sideMsg
					for i, e := range wsScript(t, rng, cfg, epochs) {
						for _, m := range e.msgs {
							out = append(out, sideMsg{m: m})
						}
						if e.tick {
							out = append(out, sideMsg{tick: period})
						}
						out = append(out, sideMsg{m: BarrierMsg(Barrier{Epoch: uint64(i + 1), Checkpoint: rng.Intn(3) == 0})})
					}
					return out
				}
				checkRescaleN(t, w, [][]int{keys}, ts, gen)
			})
		}
	}
}

// TestWindowJoinRescale: window joins (inner joins freeing their state
// below the watermark of a window column, JoinClean) keyed by (k,
// window_end) and by window_end alone, with and without Keep, over
// append-only inputs with rising watermarks that free closed windows.
func TestWindowJoinRescale(t *testing.T) {
	k, lts, rk, rts := jCol(0, ivLeft[0]), jCol(1, ivLeft[1]), jCol(0, ivRight[0]), jCol(1, ivRight[1])
	cases := []struct {
		name        string
		left, right []expr.Expr
		clean       JoinClean
	}{
		{"k,we", []expr.Expr{k, lts}, []expr.Expr{rk, rts}, JoinClean{Key: 1}},
		{"we", []expr.Expr{lts}, []expr.Expr{rts}, JoinClean{Key: 0}},
		{"k,we keep", []expr.Expr{k, lts}, []expr.Expr{rk, rts}, JoinClean{Key: 1, Keep: 10}},
	}
	for _, c := range cases {
		for seed := int64(1); seed <= 2; seed++ {
			t.Run(fmt.Sprintf("%s/%d", c.name, seed), func(t *testing.T) {
				rng := rand.New(rand.NewSource(seed))
				ins := [2][]types.Column{ivLeft, ivRight}
				type chunk struct {
					side int
					rows [][]types.Value
				}
				var plan []any
				now := [2]int64{100, 100}
				var epoch uint64
				for step := 0; step < 70; step++ {
					s := rng.Intn(2)
					switch x := rng.Intn(10); {
					case x < 2:
						// below every later row's window (no row is late: which
						// rows a late one meets depends on how an instance
						// interleaves its two inputs, at any parallelism)
						plan = append(plan, sideMsg{side: s, m: WatermarkMsg(Watermark{Col: 1, Value: min(now[0], now[1]) - 30 - int64(rng.Intn(10))})})
					case x < 4:
						epoch++
						plan = append(plan, sideMsg{m: BarrierMsg(Barrier{Epoch: epoch, Checkpoint: rng.Intn(3) == 0})})
					default:
						var rows [][]types.Value
						for n := rng.Intn(5); n >= 0; n-- {
							now[s] += int64(rng.Intn(3))
							we := (now[s]-int64(rng.Intn(25)))/10*10 + 10 // a window's end
							rows = append(rows, []types.Value{int64(rng.Intn(4)), types.TimestampValue(we), int64(step*10 + n)})
						}
						plan = append(plan, chunk{s, rows})
					}
				}
				epoch++
				plan = append(plan, sideMsg{m: BarrierMsg(Barrier{Epoch: epoch, Checkpoint: true})})
				gen := func() []sideMsg {
					var out []sideMsg
					for _, p := range plan {
						switch p := p.(type) {
						case sideMsg:
							out = append(out, p)
						case chunk:
							out = append(out, sideMsg{side: p.side, m: ChunkMsg(tnChunk(t, ins[p.side], nil, p.rows))})
						}
					}
					return out
				}
				clean := c.clean
				j := &HashJoin{Left: &jsrc{nil, ivLeft}, Right: &jsrc{nil, ivRight}, Kind: exec.InnerJoin,
					LeftKeys: c.left, RightKeys: c.right, Cols: append(slices.Clone(ivLeft), ivRight...), Clean: &clean}
				var keys [2][]int
				var ts []types.T
				for i := range c.left {
					keys[0], keys[1] = append(keys[0], c.left[i].(*expr.ColRef).Idx), append(keys[1], c.right[i].(*expr.ColRef).Idx)
					ts = append(ts, c.left[i].Type())
				}
				checkRescaleN(t, j, keys[:], ts, gen)
			})
		}
	}
}

// TestOverWindowRescale: window functions whose calls all partition by k
// (some by k and v too: two call groups), over random changelogs
// (inserts, deletes, duplicate copies) with watermarks, routed by k.
func TestOverWindowRescale(t *testing.T) {
	seeds := 6
	if testing.Short() {
		seeds = 2
	}
	k, ts, v, id := owCol(0), owCol(1), owCol(2), owCol(3)
	part, part2 := []expr.Expr{k}, []expr.Expr{v, k}
	byTime := []exec.SortKey{{E: ts}, {E: id}}
	calls := []exec.WindowCall{
		owCall(t, "row_number", nil, part, byTime, owDefault),
		owCall(t, "rank", nil, part, []exec.SortKey{{E: v}}, owDefault),
		owCall(t, "lag", []expr.Expr{v}, part, byTime, owDefault),
		owCall(t, "sum", []expr.Expr{v}, part, byTime, owRows1),
		owCall(t, "count", nil, part2, nil, owWhole),
		owCall(t, "first_value", []expr.Expr{id}, part2, byTime, owDefault),
	}
	for seed := int64(1); seed <= int64(seeds); seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			var script []ktMsg
			var live [][]types.Value
			nextID := int64(0)
			var epoch uint64
			for e := 0; e < 16; e++ {
				for c := rng.Intn(3); c >= 0; c-- {
					var rows [][]types.Value
					var ops []Op
					for i := rng.Intn(6); i > 0; i-- {
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
							row := []types.Value{int64(rng.Intn(7)), types.TimestampValue(rng.Intn(20)), int64(rng.Intn(4)), nextID}
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
			checkRescale(t, newOverWindow(nil, calls), []int{0}, []types.T{owIn[0].Type}, ktMessages(t, owIn, script))
		})
	}
}

// TestOverWindowEOWCRescale: EMIT ON WINDOW CLOSE over an append-only
// stream with a rising watermark and late rows, with frames that free
// rows (row_number and rank counting freed rows, so partitions outlive
// their rows) and one that frees nothing, routed by k.
func TestOverWindowEOWCRescale(t *testing.T) {
	seeds := 6
	if testing.Short() {
		seeds = 2
	}
	for _, unbounded := range []bool{false, true} {
		all, _ := owEOWCCalls(t, unbounded)
		var calls []exec.WindowCall
		for _, c := range all {
			if len(c.PartitionBy) > 0 { // routed by k: every call partitions by it
				calls = append(calls, c)
			}
		}
		for seed := int64(1); seed <= int64(seeds); seed++ {
			t.Run(fmt.Sprintf("unbounded=%v/seed%d", unbounded, seed), func(t *testing.T) {
				rng := rand.New(rand.NewSource(seed))
				var script []ktMsg
				maxTS, nextID := int64(0), int64(0)
				var epoch uint64
				for step := 0; step < 50; step++ {
					var rows [][]types.Value
					for i := rng.Intn(5); i > 0; i-- {
						nextID++
						ts := maxTS + int64(rng.Intn(6)) - 3
						rows = append(rows, []types.Value{int64(rng.Intn(5)), types.TimestampValue(ts), int64(rng.Intn(10)), nextID})
						maxTS = max(maxTS, ts)
					}
					if len(rows) > 0 {
						script = append(script, ktChunk(nil, rows...))
					}
					if rng.Intn(2) == 0 {
						script = append(script, ktMark(1, maxTS-2))
					}
					if rng.Intn(2) == 0 {
						script = ktBarrier(rng, script, &epoch)
					}
				}
				script = ktBarrier(rng, script, &epoch)
				w := newOverWindow(nil, calls)
				w.EOWC = &OverEOWC{TimeCol: 1, Delay: int64(seed % 2 * 3)}
				checkRescale(t, w, []int{0}, []types.T{owIn[0].Type}, ktMessages(t, owIn, script))
			})
		}
	}
}

// ktMessages makes script's messages anew at every call, its chunks of
// columns cols.
func ktMessages(t *testing.T, cols []types.Column, script []ktMsg) func() []Message {
	return func() []Message {
		var in []Message
		for _, s := range script {
			switch s.kind {
			case KindChunk:
				in = append(in, ChunkMsg(tnChunk(t, cols, s.ops, s.rows)))
			case KindWatermark:
				in = append(in, WatermarkMsg(s.mark))
			case KindBarrier:
				in = append(in, BarrierMsg(s.barrier))
			}
		}
		return in
	}
}

package stream

import (
	"fmt"
	"maps"
	"math"
	"math/rand"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// The join's checkpoint tests run a scripted two-input run of a HashJoin
// (inputs fed one message at a time through unbuffered channels, so the
// join sees them in the script's order), then, from every checkpoint in
// it, a join restored from the folded state over the rest of the script:
// its output (chunks with ops in order, watermarks, barriers) and late
// rows must equal the original's after that barrier, and its own later
// checkpoints must fold to the original's states (ktCheck's rules).

// jkMsg is one scripted message for input side (a barrier goes to both).
type jkMsg struct {
	side int
	m    ktMsg
}

// jkExec runs the join mk builds over script, restored from restored (nil:
// from scratch).
func jkExec[N Node](t *testing.T, mk func(l, r chan Message) N, script []jkMsg, restored memState, full func(epoch uint64) bool) *ktRun {
	t.Helper()
	chs := [2]chan Message{make(chan Message), make(chan Message)}
	var j Node = mk(chs[0], chs[1])
	in := [2][]types.Column{j.Inputs()[0].Columns(), j.Inputs()[1].Columns()}
	cps := newMemCheckpoints()
	if restored != nil {
		cps.restored[j] = restored
		cps.states[j] = maps.Clone(restored)
	}
	env := newEnv(t)
	env.Checkpoints = cps
	run := &ktRun{at: map[uint64][2]int{}, states: map[uint64]memState{}}
	var mu sync.Mutex
	env.OnLate = func(rec arrow.RecordBatch, _ uint64) {
		mu.Lock()
		defer mu.Unlock()
		cols := in[0]
		if rec.Schema().Field(1).Name == in[1][1].Name {
			cols = in[1]
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			run.late = append(run.late, cols[1].Name+":"+tnRender(rowValues(rec, i, cols)))
		}
	}
	out := j.Start(env, []<-chan Message{chs[0], chs[1]})
	barriers := make(chan uint64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m := range out {
			mu.Lock()
			run.log = append(run.log, ktRender(m, j.Columns()))
			if m.Kind == KindBarrier {
				run.at[m.Barrier.Epoch] = [2]int{len(run.log), len(run.late)}
				if m.Barrier.Checkpoint {
					run.states[m.Barrier.Epoch] = cps.copyState(j)
				}
			}
			mu.Unlock()
			if m.Kind == KindBarrier {
				barriers <- m.Barrier.Epoch
			}
		}
	}()
	feed := func(side int, m Message) {
		select {
		case chs[side] <- m:
		case <-done:
			t.Fatalf("output closed early: %v", env.Err())
		}
	}
	for _, s := range script {
		switch s.m.kind {
		case KindChunk:
			feed(s.side, ChunkMsg(tnChunk(t, in[s.side], s.m.ops, s.m.rows)))
		case KindWatermark:
			feed(s.side, WatermarkMsg(s.m.mark))
		case KindBarrier:
			if s.m.barrier.Checkpoint {
				cps.mu.Lock()
				cps.full = full(s.m.barrier.Epoch)
				cps.mu.Unlock()
			}
			// The right input's first: a TemporalJoin reads its table
			// input alone until the first barrier.
			feed(1, BarrierMsg(s.m.barrier))
			feed(0, BarrierMsg(s.m.barrier))
			select {
			case e := <-barriers:
				if e != s.m.barrier.Epoch {
					t.Fatalf("barrier %d out, want %d", e, s.m.barrier.Epoch)
				}
			case <-done:
				t.Fatalf("output closed before barrier %d: %v", s.m.barrier.Epoch, env.Err())
			}
		}
	}
	// What the join sends when its inputs close (watermarks) depends on
	// which close it sees first: the comparison stops at the last barrier.
	mu.Lock()
	run.log = slices.Clip(run.log)
	end := len(run.log)
	mu.Unlock()
	close(chs[0])
	close(chs[1])
	<-done
	if err := env.Err(); err != nil {
		t.Fatal(err)
	}
	run.log = run.log[:end]
	run.resets = cps.resets
	return run
}

// jkCheck runs script once and, from each of its checkpoints, a restored
// join to the end, comparing them.
func jkCheck[N Node](t *testing.T, rng *rand.Rand, mk func(l, r chan Message) N, script []jkMsg) {
	t.Helper()
	fulls := map[uint64]bool{}
	nfull := 0
	first := uint64(0)
	for _, s := range script {
		if s.m.kind == KindBarrier && s.m.barrier.Checkpoint {
			if first == 0 {
				first = s.m.barrier.Epoch
			}
			if rng.Intn(5) == 0 {
				fulls[s.m.barrier.Epoch] = true
				nfull++
			}
		}
	}
	full := func(e uint64) bool { return fulls[e] }
	orig := jkExec(t, mk, script, nil, full)
	if len(orig.states) > 0 && orig.resets != 1+nfull-btoi(fulls[first]) {
		t.Errorf("%d full snapshots of %d (%d asked), want the first and those asked", orig.resets, len(orig.states), nfull)
	}
	for i, s := range script {
		if s.m.kind != KindBarrier || !s.m.barrier.Checkpoint {
			continue
		}
		e := s.m.barrier.Epoch
		st := orig.states[e]
		got := jkExec(t, mk, script[i+1:], maps.Clone(st), full)
		at := orig.at[e]
		if want := orig.log[at[0]:]; !slices.Equal(got.log, want) {
			t.Fatalf("restored at epoch %d (%d pairs):\n got %s\nwant %s", e, len(st), strings.Join(got.log, "\n     "), strings.Join(want, "\n     "))
		}
		if want := orig.late[at[1]:]; !slices.Equal(got.late, want) {
			t.Fatalf("restored at epoch %d: late rows %v, want %v", e, got.late, want)
		}
		for e2, st2 := range got.states {
			if !maps.Equal(st2, orig.states[e2]) {
				t.Fatalf("restored at epoch %d: checkpoint %d folds to %d pairs, want %d:\n%s", e, e2, len(st2), len(orig.states[e2]), ktStateDiff(st2, orig.states[e2]))
			}
		}
	}
}

// jkChunkMsg turns a generated chunk into a scripted one.
func jkChunkMsg(side int, c *Chunk, cols []types.Column) jkMsg {
	rows, ops := tnRows(c, cols)
	if c.Ops == nil {
		ops = nil
	}
	c.Rec.Release()
	return jkMsg{side, ktChunk(ops, rows...)}
}

func jkBarrier(rng *rand.Rand, script []jkMsg, epoch *uint64) []jkMsg {
	*epoch++
	return append(script, jkMsg{m: ktMsg{kind: KindBarrier, barrier: Barrier{Epoch: *epoch, Checkpoint: rng.Intn(3) == 0}}})
}

// TestHashJoinCheckpointRandom: every kind, key layout and residual
// condition over random changelogs (the generator of
// TestHashJoinRandomChangelogs: inserts, deletes, update pairs,
// duplicates, NULL keys), with watermarks on the int key, restored at
// every checkpoint.
func TestHashJoinCheckpointRandom(t *testing.T) {
	defer func(n int) { joinCompactMin = n }(joinCompactMin)
	joinCompactMin = 8 // compact often: the dirty lists must follow
	seeds := 4
	if testing.Short() {
		seeds = 2
	}
	for _, kind := range joinKindList {
		for _, keys := range []string{"int", "text", "multi", "cross"} {
			for _, cond := range []bool{false, true} {
				for seed := int64(0); seed < int64(seeds); seed++ {
					t.Run(fmt.Sprintf("%s/%s/cond=%v/%d", kind, keys, cond, seed), func(t *testing.T) {
						rng := rand.New(rand.NewSource(seed))
						nkeys := 4
						if seed%2 == 1 {
							nkeys = 30
						}
						gens := [2]*changelog{{rng: rng, cols: jLeft, keys: nkeys}, {rng: rng, cols: jRight, keys: nkeys}}
						retractFrom := [2]int{rng.Intn(30), rng.Intn(30)}
						var script []jkMsg
						var epoch uint64
						marks := [2]int64{}
						for step := 0; step < 60; step++ {
							s := rng.Intn(2)
							switch x := rng.Intn(10); {
							case x == 0:
								marks[s] += int64(rng.Intn(3))
								script = append(script, jkMsg{s, ktMark(0, marks[s])})
							case x < 3:
								script = jkBarrier(rng, script, &epoch)
							default:
								gens[s].retract = step >= retractFrom[s]
								script = append(script, jkChunkMsg(s, gens[s].chunk(t, 6), gens[s].cols))
							}
						}
						script = jkBarrier(rng, script, &epoch)
						jkCheck(t, rng, func(l, r chan Message) *HashJoin { return newTestJoin(t, kind, keys, cond, l, r) }, script)
					})
				}
			}
		}
	}
}

// TestWindowJoinCheckpointRandom: a window join (JoinClean) freeing groups
// with the watermarks, restored at every checkpoint.
func TestWindowJoinCheckpointRandom(t *testing.T) {
	ts := &expr.ColRef{Idx: 0, T: types.TTimestamp, Name: "ts"}
	for seed := int64(1); seed <= 30; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			keep := int64(rng.Intn(3))
			var script []jkMsg
			var epoch uint64
			base := [2]int64{}
			for step := 0; step < 60; step++ {
				s := rng.Intn(2)
				switch x := rng.Intn(10); {
				case x < 2:
					base[s] += int64(rng.Intn(3))
					script = append(script, jkMsg{s, ktMark(0, base[s])})
				case x < 4:
					script = jkBarrier(rng, script, &epoch)
				default:
					var rows [][]types.Value
					for i := 1 + rng.Intn(4); i > 0; i-- {
						rows = append(rows, []types.Value{types.TimestampValue(base[s] + int64(rng.Intn(5)) - 1), int64(step*10 + i)})
					}
					script = append(script, jkMsg{s, ktChunk(nil, rows...)})
				}
			}
			script = jkBarrier(rng, script, &epoch)
			jkCheck(t, rng, func(l, r chan Message) *HashJoin {
				return &HashJoin{Left: &tvSource{l}, Right: &tvSource{r}, Kind: exec.InnerJoin,
					LeftKeys: []expr.Expr{ts}, RightKeys: []expr.Expr{ts},
					Cols:  append(append([]types.Column(nil), tvCols...), tvCols...),
					Clean: &JoinClean{Key: 0, Keep: keep}}
			}, script)
		})
	}
}

// TestIntervalJoinCheckpointRandom: interval joins of every kind, keyed or
// not, with late rows, freed rows and out-of-order times (the generator of
// TestIntervalJoinRandom), restored at every checkpoint.
func TestIntervalJoinCheckpointRandom(t *testing.T) {
	defer func(n int) { joinCompactMin = n }(joinCompactMin)
	joinCompactMin = 8
	var cases []ivCase
	for _, kind := range []exec.JoinKind{exec.InnerJoin, exec.LeftJoin, exec.RightJoin, exec.FullJoin} {
		for _, keyed := range []bool{true, false} {
			cases = append(cases,
				ivCase{kind, keyed, -10, 0, true, true, false, true},
				ivCase{kind, keyed, 3, 12, true, true, true, false},
				ivCase{kind, keyed, 0, 0, true, false, false, true},
				ivCase{kind, keyed, 0, 5, false, true, true, false})
		}
	}
	for _, c := range cases {
		for seed := int64(1); seed <= 4; seed++ {
			t.Run(fmt.Sprintf("%s/%d", c, seed), func(t *testing.T) {
				rng := rand.New(rand.NewSource(seed))
				var script []jkMsg
				var epoch uint64
				now := [2]int64{50, 50}
				for step := 0; step < 80; step++ {
					s := rng.Intn(2)
					switch x := rng.Intn(10); {
					case x < 2:
						script = append(script, jkMsg{s, ktMark(1, now[s]-int64(rng.Intn(12)))})
					case x < 4:
						script = jkBarrier(rng, script, &epoch)
					default:
						var rows [][]types.Value
						for n := rng.Intn(6); n >= 0; n-- {
							now[s] += int64(rng.Intn(3))
							var k, ts types.Value = int64(rng.Intn(3)), types.TimestampValue(now[s] - int64(rng.Intn(15)))
							if rng.Intn(15) == 0 {
								k = nil
							}
							if rng.Intn(15) == 0 {
								ts = nil
							}
							rows = append(rows, []types.Value{k, ts, int64(step*10 + n)})
						}
						script = append(script, jkMsg{s, ktChunk(nil, rows...)})
					}
				}
				script = jkBarrier(rng, script, &epoch)
				jkCheck(t, rng, func(l, r chan Message) *HashJoin {
					j := newIntervalJoin(t, c)
					j.Left, j.Right = &jsrc{l, ivLeft}, &jsrc{r, ivRight}
					return j
				}, script)
			})
		}
	}
}

// BenchmarkHashJoinSnapshot: an inner join holding 1M left rows (1000
// keys, text payload); each snapshot follows 1000 inserts and 1000
// deletes of held rows.
func BenchmarkHashJoinSnapshot(b *testing.B) {
	j := newTestJoin(b, exec.InnerJoin, "int", false, nil, nil)
	env := NewEnv(b.Context(), expr.Context{})
	env.Checkpoints = newMemCheckpoints()
	r, err := j.newRun(env, make(chan Message, 1))
	if err != nil {
		b.Fatal(err)
	}
	defer r.release()
	row := func(i int) []types.Value {
		return []types.Value{int64(i % 1000), int64(i), fmt.Sprintf("payload %d", i)}
	}
	next, oldest := 0, 0
	add := func(n int) {
		rows := make([][]types.Value, 0, n)
		for ; len(rows) < n; next++ {
			rows = append(rows, row(next))
		}
		if err := r.consume(0, jChunk(b, jLeft, rows, nil)); err != nil {
			b.Fatal(err)
		}
	}
	for range 1000 {
		add(1000)
	}
	ktBenchSnapshot(b, func(int) {
		add(1000)
		rows := make([][]types.Value, 0, 1000)
		ops := make([]Op, 0, 1000)
		for ; len(rows) < 1000; oldest++ {
			rows, ops = append(rows, row(oldest)), append(ops, Delete)
		}
		if err := r.consume(0, jChunk(b, jLeft, rows, ops)); err != nil {
			b.Fatal(err)
		}
	}, r.Snapshot)
}

// appendArrowKey writes what appendValueKey writes for the row's Values,
// for every type (including the identity-sensitive values NaN, -0, a
// numeric's scale, a bpchar's blanks), and it decodes back.
func TestJoinStateRowEncoding(t *testing.T) {
	cases := []struct {
		t    types.T
		vals []types.Value
	}{
		{types.TBool, []types.Value{true, false, nil}},
		{types.TInt2, []types.Value{int64(-3), int64(7), nil}},
		{types.TInt4, []types.Value{int64(-1 << 31), int64(5)}},
		{types.TInt8, []types.Value{int64(-1), int64(1 << 62)}},
		{types.TFloat4, []types.Value{1.5, negZero(), nil}},
		{types.TFloat8, []types.Value{math.NaN(), negZero(), 0.0, math.Inf(-1)}},
		{types.TNumeric, []types.Value{"1.50", "-0", "NaN", nil}},
		{types.TText, []types.Value{"", "héllo", nil}},
		{types.TBpchar, []types.Value{"ab  "}},
		{types.TVarchar, []types.Value{"x"}},
		{types.TJSONB, []types.Value{`{"a": 1}`}},
		{types.TBytea, []types.Value{[]byte{0, 1, 2}, []byte{}}},
		{types.TDate, []types.Value{types.DateValue(-5), types.DateValue(19000)}},
		{types.TTime, []types.Value{types.TimeValue(123456)}},
		{types.TTimestamp, []types.Value{types.TimestampValue(-1), types.TimestampValue(1 << 50)}},
		{types.TTimestampTZ, []types.Value{types.TimestampValue(42)}},
		{types.TInterval, []types.Value{types.IntervalValue{Months: 1, Days: -2, Micros: 3}}},
		{types.TOid, []types.Value{int64(1234)}},
		{types.ArrayOf(types.TInt8), []types.Value{[]types.Value{int64(1), nil}}},
	}
	for _, c := range cases {
		cols := []types.Column{{Name: "c", Type: c.t}}
		rows := make([][]types.Value, len(c.vals))
		for i, v := range c.vals {
			rows[i] = []types.Value{v}
		}
		ch := jChunk(t, cols, rows, nil)
		for i := range c.vals {
			row := rowValues(ch.Rec, i, cols)
			want := appendKey(nil, row, nil)
			got := appendArrowKey(nil, ch.Rec.Column(0), i, c.t)
			if !slices.Equal(got, want) {
				t.Errorf("%s row %d: %x, want %x", c.t, i, got, want)
			}
			back, rest, err := decodeIdentityRow(got, 1)
			if err != nil || len(rest) != 0 || !slices.Equal(appendKey(nil, back, nil), want) {
				t.Errorf("%s row %d: decodes to %v (%v)", c.t, i, back, err)
			}
		}
		ch.Rec.Release()
	}
}

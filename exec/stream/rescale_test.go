package stream

import (
	"fmt"
	"maps"
	"math"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// Rescaling by restart, at operator level: a keyed operator runs as
// oldN instances over random input, checkpointing at random barriers; at
// each checkpoint its instances' states are given to newN new instances
// (each restoring the vnodes it owns from every old instance, as the
// runtime does) which run the rest of the input. Every epoch's net
// changes after the checkpoint must equal those of one uninterrupted
// instance.

// instCk is one instance's Checkpointer in these tests: it restores from
// restored (if set) and folds its snapshots into st.
type instCk struct {
	mu       sync.Mutex
	node     Node
	restored StateReader
	st       memState
	based    bool
}

func (c *instCk) Restored(n Node) StateReader {
	if n != c.node {
		return nil
	}
	return c.restored
}

func (c *instCk) Snapshot(n Node, b Barrier, st Stateful) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	// the first snapshot after a rescale is full: the new instance's
	// state has no base under its id (the runtime's fullNext)
	full := c.restored != nil && !c.based
	c.based = true
	return st.Snapshot(&memWriter{st: c.st}, full)
}

// parRescaleRun is one run's record: per output barrier the epoch's net
// changes, and at each checkpoint barrier every instance's state.
type parRescaleRun struct {
	epochs []string
	states [][]memState // per checkpoint, per instance
	cpIn   []int        // the input position of each checkpoint barrier
}

// runRescaled runs node as n instances routed by keys (of types ts) over
// in[from:]; with parts set, instance k restores from a RescaledState over
// them.
func runRescaled(t *testing.T, node Node, keys []int, ts []types.T, n int, in []Message, from int, parts []memState) *parRescaleRun {
	t.Helper()
	sm := make([]sideMsg, len(in))
	for i, m := range in {
		sm[i] = sideMsg{side: 0, m: m}
	}
	return runRescaledN(t, node, [][]int{keys}, ts, n, sm, from, parts)
}

// sideMsg is an input message of one input of a multi-input operator (a
// barrier or watermark goes to the side it names only; scripts send
// barriers to every side), or, with tick set, a step of the runs'
// processing-time clock (a fake clock: EMIT EVERY and EARLY EVERY tick
// when it passes their period) instead of a message.
type sideMsg struct {
	side int
	m    Message
	tick time.Duration
}

// startParallelN is startParallelCk for operators of several inputs:
// each input is split by its own keys.
func startParallelN(env *Env, node Node, keys [][]int, ts []types.T, n int, ins []chan Message, cks []Checkpointer) <-chan Message {
	if n <= 1 {
		ro := make([]<-chan Message, len(ins))
		for i, c := range ins {
			ro[i] = c
		}
		return node.Start(env.Instance(cks[0]), ro)
	}
	perInst := make([][]<-chan Message, n)
	for i, in := range ins {
		for k, c := range testExchange(env, in, keys[i], ts, n) {
			perInst[k] = append(perInst[k], c)
		}
	}
	outs := make([]<-chan Message, n)
	for k := range outs {
		outs[k] = node.Start(env.Instance(cks[k]), perInst[k])
	}
	return (&Union{Ins: []Node{node}, Cols: node.Columns()}).Start(env, outs)
}

// runRescaledN is runRescaled over the inputs of keys (one list per
// input), in feeding in's messages in order.
func runRescaledN(t *testing.T, node Node, keys [][]int, ts []types.T, n int, in []sideMsg, from int, parts []memState) *parRescaleRun {
	t.Helper()
	env := newEnv(t)
	clock := newFakeClock()
	env.Clock = clock
	cks := make([]*instCk, n)
	ckIfs := make([]Checkpointer, n)
	for k := range cks {
		cks[k] = &instCk{node: node, st: memState{}}
		if parts != nil {
			rs := &RescaledState{Keys: keys, N: n, K: k}
			for _, p := range parts {
				rs.Parts = append(rs.Parts, p)
			}
			cks[k].restored = rs
		}
		ckIfs[k] = cks[k]
	}
	inputs := make([]chan Message, len(keys))
	for i := range inputs {
		inputs[i] = make(chan Message)
	}
	out := startParallelN(env, node, keys, ts, n, inputs, ckIfs)
	res := &parRescaleRun{}
	barriers := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		net := map[string]int{}
		for m := range out {
			switch m.Kind {
			case KindChunk:
				for i := 0; i < m.Chunk.Len(); i++ {
					id := rowIdentity(m.Chunk.Rec, i, node.Columns(), 0, len(node.Columns()))
					if op := m.Chunk.Op(i); op == Delete || op == UpdateBefore {
						net[id]--
					} else {
						net[id]++
					}
				}
			case KindBarrier:
				var lines []string
				for id, c := range net {
					if c != 0 {
						lines = append(lines, fmt.Sprintf("%q x%d", id, c))
					}
				}
				sort.Strings(lines)
				res.epochs = append(res.epochs, fmt.Sprintf("epoch %d: %s", m.Barrier.Epoch, strings.Join(lines, ", ")))
				clear(net)
				if m.Barrier.Checkpoint {
					var sts []memState
					for _, c := range cks {
						c.mu.Lock()
						sts = append(sts, maps.Clone(c.st))
						c.mu.Unlock()
					}
					res.states = append(res.states, sts)
				}
				barriers <- struct{}{}
			}
		}
	}()
	for i := from; i < len(in); i++ {
		if in[i].tick > 0 {
			clock.Advance(in[i].tick)
			continue
		}
		m := in[i].m
		if m.Kind == KindBarrier && m.Barrier.Checkpoint {
			res.cpIn = append(res.cpIn, i)
		}
		sides := []int{in[i].side}
		if m.Kind == KindBarrier {
			sides = sides[:0]
			for s := range inputs {
				sides = append(sides, s)
			}
		}
		for _, s := range sides {
			select {
			case inputs[s] <- m:
			case <-env.Ctx.Done():
				t.Fatalf("stopped at input %d: %v", i, env.Err())
			}
		}
		if m.Kind == KindBarrier {
			select {
			case <-barriers:
			case <-done:
				t.Fatalf("stopped at input %d: %v", i, env.Err())
			}
		}
	}
	for _, c := range inputs {
		close(c)
	}
	<-done
	if err := env.Err(); err != nil {
		t.Fatal(err)
	}
	return res
}

// rescales are the (old, new) parallelisms every rescale test restarts
// with.
var rescales = [][2]int{{4, 2}, {2, 3}, {1, 4}, {4, 1}, {3, 8}}

// checkRescale runs node over in uninterrupted at parallelism 1, then for
// each (old, new) in rescales at old with a restart into new at each
// checkpoint, and compares every epoch after the checkpoint.
// gen gives the input messages afresh for each run (operators may release
// the records of their input).
func checkRescale(t *testing.T, node Node, keys []int, ts []types.T, gen func() []Message) {
	t.Helper()
	genN := func() []sideMsg {
		var out []sideMsg
		for _, m := range gen() {
			out = append(out, sideMsg{side: 0, m: m})
		}
		return out
	}
	checkRescaleN(t, node, [][]int{keys}, ts, genN)
}

// checkRescaleN is checkRescale for operators of several inputs.
func checkRescaleN(t *testing.T, node Node, keys [][]int, ts []types.T, gen func() []sideMsg) {
	t.Helper()
	want := runRescaledN(t, node, keys, ts, 1, gen(), 0, nil)
	for _, sc := range rescales {
		old := runRescaledN(t, node, keys, ts, sc[0], gen(), 0, nil)
		if !slices.Equal(old.epochs, want.epochs) {
			t.Fatalf("at parallelism %d: %s", sc[0], diffLines(old.epochs, want.epochs))
		}
		for c, at := range old.cpIn {
			rest := runRescaledN(t, node, keys, ts, sc[1], gen(), at+1, old.states[c])
			if w := want.epochs[len(want.epochs)-len(rest.epochs):]; !slices.Equal(rest.epochs, w) {
				t.Fatalf("%d -> %d at checkpoint %d (input %d): %s", sc[0], sc[1], c, at, diffLines(rest.epochs, w))
			}
			if len(rest.cpIn) == 0 {
				continue
			}
			// and on into one instance, which holds every key once: a
			// key restored by two instances fails its restore, one
			// restored by none shows in the epochs
			again := runRescaledN(t, node, keys, ts, 1, gen(), rest.cpIn[0]+1, rest.states[0])
			if w := want.epochs[len(want.epochs)-len(again.epochs):]; !slices.Equal(again.epochs, w) {
				t.Fatalf("%d -> %d at checkpoint %d, then -> 1: %s", sc[0], sc[1], c, diffLines(again.epochs, w))
			}
		}
	}
}

func TestHashAggRescale(t *testing.T) {
	aggs := append(propAggs(t), varPropAggs(t)...)
	seeds, epochs := 3, 20
	if testing.Short() {
		seeds, epochs = 1, 12
	}
	for ci, cfg := range ckAggConfigs {
		if len(cfg.groupBy) == 0 {
			continue // a global aggregate runs single
		}
		for seed := 1; seed <= seeds; seed++ {
			t.Run(fmt.Sprintf("%s/seed=%d", cfg.name, seed), func(t *testing.T) {
				rng := rand.New(rand.NewSource(int64(1000*ci + seed)))
				h, _ := propPlans(t, propConfig{groupBy: cfg.groupBy, noAggs: cfg.noAggs}, aggs)
				h.AppendOnly, h.Clean = cfg.appendOnly, cfg.clean
				h.Input = &Scan{Cols: propCols}
				keys, ok := ColumnKeys(h.GroupBy)
				if !ok {
					t.Fatal("group keys are not columns")
				}
				ts := make([]types.T, len(keys))
				for i, g := range h.GroupBy {
					ts[i] = g.Type()
				}
				in := genCkAggInput(t, rng, cfg, epochs)
				checkRescale(t, h, keys, ts, func() []Message { return in })
			})
		}
	}
}

// TestTopNRescale: a top-n per partition (row_number() OVER (PARTITION BY
// c0 ...) <= n, rank, offsets) over random changelogs with watermarks.
func TestTopNRescale(t *testing.T) {
	seeds := 12
	if testing.Short() {
		seeds = 4
	}
	for seed := int64(0); seed < int64(seeds)+6; seed++ {
		rng := rand.New(rand.NewSource(seed))
		limits := []int64{1, 2, 3, math.MaxInt64}
		top := newTopN(nil, true, tnOrders[rng.Intn(len(tnOrders))], limits[rng.Intn(len(limits))], int64(rng.Intn(2)), rng.Intn(2) == 0, false)
		if seed >= int64(seeds) { // append-only: a dedup (its slot table) or a top-3
			top.AppendOnly, top.Limit, top.Offset = true, []int64{1, 3}[seed%2], 0
		}
		t.Run(fmt.Sprintf("seed%d/%s", seed, top.Explain()), func(t *testing.T) {
			var script []ktMsg
			var model [][]types.Value
			var epoch uint64
			for e := 0; e < 15; e++ {
				for c := rng.Intn(4); c > 0; c-- {
					var rows [][]types.Value
					var ops []Op
					for n := 1 + rng.Intn(8); n > 0; n-- {
						if x := rng.Intn(3); x == 0 && len(model) > 0 && !top.AppendOnly {
							i := rng.Intn(len(model))
							rows, ops = append(rows, model[i]), append(ops, Delete)
							model = append(model[:i], model[i+1:]...)
							continue
						}
						r := tnRandRow(rng)
						model = append(model, r)
						rows, ops = append(rows, r), append(ops, Insert)
					}
					script = append(script, ktChunk(ops, rows...))
				}
				if rng.Intn(4) == 0 {
					script = append(script, ktMark(1, int64(e)))
				}
				script = ktBarrier(rng, script, &epoch)
			}
			gen := func() []Message {
				var in []Message
				for _, s := range script {
					switch s.kind {
					case KindChunk:
						in = append(in, ChunkMsg(tnChunk(t, tnIn, s.ops, s.rows)))
					case KindWatermark:
						in = append(in, WatermarkMsg(s.mark))
					case KindBarrier:
						in = append(in, BarrierMsg(s.barrier))
					}
				}
				return in
			}
			checkRescale(t, top, []int{0}, []types.T{tnIn[0].Type}, gen)
		})
	}
}

// TestHashJoinRescale: equi-joins of every kind over random changelogs
// (update pairs, duplicates, NULL keys) with watermarks, routed by their
// int key as the planner would.
func TestHashJoinRescale(t *testing.T) {
	seeds := 3
	if testing.Short() {
		seeds = 1
	}
	for _, kind := range joinKindList {
		for seed := int64(0); seed < int64(seeds); seed++ {
			t.Run(fmt.Sprintf("%s/%d", kind, seed), func(t *testing.T) {
				rng := rand.New(rand.NewSource(seed))
				j := newTestJoin(t, kind, "int", seed%2 == 1, nil, nil)
				var keys [2][]int
				var ts []types.T
				for i := range j.LeftKeys {
					l, ok1 := j.LeftKeys[i].(*expr.ColRef)
					r, ok2 := j.RightKeys[i].(*expr.ColRef)
					isInt := func(t types.T) bool { return t.Kind == types.Int2 || t.Kind == types.Int4 || t.Kind == types.Int8 }
					if ok1 && ok2 && (l.T.Kind == r.T.Kind || isInt(l.T) && isInt(r.T)) { // the planner's sameHash
						keys[0], keys[1], ts = append(keys[0], l.Idx), append(keys[1], r.Idx), append(ts, l.T)
					}
				}
				if len(ts) == 0 {
					t.Fatal("no plain key pair")
				}
				gens := [2]*changelog{{rng: rng, cols: jLeft, keys: 12}, {rng: rng, cols: jRight, keys: 12}}
				var script []jkMsg
				var epoch uint64
				marks := [2]int64{}
				for step := 0; step < 50; step++ {
					s := rng.Intn(2)
					switch x := rng.Intn(10); {
					case x == 0:
						marks[s] += int64(rng.Intn(3))
						script = append(script, jkMsg{s, ktMark(0, marks[s])})
					case x < 3:
						script = jkBarrier(rng, script, &epoch)
					default:
						gens[s].retract = step >= 10
						script = append(script, jkChunkMsg(s, gens[s].chunk(t, 6), gens[s].cols))
					}
				}
				script = jkBarrier(rng, script, &epoch)
				in := [2][]types.Column{jLeft, jRight}
				gen := func() []sideMsg {
					var out []sideMsg
					for _, s := range script {
						switch s.m.kind {
						case KindChunk:
							out = append(out, sideMsg{side: s.side, m: ChunkMsg(tnChunk(t, in[s.side], s.m.ops, s.m.rows))})
						case KindWatermark:
							out = append(out, sideMsg{side: s.side, m: WatermarkMsg(s.m.mark)})
						case KindBarrier:
							out = append(out, sideMsg{side: 0, m: BarrierMsg(s.m.barrier)})
						}
					}
					return out
				}
				checkRescaleN(t, j, keys[:], ts, gen)
			})
		}
	}
}

// TestIntervalJoinRescale: keyed interval joins (inner and outer) with
// watermarks on their time columns, routed by their key.
func TestIntervalJoinRescale(t *testing.T) {
	var cases []ivCase
	for _, kind := range []exec.JoinKind{exec.InnerJoin, exec.LeftJoin, exec.FullJoin} {
		cases = append(cases, ivCase{kind, true, -10, 0, true, true, false, true}, ivCase{kind, true, 3, 12, true, true, true, false})
	}
	for _, c := range cases {
		t.Run(c.String(), func(t *testing.T) {
			rng := rand.New(rand.NewSource(1))
			var script []sideMsg
			var epoch uint64
			now := [2]int64{50, 50}
			ins := [2][]types.Column{ivLeft, ivRight}
			type row struct {
				side int
				rows [][]types.Value
			}
			var plan []any
			for step := 0; step < 60; step++ {
				s := rng.Intn(2)
				switch x := rng.Intn(10); {
				case x < 2:
					plan = append(plan, sideMsg{side: s, m: WatermarkMsg(Watermark{Col: 1, Value: now[s] - int64(rng.Intn(12))})})
				case x < 4:
					epoch++
					plan = append(plan, sideMsg{side: 0, m: BarrierMsg(Barrier{Epoch: epoch, Checkpoint: rng.Intn(3) == 0})})
				default:
					var rows [][]types.Value
					for n := rng.Intn(6); n >= 0; n-- {
						now[s] += int64(rng.Intn(3))
						rows = append(rows, []types.Value{int64(rng.Intn(5)), types.TimestampValue(now[s] - int64(rng.Intn(15))), int64(step*10 + n)})
					}
					plan = append(plan, row{s, rows})
				}
			}
			epoch++
			plan = append(plan, sideMsg{side: 0, m: BarrierMsg(Barrier{Epoch: epoch, Checkpoint: true})})
			gen := func() []sideMsg {
				script = script[:0]
				for _, p := range plan {
					switch p := p.(type) {
					case sideMsg:
						script = append(script, p)
					case row:
						script = append(script, sideMsg{side: p.side, m: ChunkMsg(tnChunk(t, ins[p.side], nil, p.rows))})
					}
				}
				return slices.Clone(script)
			}
			j := newIntervalJoin(t, c)
			j.Left, j.Right = &jsrc{nil, ivLeft}, &jsrc{nil, ivRight}
			checkRescaleN(t, j, [][]int{{0}, {0}}, []types.T{ivLeft[0].Type}, gen)
		})
	}
}

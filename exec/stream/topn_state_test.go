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
	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// A checkpoint test (task KT) runs an operator over a random script of
// input messages with memCheckpoints, taking checkpoints at random
// barriers (incremental after the first, sometimes full). At every
// checkpoint a second instance restored from the folded state is fed the
// rest of the script: its output (chunks with ops, watermarks, barriers)
// and late rows must equal the original's after that barrier, and its
// own later checkpoints must fold to the original's states.

// ktMsg is one scripted input message; rows are built into a fresh chunk
// per run (operators may keep and release their input's records).
type ktMsg struct {
	kind    Kind
	ops     []Op
	rows    [][]types.Value
	mark    Watermark
	barrier Barrier
}

func ktChunk(ops []Op, rows ...[]types.Value) ktMsg {
	return ktMsg{kind: KindChunk, ops: ops, rows: rows}
}

func ktMark(col int, v int64) ktMsg {
	return ktMsg{kind: KindWatermark, mark: Watermark{Col: col, Value: v}}
}

// ktRun is one run's record.
type ktRun struct {
	log    []string            // rendered output messages
	late   []string            // rendered late rows
	at     map[uint64][2]int   // per barrier epoch: len(log), len(late) after it
	states map[uint64]memState // per checkpoint epoch: the folded state
	resets int
}

// ktRender renders a message exactly: ops and rows of a chunk in order.
func ktRender(m Message, cols []types.Column) string {
	switch m.Kind {
	case KindChunk:
		var sb strings.Builder
		rows, ops := tnRows(m.Chunk, cols)
		for i, r := range rows {
			fmt.Fprintf(&sb, "%v %s; ", ops[i], tnRender(r))
		}
		return sb.String()
	case KindWatermark:
		return fmt.Sprintf("watermark %d=%d", m.Watermark.Col, m.Watermark.Value)
	case KindBarrier:
		return fmt.Sprintf("barrier %d", m.Barrier.Epoch)
	}
	return fmt.Sprint(m.Kind)
}

// ktNewClock, if set, gives each ktExec run its processing clock (a test
// whose operator reads the clock sets it for its duration).
var ktNewClock func(script []ktMsg) Clock

// ktExec runs the node mk builds over script, restored from restored
// (nil: from scratch); full reports, per checkpoint epoch, whether that
// snapshot is a full one.
func ktExec(t *testing.T, mk func(ch chan Message) Node, script []ktMsg, restored memState, full func(epoch uint64) bool) *ktRun {
	t.Helper()
	ch := make(chan Message, ChannelSize)
	n := mk(ch)
	in := n.Inputs()[0].Columns()
	cps := newMemCheckpoints()
	if restored != nil {
		cps.restored[n] = restored
		cps.states[n] = maps.Clone(restored)
	}
	env := newEnv(t)
	env.Checkpoints = cps
	if ktNewClock != nil {
		env.Clock = ktNewClock(script)
	}
	run := &ktRun{at: map[uint64][2]int{}, states: map[uint64]memState{}}
	var mu sync.Mutex
	env.OnLate = func(rec arrow.RecordBatch, _ uint64) {
		mu.Lock()
		defer mu.Unlock()
		for i := 0; i < int(rec.NumRows()); i++ {
			run.late = append(run.late, tnRender(rowValues(rec, i, in)))
		}
	}
	out := n.Start(env, []<-chan Message{ch})
	barriers := make(chan uint64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m := range out {
			mu.Lock()
			run.log = append(run.log, ktRender(m, n.Columns()))
			if m.Kind == KindBarrier {
				run.at[m.Barrier.Epoch] = [2]int{len(run.log), len(run.late)}
				if m.Barrier.Checkpoint {
					run.states[m.Barrier.Epoch] = cps.copyState(n)
				}
			}
			mu.Unlock()
			if m.Kind == KindBarrier {
				barriers <- m.Barrier.Epoch
			}
		}
	}()
	for _, s := range script {
		var m Message
		switch s.kind {
		case KindChunk:
			m = ChunkMsg(tnChunk(t, in, s.ops, s.rows))
		case KindWatermark:
			m = WatermarkMsg(s.mark)
		case KindBarrier:
			m = BarrierMsg(s.barrier)
			if s.barrier.Checkpoint {
				cps.mu.Lock()
				cps.full = full(s.barrier.Epoch)
				cps.mu.Unlock()
			}
		}
		ch <- m
		if s.kind == KindBarrier {
			select {
			case e := <-barriers:
				if e != s.barrier.Epoch {
					t.Fatalf("barrier %d out, want %d", e, s.barrier.Epoch)
				}
			case <-done:
				t.Fatalf("output closed before barrier %d: %v", s.barrier.Epoch, env.Err())
			}
		}
	}
	close(ch)
	<-done
	if err := env.Err(); err != nil {
		t.Fatal(err)
	}
	run.resets = cps.resets
	return run
}

// ktCheck runs script once and, from every checkpoint in it, a restored
// instance to the end, comparing them (see above).
func ktCheck(t *testing.T, rng *rand.Rand, mk func(ch chan Message) Node, script []ktMsg) {
	t.Helper()
	fulls := map[uint64]bool{}
	nfull := 0
	for _, s := range script {
		if s.kind == KindBarrier && s.barrier.Checkpoint && rng.Intn(5) == 0 {
			fulls[s.barrier.Epoch] = true
			nfull++
		}
	}
	full := func(e uint64) bool { return fulls[e] }
	orig := ktExec(t, mk, script, nil, full)
	if len(orig.states) > 0 && orig.resets != 1+nfull-btoi(fulls[ktFirstCheckpoint(script)]) {
		t.Errorf("%d full snapshots of %d (%d asked), want the first and those asked", orig.resets, len(orig.states), nfull)
	}
	for i, s := range script {
		if s.kind != KindBarrier || !s.barrier.Checkpoint {
			continue
		}
		e := s.barrier.Epoch
		st := orig.states[e]
		got := ktExec(t, mk, script[i+1:], maps.Clone(st), full)
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

// ktStateDiff renders the pairs where got and want differ.
func ktStateDiff(got, want memState) string {
	var sb strings.Builder
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if w, ok := want[k]; !ok || w != got[k] {
			fmt.Fprintf(&sb, "  key %q: got %q, want %q (present %v)\n", k, got[k], w, ok)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if _, ok := got[k]; !ok {
			fmt.Fprintf(&sb, "  key %q: missing, want %q\n", k, want[k])
		}
	}
	return sb.String()
}

func ktFirstCheckpoint(script []ktMsg) uint64 {
	for _, s := range script {
		if s.kind == KindBarrier && s.barrier.Checkpoint {
			return s.barrier.Epoch
		}
	}
	return 0
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ktBarrier appends a barrier of the next epoch, a checkpoint one time in
// three.
func ktBarrier(rng *rand.Rand, script []ktMsg, epoch *uint64) []ktMsg {
	*epoch++
	return append(script, ktMsg{kind: KindBarrier, barrier: Barrier{Epoch: *epoch, Checkpoint: rng.Intn(3) == 0}})
}

// TestTopNCheckpointRandom: top-n and group top-n over random changelogs
// (the generator of TestTopNRandomAgainstRecomputation).
func TestTopNCheckpointRandom(t *testing.T) {
	seeds := 120
	if testing.Short() {
		seeds = 30
	}
	for seed := int64(0); seed < int64(seeds); seed++ {
		rng := rand.New(rand.NewSource(seed))
		limits := []int64{-1, 1, 2, 3, 5, math.MaxInt64}
		offsets := []int64{0, 0, 1, 3}
		appendOnly := rng.Intn(3) == 0
		part, order := rng.Intn(3) > 0, tnOrders[rng.Intn(len(tnOrders))]
		limit, offset, rank := limits[rng.Intn(len(limits))], offsets[rng.Intn(len(offsets))], rng.Intn(2) == 0
		ties := RowNumber
		if rng.Intn(3) == 0 { // rank() or dense_rank() <= n
			ties, offset = TopNTies(1+rng.Intn(2)), 0
			if limit < 0 {
				limit = 2
			}
		}
		mk := func(ch chan Message) Node {
			top := newTopN(ch, part, order, limit, offset, rank, appendOnly)
			top.Ties = ties
			return top
		}
		t.Run(fmt.Sprintf("seed%d/%s/rank=%v", seed, mk(nil).Explain(), rank), func(t *testing.T) {
			var script []ktMsg
			var model [][]types.Value
			removeAt := func(i int) []types.Value {
				r := model[i]
				model[i] = model[len(model)-1]
				model = model[:len(model)-1]
				return r
			}
			var epoch uint64
			for e := 0; e < 15; e++ {
				for c := rng.Intn(4); c > 0; c-- {
					var rows [][]types.Value
					var ops []Op
					for n := 1 + rng.Intn(8); n > 0; n-- {
						x := rng.Intn(20)
						switch {
						case appendOnly || x < 10 || len(model) == 0:
							r := tnRandRow(rng)
							if x == 0 && len(model) > 0 {
								r = slices.Clone(model[rng.Intn(len(model))])
							}
							model = append(model, r)
							rows, ops = append(rows, r), append(ops, Insert)
						case x < 15:
							rows, ops = append(rows, removeAt(rng.Intn(len(model)))), append(ops, Delete)
						default:
							old, r := removeAt(rng.Intn(len(model))), tnRandRow(rng)
							model = append(model, r)
							rows, ops = append(rows, old, r), append(ops, UpdateBefore, UpdateAfter)
						}
					}
					if appendOnly {
						ops = nil
					}
					script = append(script, ktChunk(ops, rows...))
				}
				if rng.Intn(4) == 0 {
					script = append(script, ktMark(1, int64(e)))
				}
				script = ktBarrier(rng, script, &epoch)
			}
			ktCheck(t, rng, mk, script)
		})
	}
}

// TestTopNCheckpointClose: top-n per window, ON UPDATE and EOWC, with late
// rows (the generator of TestTopNCloseRandom).
func TestTopNCheckpointClose(t *testing.T) {
	for _, eowc := range []bool{false, true} {
		for _, appendOnly := range []bool{false, true} {
			t.Run(fmt.Sprintf("eowc=%v/appendOnly=%v", eowc, appendOnly), func(t *testing.T) {
				for seed := int64(1); seed <= 25; seed++ {
					rng := rand.New(rand.NewSource(seed))
					limit := int64(1 + rng.Intn(3))
					ties := TopNTies(rng.Intn(3))
					mk := func(ch chan Message) Node {
						top := newWindowTopN(ch, eowc, appendOnly, limit)
						top.Ties = ties
						return top
					}
					var script []ktMsg
					var live [][]types.Value
					wm := int64(0)
					script = append(script, ktMark(0, wm))
					var epoch uint64
					for step := 0; step < 25; step++ {
						var rows [][]types.Value
						var ops []Op
						for i := rng.Intn(6); i > 0; i-- {
							ws := wm + int64(rng.Intn(4)-1)*10
							ws -= ws % 10
							row := []types.Value{types.TimestampValue(ws), int64(rng.Intn(2)), int64(rng.Intn(10))}
							if rng.Intn(8) == 0 {
								row[2] = nil
							}
							op := Insert
							if !appendOnly && len(live) > 0 && rng.Intn(4) == 0 {
								j := rng.Intn(len(live))
								row, op = live[j], Delete
								live = slices.Delete(live, j, j+1)
							} else {
								live = append(live, row)
							}
							rows, ops = append(rows, row), append(ops, op)
						}
						if len(rows) > 0 {
							if appendOnly {
								ops = nil
							}
							script = append(script, ktChunk(ops, rows...))
						}
						if rng.Intn(3) == 0 {
							wm += int64(rng.Intn(25))
							script = append(script, ktMark(0, wm))
						}
						if rng.Intn(4) == 0 {
							script = append(script, ktMark(2, int64(step)))
						}
						script = ktBarrier(rng, script, &epoch)
					}
					ktCheck(t, rng, mk, script)
				}
			})
		}
	}
}

// TestTopNCheckpointListOrder: a restored list holds the rows in the same
// order whatever order its pairs come in (Range has none).
func TestTopNCheckpointListOrder(t *testing.T) {
	ch := make(chan Message)
	top := newTopN(ch, false, []exec.SortKey{{E: tnCol(1)}}, 3, 1, true, false)
	r, err := top.newRun(newEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	var rows [][]types.Value
	for i := 0; i < 300; i++ {
		rows = append(rows, tnRandRow(rng))
	}
	if err := r.consume(tnChunk(t, tnIn, nil, rows)); err != nil {
		t.Fatal(err)
	}
	w := &memWriter{st: memState{}}
	if err := r.Snapshot(w, false); err != nil {
		t.Fatal(err)
	}
	r2, _ := top.newRun(newEnv(t))
	if err := r2.Restore(w.st); err != nil {
		t.Fatal(err)
	}
	a, b := r.global.rows.appendRange(nil, 0, -1), r2.global.rows.appendRange(nil, 0, -1)
	if len(a) != len(b) || len(a) != 300 {
		t.Fatalf("restored %d rows, want %d", len(b), len(a))
	}
	for i := range a {
		x, y := r.order.rowVals(nil, a[i].e), r2.order.rowVals(nil, b[i].e)
		if tnRender(x) != tnRender(y) {
			t.Fatalf("row %d: %s, want %s", i, tnRender(y), tnRender(x))
		}
	}
}

// TestDecodeIdentityRow: appendKey's encoding reads back to values of the
// same identity (NaN bits, numeric scale, intervals, arrays, NULLs).
func TestDecodeIdentityRow(t *testing.T) {
	d, _, _ := apd.NewFromString("1.50")
	row := []types.Value{nil, true, int64(-7), math.Float64frombits(0xfff8000000000001), math.Copysign(0, -1), d,
		"héllo", []byte{0, 1}, types.DateValue(-3), types.TimeValue(5), types.TimestampValue(-1 << 40),
		types.IntervalValue{Months: -1, Days: 2, Micros: 3}, []types.Value{int64(1), nil, []types.Value{"x"}}}
	b := appendKey([]byte("pre"), row, nil)
	got, rest, err := decodeIdentityRow(b[3:], len(row))
	if err != nil || len(rest) != 0 {
		t.Fatalf("%v, %d bytes left", err, len(rest))
	}
	if again := appendKey([]byte("pre"), got, nil); string(again) != string(b) {
		t.Fatalf("re-encoded %q, want %q", again, b)
	}
	for i := range row {
		if tnIdentity(got[i], row[i]) != 0 {
			t.Errorf("value %d: %#v, want %#v", i, got[i], row[i])
		}
	}
	if _, _, err := decodeIdentityRow(b[3:len(b)-1], len(row)); err == nil {
		t.Error("a truncated row decoded")
	}
}

// ktCountWriter is a StateWriter that only counts what it is given.
type ktCountWriter struct{ pairs, bytes int }

func (w *ktCountWriter) Put(k, v []byte) { w.pairs++; w.bytes += len(k) + len(v) }
func (w *ktCountWriter) Delete(k []byte) { w.pairs++; w.bytes += len(k) }
func (w *ktCountWriter) Reset()          {}

// ktBenchSnapshot times snap (full or incremental) after each change made
// by step (not timed), reporting the pairs and bytes written per snapshot.
func ktBenchSnapshot(b *testing.B, step func(i int), snap func(w StateWriter, full bool) error) {
	for _, full := range []bool{false, true} {
		b.Run(map[bool]string{false: "incremental", true: "full"}[full], func(b *testing.B) {
			if err := snap(&ktCountWriter{}, true); err != nil {
				b.Fatal(err)
			}
			var w ktCountWriter
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				step(i)
				b.StartTimer()
				if err := snap(&w, full); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(w.pairs)/float64(b.N), "pairs/op")
			b.ReportMetric(float64(w.bytes)/float64(b.N), "bytes/op")
		})
	}
}

// BenchmarkTopNSnapshot: a group top-10 over a retracting input keeps
// every row (100k rows in 1000 partitions); each snapshot follows 100
// inserts and 100 deletes.
func BenchmarkTopNSnapshot(b *testing.B) {
	top := newTopN(nil, true, []exec.SortKey{{E: tnCol(1), Desc: true}}, 10, 0, true, false)
	r, err := top.newRun(NewEnv(b.Context(), expr.Context{}))
	if err != nil {
		b.Fatal(err)
	}
	r.env.Checkpoints = newMemCheckpoints()
	rng := rand.New(rand.NewSource(1))
	row := func(i int) []types.Value {
		return []types.Value{int64(i % 1000), int64(rng.Intn(1 << 20)), fmt.Sprint("r", i), float64(i)}
	}
	var rows [][]types.Value
	for i := 0; i < 100_000; i++ {
		rows = append(rows, row(i))
	}
	if err := r.consume(tnChunk(b, tnIn, nil, rows)); err != nil {
		b.Fatal(err)
	}
	if _, err := r.flush(); err != nil {
		b.Fatal(err)
	}
	next := len(rows)
	ktBenchSnapshot(b, func(int) {
		var ch [][]types.Value
		var ops []Op
		for k := 0; k < 100; k++ {
			j := rng.Intn(len(rows))
			ch, ops = append(ch, rows[j]), append(ops, Delete)
			rows[j] = row(next)
			next++
			ch, ops = append(ch, rows[j]), append(ops, Insert)
		}
		if err := r.consume(tnChunk(b, tnIn, ops, ch)); err != nil {
			b.Fatal(err)
		}
		if _, err := r.flush(); err != nil {
			b.Fatal(err)
		}
	}, r.Snapshot)
}

// BenchmarkTopNRestore: restoring a group top-10 that keeps 100k rows in
// 1000 partitions (what a restart costs per 100k rows of such state).
func BenchmarkTopNRestore(b *testing.B) {
	top := newTopN(nil, true, []exec.SortKey{{E: tnCol(1), Desc: true}}, 10, 0, true, false)
	env := NewEnv(b.Context(), expr.Context{})
	r, err := top.newRun(env)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	var rows [][]types.Value
	for i := 0; i < 100_000; i++ {
		rows = append(rows, []types.Value{int64(i % 1000), int64(rng.Intn(1 << 20)), fmt.Sprint("r", i), float64(i)})
	}
	if err := r.consume(tnChunk(b, tnIn, nil, rows)); err != nil {
		b.Fatal(err)
	}
	w := &memWriter{st: memState{}}
	if err := r.Snapshot(w, true); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r2, _ := top.newRun(env)
		if err := r2.Restore(w.st); err != nil {
			b.Fatal(err)
		}
	}
}

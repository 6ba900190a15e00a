package stream

import (
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

// The checkpoint property test: random changelogs (the property test's
// rows: retractions, update pairs, duplicates, NULLs) with watermarks run
// through a HashAgg that checkpoints at random barriers (incremental after
// the first, sometimes full). At every checkpoint a second HashAgg is
// restored from the folded state and fed the rest of the input: its output
// (rows with their ops and order, watermarks, barriers), its late rows and
// its own later checkpoints (folded onto the restored state, as recovery
// does) must equal the original's.

type ckAggConfig struct {
	name       string
	groupBy    []string
	noAggs     bool
	appendOnly bool
	clean      *AggClean
	marks      bool // watermarks on ts (a key when grouped by it)
}

var ckAggConfigs = []ckAggConfig{
	{name: "global"},
	{name: "int key", groupBy: []string{"k1"}},
	{name: "mixed keys", groupBy: []string{"k1", "k2"}},
	{name: "numeric and interval keys", groupBy: []string{"num", "iv"}},
	{name: "distinct", groupBy: []string{"k1", "k2"}, noAggs: true},
	{name: "append only", groupBy: []string{"k2"}, appendOnly: true},
	{name: "watermarked key", groupBy: []string{"ts", "k1"}, marks: true},
	{name: "clean", groupBy: []string{"ts", "k2"}, marks: true, clean: &AggClean{Key: 0, Delay: 86400e6}},
	{name: "clean append only", groupBy: []string{"k1", "ts"}, marks: true, appendOnly: true, clean: &AggClean{Key: 1}},
}

const dayUS = 86400e6

// genCkAggInput makes the input: per epoch a few chunks, maybe a
// watermark on ts, then a barrier (a checkpoint one in about a third).
func genCkAggInput(t *testing.T, rng *rand.Rand, cfg ckAggConfig, epochs int) []Message {
	tsIdx := propCol("ts").Idx
	var live [][]types.Value
	var msgs []Message
	wm := int64(0)
	row := func() []types.Value {
		r := propRow(rng)
		if cfg.marks && r[tsIdx] != nil {
			r[tsIdx] = types.TimestampValue(wm + int64(rng.Intn(7)-2)*dayUS)
		}
		return r
	}
	for epoch := 1; epoch <= epochs; epoch++ {
		for c := rng.Intn(3); c > 0; c-- {
			var ops []Op
			var rows [][]types.Value
			for n := rng.Intn(8); n > 0; n-- {
				x := rng.Intn(10)
				if cfg.appendOnly {
					x = 9
				}
				switch {
				case x < 3 && len(live) > 0:
					i := rng.Intn(len(live))
					ops, rows = append(ops, Delete), append(rows, live[i])
					live = append(live[:i], live[i+1:]...)
				case x < 5 && len(live) > 0:
					i := rng.Intn(len(live))
					nr := row()
					if rng.Intn(3) == 0 {
						copy(nr[:2], live[i][:2])
					}
					ops, rows = append(ops, UpdateBefore, UpdateAfter), append(rows, live[i], nr)
					live[i] = nr
				case x < 6 && len(live) > 0:
					nr := live[rng.Intn(len(live))]
					ops, rows = append(ops, Insert), append(rows, nr)
					live = append(live, nr)
				default:
					nr := row()
					ops, rows = append(ops, Insert), append(rows, nr)
					live = append(live, nr)
				}
			}
			if cfg.appendOnly || (rng.Intn(4) == 0 && !slices.ContainsFunc(ops, func(o Op) bool { return o != Insert })) {
				ops = nil
			}
			if len(rows) > 0 {
				msgs = append(msgs, ChunkMsg(&Chunk{Rec: propRecord(t, rows), Ops: ops}))
			}
		}
		if cfg.marks && rng.Intn(2) == 0 {
			wm += int64(rng.Intn(3)) * dayUS / 2
			msgs = append(msgs, WatermarkMsg(Watermark{Col: tsIdx, Value: wm}))
		}
		msgs = append(msgs, BarrierMsg(Barrier{Epoch: uint64(epoch), Checkpoint: rng.Intn(3) == 0}))
	}
	return msgs
}

// ckAggRun is what one HashAgg instance produced.
type ckAggRun struct {
	out    []string   // rendered output messages
	late   []string   // rendered late rows
	states []memState // the folded state after each checkpoint
	cpOut  []int      // len(out) after each checkpoint's barrier
	cpLate []int
	cpIn   []int // the input position of each checkpoint barrier
	resets int
}

// runCkAgg runs h over in[from:], restored from st when not nil; full
// says which checkpoints (by input position) are full ones.
func runCkAgg(t *testing.T, h *HashAgg, in []Message, from int, st memState, full map[int]bool) *ckAggRun {
	t.Helper()
	cps := newMemCheckpoints()
	if st != nil {
		cps.restored[h] = st
		cps.states[h] = maps.Clone(st)
	}
	env := newEnv(t)
	env.Checkpoints = cps
	res := &ckAggRun{}
	var mu sync.Mutex
	env.OnLate = func(rec arrow.RecordBatch, _ uint64) {
		mu.Lock()
		defer mu.Unlock()
		for i := 0; i < int(rec.NumRows()); i++ {
			res.late = append(res.late, rowIdentity(rec, i, propCols, 0, len(propCols)))
		}
	}
	input := make(chan Message)
	out := h.Start(env, []<-chan Message{input})
	barriers := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m := range out {
			var s string
			switch m.Kind {
			case KindChunk:
				for i := 0; i < m.Chunk.Len(); i++ {
					s += fmt.Sprintf("%v %q;", m.Chunk.Op(i), rowIdentity(m.Chunk.Rec, i, h.Cols, 0, len(h.Cols)))
				}
			case KindWatermark:
				s = fmt.Sprintf("watermark %d %d", m.Watermark.Col, m.Watermark.Value)
			case KindBarrier:
				s = fmt.Sprintf("barrier %d %v", m.Barrier.Epoch, m.Barrier.Checkpoint)
			}
			mu.Lock()
			res.out = append(res.out, s)
			if m.Kind == KindBarrier && m.Barrier.Checkpoint {
				res.states = append(res.states, cps.copyState(h))
				res.cpOut, res.cpLate = append(res.cpOut, len(res.out)), append(res.cpLate, len(res.late))
			}
			mu.Unlock()
			if m.Kind == KindBarrier {
				barriers <- struct{}{}
			}
		}
	}()
	for i := from; i < len(in); i++ {
		m := in[i]
		if m.Kind == KindBarrier && m.Barrier.Checkpoint {
			cps.mu.Lock()
			cps.full = full[i]
			cps.mu.Unlock()
			res.cpIn = append(res.cpIn, i)
		}
		select {
		case input <- m:
		case <-env.Ctx.Done():
			t.Fatalf("the operator (from input %d) stopped at input %d: %v", from, i, env.Err())
		}
		if m.Kind == KindBarrier {
			select {
			case <-barriers:
			case <-done:
				t.Fatalf("the operator (from input %d) stopped at input %d: %v", from, i, env.Err())
			}
		}
	}
	close(input)
	<-done
	if err := env.Err(); err != nil {
		t.Fatal(err)
	}
	res.resets = cps.resets
	return res
}

func TestHashAggCheckpointRestore(t *testing.T) {
	aggs := append(propAggs(t), varPropAggs(t)...)
	seeds, epochs := 6, 30
	if testing.Short() {
		seeds, epochs = 2, 20
	}
	for ci, cfg := range ckAggConfigs {
		for seed := 1; seed <= seeds; seed++ {
			t.Run(fmt.Sprintf("%s/seed=%d", cfg.name, seed), func(t *testing.T) {
				rng := rand.New(rand.NewSource(int64(100*ci + seed)))
				h, _ := propPlans(t, propConfig{groupBy: cfg.groupBy, noAggs: cfg.noAggs}, aggs)
				h.AppendOnly, h.Clean = cfg.appendOnly, cfg.clean
				h.Input = &Scan{Cols: propCols}
				in := genCkAggInput(t, rng, cfg, epochs)
				full := map[int]bool{}
				nfull := 0
				first := true
				for i, m := range in {
					if m.Kind == KindBarrier && m.Barrier.Checkpoint {
						full[i] = !first && rng.Intn(4) == 0
						if full[i] || first {
							nfull++
						}
						first = false
					}
				}
				orig := runCkAgg(t, h, in, 0, nil, full)
				if orig.resets != nfull {
					t.Errorf("%d full snapshots, want %d", orig.resets, nfull)
				}
				for k, at := range orig.cpIn {
					rest := runCkAgg(t, h, in, at+1, orig.states[k], full)
					if want := orig.out[orig.cpOut[k]:]; !slices.Equal(rest.out, want) {
						t.Fatalf("restored at checkpoint %d (input %d): output\n%s\nwant\n%s", k, at, diffLines(rest.out, want), "")
					}
					if want := orig.late[orig.cpLate[k]:]; !slices.Equal(rest.late, want) {
						t.Fatalf("restored at checkpoint %d: %d late rows, want %d", k, len(rest.late), len(want))
					}
					for j, st := range rest.states {
						if want := orig.states[k+1+j]; !maps.Equal(st, want) {
							t.Fatalf("restored at checkpoint %d: its checkpoint %d differs from the original's: %s", k, j, diffStates(st, want))
						}
					}
				}
			})
		}
	}
}

// diffLines shows the first difference of two message lists.
func diffLines(got, want []string) string {
	for i := 0; i < len(got) || i < len(want); i++ {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			return fmt.Sprintf("message %d:\n got %s\nwant %s", i, g, w)
		}
	}
	return "equal"
}

// diffStates names a key whose value differs between two folded states.
func diffStates(got, want memState) string {
	for k, w := range want {
		if g, ok := got[k]; !ok || g != w {
			return fmt.Sprintf("key %x: %x, want %x", k, g, w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			return fmt.Sprintf("key %x: %x, not in the original", k, g)
		}
	}
	return "equal"
}

// countWriter is a StateWriter that only counts what it is given.
type countWriter struct{ puts, bytes int }

func (w *countWriter) Put(k, v []byte) { w.puts++; w.bytes += len(k) + len(v) }
func (w *countWriter) Delete(k []byte) { w.puts++; w.bytes += len(k) }
func (w *countWriter) Reset()          {}

// BenchmarkHashAggSnapshot measures Snapshot over 1M groups of
// SELECT k, count(*), sum(v), avg(f), max(v) GROUP BY k (max keeps its
// multiset unless append only): a full snapshot, and an incremental one
// after an epoch that changed 1% of the groups (the epoch itself untimed),
// and a Restore of the full snapshot.
func BenchmarkHashAggSnapshot(b *testing.B) {
	const groups = 1_000_000
	for _, appendOnly := range []bool{false, true} {
		h := benchAgg(appendOnly, false)
		env := &Env{Checkpoints: newMemCheckpoints()}
		r, err := h.newRun(env)
		if err != nil {
			b.Fatal(err)
		}
		keys := make([]int64, groups)
		for i := range keys {
			keys[i] = int64(i)
		}
		rng := rand.New(rand.NewSource(1))
		feed := func(keys []int64) {
			for len(keys) > 0 {
				n := min(len(keys), benchChunk)
				kb, vb, fb := array.NewInt64Builder(memory.DefaultAllocator), array.NewInt64Builder(memory.DefaultAllocator), array.NewFloat64Builder(memory.DefaultAllocator)
				for _, k := range keys[:n] {
					kb.Append(k)
					vb.Append(rng.Int63n(1_000_000))
					fb.Append(float64(rng.Intn(1000)) / 4)
				}
				rec := array.NewRecordBatch(types.ArrowSchema(benchIn), []arrow.Array{kb.NewArray(), vb.NewArray(), fb.NewArray()}, int64(n))
				if err := r.consume(&Chunk{Rec: rec}); err != nil {
					b.Fatal(err)
				}
				keys = keys[n:]
			}
			if _, err := r.flush(); err != nil {
				b.Fatal(err)
			}
		}
		feed(keys)
		st := hashAggState{r}
		b.Run(fmt.Sprintf("appendOnly=%v/full", appendOnly), func(b *testing.B) {
			var w countWriter
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				w = countWriter{}
				if err := st.Snapshot(&w, true); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(w.bytes)/(1<<20), "MiB")
			b.ReportMetric(float64(w.puts), "records")
		})
		b.Run(fmt.Sprintf("appendOnly=%v/restore", appendOnly), func(b *testing.B) {
			folded := memState{}
			if err := st.Snapshot(&memWriter{st: folded}, true); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				r2, err := h.newRun(env)
				if err != nil {
					b.Fatal(err)
				}
				if err := (hashAggState{r2}).Restore(folded); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
		})
		b.Run(fmt.Sprintf("appendOnly=%v/incremental-1pct", appendOnly), func(b *testing.B) {
			var w countWriter
			var cpu time.Duration
			touched := make([]int64, groups/100)
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				for j := range touched {
					touched[j] = rng.Int63n(groups)
				}
				feed(touched)
				w = countWriter{}
				b.StartTimer()
				cpu0 := cpuTime()
				if err := st.Snapshot(&w, false); err != nil {
					b.Fatal(err)
				}
				cpu += cpuTime() - cpu0
			}
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(w.bytes)/(1<<20), "MiB")
			b.ReportMetric(float64(w.puts), "records")
		})
	}
}

package dataflow

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/types"
)

// roundInputs is an unbounded source (oid 1) of tsCols rows fed by the
// test in rounds: round r's rows have ts in [5r, 5r+4), each tagged with
// one of 8 substreams, and every substream gets a row at 5r+3. Reader i
// of n reads the substreams s with s mod n = i, in log order, so that
// (with the source's watermark ts - 4 µs) no reader ever sees a late
// row and every reader's watermark after round r is 5r-1, as one
// reader's: any parallelism sees the same rows and watermarks per epoch.
// A reader's position is the log index after its last row; it resumes
// there.
type roundInputs struct {
	fakeInputs
	mu      sync.Mutex
	log     []roundBatch
	changed chan struct{} // closed and replaced at each push
}

type roundBatch struct {
	sub int
	rec arrow.RecordBatch
}

const roundSubs = 8

func newRoundInputs() *roundInputs { return &roundInputs{changed: make(chan struct{})} }

// push appends round r's rows, drawn from rng.
func (in *roundInputs) push(r int64, rng *rand.Rand) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for s := range roundSubs {
		ts := []int64{5*r + 3}
		for range rng.IntN(4) {
			ts = append(ts, 5*r+rng.Int64N(4))
		}
		rng.Shuffle(len(ts), func(i, j int) { ts[i], ts[j] = ts[j], ts[i] })
		tb := array.NewTimestampBuilder(memory.DefaultAllocator, &arrow.TimestampType{Unit: arrow.Microsecond})
		kb := array.NewInt64Builder(memory.DefaultAllocator)
		for _, v := range ts {
			tb.Append(arrow.Timestamp(v))
			if rng.IntN(6) == 0 {
				kb.AppendNull()
			} else {
				kb.Append(rng.Int64N(100) - 30)
			}
		}
		rec := array.NewRecordBatch(types.ArrowSchema(tsCols), []arrow.Array{tb.NewArray(), kb.NewArray()}, int64(len(ts)))
		in.log = append(in.log, roundBatch{sub: s, rec: rec})
	}
	close(in.changed)
	in.changed = make(chan struct{})
}

func roundPos(at int) []byte { return binary.AppendUvarint([]byte{0x11}, uint64(at)) }

func (in *roundInputs) OpenSourceSplit(_, _ uint32, pos []byte, split, splits int, _ func(error)) (SourceReader, error) {
	at := 0
	if len(pos) > 1 {
		v, k := binary.Uvarint(pos[1:])
		if k <= 0 {
			return SourceReader{}, fmt.Errorf("bad position %x", pos)
		}
		at = int(v)
	}
	var mu sync.Mutex
	cur := at
	mine := func(b roundBatch) bool { return b.sub%splits == split }
	run := func(ctx context.Context, emit func(arrow.RecordBatch) error) error {
		for {
			in.mu.Lock()
			var b *roundBatch
			for at < len(in.log) && b == nil {
				if mine(in.log[at]) {
					b = &in.log[at]
				}
				at++
			}
			wait := in.changed
			in.mu.Unlock()
			if b == nil {
				select {
				case <-wait:
					continue
				case <-ctx.Done():
					return nil
				}
			}
			mu.Lock()
			cur = at
			mu.Unlock()
			if err := emit(b.rec); err != nil {
				return err
			}
		}
	}
	position := func() []byte {
		mu.Lock()
		defer mu.Unlock()
		return roundPos(cur)
	}
	end := func(context.Context) ([]byte, error) {
		in.mu.Lock()
		defer in.mu.Unlock()
		for i := len(in.log) - 1; i >= 0; i-- {
			if mine(in.log[i]) {
				return roundPos(i + 1), nil
			}
		}
		return nil, nil
	}
	return SourceReader{Run: run, Position: position, InputEnd: end}, nil
}

func (in *roundInputs) OpenSource(oid uint32, onErr func(error)) (RunFunc, bool, error) {
	r, err := in.OpenSourceSplit(0, oid, nil, 0, 1, onErr)
	return r.Run, false, err
}

func (in *roundInputs) OpenSourceAt(oid uint32, pos []byte, onErr func(error)) (RunFunc, func() []byte, bool, error) {
	r, err := in.OpenSourceSplit(0, oid, pos, 0, 1, onErr)
	return r.Run, r.Position, false, err
}

// OpenSourceReader gives one reader its InputEnd too (FLUSH waits for it).
func (in *roundInputs) OpenSourceReader(job, oid uint32, pos []byte, onErr func(error)) (SourceReader, error) {
	return in.OpenSourceSplit(job, oid, pos, 0, 1, onErr)
}

// roundRuntime is a runtime with checkpoints over in: one reader then
// opens through OpenSourceReader, whose InputEnd FLUSH waits for.
func roundRuntime(t *testing.T, in *roundInputs) *Runtime {
	store, _ := openStore(t, t.TempDir())
	rt := New(Config{BarrierInterval: -1, CheckpointInterval: -1, Checkpoints: store}, in)
	t.Cleanup(rt.Close)
	return rt
}

// windowGlobal is SELECT window_start, window_end, count(*), count(k),
// sum(k), min(k), max(k), avg(k) FROM TUMBLE(src, ts, 10 µs) GROUP BY window_start
// (emit as given) over the round source read by n readers, planned in
// two phases (planner.TwoPhaseWindowOf) unless single.
func windowGlobal(n int, emit stream.EmitSpec, single bool) JobSpec {
	scan := &stream.Scan{Rel: 1, Name: "src", Kind: stream.ScanSource, Cols: tsCols, AppendOnly: true,
		Watermark: &stream.ScanWatermark{Col: 0, Expr: minus(4)}, Splittable: true, SplitsInOrder: true}
	if n > 1 {
		scan.Readers = n
	}
	k := &expr.ColRef{Idx: 1, T: types.TInt8, Name: "k"}
	aggs := []stream.AggSpec{{Kind: stream.AggCountStar}, {Kind: stream.AggCount, Arg: k}, {Kind: stream.AggSum, Arg: k},
		{Kind: stream.AggMin, Arg: k}, {Kind: stream.AggMax, Arg: k}, {Kind: stream.AggAvg, Arg: k}}
	cols := []types.Column{{Name: "window_start", Type: types.TTimestamp}, {Name: "window_end", Type: types.TTimestamp}}
	for i, a := range aggs {
		t, err := a.ResultType()
		if err != nil {
			panic(err)
		}
		cols = append(cols, types.Column{Name: fmt.Sprintf("a%d", i), Type: t})
	}
	w := &stream.WindowAgg{Input: scan, Window: stream.WindowSpec{Kind: stream.Tumble, TimeCol: 0, Size: 10},
		Aggs: aggs, Emit: emit, Cols: cols, AppendOnly: true}
	var plan stream.Node = w
	if tp := planner.TwoPhaseWindowOf(w, stream.Width(scan)); tp != nil && !single {
		plan = tp
	}
	return JobSpec{ID: 7, Name: "wglobal", Plan: plan, Cols: plan.Columns()}
}

var windowEmits = map[string]stream.EmitSpec{
	"on-update":    {Mode: stream.EmitOnUpdate},
	"window-close": {Mode: stream.EmitOnWindowClose},
	"close-delay":  {Mode: stream.EmitOnWindowClose, Delay: 7},
}

// countOps counts the running operators named name.
func countOps(j *Job, name string) int {
	c := 0
	for _, op := range j.Operators() {
		if op.Name == name {
			c++
		}
	}
	return c
}

// TestTwoPhaseWindowAggEqualsSerial: a TUMBLE aggregation keyed by its
// window only (avg as a partial sum and count among its aggregates), over a source read by 3 and 8 readers, runs as a partial
// WindowAgg per reader and one final, and gives epoch by epoch the view
// of one reader and one instance, under ON UPDATE (the partials' update
// pairs retract in the final), ON WINDOW CLOSE and ON WINDOW CLOSE WITH
// DELAY.
func TestTwoPhaseWindowAggEqualsSerial(t *testing.T) {
	for name, emit := range windowEmits {
		t.Run(name, func(t *testing.T) {
			for seed := range uint64(3) {
				var want [][]string
				for _, n := range []int{1, 3, 8} {
					in := newRoundInputs()
					rt := roundRuntime(t, in)
					spec := windowGlobal(n, emit, false)
					if _, ok := spec.Plan.(*stream.Project); ok != (n > 1) {
						t.Fatalf("parallelism %d: two phases %v", n, ok)
					}
					j, err := rt.StartJob(spec)
					if err != nil {
						t.Fatal(err)
					}
					rng := rand.New(rand.NewPCG(seed, 17))
					var got [][]string
					for r := range int64(12) {
						in.push(r, rng)
						flush(t, rt)
						got = append(got, anyRows(t, j))
					}
					if n > 1 {
						if c := countOps(j, "WindowAgg"); c != n+1 {
							t.Fatalf("parallelism %d: %d WindowAgg operators, want %d", n, c, n+1)
						}
					}
					rt.Close()
					if n == 1 {
						want = got
						if len(want[len(want)-1]) < 3 {
							t.Fatalf("too few windows to test anything: %v", want[len(want)-1])
						}
						continue
					}
					for e := range want {
						if !slices.Equal(got[e], want[e]) {
							t.Fatalf("seed %d, parallelism %d, epoch %d: %v, want %v", seed, n, e, got[e], want[e])
						}
					}
				}
			}
		})
	}
}

// TestTwoPhaseWindowAggNotPlanned: a HOP, ALLOW LATENESS, EMIT EVERY, a
// float avg or sum and DISTINCT keep the window aggregation out of two
// phases.
func TestTwoPhaseWindowAggNotPlanned(t *testing.T) {
	base := windowGlobal(3, stream.EmitSpec{Mode: stream.EmitOnWindowClose}, true).Plan.(*stream.WindowAgg)
	k := &expr.ColRef{Idx: 1, T: types.TInt8, Name: "k"}
	kf, err := expr.NewCast(k, types.TFloat8, true)
	if err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(w *stream.WindowAgg){
		"hop":       func(w *stream.WindowAgg) { w.Window = stream.WindowSpec{Kind: stream.Hop, Size: 10, Slide: 5} },
		"lateness":  func(w *stream.WindowAgg) { w.Emit.AllowLateness = 5 },
		"every":     func(w *stream.WindowAgg) { w.Emit = stream.EmitSpec{Mode: stream.EmitEvery, Every: 5} },
		"avg float": func(w *stream.WindowAgg) { w.Aggs[2] = stream.AggSpec{Kind: stream.AggAvg, Arg: kf} },
		"float":     func(w *stream.WindowAgg) { w.Aggs[2] = stream.AggSpec{Kind: stream.AggSum, Arg: kf} },
		"distinct":  func(w *stream.WindowAgg) { w.Aggs[1].Distinct = true },
		// readers whose rows may come behind their own watermark (Kafka)
		"unordered splits": func(w *stream.WindowAgg) {
			sc := *w.Input.(*stream.Scan)
			sc.SplitsInOrder = false
			w.Input = &sc
		},
	} {
		w := *base
		w.Aggs = slices.Clone(base.Aggs)
		change(&w)
		if tp := planner.TwoPhaseWindowOf(&w, 3); tp != nil {
			t.Errorf("%s: planned in two phases: %s", name, tp.Explain())
		}
	}
	if planner.TwoPhaseWindowOf(base, 3) == nil {
		t.Fatal("the base case is not planned in two phases")
	}
}

// TestTwoPhaseWindowAggRestart: the two-phase window aggregation
// checkpoints each partial under its instance's id and the final; a
// restart at the same parallelism resumes from every partial's state
// (open windows with rows on both sides of the checkpoint), a restart
// at another parallelism rebuilds the view from its inputs naming the
// partial phase; either way the view then equals an uninterrupted run
// at parallelism 1.
func TestTwoPhaseWindowAggRestart(t *testing.T) {
	for name, emit := range windowEmits {
		for _, ns := range [][2]int{{3, 3}, {3, 2}, {2, 8}, {4, 1}} {
			t.Run(fmt.Sprintf("%s/%d-%d", name, ns[0], ns[1]), func(t *testing.T) {
				dir := t.TempDir()
				in := newRoundInputs()
				rng := rand.New(rand.NewPCG(uint64(ns[0]), uint64(ns[1])))
				store, _ := openStore(t, dir)
				rt := New(Config{BarrierInterval: -1, CheckpointInterval: -1, Checkpoints: store}, in)
				if _, err := rt.StartJob(windowGlobal(ns[0], emit, false)); err != nil {
					t.Fatal(err)
				}
				r := int64(0)
				for ; r < 5; r++ {
					in.push(r, rng)
					flush(t, rt)
				}
				checkpointNow(t, rt)
				for ; r < 7; r++ {
					in.push(r, rng)
				}
				rt.Close()

				store2, cp := openStore(t, dir)
				rt2 := New(Config{BarrierInterval: -1, CheckpointInterval: -1, Checkpoints: store2, Recovered: cp}, in)
				defer rt2.Close()
				j, err := rt2.StartJob(windowGlobal(ns[1], emit, false))
				if err != nil {
					t.Fatal(err)
				}
				rt2.EndRecovery()
				for ; r < 10; r++ {
					in.push(r, rng)
					flush(t, rt2)
				}
				checkTwoPhaseRecovery(t, j.Recovery(), ns[0], ns[1])
				rt3 := roundRuntime(t, in)
				defer rt3.Close()
				j3, err := rt3.StartJob(windowGlobal(1, emit, false))
				if err != nil {
					t.Fatal(err)
				}
				flush(t, rt3)
				got, want := anyRows(t, j), anyRows(t, j3)
				if !slices.Equal(got, want) || len(want) < 3 {
					t.Fatalf("after the restart %v, want %v", got, want)
				}
			})
		}
	}
}

// TestTwoPhaseAvgEqualsSerial: avg of an integer and of a numeric column
// over a parallel GROUP BY under random inserts and deletes runs in two
// phases (a partial sum and count each) and gives, epoch by epoch, the
// digits of the serial plan's avg at parallelism 3 and 8.
func TestTwoPhaseAvgEqualsSerial(t *testing.T) {
	n := &expr.ColRef{Idx: 1, T: types.TInt8, Name: "n"}
	s := &expr.ColRef{Idx: 2, T: types.TNumeric, Name: "s"}
	avgs := []stream.AggSpec{{Kind: stream.AggAvg, Arg: n}, {Kind: stream.AggAvg, Arg: s}}
	for seed := range uint64(3) {
		var want [][]string
		for _, par := range []int{1, 3, 8} {
			tbl := &fakeTable{rows: []int64{1, 2, 2, 3}}
			rt := newRuntime(t, &fakeInputs{tables: map[uint32]*fakeTable{100: tbl}})
			plan := globalOver(parAgg(par).Plan, false, avgs...)
			if _, ok := plan.(*stream.Project); ok != (par > 1) {
				t.Fatalf("parallelism %d: two phases %v", par, ok)
			}
			j, err := rt.StartJob(JobSpec{ID: 3, Name: "avg", Plan: plan, Cols: plan.Columns()})
			if err != nil {
				t.Fatal(err)
			}
			var got [][]string
			randomWrites(tbl, rand.New(rand.NewPCG(seed, 19)), 15, func() {
				flush(t, rt)
				got = append(got, anyRows(t, j))
			})
			rt.Close()
			if par == 1 {
				want = got
				if !strings.Contains(strings.Join(want[len(want)-1], ""), ".") {
					t.Fatalf("no fractional avg to compare: %v", want[len(want)-1])
				}
				continue
			}
			for e := range want {
				if !slices.Equal(got[e], want[e]) {
					t.Fatalf("seed %d, parallelism %d, epoch %d: %v, want %v", seed, par, e, got[e], want[e])
				}
			}
		}
	}
}

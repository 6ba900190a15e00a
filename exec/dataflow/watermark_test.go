package dataflow

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/types"
)

var tsCols = []types.Column{{Name: "ts", Type: types.TTimestamp}, {Name: "k", Type: types.TInt8}}

// tsRec is a batch of (ts, k) rows with k = ts; a negative ts is NULL.
func tsRec(ts ...int64) arrow.RecordBatch {
	tb := array.NewTimestampBuilder(memory.DefaultAllocator, &arrow.TimestampType{Unit: arrow.Microsecond})
	kb := array.NewInt64Builder(memory.DefaultAllocator)
	for _, v := range ts {
		if v < 0 {
			tb.AppendNull()
		} else {
			tb.Append(arrow.Timestamp(v))
		}
		kb.Append(v)
	}
	return array.NewRecordBatch(types.ArrowSchema(tsCols), []arrow.Array{tb.NewArray(), kb.NewArray()}, int64(len(ts)))
}

// tsTable is an in-memory table of tsCols rows with a change feed: each
// insert call is one committed write.
type tsTable struct {
	mu   sync.Mutex
	rows []arrow.RecordBatch
	log  []Delta
}

func (t *tsTable) insert(ts ...int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := tsRec(ts...)
	t.rows = append(t.rows, r)
	t.log = append(t.log, Delta{Inserted: []arrow.RecordBatch{r}})
}

// tsSource is a source whose batches the test pushes.
type tsSource struct{ batches chan arrow.RecordBatch }

type tsInputs struct {
	tables  map[uint32]*tsTable
	sources map[uint32]*tsSource
}

func (in *tsInputs) SubscribeTable(oid uint32) ([]arrow.RecordBatch, Feed, error) {
	t := in.tables[oid]
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.rows), &fakeFeed{mu: &t.mu, log: &t.log, at: len(t.log)}, nil
}

func (in *tsInputs) TablePosition(oid uint32) Position {
	t := in.tables[oid]
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.log)
}

func (in *tsInputs) OpenSource(oid uint32, _ func(error)) (RunFunc, bool, error) {
	s := in.sources[oid]
	return func(ctx context.Context, emit func(arrow.RecordBatch) error) error {
		for {
			select {
			case r := <-s.batches:
				if err := emit(r); err != nil {
					return err
				}
			case <-ctx.Done():
				return nil
			}
		}
	}, false, nil
}

// recorder passes its input on and records the watermarks and the rows'
// largest ts, checking on the way that no watermark moves back and no row
// passed since a watermark is below it... for inputs where that holds.
type recorder struct {
	stream.Node
	mu    sync.Mutex
	marks []int64
	maxTS int64 // the largest ts of the rows so far
	bad   error
}

func (r *recorder) Inputs() []stream.Node { return []stream.Node{r.Node} }

func (r *recorder) Start(env *stream.Env, in []<-chan stream.Message) <-chan stream.Message {
	out := make(chan stream.Message, stream.ChannelSize)
	go func() {
		defer close(out)
		for m := range in[0] {
			r.mu.Lock()
			switch m.Kind {
			case stream.KindChunk:
				if v, ok := maxMicros(m.Chunk.Rec.Column(0)); ok {
					r.maxTS = max(r.maxTS, v)
				}
			case stream.KindWatermark:
				if n := len(r.marks); n > 0 && m.Watermark.Value <= r.marks[n-1] && r.bad == nil {
					r.bad = fmt.Errorf("watermark %d after %d", m.Watermark.Value, r.marks[n-1])
				}
				r.marks = append(r.marks, m.Watermark.Value)
			}
			r.mu.Unlock()
			select {
			case out <- m:
			case <-env.Ctx.Done():
				return
			}
		}
	}()
	return out
}

func (r *recorder) state() ([]int64, int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.marks), r.maxTS, r.bad
}

func tsScan(oid uint32, kind stream.ScanKind, w *stream.ScanWatermark) *stream.Scan {
	return &stream.Scan{Rel: oid, Name: fmt.Sprint("r", oid), Kind: kind, Cols: tsCols, AppendOnly: true, Watermark: w}
}

// minus is ts - d µs as a bound expression.
func minus(d int64) expr.Expr {
	e, err := expr.NewBinary("-", &expr.ColRef{Idx: 0, T: types.TTimestamp, Name: "ts"},
		&expr.Const{V: types.IntervalValue{Micros: d}, T: types.TInterval})
	if err != nil {
		panic(err)
	}
	return e
}

func mark(t *testing.T, j *Job) int64 {
	t.Helper()
	v, ok := j.Watermark()
	if !ok {
		return math.MinInt64
	}
	return v
}

func TestTableWatermarkIsMaxAndNeverBack(t *testing.T) {
	tbl := &tsTable{}
	tbl.insert(10, 30, 20)
	tbl.insert(5, -1)
	rt := newRuntime(t, &tsInputs{tables: map[uint32]*tsTable{1: tbl}})
	rec := &recorder{Node: tsScan(1, stream.ScanTable, &stream.ScanWatermark{Col: 0, Expr: minus(3)})}
	j, err := rt.StartJob(JobSpec{ID: 10, Name: "v", Plan: rec, Cols: tsCols})
	if err != nil {
		t.Fatal(err)
	}
	flush(t, rt)
	// The backfill is one batch: its maximum, once.
	if got, _, _ := rec.state(); fmt.Sprint(got) != "[27]" || mark(t, j) != 27 {
		t.Fatalf("after backfill: marks %v, view %d", got, mark(t, j))
	}
	for _, step := range []struct {
		rows []int64
		want string
	}{
		{[]int64{25}, "[27]"},            // below: nothing sent
		{[]int64{-1}, "[27]"},            // NULL: nothing
		{[]int64{29, 50, 40}, "[27 47]"}, // max of the write
		{[]int64{51}, "[27 47 48]"},
	} {
		tbl.insert(step.rows...)
		flush(t, rt)
		got, maxTS, bad := rec.state()
		if fmt.Sprint(got) != step.want || bad != nil {
			t.Fatalf("after %v: marks %v (%v)", step.rows, got, bad)
		}
		if w := got[len(got)-1]; w != maxTS-3 || mark(t, j) != w {
			t.Fatalf("after %v: watermark %d, max ts %d, view %d", step.rows, w, maxTS, mark(t, j))
		}
	}
	if c := j.Counters(); c.RowsIn != 11 || c.ViewRows != 11 || c.RowsOut != 11 || c.LateRows != 0 {
		t.Fatalf("counters %+v", c)
	}
}

func TestIdleTableWatermarkFollowsTheClock(t *testing.T) {
	tbl := &tsTable{}
	clock := NewManualClock(time.Unix(1000, 0))
	rt := New(Config{BarrierInterval: -1, Clock: clock}, &tsInputs{tables: map[uint32]*tsTable{1: tbl}})
	defer rt.Close()
	w := &stream.ScanWatermark{Col: 0, Expr: minus(0), IdleTimeout: 10 * time.Second}
	j, err := rt.StartJob(JobSpec{ID: 10, Name: "v", Plan: tsScan(1, stream.ScanTable, w), Cols: tsCols})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	advance := func(d time.Duration) {
		t.Helper()
		if err := rt.AdvanceClock(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	// No row yet: no watermark to move on, however long the wait.
	advance(time.Minute)
	if m := mark(t, j); m != math.MinInt64 {
		t.Fatalf("watermark %d before any row", m)
	}
	const s = int64(time.Second / time.Microsecond)
	tbl.insert(100 * s)
	flush(t, rt)
	advance(9 * time.Second) // not idle yet
	if m := mark(t, j); m != 100*s {
		t.Fatalf("watermark %d after 9s", m)
	}
	advance(time.Second) // idle for 10s: moves by the 10s elapsed since the row
	if m := mark(t, j); m != 110*s {
		t.Fatalf("watermark %d after 10s idle, want %d", m, 110*s)
	}
	advance(5 * time.Second)
	if m := mark(t, j); m != 115*s {
		t.Fatalf("watermark %d after 15s idle", m)
	}
	// A late row resets the idle time but does not move the watermark back.
	tbl.insert(101 * s)
	flush(t, rt)
	advance(9 * time.Second)
	if m := mark(t, j); m != 115*s {
		t.Fatalf("watermark %d after a late row", m)
	}
	advance(2 * time.Second) // 11s idle after the row: 115s + 11s
	if m := mark(t, j); m != 126*s {
		t.Fatalf("watermark %d, want %d", m, 126*s)
	}
}

func TestAdvanceClockNeedsManualClock(t *testing.T) {
	rt := newRuntime(t, &tsInputs{})
	if err := rt.AdvanceClock(context.Background(), time.Second); err == nil {
		t.Fatal("the wall clock was advanced")
	}
}

func TestUnionWatermarkIsTheMinimum(t *testing.T) {
	a, b := &tsTable{}, &tsTable{}
	rt := newRuntime(t, &tsInputs{tables: map[uint32]*tsTable{1: a, 2: b}})
	w := &stream.ScanWatermark{Col: 0, Expr: minus(0)}
	u := &stream.Union{Ins: []stream.Node{tsScan(1, stream.ScanTable, w), tsScan(2, stream.ScanTable, w)}, Cols: tsCols}
	j, err := rt.StartJob(JobSpec{ID: 10, Name: "v", Plan: u, Cols: tsCols})
	if err != nil {
		t.Fatal(err)
	}
	a.insert(50)
	flush(t, rt)
	if m := mark(t, j); m != math.MinInt64 {
		t.Fatalf("watermark %d while one input has none", m)
	}
	b.insert(20)
	flush(t, rt)
	if m := mark(t, j); m != 20 {
		t.Fatalf("watermark %d, want 20", m)
	}
	b.insert(70)
	flush(t, rt)
	if m := mark(t, j); m != 50 {
		t.Fatalf("watermark %d, want 50", m)
	}
}

func TestSourceWatermarkAndViewOnView(t *testing.T) {
	src := &tsSource{batches: make(chan arrow.RecordBatch)}
	rt := newRuntime(t, &tsInputs{sources: map[uint32]*tsSource{1: src}})
	w := &stream.ScanWatermark{Col: 0, Expr: minus(1)}
	up, err := rt.StartJob(JobSpec{ID: 10, Name: "up", Plan: tsScan(1, stream.ScanSource, w), Cols: tsCols})
	if err != nil {
		t.Fatal(err)
	}
	src.batches <- tsRec(7, 3)
	// The batch may land in this epoch or the next.
	for i := 0; mark(t, up) != 6; i++ {
		if i == 100 {
			t.Fatalf("source watermark %d, want 6", mark(t, up))
		}
		flush(t, rt)
	}
	// A view on the view starts with its snapshot and its watermark, then
	// follows both.
	down, err := rt.StartJob(JobSpec{ID: 11, Name: "down", Plan: &stream.Scan{Rel: 10, Name: "up", Kind: stream.ScanView, Cols: tsCols}, Cols: tsCols})
	if err != nil {
		t.Fatal(err)
	}
	flush(t, rt)
	if m := mark(t, down); m != 6 {
		t.Fatalf("downstream watermark %d, want 6", m)
	}
	src.batches <- tsRec(20)
	for i := 0; mark(t, down) != 19; i++ {
		if i == 100 {
			t.Fatalf("downstream watermark %d, want 19", mark(t, down))
		}
		flush(t, rt)
	}
	if c := down.Counters(); c.RowsIn != 3 || c.ViewRows != 3 {
		t.Fatalf("downstream counters %+v", c)
	}
}

// dropper hands every row it gets to env.OnLate instead of passing it on.
type dropper struct{ stream.Node }

func (d *dropper) Inputs() []stream.Node { return []stream.Node{d.Node} }

func (d *dropper) Start(env *stream.Env, in []<-chan stream.Message) <-chan stream.Message {
	out := make(chan stream.Message, stream.ChannelSize)
	go func() {
		defer close(out)
		for m := range in[0] {
			if m.Kind == stream.KindChunk {
				env.OnLate(m.Chunk.Rec, 0)
				continue
			}
			select {
			case out <- m:
			case <-env.Ctx.Done():
				return
			}
		}
	}()
	return out
}

// lateFunc is a LateStore without checkpoints: one batch per Store.
type lateFunc func(rows arrow.RecordBatch, wm int64) error

func (f lateFunc) Store(rows []arrow.RecordBatch, marks []int64, _ uint64) error {
	for i, r := range rows {
		if err := f(r, marks[i]); err != nil {
			return err
		}
	}
	return nil
}

func (f lateFunc) Stored() (uint64, error) { return 0, nil }

func TestLateRowsAreCountedAndStored(t *testing.T) {
	tbl := &tsTable{}
	rt := newRuntime(t, &tsInputs{tables: map[uint32]*tsTable{1: tbl}})
	var mu sync.Mutex
	var stored []string
	fail := false
	spec := JobSpec{ID: 10, Name: "v", Cols: tsCols,
		Plan: &dropper{tsScan(1, stream.ScanTable, &stream.ScanWatermark{Col: 0, Expr: minus(0)})},
		LateRows: lateFunc(func(rows arrow.RecordBatch, wm int64) error {
			mu.Lock()
			defer mu.Unlock()
			if fail {
				return errors.New("disk full")
			}
			stored = append(stored, fmt.Sprintf("%d@%d", rows.NumRows(), wm))
			return nil
		})}
	j, err := rt.StartJob(spec)
	if err != nil {
		t.Fatal(err)
	}
	tbl.insert(5, 6)
	flush(t, rt)
	tbl.insert(9)
	flush(t, rt) // waits for the late rows to be stored
	mu.Lock()
	if len(stored) != 2 {
		t.Fatalf("stored after FLUSH: %v", stored)
	}
	fail = true
	mu.Unlock()
	tbl.insert(1)
	flush(t, rt)
	mu.Lock()
	got := fmt.Sprint(stored)
	mu.Unlock()
	// The view had no watermark when the first rows dropped (it comes after
	// them), then 6; the third write failed and its row counts as lost.
	if c := j.Counters(); c.LateRows != 4 || c.LateLost != 1 || got != fmt.Sprintf("[2@%d 1@6]", int64(math.MinInt64)) {
		t.Fatalf("counters %+v, stored %s", c, got)
	}
}

func TestManualClockAfter(t *testing.T) {
	c := NewManualClock(time.Unix(0, 0))
	a, b, now := c.After(2*time.Second), c.After(time.Second), c.After(0)
	if got := <-now; !got.Equal(time.Unix(0, 0)) {
		t.Fatalf("After(0) = %v", got)
	}
	c.Advance(time.Second)
	select {
	case <-b:
	default:
		t.Fatal("After(1s) did not fire at 1s")
	}
	select {
	case <-a:
		t.Fatal("After(2s) fired at 1s")
	default:
	}
	c.Advance(-time.Hour) // ignored
	c.Advance(time.Second)
	if got := <-a; !got.Equal(time.Unix(2, 0)) || c.Pending() != 0 {
		t.Fatalf("After(2s) = %v, %d pending", got, c.Pending())
	}
}

// BenchmarkWatermarkObserve: the reader's cost of a watermark per batch
// of 1024 rows (ts - 4 s, then the maximum).
func BenchmarkWatermarkObserve(b *testing.B) {
	ts := make([]int64, 1024)
	for i := range ts {
		ts[i] = int64(i) * 1000
	}
	r := tsRec(ts...)
	w := newWMTracker(&stream.ScanWatermark{Col: 0, Expr: minus(4_000_000)}, &expr.Context{Ctx: context.Background()}, stream.WallClock{}, func(error) {})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w.observe(r)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1024, "ns/row")
}

// TestWatermarkFastPathAgrees: for a monotone expression the tracker
// evaluates only the row with the largest time; it must agree with
// evaluating every row, NULLs included.
func TestWatermarkFastPathAgrees(t *testing.T) {
	ctx := &expr.Context{Ctx: context.Background()}
	plus, err := expr.NewBinary("+", &expr.Const{V: types.IntervalValue{Days: 1}, T: types.TInterval}, &expr.ColRef{Idx: 0, T: types.TTimestamp, Name: "ts"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []expr.Expr{minus(7), plus, &expr.ColRef{Idx: 0, T: types.TTimestamp, Name: "ts"}} {
		fast := newWMTracker(&stream.ScanWatermark{Col: 0, Expr: e}, ctx, stream.WallClock{}, func(err error) { t.Fatal(err) })
		slow := newWMTracker(&stream.ScanWatermark{Col: 0, Expr: e}, ctx, stream.WallClock{}, func(err error) { t.Fatal(err) })
		if !fast.mono {
			t.Fatalf("%s is not seen as monotone", e)
		}
		slow.mono = false
		for i, batch := range [][]int64{{5, -1, 9, 2}, {-1, -1}, {3}, {100, 100, -1, 50}, {}} {
			r := tsRec(batch...)
			fast.observe(r)
			slow.observe(r)
			if fast.cur != slow.cur {
				t.Fatalf("%s, batch %d: fast %d, slow %d", e, i, fast.cur, slow.cur)
			}
		}
	}
	k := &expr.ColRef{Idx: 1, T: types.TInt8, Name: "k"}
	notMono, err := expr.NewBinary("-", &expr.Const{V: types.IntervalValue{Days: 1}, T: types.TInterval}, &expr.ColRef{Idx: 0, T: types.TTimestamp, Name: "ts"})
	if err == nil && monotone(notMono, 0) {
		t.Error("interval - ts is monotone?")
	}
	if monotone(k, 0) {
		t.Error("another column is monotone in ts?")
	}
}

package stream

import (
	"context"
	"fmt"
	"sort"
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

// fakeClock is a Clock that moves only when the test advances it.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	waits []fakeWait
}

type fakeWait struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waits = append(c.waits, fakeWait{c.now.Add(d), ch})
	return ch
}

// Advance moves the clock by d, firing the timers that come due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.waits[:0]
	for _, w := range c.waits {
		if !w.at.After(c.now) {
			w.ch <- c.now
		} else {
			kept = append(kept, w)
		}
	}
	c.waits = kept
}

// winIn is the input of the simple tests: a key, an event time, a value.
var winIn = []types.Column{{Name: "k", Type: types.TInt8}, {Name: "ts", Type: types.TTimestamp}, {Name: "v", Type: types.TInt8}}

type winRow struct{ k, ts, v int64 }

func winChunk(ops []Op, rows ...winRow) *Chunk {
	kb := array.NewInt64Builder(memory.DefaultAllocator)
	tb := array.NewTimestampBuilder(memory.DefaultAllocator, &arrow.TimestampType{Unit: arrow.Microsecond})
	vb := array.NewInt64Builder(memory.DefaultAllocator)
	for _, r := range rows {
		kb.Append(r.k)
		tb.Append(arrow.Timestamp(r.ts))
		vb.Append(r.v)
	}
	return &Chunk{Rec: array.NewRecordBatch(types.ArrowSchema(winIn),
		[]arrow.Array{kb.NewArray(), tb.NewArray(), vb.NewArray()}, int64(len(rows))), Ops: ops}
}

// winSource is a Node with given columns fed by the test.
type winSource struct{ cols []types.Column }

func (s *winSource) Columns() []types.Column                     { return s.cols }
func (s *winSource) Inputs() []Node                              { return nil }
func (s *winSource) Explain() string                             { return "test source" }
func (s *winSource) Start(*Env, []<-chan Message) <-chan Message { return nil }

// simpleWinAgg is SELECT window_start, window_end, k, count(*), sum(v)
// GROUP BY window, k over winIn.
func simpleWinAgg(ws WindowSpec, emit EmitSpec) *WindowAgg {
	ws.TimeCol = 1
	k := &expr.ColRef{Idx: 0, T: types.TInt8, Name: "k"}
	v := &expr.ColRef{Idx: 2, T: types.TInt8, Name: "v"}
	return &WindowAgg{Input: &winSource{winIn}, Window: ws, Emit: emit, GroupBy: []expr.Expr{k},
		Aggs: []AggSpec{{Kind: AggCountStar}, {Kind: AggSum, Arg: v}},
		Cols: []types.Column{{Name: "window_start", Type: types.TTimestamp}, {Name: "window_end", Type: types.TTimestamp},
			{Name: "k", Type: types.TInt8}, {Name: "count", Type: types.TInt8}, {Name: "sum", Type: types.TNumeric}}}
}

// winHarness runs a WindowAgg through Start: the test sends messages, a
// goroutine collects the output, and barrier returns an epoch's output.
type winHarness struct {
	t     *testing.T
	w     *WindowAgg
	in    chan Message
	env   *Env
	clock *fakeClock
	epoch uint64

	mu   sync.Mutex
	got  []Message
	bars chan struct{}
	late int64

	view   map[string]string // (start, end, keys) -> row
	outWM  map[int]int64
	inputs int // rows sent
}

func newWinHarness(t *testing.T, w *WindowAgg) *winHarness { return newWinHarnessN(t, w, 1) }

// newWinHarnessN runs w as n instances behind a hash exchange on its
// GROUP BY columns (startParallel).
func newWinHarnessN(t *testing.T, w *WindowAgg, n int) *winHarness {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	h := &winHarness{t: t, w: w, in: make(chan Message), clock: newFakeClock(), bars: make(chan struct{}, 1),
		view: map[string]string{}, outWM: map[int]int64{}}
	h.env = NewEnv(ctx, expr.Context{})
	h.env.Clock = h.clock
	h.env.OnLate = func(rows arrow.RecordBatch, _ uint64) {
		h.mu.Lock()
		h.late += rows.NumRows()
		h.mu.Unlock()
	}
	var keys []int
	var ts []types.T
	for _, g := range w.GroupBy {
		if c, ok := g.(*expr.ColRef); ok {
			keys, ts = append(keys, c.Idx), append(ts, c.T)
		}
	}
	if len(keys) == 0 {
		n = 1
	}
	out := startParallel(h.env, w, keys, ts, n, h.in)
	go func() {
		for m := range out {
			h.mu.Lock()
			h.got = append(h.got, m)
			h.mu.Unlock()
			if m.Kind == KindBarrier {
				h.bars <- struct{}{}
			}
		}
		close(h.bars)
	}()
	t.Cleanup(func() { close(h.in) })
	return h
}

func (h *winHarness) send(m Message) {
	h.t.Helper()
	select {
	case h.in <- m:
	case <-h.env.Ctx.Done():
		h.t.Fatalf("operator stopped: %v", h.env.Err())
	}
}

func (h *winHarness) rows(ops []Op, rows ...winRow) {
	h.send(ChunkMsg(winChunk(ops, rows...)))
}

func (h *winHarness) watermark(v int64) {
	h.send(WatermarkMsg(Watermark{Col: h.w.Window.TimeCol, Value: v}))
}

// barrier ends an epoch and returns its output messages (before the
// barrier), applied to the view.
func (h *winHarness) barrier() []Message {
	h.t.Helper()
	h.epoch++
	h.send(BarrierMsg(Barrier{Epoch: h.epoch}))
	if _, ok := <-h.bars; !ok {
		h.t.Fatalf("operator stopped: %v", h.env.Err())
	}
	h.mu.Lock()
	got := h.got
	h.got = nil
	h.mu.Unlock()
	if b := got[len(got)-1]; b.Kind != KindBarrier || b.Barrier.Epoch != h.epoch {
		h.t.Fatalf("epoch %d ends with %+v", h.epoch, b)
	}
	got = got[:len(got)-1]
	for _, m := range got {
		switch m.Kind {
		case KindChunk:
			h.apply(m.Chunk)
		case KindWatermark:
			if v, ok := h.outWM[m.Watermark.Col]; ok && m.Watermark.Value < v {
				h.t.Fatalf("output watermark on column %d moved back from %d to %d", m.Watermark.Col, v, m.Watermark.Value)
			}
			h.outWM[m.Watermark.Col] = m.Watermark.Value
		}
	}
	return got
}

func (h *winHarness) lateCount() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.late
}

// apply applies a chunk to the view, checking that it is a valid
// changelog and respects the watermarks sent before it.
func (h *winHarness) apply(c *Chunk) {
	h.t.Helper()
	cols := h.w.Cols
	nk := 2 + len(h.w.GroupBy)
	for i := 0; i < c.Len(); i++ {
		for col, v := range h.outWM {
			if ts := int64(c.Rec.Column(col).(*array.Timestamp).Value(i)); ts < v {
				h.t.Fatalf("row %d has column %d = %d below the output watermark %d", i, col, ts, v)
			}
		}
		k := rowIdentity(c.Rec, i, cols, 0, nk)
		row := rowIdentity(c.Rec, i, cols, 0, len(cols))
		switch op := c.Op(i); op {
		case Insert, UpdateAfter:
			if _, ok := h.view[k]; ok {
				h.t.Fatalf("%v of %s whose key is in the view", op, showRow(c, i, cols))
			}
			if op == UpdateAfter && (i == 0 || c.Op(i-1) != UpdateBefore) {
				h.t.Fatalf("update-after without its update-before")
			}
			h.view[k] = row
		case Delete, UpdateBefore:
			if h.view[k] != row {
				h.t.Fatalf("%v of %s, which the view does not hold", op, showRow(c, i, cols))
			}
			delete(h.view, k)
		}
	}
}

// showRow renders row i of c as text (window times as numbers).
func showRow(c *Chunk, i int, cols []types.Column) string {
	parts := make([]string, len(cols))
	for j, col := range cols {
		v := types.ValueAt(c.Rec.Column(j), i, col.Type)
		if ts, ok := v.(types.TimestampValue); ok {
			parts[j] = fmt.Sprint(int64(ts))
		} else {
			parts[j] = fmt.Sprint(v)
		}
	}
	return strings.Join(parts, "|")
}

// outRows renders the output chunks' rows with their ops.
func outRows(msgs []Message, cols []types.Column) []string {
	var out []string
	for _, m := range msgs {
		if m.Kind != KindChunk {
			continue
		}
		for i := 0; i < m.Chunk.Len(); i++ {
			out = append(out, m.Chunk.Op(i).String()+" "+showRow(m.Chunk, i, cols))
		}
	}
	return out
}

func expectWinRows(t *testing.T, what string, msgs []Message, cols []types.Column, want ...string) {
	t.Helper()
	got := outRows(msgs, cols)
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%s:\ngot\n  %s\nwant\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestWindowAggTumbleOnWindowClose(t *testing.T) {
	w := simpleWinAgg(WindowSpec{Kind: Tumble, Size: 10}, EmitSpec{Mode: EmitOnWindowClose})
	h := newWinHarness(t, w)
	// windows start before the first row and at negative times (floor)
	h.rows(nil, winRow{1, -3, 5}, winRow{1, 4, 1}, winRow{2, 9, 2}, winRow{1, 10, 7})
	h.watermark(5)
	expectWinRows(t, "closed at 5", h.barrier(), w.Cols, "insert -10|0|1|1|5")
	h.watermark(9)
	expectWinRows(t, "nothing closed", h.barrier(), w.Cols)
	h.watermark(10)
	h.rows(nil, winRow{1, 9, 100}) // late: [0, 10) closed and freed at 10
	expectWinRows(t, "closed at 10", h.barrier(), w.Cols, "insert 0|10|1|1|1", "insert 0|10|2|1|2")
	if h.lateCount() != 1 {
		t.Fatalf("late rows %d", h.lateCount())
	}
	if h.outWM[1] != 10 || h.outWM[0] != 0 {
		t.Fatalf("output watermarks %v", h.outWM)
	}
	h.rows([]Op{Delete, Insert}, winRow{1, 10, 7}, winRow{3, 12, 4})
	h.watermark(25)
	expectWinRows(t, "closed at 25", h.barrier(), w.Cols, "insert 10|20|3|1|4")
}

func TestWindowAggHopPanes(t *testing.T) {
	// size 10, slide 4: panes of 2; offset 1
	w := simpleWinAgg(WindowSpec{Kind: Hop, Size: 10, Slide: 4, Offset: 1}, EmitSpec{Mode: EmitOnWindowClose})
	h := newWinHarness(t, w)
	h.rows(nil, winRow{1, 1, 1}, winRow{1, 4, 10}, winRow{1, 9, 100}, winRow{1, 10, 1000})
	h.watermark(13)
	// windows holding 1..10: [-7,3) [-3,7) [1,11) [5,15) [9,19); closed: end <= 13
	expectWinRows(t, "hop", h.barrier(), w.Cols,
		"insert -7|3|1|1|1", "insert -3|7|1|2|11", "insert 1|11|1|4|1111")
	h.watermark(100)
	expectWinRows(t, "hop rest", h.barrier(), w.Cols, "insert 5|15|1|2|1100", "insert 9|19|1|2|1100")
}

func TestWindowAggCumulate(t *testing.T) {
	// step 3, size 10: windows [0,3) [0,6) [0,9) [0,10) in period [0,10)
	w := simpleWinAgg(WindowSpec{Kind: Cumulate, Size: 10, Slide: 3}, EmitSpec{Mode: EmitOnUpdate})
	h := newWinHarness(t, w)
	h.rows(nil, winRow{1, 1, 1}, winRow{1, 7, 10}, winRow{1, 9, 100}, winRow{1, 10, 1000})
	expectWinRows(t, "cumulate", h.barrier(), w.Cols,
		"insert 0|3|1|1|1", "insert 0|6|1|1|1", "insert 0|9|1|2|11", "insert 0|10|1|3|111",
		"insert 10|13|1|1|1000", "insert 10|16|1|1|1000", "insert 10|19|1|1|1000", "insert 10|20|1|1|1000")
	h.rows([]Op{Delete}, winRow{1, 7, 10})
	expectWinRows(t, "cumulate retraction", h.barrier(), w.Cols,
		"update_before 0|9|1|2|11", "update_after 0|9|1|1|1",
		"update_before 0|10|1|3|111", "update_after 0|10|1|2|101")
}

func TestWindowAggSessionMerge(t *testing.T) {
	w := simpleWinAgg(WindowSpec{Kind: Session, Gap: 5}, EmitSpec{Mode: EmitOnUpdate})
	h := newWinHarness(t, w)
	h.rows(nil, winRow{1, 0, 1}, winRow{1, 10, 2})
	expectWinRows(t, "two sessions", h.barrier(), w.Cols, "insert 0|5|1|1|1", "insert 10|15|1|1|2")
	h.rows(nil, winRow{1, 4, 4}, winRow{1, 8, 8}) // bridges them
	expectWinRows(t, "merged", h.barrier(), w.Cols,
		"update_before 0|5|1|1|1", "update_after 0|15|1|4|15", "delete 10|15|1|1|2")
	h.rows([]Op{Delete}, winRow{1, 8, 8}) // splits again: 0, 4 | 10
	expectWinRows(t, "split", h.barrier(), w.Cols,
		"update_before 0|15|1|4|15", "update_after 0|9|1|2|5", "insert 10|15|1|1|2")
	h.watermark(9)
	h.rows(nil, winRow{1, 3, 100}) // 3+5 <= 9: late
	expectWinRows(t, "freed", h.barrier(), w.Cols)
	if h.lateCount() != 1 {
		t.Fatalf("late rows %d", h.lateCount())
	}
	h.rows(nil, winRow{1, 5, 100}) // within gap of the freed session: a session of its own
	expectWinRows(t, "after free", h.barrier(), w.Cols, "insert 5|10|1|1|100")
	h.rows(nil, winRow{1, 7, 1000}) // merges [5, 10) and [10, 15)
	expectWinRows(t, "merged again", h.barrier(), w.Cols,
		"update_before 5|10|1|1|100", "update_after 5|15|1|3|1102", "delete 10|15|1|1|2")
}

// TestWindowAggLateBoundaries checks each boundary: a window [0, 10) with
// delay 2 and lateness 3 takes rows until the watermark reaches 15.
func TestWindowAggLateBoundaries(t *testing.T) {
	kinds := []struct {
		ws WindowSpec
		t  int64 // a time whose last window is [.., 10)
	}{
		{WindowSpec{Kind: Tumble, Size: 10}, 9},
		{WindowSpec{Kind: Hop, Size: 10, Slide: 5}, 4}, // pane [0, 5): windows [-5, 5) and [0, 10)
		{WindowSpec{Kind: Cumulate, Size: 10, Slide: 5}, 9},
		{WindowSpec{Kind: Session, Gap: 1}, 9}, // the session [9, 10)
	}
	for _, kind := range kinds {
		ws, ts := kind.ws, kind.t
		for _, wm := range []int64{14, 15} {
			t.Run(fmt.Sprintf("%s/%d", ws.Kind, wm), func(t *testing.T) {
				w := simpleWinAgg(ws, EmitSpec{Mode: EmitOnWindowClose, Delay: 2, AllowLateness: 3})
				h := newWinHarness(t, w)
				h.rows(nil, winRow{1, ts, 1})
				h.watermark(11) // [.., 10) closes at 12
				if got := outRows(h.barrier(), w.Cols); len(got) > 1 || (len(got) == 1 && strings.Contains(got[0], "|10|")) {
					t.Fatalf("before close: %v", got)
				}
				h.watermark(12)
				if got := outRows(h.barrier(), w.Cols); len(got) != 1 || !strings.HasSuffix(got[0], "|10|1|1|1") {
					t.Fatalf("at close: %v", got)
				}
				h.watermark(wm)
				h.rows(nil, winRow{1, ts, 5})
				got := outRows(h.barrier(), w.Cols)
				if wm == 14 {
					if h.lateCount() != 0 || len(got) != 2 || !strings.HasSuffix(got[1], "|10|1|2|6") {
						t.Fatalf("within lateness: late %d, %v", h.lateCount(), got)
					}
				} else if h.lateCount() != 1 || len(got) != 0 {
					t.Fatalf("after lateness: late %d, %v", h.lateCount(), got)
				}
				h.rows([]Op{Delete}, winRow{1, ts, 1}) // late only at 15
				h.barrier()
				if want := map[int64]int64{14: 0, 15: 2}[wm]; h.lateCount() != want {
					t.Fatalf("late retraction: %d late rows, want %d", h.lateCount(), want)
				}
			})
		}
	}
}

func TestWindowAggEarlyEvery(t *testing.T) {
	w := simpleWinAgg(WindowSpec{Kind: Tumble, Size: 10}, EmitSpec{Mode: EmitOnWindowClose, EarlyEvery: 1e6})
	h := newWinHarness(t, w)
	h.rows(nil, winRow{1, 1, 1})
	expectWinRows(t, "before the tick", h.barrier(), w.Cols)
	h.clock.Advance(time.Second)
	expectWinRows(t, "first tick", h.barrier(), w.Cols, "insert 0|10|1|1|1")
	h.rows(nil, winRow{1, 2, 2})
	expectWinRows(t, "between ticks", h.barrier(), w.Cols)
	h.clock.Advance(time.Second)
	expectWinRows(t, "second tick", h.barrier(), w.Cols, "update_before 0|10|1|1|1", "update_after 0|10|1|2|3")
	h.clock.Advance(time.Second)
	expectWinRows(t, "unchanged", h.barrier(), w.Cols)
	h.rows(nil, winRow{1, 3, 4})
	h.watermark(10)
	expectWinRows(t, "final", h.barrier(), w.Cols, "update_before 0|10|1|2|3", "update_after 0|10|1|3|7")
}

func TestWindowAggEvery(t *testing.T) {
	w := simpleWinAgg(WindowSpec{Kind: Tumble, Size: 10}, EmitSpec{Mode: EmitEvery, Every: 2e6})
	h := newWinHarness(t, w)
	h.rows(nil, winRow{1, 1, 1}, winRow{2, 1, 1})
	expectWinRows(t, "before the tick", h.barrier(), w.Cols)
	h.rows([]Op{Delete}, winRow{2, 1, 1})
	h.rows(nil, winRow{1, 2, 2})
	h.clock.Advance(time.Second)
	expectWinRows(t, "half a period", h.barrier(), w.Cols)
	h.clock.Advance(time.Second)
	expectWinRows(t, "tick: compacted", h.barrier(), w.Cols, "insert 0|10|1|2|3")
	h.rows(nil, winRow{1, 3, 3}, winRow{1, 15, 1})
	h.watermark(10) // frees [0, 10): its last change waits for the tick
	expectWinRows(t, "freed before the tick", h.barrier(), w.Cols)
	h.rows(nil, winRow{1, 4, 4}) // late
	h.clock.Advance(2 * time.Second)
	expectWinRows(t, "second tick", h.barrier(), w.Cols,
		"update_before 0|10|1|2|3", "update_after 0|10|1|3|6", "insert 10|20|1|1|1")
	if h.lateCount() != 1 {
		t.Fatalf("late rows %d", h.lateCount())
	}
}

// TestWindowAggStateBounded runs many windows and checks that the state
// of closed windows is freed.
func TestWindowAggStateBounded(t *testing.T) {
	for _, ws := range []WindowSpec{{Kind: Tumble, Size: 100}, {Kind: Hop, Size: 100, Slide: 20},
		{Kind: Cumulate, Size: 100, Slide: 30}, {Kind: Session, Gap: 7}} {
		for _, emit := range []EmitSpec{{Mode: EmitOnUpdate}, {Mode: EmitOnWindowClose}, {Mode: EmitOnWindowClose, AllowLateness: 50}} {
			ws.TimeCol = 1
			r, err := simpleWinAgg(ws, emit).newRun(newEnv(t))
			if err != nil {
				t.Fatal(err)
			}
			maxGroups, maxEntries := 0, 0
			for step := int64(0); step < 2000; step++ {
				rows := make([]winRow, 0, 8)
				for k := int64(0); k < 8; k++ {
					rows = append(rows, winRow{k, step*10 + k, 1})
				}
				if err := r.consume(winChunk(nil, rows...)); err != nil {
					t.Fatal(err)
				}
				if _, err := r.advance(step*10 - 30); err != nil {
					t.Fatal(err)
				}
				if _, err := r.barrier(); err != nil {
					t.Fatal(err)
				}
				if step > 100 {
					maxGroups, maxEntries = max(maxGroups, r.liveGroups()), max(maxEntries, r.etab.len())
				}
			}
			if maxGroups > 2000 || maxEntries > 1000 {
				t.Fatalf("%s %s: up to %d groups, %d entries", ws, emit, maxGroups, maxEntries)
			}
		}
	}
}

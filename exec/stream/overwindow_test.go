package stream

import (
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// The over-window tests read rows (k int8, ts timestamp, v int8, id int8).
var owIn = []types.Column{{Name: "k", Type: types.TInt8}, {Name: "ts", Type: types.TTimestamp}, {Name: "v", Type: types.TInt8}, {Name: "id", Type: types.TInt8}}

func owCol(i int) *expr.ColRef { return &expr.ColRef{Idx: i, T: owIn[i].Type, Name: owIn[i].Name} }

func owConst(v int64) expr.Expr { return &expr.Const{V: v, T: types.TInt8} }

var (
	owDefault = exec.Frame{Mode: exec.FrameRange, Start: exec.FrameBound{Kind: exec.UnboundedPreceding}, End: exec.FrameBound{Kind: exec.CurrentRow}}
	owWhole   = exec.Frame{Mode: exec.FrameRange, Start: exec.FrameBound{Kind: exec.UnboundedPreceding}, End: exec.FrameBound{Kind: exec.UnboundedFollowing}}
	owRows1   = exec.Frame{Mode: exec.FrameRows, Start: exec.FrameBound{Kind: exec.Preceding, Offset: owConst(1)}, End: exec.FrameBound{Kind: exec.Following, Offset: owConst(1)}}
	owRows2   = exec.Frame{Mode: exec.FrameRows, Start: exec.FrameBound{Kind: exec.Preceding, Offset: owConst(2)}, End: exec.FrameBound{Kind: exec.CurrentRow}, Exclude: exec.ExcludeCurrentRow}
)

func owCall(t testing.TB, name string, args []expr.Expr, part []expr.Expr, order []exec.SortKey, fr exec.Frame) exec.WindowCall {
	t.Helper()
	ts := make([]types.T, len(args))
	for i, a := range args {
		ts[i] = a.Type()
	}
	f, err := exec.ResolveWindow(name, ts, name == "count" && len(args) == 0)
	if err != nil {
		t.Fatal(err)
	}
	return exec.WindowCall{Fn: f, Args: args, PartitionBy: part, OrderBy: order, Frame: fr}
}

func newOverWindow(ch chan Message, calls []exec.WindowCall) *OverWindow {
	w := &OverWindow{Input: &tnSource{ch: ch, cols: owIn}, Calls: calls, Cols: slices.Clone(owIn)}
	for i, c := range calls {
		w.Cols = append(w.Cols, types.Column{Name: fmt.Sprintf("w%d", i), Type: c.Fn.Return})
	}
	return w
}

// owRun feeds chunks and reads the output up to each barrier.
type owHarness struct {
	t     testing.TB
	w     *OverWindow
	in    chan Message
	out   <-chan Message
	env   *Env
	acc   map[string]int
	epoch uint64
	marks []Watermark
}

func newOwHarness(t testing.TB, w *OverWindow, env *Env) *owHarness {
	h := &owHarness{t: t, w: w, in: w.Input.(*tnSource).ch, env: env, acc: map[string]int{}}
	h.out = w.Start(env, []<-chan Message{h.in})
	t.Cleanup(func() {
		close(h.in)
		for range h.out {
		}
	})
	return h
}

func (h *owHarness) barrier() {
	h.t.Helper()
	h.epoch++
	h.in <- BarrierMsg(Barrier{Epoch: h.epoch})
	for m := range h.out {
		switch m.Kind {
		case KindBarrier:
			return
		case KindWatermark:
			h.marks = append(h.marks, m.Watermark)
		case KindChunk:
			rows, ops := tnRows(m.Chunk, h.w.Cols)
			for i, row := range rows {
				if ops[i] == UpdateBefore && (i+1 == len(ops) || ops[i+1] != UpdateAfter) {
					h.t.Fatalf("update_before not followed by update_after: %v", ops)
				}
				s := tnRender(row)
				if ops[i].Sign() > 0 {
					h.acc[s]++
				} else if h.acc[s]--; h.acc[s] < 0 {
					h.t.Fatalf("%v of a row not emitted: %s", ops[i], s)
				} else if h.acc[s] == 0 {
					delete(h.acc, s)
				}
			}
		}
	}
	h.t.Fatalf("output closed: %v", h.env.Err())
}

// owBatch runs the calls over rows with the batch engine.
func owBatch(t testing.TB, w *OverWindow, rows [][]types.Value) map[string]int {
	t.Helper()
	want := map[string]int{}
	if len(rows) == 0 {
		return want
	}
	rec := tnChunk(t, owIn, nil, rows).Rec
	node := &exec.Window{Input: &exec.FuncScan{Name: "rows", Cols: owIn, Produce: func(*exec.Context) ([]arrow.RecordBatch, error) {
		return []arrow.RecordBatch{rec}, nil
	}}, Calls: w.Calls, Cols: w.Cols}
	it, err := node.Open(&exec.Context{Eval: &expr.Context{}})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	for {
		b, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if b == nil {
			return want
		}
		for i := 0; i < int(b.NumRows()); i++ {
			want[tnRender(rowValues(b, i, w.Cols))]++
		}
	}
}

// owCalls is a mix of functions, frames, partitions and orders; each has
// a deterministic result (orders end in the unique id, or the result does
// not depend on ties).
func owCalls(t testing.TB) []exec.WindowCall {
	k, ts, v, id := owCol(0), owCol(1), owCol(2), owCol(3)
	part := []expr.Expr{k}
	byTime := []exec.SortKey{{E: ts}, {E: id}}
	return []exec.WindowCall{
		owCall(t, "row_number", nil, part, byTime, owDefault),
		owCall(t, "rank", nil, part, []exec.SortKey{{E: v}}, owDefault),
		owCall(t, "dense_rank", nil, nil, []exec.SortKey{{E: v, Desc: true}}, owDefault),
		owCall(t, "lag", []expr.Expr{v}, part, byTime, owDefault),
		owCall(t, "lead", []expr.Expr{v, owConst(2)}, nil, byTime, owDefault),
		owCall(t, "sum", []expr.Expr{v}, part, byTime, owRows1),
		owCall(t, "sum", []expr.Expr{v}, part, byTime, owRows2),
		owCall(t, "max", []expr.Expr{v}, part, byTime, owDefault),
		owCall(t, "first_value", []expr.Expr{v}, part, []exec.SortKey{{E: v, Desc: true}}, owDefault),
		owCall(t, "count", nil, nil, nil, owWhole),
		owCall(t, "avg", []expr.Expr{v}, part, nil, owWhole),
	}
}

// TestOverWindowRandom checks an OverWindow against the batch engine over
// random changelogs (inserts, deletes, duplicate rows), epoch by epoch.
func TestOverWindowRandom(t *testing.T) {
	for seed := int64(1); seed <= 30; seed++ {
		rng := rand.New(rand.NewSource(seed))
		ch := make(chan Message, ChannelSize)
		w := newOverWindow(ch, owCalls(t))
		h := newOwHarness(t, w, newEnv(t))
		var live [][]types.Value
		nextID := int64(0)
		for epoch := 0; epoch < 25; epoch++ {
			for c := rng.Intn(3); c >= 0; c-- {
				var rows [][]types.Value
				var ops []Op
				for i := rng.Intn(5); i > 0; i-- {
					switch r := rng.Intn(6); {
					case r == 0 && len(live) > 0: // delete one copy
						j := rng.Intn(len(live))
						rows, ops = append(rows, live[j]), append(ops, Delete)
						live = slices.Delete(live, j, j+1)
					case r == 1 && len(live) > 0: // another copy of a live row
						row := live[rng.Intn(len(live))]
						rows, ops = append(rows, row), append(ops, Insert)
						live = append(live, row)
					default:
						nextID++
						row := []types.Value{int64(rng.Intn(3)), types.TimestampValue(rng.Intn(20)), int64(rng.Intn(10)), nextID}
						rows, ops = append(rows, row), append(ops, Insert)
						live = append(live, row)
					}
				}
				if len(rows) > 0 {
					ch <- ChunkMsg(tnChunk(t, owIn, ops, rows))
				}
			}
			h.barrier()
			if want := owBatch(t, w, live); !mapsEqual(h.acc, want) {
				t.Fatalf("seed %d epoch %d:\n got  %v\n want %v", seed, epoch, sortedKeys(h.acc), sortedKeys(want))
			}
		}
	}
}

func sortedKeys(m map[string]int) []string {
	var out []string
	for k, n := range m {
		out = append(out, fmt.Sprintf("%s x%d", k, n))
	}
	sort.Strings(out)
	return out
}

// owEOWCCalls order by ts: per partition of k (reading 1 row ahead) and
// over all rows (none ahead). With unbounded, one call's frame has no
// start (nothing is freed in its group).
func owEOWCCalls(t testing.TB, unbounded bool) (calls []exec.WindowCall, after map[bool]int) {
	k, ts, v, id := owCol(0), owCol(1), owCol(2), owCol(3)
	part := []expr.Expr{k}
	byTime := []exec.SortKey{{E: ts}, {E: id}}
	calls = []exec.WindowCall{
		owCall(t, "row_number", nil, part, byTime, owDefault),
		owCall(t, "rank", nil, part, []exec.SortKey{{E: ts}}, owDefault),
		owCall(t, "dense_rank", nil, part, []exec.SortKey{{E: ts}}, owDefault),
		owCall(t, "lag", []expr.Expr{v, owConst(2)}, part, byTime, owDefault),
		owCall(t, "lead", []expr.Expr{v}, part, byTime, owDefault),
		owCall(t, "sum", []expr.Expr{v}, part, byTime, owRows1),
		owCall(t, "sum", []expr.Expr{v}, nil, byTime, owRows2),
		owCall(t, "first_value", []expr.Expr{v}, nil, byTime, exec.Frame{Mode: exec.FrameRows, Start: exec.FrameBound{Kind: exec.Preceding, Offset: owConst(3)}, End: exec.FrameBound{Kind: exec.CurrentRow}}),
	}
	if unbounded {
		calls = append(calls, owCall(t, "max", []expr.Expr{v}, part, []exec.SortKey{{E: ts}}, owDefault))
	}
	return calls, map[bool]int{true: 1, false: 0} // by "partitioned by k"
}

// TestOverWindowEOWCRandom feeds an append-only stream with a rising
// watermark to an EOWC OverWindow and checks after every barrier that
// exactly the rows whose frames are final went out, once, with the batch
// engine's values over all the rows that were not late; and that the rows
// kept stay bounded where frames are.
func TestOverWindowEOWCRandom(t *testing.T) {
	for _, unbounded := range []bool{false, true} {
		for _, delay := range []int64{0, 3} {
			for seed := int64(1); seed <= 15; seed++ {
				testOverWindowEOWC(t, seed, unbounded, delay)
			}
		}
	}
}

func testOverWindowEOWC(t *testing.T, seed int64, unbounded bool, delay int64) {
	rng := rand.New(rand.NewSource(seed))
	calls, after := owEOWCCalls(t, unbounded)
	ch := make(chan Message, ChannelSize)
	w := newOverWindow(ch, calls)
	w.EOWC = &OverEOWC{TimeCol: 1, Delay: delay}
	env := newEnv(t)
	late := 0
	env.OnLate = func(rows arrow.RecordBatch, _ uint64) { late += int(rows.NumRows()) }
	h := newOwHarness(t, w, env)
	var live [][]types.Value
	wantLate := 0
	maxTS, wm := int64(0), int64(-1<<40)
	nextID := int64(0)
	for step := 0; step < 60; step++ {
		var rows [][]types.Value
		for i := rng.Intn(4); i > 0; i-- {
			nextID++
			ts := maxTS + int64(rng.Intn(6)) - 3
			row := []types.Value{int64(rng.Intn(3)), types.TimestampValue(ts), int64(rng.Intn(10)), nextID}
			if ts < wm-delay {
				wantLate++
			} else {
				live = append(live, row)
			}
			maxTS = max(maxTS, ts)
			rows = append(rows, row)
		}
		if len(rows) > 0 {
			ch <- ChunkMsg(tnChunk(t, owIn, nil, rows))
		}
		if rng.Intn(2) == 0 {
			wm = maxTS - 2
			ch <- WatermarkMsg(Watermark{Col: 1, Value: wm})
		}
		h.barrier()
		want := owEOWCExpect(t, w, live, after, wm-delay)
		if !mapsEqual(h.acc, want) {
			t.Fatalf("seed %d step %d (unbounded %v, delay %d):\n got  %v\n want %v", seed, step, unbounded, delay, sortedKeys(h.acc), sortedKeys(want))
		}
		if late != wantLate {
			t.Fatalf("seed %d step %d: %d late rows, want %d", seed, step, late, wantLate)
		}
	}
	for _, m := range h.marks {
		if m.Col != 1 || m.Value > wm-delay {
			t.Fatalf("seed %d: output watermark %+v above %d", seed, m, wm-delay)
		}
	}
}

// owEOWCExpect is the batch result of the rows whose frames are final
// under the watermark wm: in each partition of each call group, a row
// whose time is below wm and whose last peer of time is followed by at
// least after[group] rows below wm.
func owEOWCExpect(t testing.TB, w *OverWindow, rows [][]types.Value, after map[bool]int, wm int64) map[string]int {
	byID := owByID(owBatch(t, w, rows))
	ts := func(r []types.Value) int64 { return int64(r[1].(types.TimestampValue)) }
	ready := func(r []types.Value, partitioned bool) bool {
		final, end := 0, 0
		for _, o := range rows {
			if partitioned && o[0] != r[0] {
				continue
			}
			if ts(o) < wm {
				final++
			}
			if ts(o) <= ts(r) {
				end++
			}
		}
		return ts(r) < wm && end+after[partitioned] <= final
	}
	want := map[string]int{}
	for _, r := range rows {
		if ready(r, true) && ready(r, false) {
			want[byID[r[3].(int64)]]++
		}
	}
	return want
}

// owByID maps each rendered output row of owBatch to its row's id.
func owByID(all map[string]int) map[int64]string {
	byID := map[int64]string{}
	for s := range all {
		var id int64
		fmt.Sscanf(s[nthBar(s, 3)+1:], "%d", &id)
		byID[id] = s
	}
	return byID
}

// nthBar is the index of the n-th '|' of s.
func nthBar(s string, n int) int {
	for i := range s {
		if s[i] == '|' {
			if n--; n == 0 {
				return i
			}
		}
	}
	return len(s)
}

// TestOverWindowEOWCFrees drives an EOWC OverWindow directly over 10000
// rows in time order and checks that it keeps only the rows its frames
// still reach (a few per partition), while row_number keeps counting.
func TestOverWindowEOWCFrees(t *testing.T) {
	calls, _ := owEOWCCalls(t, false)
	w := newOverWindow(nil, calls)
	w.Input = &tnSource{cols: owIn}
	w.EOWC = &OverEOWC{TimeCol: 1}
	r, err := w.newRun(newEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	var lastRN int64
	for i := int64(0); i < 10000; i += 100 {
		var rows [][]types.Value
		for j := i; j < i+100; j++ {
			rows = append(rows, []types.Value{j % 3, types.TimestampValue(j), j % 7, j})
		}
		if err := r.consume(tnChunk(t, owIn, nil, rows)); err != nil {
			t.Fatal(err)
		}
		msgs, err := r.eowcHandle(WatermarkMsg(Watermark{Col: 1, Value: i + 100}))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if m.Kind == KindChunk {
				rn := m.Chunk.Rec.Column(len(owIn)).(interface{ Value(int) int64 })
				lastRN = max(lastRN, rn.Value(m.Chunk.Len()-1))
			}
		}
		kept := 0
		for _, g := range r.groups {
			for _, p := range g.parts {
				kept += len(p.rows)
			}
		}
		if kept > 20 {
			t.Fatalf("after %d rows %d are kept", i+100, kept)
		}
	}
	if lastRN < 3300 {
		t.Fatalf("row_number reached %d, want about 3333", lastRN)
	}
}

// TestOverWindowEOWCSessionRandom is TestOverWindowEOWCRandom for
// SESSION WITH GAP frames: a row goes out, once, when its session has
// ended, that is when a row at least the gap after the session's last one
// is below the watermark, with the batch engine's values over all the
// rows (its session is then whole).
func TestOverWindowEOWCSessionRandom(t *testing.T) {
	const gap = 3
	k, ts, v := owCol(0), owCol(1), owCol(2)
	fr := exec.Frame{Mode: exec.FrameSession, Gap: &expr.Const{V: types.IntervalValue{Micros: gap}, T: types.TInterval}}
	part, byTime := []expr.Expr{k}, []exec.SortKey{{E: ts}}
	for seed := int64(1); seed <= 30; seed++ {
		rng := rand.New(rand.NewSource(seed))
		calls := []exec.WindowCall{
			owCall(t, "count", nil, part, byTime, fr),
			owCall(t, "sum", []expr.Expr{v}, part, byTime, fr),
			owCall(t, "min", []expr.Expr{v}, part, byTime, fr),
		}
		ch := make(chan Message, ChannelSize)
		w := newOverWindow(ch, calls)
		w.EOWC = &OverEOWC{TimeCol: 1}
		h := newOwHarness(t, w, newEnv(t))
		var live [][]types.Value
		maxTS, wm, nextID := int64(0), int64(-1<<40), int64(0)
		for step := 0; step < 60; step++ {
			var rows [][]types.Value
			for i := rng.Intn(4); i > 0; i-- {
				nextID++
				t := maxTS + int64(rng.Intn(8)) - 2
				row := []types.Value{int64(rng.Intn(2)), types.TimestampValue(t), int64(rng.Intn(10)), nextID}
				if t >= wm {
					live = append(live, row)
				}
				maxTS = max(maxTS, t)
				rows = append(rows, row)
			}
			if len(rows) > 0 {
				ch <- ChunkMsg(tnChunk(t, owIn, nil, rows))
			}
			if rng.Intn(2) == 0 {
				wm = maxTS - 1
				ch <- WatermarkMsg(Watermark{Col: 1, Value: wm})
			}
			h.barrier()
			byID := owByID(owBatch(t, w, live))
			tsOf := func(r []types.Value) int64 { return int64(r[1].(types.TimestampValue)) }
			want := map[string]int{}
			for _, r := range live {
				if tsOf(r) >= wm {
					continue
				}
				var final []int64 // the partition's final times, sorted
				for _, o := range live {
					if o[0] == r[0] && tsOf(o) < wm {
						final = append(final, tsOf(o))
					}
				}
				slices.Sort(final)
				i := slices.Index(final, tsOf(r))
				for i+1 < len(final) && final[i+1]-final[i] < gap {
					i++ // the session's last time
				}
				if i+1 < len(final) { // a final row ends the session
					want[byID[r[3].(int64)]]++
				}
			}
			if !mapsEqual(h.acc, want) {
				t.Fatalf("seed %d step %d:\n got  %v\n want %v", seed, step, sortedKeys(h.acc), sortedKeys(want))
			}
		}
	}
}

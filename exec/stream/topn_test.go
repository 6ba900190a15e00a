package stream

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// The top-n tests read rows (p int8, a int8, b text, f float8).
var tnIn = []types.Column{{Name: "p", Type: types.TInt8}, {Name: "a", Type: types.TInt8}, {Name: "b", Type: types.TText}, {Name: "f", Type: types.TFloat8}}

func tnCol(i int) *expr.ColRef {
	return &expr.ColRef{Idx: i, T: tnIn[i].Type, Name: tnIn[i].Name}
}

// tnSource is a Node of tnIn rows fed by the test.
type tnSource struct {
	ch   chan Message
	cols []types.Column
}

func (s *tnSource) Columns() []types.Column                     { return s.cols }
func (s *tnSource) Inputs() []Node                              { return nil }
func (s *tnSource) Explain() string                             { return "test source" }
func (s *tnSource) Start(*Env, []<-chan Message) <-chan Message { return s.ch }

// tnChunk builds a chunk of rows of cols (nil ops: all inserts).
func tnChunk(t testing.TB, cols []types.Column, ops []Op, rows [][]types.Value) *Chunk {
	t.Helper()
	arrs := make([]arrow.Array, len(cols))
	for j, c := range cols {
		b := types.NewBuilder(memory.DefaultAllocator, c.Type)
		for _, r := range rows {
			if err := types.AppendValue(b, r[j], c.Type); err != nil {
				t.Fatal(err)
			}
		}
		arrs[j] = b.NewArray()
		b.Release()
	}
	return &Chunk{Rec: array.NewRecordBatch(types.ArrowSchema(cols), arrs, int64(len(rows))), Ops: ops}
}

func newTopN(ch chan Message, part bool, order []exec.SortKey, limit, offset int64, rank, appendOnly bool) *TopN {
	t := &TopN{Input: &tnSource{ch: ch, cols: tnIn}, Order: order, Limit: limit, Offset: offset, RankCol: rank, AppendOnly: appendOnly}
	if part {
		t.PartitionBy = []expr.Expr{tnCol(0)}
	}
	t.Cols = slices.Clone(tnIn)
	if rank {
		t.Cols = append(t.Cols, types.Column{Name: "rn", Type: types.TInt8})
	}
	return t
}

// tnRender renders a row of Values exactly (-0 and 0 differ).
func tnRender(row []types.Value) string {
	var sb strings.Builder
	for j, v := range row {
		if j > 0 {
			sb.WriteByte('|')
		}
		if v == nil {
			sb.WriteString("NULL")
		} else {
			fmt.Fprintf(&sb, "%v", v)
		}
	}
	return sb.String()
}

// tnRows reads a chunk's rows and ops.
func tnRows(c *Chunk, cols []types.Column) ([][]types.Value, []Op) {
	var rows [][]types.Value
	var ops []Op
	for i := 0; i < c.Len(); i++ {
		rows = append(rows, rowValues(c.Rec, i, cols))
		ops = append(ops, c.Op(i))
	}
	return rows, ops
}

// tnHarness runs a TopN and accumulates its output, checking as it goes
// that update pairs are adjacent, that retractions name emitted rows and
// (with RankCol) that (partition, rank) stays a key of the output.
type tnHarness struct {
	t      *testing.T
	top    *TopN
	in     chan Message
	out    <-chan Message
	env    *Env
	acc    map[string]int           // rendered output row -> copies
	byRank map[string][]types.Value // "partition/rank" -> row (RankCol)
	epoch  uint64
}

func newTnHarness(t *testing.T, top *TopN) *tnHarness {
	h := &tnHarness{t: t, top: top, in: top.Input.(*tnSource).ch, env: newEnv(t), acc: map[string]int{}, byRank: map[string][]types.Value{}}
	h.out = top.Start(h.env, []<-chan Message{h.in})
	t.Cleanup(func() {
		close(h.in)
		for range h.out {
		}
	})
	return h
}

// barrier sends a barrier and applies the output up to it.
func (h *tnHarness) barrier() {
	h.t.Helper()
	h.epoch++
	h.in <- BarrierMsg(Barrier{Epoch: h.epoch})
	for m := range h.out {
		switch m.Kind {
		case KindBarrier:
			if m.Barrier.Epoch != h.epoch {
				h.t.Fatalf("barrier %d, want %d", m.Barrier.Epoch, h.epoch)
			}
			return
		case KindChunk:
			h.apply(m.Chunk)
		}
	}
	h.t.Fatalf("output closed: %v", h.env.Err())
}

func (h *tnHarness) apply(c *Chunk) {
	h.t.Helper()
	rows, ops := tnRows(c, h.top.Cols)
	for i, row := range rows {
		op := ops[i]
		if op == UpdateBefore && (i+1 == len(ops) || ops[i+1] != UpdateAfter) {
			h.t.Fatalf("update_before not followed by update_after: %v", ops)
		}
		if op == UpdateAfter && (i == 0 || ops[i-1] != UpdateBefore) {
			h.t.Fatalf("update_after not preceded by update_before: %v", ops)
		}
		s := tnRender(row)
		if op.Sign() > 0 {
			h.acc[s]++
		} else {
			if h.acc[s] == 0 {
				h.t.Fatalf("%v of a row not emitted: %s", op, s)
			}
			if h.acc[s]--; h.acc[s] == 0 {
				delete(h.acc, s)
			}
		}
		if !h.top.RankCol || h.top.Ties != RowNumber {
			continue
		}
		k := fmt.Sprint(row[len(row)-1])
		for _, p := range h.top.PartitionBy {
			k = fmt.Sprintf("%v/%s", row[p.(*expr.ColRef).Idx], k)
		}
		if op.Sign() > 0 {
			if old, ok := h.byRank[k]; ok {
				h.t.Fatalf("%v of %s while %s holds rank %s", op, s, tnRender(old), k)
			}
			h.byRank[k] = row
		} else {
			if old, ok := h.byRank[k]; !ok || tnRender(old) != s {
				h.t.Fatalf("%v of %s at rank %s, which holds %v", op, s, k, old)
			}
			delete(h.byRank, k)
		}
	}
}

// tnExpect is the batch result: per partition, the rows ranked
// Offset+1..Offset+Limit, by brute force.
func tnExpect(top *TopN, model [][]types.Value) map[string]int {
	parts := map[string][][]types.Value{}
	for _, r := range model {
		k := ""
		if len(top.PartitionBy) > 0 {
			k = fmt.Sprint(r[0])
		}
		parts[k] = append(parts[k], r)
	}
	want := map[string]int{}
	for _, rows := range parts {
		sort.SliceStable(rows, func(i, j int) bool { return tnLess(top.Order, rows[i], rows[j]) })
		var rank, dense int64
		for i, r := range rows {
			tie := i > 0 && !tnLess(top.Order, rows[i-1], r, true)
			if !tie {
				rank, dense = int64(i)+1, dense+1
			}
			switch top.Ties {
			case RowNumber:
				rank = int64(i) + 1
			case DenseRank:
				rank = dense
			}
			if rank <= top.Offset || (top.Limit >= 0 && rank-top.Offset > top.Limit) {
				continue
			}
			if top.RankCol {
				r = append(slices.Clone(r), rank)
			}
			want[tnRender(r)]++
		}
	}
	return want
}

// tnLess is PostgreSQL's ORDER BY over the keys (column references), ties
// broken by the rows' values by identity (tnIdentity).
func tnLess(keys []exec.SortKey, x, y []types.Value, keysOnly ...bool) bool {
	for _, k := range keys {
		c := k.E.(*expr.ColRef).Idx
		a, b := x[c], y[c]
		var d int
		switch {
		case a == nil && b == nil:
		case a == nil || b == nil:
			d = 1
			if (a == nil) == k.NullsFirst {
				d = -1
			}
		default:
			d = types.Compare(a, b, tnIn[c].Type)
			if k.Desc {
				d = -d
			}
		}
		if d != 0 {
			return d < 0
		}
	}
	if len(keysOnly) > 0 {
		return false
	}
	for j := range x {
		if c := tnIdentity(x[j], y[j]); c != 0 {
			return c < 0
		}
	}
	return false
}

func (h *tnHarness) check(model [][]types.Value) {
	h.t.Helper()
	want := tnExpect(h.top, model)
	if len(want) != len(h.acc) {
		h.t.Fatalf("epoch %d: output has %d distinct rows, want %d\n got %v\nwant %v", h.epoch, len(h.acc), len(want), h.acc, want)
	}
	for r, n := range want {
		if h.acc[r] != n {
			h.t.Fatalf("epoch %d: row %s: %d copies, want %d\n got %v\nwant %v", h.epoch, r, h.acc[r], n, h.acc, want)
		}
	}
}

func tnRandRow(rng *rand.Rand) []types.Value {
	pick := func(vs ...types.Value) types.Value { return vs[rng.Intn(len(vs))] }
	return []types.Value{
		pick(int64(0), int64(1), int64(2), nil),
		pick(nil, int64(-1), int64(0), int64(1), int64(2), int64(3)),
		pick(nil, "", "x", "y", "xy"),
		pick(nil, 0.0, math.Copysign(0, -1), 1.5, math.NaN(), math.Inf(-1)),
	}
}

var tnOrders = [][]exec.SortKey{
	{{E: tnCol(1)}},
	{{E: tnCol(1), Desc: true, NullsFirst: true}},
	{{E: tnCol(1), NullsFirst: true}, {E: tnCol(2), Desc: true}},
	{{E: tnCol(2), Desc: true, NullsFirst: true}, {E: tnCol(3)}},
	{{E: tnCol(3), Desc: true}, {E: tnCol(1), Desc: true, NullsFirst: false}},
	{{E: tnCol(2)}, {E: tnCol(1)}, {E: tnCol(3), NullsFirst: true}},
}

func TestTopNRandomAgainstRecomputation(t *testing.T) {
	rounds := 300
	if testing.Short() {
		rounds = 60
	}
	for seed := 0; seed < rounds; seed++ {
		rng := rand.New(rand.NewSource(int64(seed)))
		limits := []int64{-1, 0, 1, 2, 3, 5, math.MaxInt64}
		offsets := []int64{0, 0, 1, 3}
		appendOnly := rng.Intn(4) == 0
		top := newTopN(make(chan Message, ChannelSize), rng.Intn(3) > 0, tnOrders[rng.Intn(len(tnOrders))],
			limits[rng.Intn(len(limits))], offsets[rng.Intn(len(offsets))], rng.Intn(2) == 0, appendOnly)
		if rng.Intn(3) == 0 { // rank() or dense_rank() <= n
			top.Ties, top.Offset = TopNTies(1+rng.Intn(2)), 0
			if top.Limit < 0 {
				top.Limit = 2
			}
		}
		top.noPack = seed%2 == 1 // both entry forms (topn_pack.go)
		name := fmt.Sprintf("seed%d/%s/rank=%v/boxed=%v", seed, top.Explain(), top.RankCol, top.noPack)
		t.Run(name, func(t *testing.T) {
			h := newTnHarness(t, top)
			var model [][]types.Value
			removeAt := func(i int) []types.Value {
				r := model[i]
				model[i] = model[len(model)-1]
				model = model[:len(model)-1]
				return r
			}
			for epoch := 0; epoch < 25; epoch++ {
				for c := rng.Intn(4); c > 0; c-- {
					var rows [][]types.Value
					var ops []Op
					for n := 1 + rng.Intn(12); n > 0; n-- {
						x := rng.Intn(20)
						switch {
						case appendOnly || x < 9 || len(model) == 0:
							r := tnRandRow(rng)
							if x == 0 && len(model) > 0 {
								r = slices.Clone(model[rng.Intn(len(model))]) // a duplicate
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
					if appendOnly && rng.Intn(2) == 0 {
						ops = nil
					}
					h.in <- ChunkMsg(tnChunk(t, tnIn, ops, rows))
				}
				h.barrier()
				h.check(model)
			}
		})
	}
}

func TestTopNRetractionPullsRowIn(t *testing.T) {
	top := newTopN(make(chan Message, ChannelSize), false, []exec.SortKey{{E: tnCol(1)}}, 2, 0, true, false)
	h := newTnHarness(t, top)
	row := func(a int64) []types.Value { return []types.Value{int64(0), a, "r", 1.0} }
	h.in <- ChunkMsg(tnChunk(t, tnIn, nil, [][]types.Value{row(5), row(3), row(4), row(1)}))
	h.barrier()
	h.check([][]types.Value{row(5), row(3), row(4), row(1)})
	if len(h.acc) != 2 || h.acc["0|1|r|1|1"] != 1 || h.acc["0|3|r|1|2"] != 1 {
		t.Fatalf("epoch 1: %v", h.acc)
	}
	// Deleting the first row moves 3 up to rank 1 and pulls 4 in.
	h.in <- ChunkMsg(tnChunk(t, tnIn, []Op{Delete}, [][]types.Value{row(1)}))
	h.barrier()
	if len(h.acc) != 2 || h.acc["0|3|r|1|1"] != 1 || h.acc["0|4|r|1|2"] != 1 {
		t.Fatalf("epoch 2: %v", h.acc)
	}
	// A change that cancels out within the epoch emits nothing.
	h.in <- ChunkMsg(tnChunk(t, tnIn, []Op{Insert, Delete}, [][]types.Value{row(0), row(0)}))
	h.epoch++
	h.in <- BarrierMsg(Barrier{Epoch: h.epoch})
	if m := <-h.out; m.Kind != KindBarrier {
		t.Fatalf("epoch 3 sent %+v before its barrier", m)
	}
}

func TestTopNUpdatesRanksInOrder(t *testing.T) {
	top := newTopN(make(chan Message, ChannelSize), false, []exec.SortKey{{E: tnCol(1)}}, 3, 0, true, false)
	env := newEnv(t)
	out := top.Start(env, []<-chan Message{top.Input.(*tnSource).ch})
	in := top.Input.(*tnSource).ch
	row := func(a int64) []types.Value { return []types.Value{int64(0), a, "r", 1.0} }
	in <- ChunkMsg(tnChunk(t, tnIn, nil, [][]types.Value{row(2), row(3), row(4)}))
	in <- BarrierMsg(Barrier{Epoch: 1})
	in <- ChunkMsg(tnChunk(t, tnIn, nil, [][]types.Value{row(1)}))
	in <- BarrierMsg(Barrier{Epoch: 2})
	close(in)
	got := drain(t, env, out)
	if len(got) != 4 || got[2].Kind != KindChunk {
		t.Fatalf("messages %+v", got)
	}
	rows, ops := tnRows(got[2].Chunk, top.Cols)
	var s []string
	for i, r := range rows {
		s = append(s, fmt.Sprintf("%v %v/%v", ops[i], r[1], r[4]))
	}
	// 4 leaves; 3 and 2 move back (last first, so a rank is free when taken); 1 enters.
	want := []string{"delete 4/3", "update_before 3/2", "update_after 3/3", "update_before 2/1", "update_after 2/2", "insert 1/1"}
	if !slices.Equal(s, want) {
		t.Fatalf("got %v, want %v", s, want)
	}
}

func TestTopNAppendOnlyKeepsOnlyTop(t *testing.T) {
	top := newTopN(nil, true, []exec.SortKey{{E: tnCol(1), Desc: true}}, 2, 1, false, true)
	r, err := top.newRun(newEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]types.Value
	for i := 0; i < 1000; i++ {
		rows = append(rows, []types.Value{int64(i % 4), int64(i), nil, nil})
	}
	if err := r.consume(tnChunk(t, tnIn, nil, rows)); err != nil {
		t.Fatal(err)
	}
	if len(r.parts.short) != 4 {
		t.Fatalf("%d partitions", len(r.parts.short))
	}
	for k, p := range r.parts.short {
		if p.rows.rows != 3 {
			t.Fatalf("partition %q keeps %d rows, want 3", k, p.rows.rows)
		}
	}
	c, err := r.flush()
	if err != nil {
		t.Fatal(err)
	}
	if c.Len() != 8 || c.Ops != nil {
		t.Fatalf("%d rows, ops %v", c.Len(), c.Ops)
	}
	if err := r.consume(tnChunk(t, tnIn, []Op{Delete}, rows[999:])); err == nil {
		t.Fatal("a retraction on an append-only input was accepted")
	}
}

func TestTopNRetractingAbsentRowFails(t *testing.T) {
	top := newTopN(nil, true, []exec.SortKey{{E: tnCol(1)}}, 2, 0, false, false)
	r, err := top.newRun(newEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	row := []types.Value{int64(1), int64(1), "x", 1.0}
	if err := r.consume(tnChunk(t, tnIn, nil, [][]types.Value{row})); err != nil {
		t.Fatal(err)
	}
	other := []types.Value{int64(1), int64(1), "x", math.Copysign(0, -1)}
	if err := r.consume(tnChunk(t, tnIn, []Op{Delete}, [][]types.Value{other})); err == nil {
		t.Fatal("deleting a row never inserted was accepted")
	}
}

func TestTopNPassesWatermarksAndChecksPlan(t *testing.T) {
	// Watermarks are held until the barrier releases the epoch's rows: a
	// watermark must not overtake rows below it.
	top := newTopN(make(chan Message, 4), false, []exec.SortKey{{E: tnCol(1)}}, 1, 0, false, false)
	env := newEnv(t)
	in := top.Input.(*tnSource).ch
	in <- WatermarkMsg(Watermark{Col: 1, Value: 40})
	in <- WatermarkMsg(Watermark{Col: 1, Value: 42})
	in <- BarrierMsg(Barrier{Epoch: 1})
	close(in)
	got := drain(t, env, top.Start(env, []<-chan Message{in}))
	if len(got) != 2 || got[0].Kind != KindWatermark || got[0].Watermark.Value != 42 || got[1].Kind != KindBarrier {
		t.Fatalf("messages %+v", got)
	}
	bad := newTopN(nil, false, []exec.SortKey{{E: tnCol(1)}}, 1, 0, true, false)
	bad.Cols = bad.Cols[:len(bad.Cols)-1]
	if _, err := bad.newRun(newEnv(t)); err == nil {
		t.Fatal("a plan without its rank column was accepted")
	}
}

// TestTopNListLarge drives one partition's list through block splits and
// merges against a sorted-slice model.
func TestTopNListLarge(t *testing.T) {
	o := newTnOrder([]exec.SortKey{{E: tnCol(1)}})
	rng := rand.New(rand.NewSource(7))
	var l tnList
	model := map[int64]int64{} // value -> copies
	mk := func(v int64) *tnEntry {
		row := []types.Value{v}
		return newTnBoxed(o.normOf(row[0]), row, row)
	}
	for step := 0; step < 20000; step++ {
		v := rng.Int63n(3000)
		d := int64(1 + rng.Intn(2))
		if step > 10000 && rng.Intn(3) > 0 {
			d = -d
		}
		ok := l.add(&o, mk(v), d)
		if ok != (model[v]+d >= 0) {
			t.Fatalf("step %d: add(%d, %d) = %v with %d copies", step, v, d, ok, model[v])
		}
		if ok {
			if model[v] += d; model[v] == 0 {
				delete(model, v)
			}
		}
		if step%500 != 0 {
			continue
		}
		var want []int64
		for v, n := range model {
			for ; n > 0; n-- {
				want = append(want, v)
			}
		}
		slices.Sort(want)
		if l.rows != int64(len(want)) {
			t.Fatalf("step %d: %d rows, want %d", step, l.rows, len(want))
		}
		var sum int64
		for _, b := range l.blocks {
			var n int64
			for _, c := range b.ns {
				n += c
			}
			for i, e := range b.es {
				if b.norms[i] != e.norm || b.ns[i] <= 0 {
					t.Fatalf("step %d: entry %d has norm %v (inline %v), %d copies", step, i, e.norm, b.norms[i], b.ns[i])
				}
			}
			if n != b.rows || len(b.es) == 0 || len(b.es) > tnBlockMax || len(b.ns) != len(b.es) || len(b.norms) != len(b.es) {
				t.Fatalf("step %d: block of %d entries counts %d rows, holds %d", step, len(b.es), b.rows, n)
			}
			sum += n
		}
		if sum != l.rows {
			t.Fatalf("step %d: blocks hold %d rows, list says %d", step, sum, l.rows)
		}
		from, count := rng.Int63n(int64(len(want))+2), rng.Int63n(300)-1
		got := l.appendRange(nil, from, count)
		end := int64(len(want))
		if count >= 0 && from+count < end {
			end = from + count
		}
		if from > end {
			from = end
		}
		if int64(len(got)) != end-from {
			t.Fatalf("step %d: range(%d, %d) has %d rows, want %d", step, from, count, len(got), end-from)
		}
		for i, x := range got {
			if o.keyVal(x.e, 0).(int64) != want[from+int64(i)] || x.rank != from+int64(i)+1 {
				t.Fatalf("step %d: range(%d, %d)[%d] = %v at %d, want %d", step, from, count, i, o.keyVal(x.e, 0), x.rank, want[from+int64(i)])
			}
		}
	}
}

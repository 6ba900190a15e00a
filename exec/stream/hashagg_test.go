package stream

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// The aggregation tests read rows (k text, v int8, f float8).
var aggIn = []types.Column{{Name: "k", Type: types.TText}, {Name: "v", Type: types.TInt8}, {Name: "f", Type: types.TFloat8}}

var (
	colK = &expr.ColRef{Idx: 0, T: types.TText, Name: "k"}
	colV = &expr.ColRef{Idx: 1, T: types.TInt8, Name: "v"}
	colF = &expr.ColRef{Idx: 2, T: types.TFloat8, Name: "f"}
)

// inRow is one input row; nil fields are NULL.
type inRow struct {
	k any
	v any
	f any
}

func aggChunk(t *testing.T, ops []Op, rows ...inRow) *Chunk {
	t.Helper()
	bs := make([]array.Builder, len(aggIn))
	arrs := make([]arrow.Array, len(aggIn))
	for j, c := range aggIn {
		bs[j] = types.NewBuilder(memory.DefaultAllocator, c.Type)
	}
	for _, r := range rows {
		for j, v := range []any{r.k, r.v, r.f} {
			if err := types.AppendValue(bs[j], v, aggIn[j].Type); err != nil {
				t.Fatal(err)
			}
		}
	}
	for j := range bs {
		arrs[j] = bs[j].NewArray()
	}
	return &Chunk{Rec: array.NewRecordBatch(types.ArrowSchema(aggIn), arrs, int64(len(rows))), Ops: ops}
}

// newAgg is SELECT k, count(*), count(v), sum(v), min(v), max(v), sum(f),
// avg(f), min(f), max(f) GROUP BY k (or without k and GROUP BY when global).
func newAgg(global bool) *HashAgg {
	h := &HashAgg{Aggs: []AggSpec{
		{Kind: AggCountStar}, {Kind: AggCount, Arg: colV}, {Kind: AggSum, Arg: colV},
		{Kind: AggMin, Arg: colV}, {Kind: AggMax, Arg: colV}, {Kind: AggSum, Arg: colF},
		{Kind: AggAvg, Arg: colF}, {Kind: AggMin, Arg: colF}, {Kind: AggMax, Arg: colF},
	}}
	if !global {
		h.GroupBy = []expr.Expr{colK}
		h.Cols = append(h.Cols, types.Column{Name: "k", Type: types.TText})
	}
	for i, a := range h.Aggs {
		rt, err := a.ResultType()
		if err != nil {
			panic(err)
		}
		h.Cols = append(h.Cols, types.Column{Name: fmt.Sprintf("a%d", i), Type: rt})
	}
	return h
}

func startRun(t *testing.T, h *HashAgg) *aggRun {
	t.Helper()
	r, err := h.newRun(newEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// outRow is one output row rendered as text, with its op.
type outRow struct {
	op  Op
	row string
}

func render(c *Chunk) []outRow {
	if c == nil {
		return nil
	}
	var out []outRow
	for i := 0; i < c.Len(); i++ {
		s := ""
		for j := 0; j < int(c.Rec.NumCols()); j++ {
			if j > 0 {
				s += "|"
			}
			col := c.Rec.Column(j)
			t := types.TText
			switch col.DataType().ID() {
			case arrow.INT64:
				t = types.TInt8
			case arrow.FLOAT64:
				t = types.TFloat8
			}
			if v := types.ValueAt(col, i, t); v != nil {
				s += string(types.AppendText(nil, v, t, &types.DefaultFormat))
			}
		}
		out = append(out, outRow{c.Op(i), s})
	}
	return out
}

func step(t *testing.T, r *aggRun, c *Chunk) []outRow {
	t.Helper()
	if c != nil {
		if err := r.consume(c); err != nil {
			t.Fatal(err)
		}
	}
	out, err := r.flush()
	if err != nil {
		t.Fatal(err)
	}
	return render(out)
}

func expectOut(t *testing.T, got []outRow, want ...outRow) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("row %d: got %v, want %v", i, got[i], want[i])
		}
	}
}

func TestHashAggInsertThenDeleteFreesGroups(t *testing.T) {
	r := startRun(t, newAgg(false))
	rows := []inRow{{"a", int64(1), 1.5}, {"a", int64(3), nil}, {"b", nil, -2.0}}
	expectOut(t, step(t, r, aggChunk(t, nil, rows...)),
		outRow{Insert, "a|2|2|4|1|3|1.5|1.5|1.5|1.5"},
		outRow{Insert, "b|1|0||||-2|-2|-2|-2"})
	expectOut(t, step(t, r, aggChunk(t, []Op{Delete, Delete, Delete}, rows...)),
		outRow{Delete, "a|2|2|4|1|3|1.5|1.5|1.5|1.5"},
		outRow{Delete, "b|1|0||||-2|-2|-2|-2"})
	if r.table.len() != 0 || len(r.touched) != 0 {
		t.Fatalf("%d groups, %d touched left", r.table.len(), len(r.touched))
	}
	// A group that appears and disappears within one epoch emits nothing.
	expectOut(t, step(t, r, aggChunk(t, []Op{Insert, Delete}, rows[0], rows[0])))
	if r.table.len() != 0 {
		t.Fatalf("%d groups left", r.table.len())
	}
}

func TestHashAggUpdatePairs(t *testing.T) {
	r := startRun(t, newAgg(false))
	step(t, r, aggChunk(t, nil, inRow{"a", int64(1), 1.0}, inRow{"b", int64(5), 2.0}))
	// move a's row to b, and change b's value in place
	got := step(t, r, aggChunk(t, []Op{UpdateBefore, UpdateAfter, UpdateBefore, UpdateAfter},
		inRow{"a", int64(1), 1.0}, inRow{"b", int64(1), 1.0},
		inRow{"b", int64(5), 2.0}, inRow{"b", int64(7), 4.0}))
	expectOut(t, got,
		outRow{Delete, "a|1|1|1|1|1|1|1|1|1"},
		outRow{UpdateBefore, "b|1|1|5|5|5|2|2|2|2"},
		outRow{UpdateAfter, "b|2|2|8|1|7|5|2.5|1|4"})
}

func TestHashAggMinMaxAfterDeletingExtremes(t *testing.T) {
	r := startRun(t, newAgg(false))
	step(t, r, aggChunk(t, nil,
		inRow{"a", int64(2), 2.0}, inRow{"a", int64(1), 1.0}, inRow{"a", int64(1), 1.0}, inRow{"a", int64(9), 9.0}))
	// one copy of the min goes: the min stays
	expectOut(t, step(t, r, aggChunk(t, []Op{Delete}, inRow{"a", int64(1), 1.0})),
		outRow{UpdateBefore, "a|4|4|13|1|9|13|3.25|1|9"},
		outRow{UpdateAfter, "a|3|3|12|1|9|12|4|1|9"})
	// the last copy of the min and the max go
	expectOut(t, step(t, r, aggChunk(t, []Op{Delete, Delete}, inRow{"a", int64(1), 1.0}, inRow{"a", int64(9), 9.0})),
		outRow{UpdateBefore, "a|3|3|12|1|9|12|4|1|9"},
		outRow{UpdateAfter, "a|1|1|2|2|2|2|2|2|2"})
	// a new min while the cache is stale
	expectOut(t, step(t, r, aggChunk(t, []Op{Delete, Insert}, inRow{"a", int64(2), 2.0}, inRow{"a", int64(5), 5.0})),
		outRow{UpdateBefore, "a|1|1|2|2|2|2|2|2|2"},
		outRow{UpdateAfter, "a|1|1|5|5|5|5|5|5|5"})
}

func TestHashAggWithoutGroupBy(t *testing.T) {
	r := startRun(t, newAgg(true))
	// PostgreSQL: SELECT count(*), count(v), sum(v), ... over no rows
	expectOut(t, step(t, r, nil), outRow{Insert, "0|0|||||||"})
	expectOut(t, step(t, r, nil)) // unchanged: nothing
	expectOut(t, step(t, r, aggChunk(t, nil, inRow{"x", int64(4), math.Inf(1)}, inRow{"y", int64(6), 1.0})),
		outRow{UpdateBefore, "0|0|||||||"},
		outRow{UpdateAfter, "2|2|10|4|6|Infinity|Infinity|1|Infinity"})
	// retracting the infinity restores the finite sum
	expectOut(t, step(t, r, aggChunk(t, []Op{Delete}, inRow{"x", int64(4), math.Inf(1)})),
		outRow{UpdateBefore, "2|2|10|4|6|Infinity|Infinity|1|Infinity"},
		outRow{UpdateAfter, "1|1|6|6|6|1|1|1|1"})
	// the single group never goes away
	expectOut(t, step(t, r, aggChunk(t, []Op{Delete}, inRow{"y", int64(6), 1.0})),
		outRow{UpdateBefore, "1|1|6|6|6|1|1|1|1"},
		outRow{UpdateAfter, "0|0|||||||"})
}

func TestHashAggFloatSpecials(t *testing.T) {
	// PostgreSQL 15: sum and avg of Infinity and -Infinity are NaN; NaN is
	// above every other float8 for max.
	r := startRun(t, newAgg(true))
	step(t, r, nil)
	expectOut(t, step(t, r, aggChunk(t, nil, inRow{"x", nil, math.Inf(1)}, inRow{"x", nil, math.Inf(-1)}, inRow{"x", nil, 1.0})),
		outRow{UpdateBefore, "0|0|||||||"},
		outRow{UpdateAfter, "3|0||||NaN|NaN|-Infinity|Infinity"})
	expectOut(t, step(t, r, aggChunk(t, []Op{Delete, Insert}, inRow{"x", nil, math.Inf(-1)}, inRow{"x", nil, math.NaN()})),
		outRow{UpdateBefore, "3|0||||NaN|NaN|-Infinity|Infinity"},
		outRow{UpdateAfter, "3|0||||NaN|NaN|1|NaN"})
}

func TestHashAggSumInt8IsNumeric(t *testing.T) {
	r := startRun(t, newAgg(true))
	step(t, r, nil)
	big := inRow{"x", int64(math.MaxInt64), 0.0}
	// the running sum passes 2^63 and comes back within one epoch: exact
	expectOut(t, step(t, r, aggChunk(t, []Op{Insert, Insert, Delete}, big, big, big)),
		outRow{UpdateBefore, "0|0|||||||"},
		outRow{UpdateAfter, "1|1|9223372036854775807|9223372036854775807|9223372036854775807|0|0|0|0"})
	// PostgreSQL: sum(bigint) is numeric and does not overflow
	expectOut(t, step(t, r, aggChunk(t, nil, big)),
		outRow{UpdateBefore, "1|1|9223372036854775807|9223372036854775807|9223372036854775807|0|0|0|0"},
		outRow{UpdateAfter, "2|2|18446744073709551614|9223372036854775807|9223372036854775807|0|0|0|0"})
}

func TestIntSumOutOfRange(t *testing.T) {
	c := &intSumCol{mode: sumToInt8}
	c.grow(2)
	c.s[0] = isumN{int128{lo: 1 << 63}, 1}         // 2^63
	c.s[1] = isumN{int128{lo: 1 << 63, hi: -1}, 1} // -2^63
	_, err := c.result(0)
	if e := pgerr.As(err); e == nil || e.Code != pgerr.NumericValueOutOfRange || e.Message != "bigint out of range" {
		t.Fatalf("got %v, want 22003 bigint out of range", err)
	}
	if v, err := c.result(1); err != nil || v.a != math.MinInt64 {
		t.Fatalf("got %v %v", v, err)
	}
	var s int128
	s.sub(math.MinInt64)
	s.sub(math.MinInt64)
	s.add(math.MinInt64)
	s.add(math.MinInt64)
	if s != (int128{}) {
		t.Fatalf("int128 round trip: %+v", s)
	}
}

func TestHashAggMessages(t *testing.T) {
	env := newEnv(t)
	in := make(chan Message, 8)
	in <- ChunkMsg(aggChunk(t, nil, inRow{"a", int64(1), 1.0}))
	in <- WatermarkMsg(Watermark{Col: 2, Value: 7}) // not a key: dropped
	in <- WatermarkMsg(Watermark{Col: 0, Value: 9}) // the key: held until the epoch's rows are out
	in <- WatermarkMsg(Watermark{Col: 0, Value: 8})
	in <- BarrierMsg(Barrier{Epoch: 1})
	in <- BarrierMsg(Barrier{Epoch: 2, Checkpoint: true}) // no change: barrier only
	close(in)
	h := newAgg(false)
	h.Input = &source{in}
	got := drain(t, env, h.Start(env, []<-chan Message{in}))
	if len(got) != 4 || got[0].Kind != KindChunk ||
		got[1].Kind != KindWatermark || got[1].Watermark != (Watermark{Col: 0, Value: 9}) ||
		got[2].Kind != KindBarrier || got[2].Barrier.Epoch != 1 ||
		got[3].Kind != KindBarrier || got[3].Barrier.Epoch != 2 || !got[3].Barrier.Checkpoint {
		t.Fatalf("messages %+v", got)
	}
	expectOut(t, render(got[0].Chunk), outRow{Insert, "a|1|1|1|1|1|1|1|1|1"})
}

func TestHashAggRetractingAbsentRowFails(t *testing.T) {
	r := startRun(t, newAgg(false))
	if err := r.consume(aggChunk(t, []Op{Delete}, inRow{"a", int64(1), 1.0})); err == nil {
		t.Fatal("no error")
	}
}

func TestHashAggUnsupported(t *testing.T) {
	_, err := AggSpec{Kind: AggSum, Arg: colK}.ResultType()
	if e := pgerr.As(err); e == nil || e.Code != pgerr.FeatureNotSupported {
		t.Fatalf("got %v", err)
	}
}

// TestHashAggRandomAgainstRecomputation applies random inserts, deletes and
// updates of live rows and checks, after every barrier, that the view the
// output builds equals the aggregates recomputed from the live rows.
func TestHashAggRandomAgainstRecomputation(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	keys := []any{"a", "b", "c", nil}
	randRow := func() inRow {
		r := inRow{k: keys[rng.Intn(len(keys))]}
		if rng.Intn(5) > 0 {
			r.v = int64(rng.Intn(21) - 10)
		}
		if rng.Intn(5) > 0 {
			r.f = float64(rng.Intn(41)-20) / 4 // sums stay exact
		}
		return r
	}
	for _, global := range []bool{false, true} {
		r := startRun(t, newAgg(global))
		var live []inRow
		view := map[string]string{} // key text -> row text
		for epoch := 0; epoch < 200; epoch++ {
			var ops []Op
			var rows []inRow
			for n := rng.Intn(8); n > 0; n-- {
				switch x := rng.Intn(3); {
				case x == 0 && len(live) > 0:
					i := rng.Intn(len(live))
					ops, rows = append(ops, Delete), append(rows, live[i])
					live = append(live[:i], live[i+1:]...)
				case x == 1 && len(live) > 0:
					i := rng.Intn(len(live))
					nr := randRow()
					ops, rows = append(ops, UpdateBefore, UpdateAfter), append(rows, live[i], nr)
					live[i] = nr
				default:
					nr := randRow()
					ops, rows = append(ops, Insert), append(rows, nr)
					live = append(live, nr)
				}
			}
			var c *Chunk
			if len(rows) > 0 {
				c = aggChunk(t, ops, rows...)
			}
			for i, o := range step(t, r, c) {
				k := viewKey(o.row, global)
				switch o.op {
				case Insert, UpdateAfter:
					if _, ok := view[k]; ok {
						t.Fatalf("epoch %d: %v of %q already in the view", epoch, o.op, o.row)
					}
					view[k] = o.row
				case Delete, UpdateBefore:
					if view[k] != o.row {
						t.Fatalf("epoch %d row %d: %v of %q, view has %q", epoch, i, o.op, o.row, view[k])
					}
					delete(view, k)
				}
			}
			want := recompute(live, global)
			if len(want) != len(view) {
				t.Fatalf("epoch %d: view %v, want %v", epoch, view, want)
			}
			for k, w := range want {
				if view[k] != w {
					t.Fatalf("epoch %d group %q: view %q, want %q", epoch, k, view[k], w)
				}
			}
		}
	}
}

func viewKey(row string, global bool) string {
	if global {
		return ""
	}
	for i := range row {
		if row[i] == '|' {
			return row[:i]
		}
	}
	return row
}

// recompute renders what newAgg's query returns over rows, per group key
// (NULL and ” render alike; the test keys have no ”).
func recompute(rows []inRow, global bool) map[string]string {
	groups := map[string][]inRow{}
	if global {
		groups[""] = nil
	}
	for _, r := range rows {
		k := ""
		if !global && r.k != nil {
			k = r.k.(string)
		}
		groups[k] = append(groups[k], r)
	}
	out := map[string]string{}
	for k, g := range groups {
		var nv, nf int64
		var sv, minV, maxV int64
		var sf, minF, maxF float64
		for _, r := range g {
			if r.v != nil {
				v := r.v.(int64)
				if nv == 0 || v < minV {
					minV = v
				}
				if nv == 0 || v > maxV {
					maxV = v
				}
				sv += v
				nv++
			}
			if r.f != nil {
				f := r.f.(float64)
				if nf == 0 || f < minF {
					minF = f
				}
				if nf == 0 || f > maxF {
					maxF = f
				}
				sf += f
				nf++
			}
		}
		s := fmt.Sprintf("%d|%d", len(g), nv)
		if nv > 0 {
			s += fmt.Sprintf("|%d|%d|%d", sv, minV, maxV)
		} else {
			s += "|||"
		}
		ff := func(f float64) string { return string(types.AppendText(nil, f, types.TFloat8, &types.DefaultFormat)) }
		if nf > 0 {
			s += "|" + ff(sf) + "|" + ff(sf/float64(nf)) + "|" + ff(minF) + "|" + ff(maxF)
		} else {
			s += "||||"
		}
		if global {
			out[""] = s
		} else {
			out[k] = k + "|" + s
		}
	}
	return out
}

func TestHashAggTextMinMaxAndNullKey(t *testing.T) {
	// SELECT v, min(k), max(k) GROUP BY v, with a NULL v group apart from 0
	h := &HashAgg{GroupBy: []expr.Expr{colV}, Aggs: []AggSpec{{Kind: AggMin, Arg: colK}, {Kind: AggMax, Arg: colK}},
		Cols: []types.Column{{Name: "v", Type: types.TInt8}, {Name: "min", Type: types.TText}, {Name: "max", Type: types.TText}}}
	r := startRun(t, h)
	expectOut(t, step(t, r, aggChunk(t, nil, inRow{"b", nil, nil}, inRow{"B", nil, nil}, inRow{"ab", int64(0), nil}, inRow{"a", int64(0), nil})),
		outRow{Insert, "|B|b"}, // C collation: upper case first
		outRow{Insert, "0|a|ab"})
	expectOut(t, step(t, r, aggChunk(t, []Op{Delete, Insert}, inRow{"B", nil, nil}, inRow{"c", nil, nil})),
		outRow{UpdateBefore, "|B|b"},
		outRow{UpdateAfter, "|b|c"})
}

func TestHashAggFloatSumRestartsWhenEmpty(t *testing.T) {
	r := startRun(t, newAgg(true))
	step(t, r, nil)
	// 0.1 + 0.2 - 0.1 - 0.2 is not 0 in float8; an emptied sum must be
	step(t, r, aggChunk(t, []Op{Insert, Insert, Delete, Delete},
		inRow{"x", nil, 0.1}, inRow{"x", nil, 0.2}, inRow{"x", nil, 0.1}, inRow{"x", nil, 0.2}))
	expectOut(t, step(t, r, aggChunk(t, nil, inRow{"x", nil, 0.0})),
		outRow{UpdateBefore, "0|0|||||||"},
		outRow{UpdateAfter, "1|0||||0|0|0|0"})
}

func TestHashAggFloatKeysGroupAsPostgres(t *testing.T) {
	// PostgreSQL 15: GROUP BY float8 puts 0 with -0 and NaN with NaN.
	h := &HashAgg{GroupBy: []expr.Expr{colF}, Aggs: []AggSpec{{Kind: AggCountStar}},
		Cols: []types.Column{{Name: "f", Type: types.TFloat8}, {Name: "count", Type: types.TInt8}}}
	r := startRun(t, h)
	expectOut(t, step(t, r, aggChunk(t, nil, inRow{nil, nil, 0.0}, inRow{nil, nil, math.Copysign(0, -1)},
		inRow{nil, nil, math.NaN()}, inRow{nil, nil, math.NaN()}, inRow{nil, nil, 1.0})),
		outRow{Insert, "0|2"}, outRow{Insert, "NaN|2"}, outRow{Insert, "1|1"})
	// retracting -0 takes from the 0 group
	expectOut(t, step(t, r, aggChunk(t, []Op{Delete}, inRow{nil, nil, math.Copysign(0, -1)})),
		outRow{UpdateBefore, "0|2"}, outRow{UpdateAfter, "0|1"})
}

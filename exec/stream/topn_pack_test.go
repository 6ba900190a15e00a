package stream

import (
	"fmt"
	"math/rand"
	"reflect"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// tnPackable are the property test's columns whose values pack.
var tnPackable = []string{"k1", "k2", "i2", "i4", "i8", "f4", "f8", "txt", "vc", "bp", "d", "tm", "ts", "tstz", "b", "by", "o"}

// TestTopNPackedMatchesBoxed builds packed and boxed entries of the same
// random rows (every kind that packs, NULLs, NaN, -0), with a sort key
// that is a row column and one that is not (a slot of its own), in random
// directions, and requires the packed ones to hold the boxed ones'
// values, norms and order (compare, compareAt, sameKeys) after the input
// is released and collected, and to read back from their values
// (packValues, as a restore does) to the same row.
func TestTopNPackedMatchesBoxed(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for shape := 0; shape < 40; shape++ {
		var idx []int
		for _, n := range tnPackable {
			if rng.Intn(3) > 0 {
				idx = append(idx, propCol(n).Idx)
			}
		}
		if len(idx) == 0 {
			continue
		}
		rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		var cols []types.Column
		for _, i := range idx {
			cols = append(cols, propCols[i])
		}
		a, b := rng.Intn(len(cols)), rng.Intn(len(cols))
		order := []exec.SortKey{
			{E: &expr.ColRef{Idx: a, T: cols[a].Type}, Desc: rng.Intn(2) == 0, NullsFirst: rng.Intn(2) == 0},
			{E: &expr.Coalesce{Args: []expr.Expr{&expr.ColRef{Idx: b, T: cols[b].Type}}, T: cols[b].Type}, Desc: rng.Intn(2) == 0, NullsFirst: rng.Intn(2) == 0},
		}
		if rng.Intn(2) == 0 {
			order[0], order[1] = order[1], order[0]
		}
		t.Run(fmt.Sprint(shape), func(t *testing.T) {
			runOf := func(noPack bool) *topnRun {
				tn := &TopN{Input: &tnSource{cols: cols}, Cols: cols, Limit: 1, Order: order, noPack: noPack}
				r, err := tn.newRun(newEnv(t))
				if err != nil {
					t.Fatal(err)
				}
				return r
			}
			pr, br := runOf(false), runOf(true)
			if pr.order.lay == nil || br.order.lay != nil {
				t.Fatalf("layouts: packed %v, boxed %v", pr.order.lay, br.order.lay)
			}
			var pe, be []*tnEntry
			var held []arrow.Array // the last chunk's key arrays, for compareAt
			var last *Chunk
			for round := 0; round < 4; round++ {
				var rows [][]types.Value
				for n := 1 + rng.Intn(30); n > 0; n-- {
					full := propRow(rng)
					row := make([]types.Value, len(idx))
					for j, i := range idx {
						row[j] = full[i]
					}
					rows = append(rows, row)
				}
				if len(pe) > 0 && rng.Intn(2) == 0 { // a duplicate row
					rows = append(rows, pr.order.rowVals(nil, pe[rng.Intn(len(pe))]))
				}
				c := tnChunk(t, cols, nil, rows)
				keys, err := pr.evalAll(pr.keyExprs, c.Rec)
				if err != nil {
					t.Fatal(err)
				}
				for i := range rows {
					pe = append(pe, pr.entry(c.Rec, keys, i))
					be = append(be, br.entry(c.Rec, keys, i))
				}
				if round < 3 {
					releaseAll(keys)
					c.Rec.Release()
				} else {
					held, last = keys, c
				}
			}
			defer func() { releaseAll(held); last.Rec.Release() }()
			runtime.GC()
			for i, e := range pe {
				if e.boxed || !be[i].boxed {
					t.Fatalf("entry %d: packed boxed=%v, boxed boxed=%v", i, e.boxed, be[i].boxed)
				}
				got := pr.order.keyVals(pr.order.rowVals(nil, e), e)
				want := br.order.keyVals(br.order.rowVals(nil, be[i]), be[i])
				if tnRender(got) != tnRender(want) || !reflect.DeepEqual(tnTypes(got), tnTypes(want)) {
					t.Fatalf("entry %d: %s, want %s", i, tnRender(got), tnRender(want))
				}
				if e.norm != be[i].norm {
					t.Fatalf("entry %d: norm %v, want %v", i, e.norm, be[i].norm)
				}
				back, err := pr.order.packValues(pr.order.rowVals(nil, e), pr.order.keyVals(nil, e))
				if err != nil || pr.order.compare(back, e) != 0 || back.norm != e.norm {
					t.Fatalf("entry %d: packValues: %v", i, err)
				}
			}
			for i := range pe {
				for j := range pe {
					p, b := pr.order.compare(pe[i], pe[j]), br.order.compare(be[i], be[j])
					if sign(p) != sign(b) {
						t.Fatalf("compare(%d, %d) = %d, boxed %d: %s / %s", i, j, p, b,
							tnRender(br.order.rowVals(nil, be[i])), tnRender(br.order.rowVals(nil, be[j])))
					}
					if pr.order.sameKeys(pe[i], pe[j]) != br.order.sameKeys(be[i], be[j]) {
						t.Fatalf("sameKeys(%d, %d) differs", i, j)
					}
				}
			}
			first := len(pe) - int(last.Rec.NumRows())
			for i := 0; i < int(last.Rec.NumRows()); i++ {
				for j := range pe {
					pn, bn := pr.order.normAt(held[0], i), br.order.normAt(held[0], i)
					p := pr.order.compareAt(held, i, pn, pe[j])
					b := br.order.compareAt(held, i, bn, be[j])
					if sign(p) != sign(b) {
						t.Fatalf("compareAt(%d, %d) = %d, boxed %d", first+i, j, p, b)
					}
				}
			}
		})
	}
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

func tnTypes(vs []types.Value) []reflect.Type {
	out := make([]reflect.Type, len(vs))
	for i, v := range vs {
		out[i] = reflect.TypeOf(v)
	}
	return out
}

// TestTopNPackEntryAllocs: a packed entry of a Nexmark bid row (integers,
// timestamps, texts) is one allocation, and its values read back.
func TestTopNPackEntryAllocs(t *testing.T) {
	cols := []types.Column{{Name: "auction", Type: types.TInt8}, {Name: "bidder", Type: types.TInt8},
		{Name: "price", Type: types.TInt8}, {Name: "channel", Type: types.TVarchar}, {Name: "url", Type: types.TVarchar},
		{Name: "date_time", Type: types.TTimestamp}, {Name: "extra", Type: types.TVarchar}}
	row := []types.Value{int64(1000), int64(2001), int64(123456), "Google", "https://www.nexmark.com/a/b/c/item.htm?query=1", types.TimestampValue(1e15), "x"}
	tn := &TopN{Input: &tnSource{cols: cols}, Cols: cols, Limit: 1,
		Order: []exec.SortKey{{E: &expr.ColRef{Idx: 5, T: types.TTimestamp}, Desc: true}}}
	r, err := tn.newRun(newEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	c := tnChunk(t, cols, nil, [][]types.Value{row})
	defer c.Rec.Release()
	keys, err := r.evalAll(r.keyExprs, c.Rec)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseAll(keys)
	var e *tnEntry
	if n := testing.AllocsPerRun(100, func() { e = r.entry(c.Rec, keys, 0) }); n != 1 {
		t.Fatalf("%v allocations an entry, want 1", n)
	}
	if got := r.order.rowVals(nil, e); !reflect.DeepEqual(got, row) {
		t.Fatalf("values %v, want %v", got, row)
	}
}

// TestTopNPartChunks: an append-only group top-2 over a thousand
// partitions (their partitions cut from chunks, newPart) gives the brute
// force's result at every barrier, with a collection between epochs; and
// newPart's partitions keep their encodings (inline or not) and are
// distinct, in chunks or not.
func TestTopNPartChunks(t *testing.T) {
	for _, appendOnly := range []bool{true, false} {
		top := newTopN(make(chan Message, ChannelSize), true, []exec.SortKey{{E: tnCol(1), Desc: true}}, 2, 0, true, appendOnly)
		r, err := top.newRun(newEnv(t))
		if err != nil {
			t.Fatal(err)
		}
		seen := map[*tnPart]bool{}
		var parts []*tnPart
		for i := 0; i < 3*tnPartChunk+5; i++ {
			enc := []byte(fmt.Sprintf("%0*d", 1+i%40, i))
			p := r.newPart(enc, int64(i))
			if seen[p] || p.enc != string(enc) || p.closeAt != int64(i) || p.rows.held != &r.held || len(p.emitted) != 0 {
				t.Fatalf("append-only %v: partition %d: %q %d", appendOnly, i, p.enc, p.closeAt)
			}
			seen[p] = true
			parts = append(parts, p)
		}
		if appendOnly != (len(r.chunk) > 0) {
			t.Fatalf("append-only %v: chunk of %d", appendOnly, len(r.chunk))
		}
		runtime.GC()
		for i, p := range parts {
			if want := fmt.Sprintf("%0*d", 1+i%40, i); p.enc != want {
				t.Fatalf("partition %d: %q after a collection, want %q", i, p.enc, want)
			}
		}
	}
	rng := rand.New(rand.NewSource(5))
	top := newTopN(make(chan Message, ChannelSize), true, []exec.SortKey{{E: tnCol(1), Desc: true}}, 2, 0, true, true)
	h := newTnHarness(t, top)
	var model [][]types.Value
	for epoch := 0; epoch < 20; epoch++ {
		var rows [][]types.Value
		for n := 0; n < 300; n++ {
			row := tnRandRow(rng)
			row[0] = int64(rng.Intn(1000))
			rows = append(rows, row)
		}
		model = append(model, rows...)
		h.in <- ChunkMsg(tnChunk(t, tnIn, nil, rows))
		h.barrierGC(model)
	}
}

// barrierGC ends the epoch, collects (entries must survive it) and
// checks the output against model.
func (h *tnHarness) barrierGC(model [][]types.Value) {
	h.t.Helper()
	h.barrier()
	runtime.GC()
	h.check(model)
}

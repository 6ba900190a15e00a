package nexmark

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// routedGen is a generator of bids (bidder and date_time, q11's
// columns) routed over n instances (1: unrouted).
func routedGen(t *testing.T, events int64, n int) *Generator {
	t.Helper()
	g := New(Config{Events: events, Seed: 7, Table: "bid"})
	if err := g.SetColumns("bid", []int{bidBidder, bidDateTime}); err != nil {
		t.Fatal(err)
	}
	if n > 1 && !g.SetRoute("bid", bidBidder, n, testOwner(n)) {
		t.Fatal("not routed")
	}
	return g
}

// partsOf is a step's batches: its parts, or its one bid batch.
func partsOf(b Batches) []arrow.RecordBatch {
	if b.Parts != nil {
		return b.Parts
	}
	return []arrow.RecordBatch{b.Bid}
}

// stepBoth is one step of rows of a generator that never recycles and
// of one that does; ok is false once the first has ended.
func stepBoth(t *testing.T, fresh, recycled *Generator, rows, step int) (want, got Batches, ok bool) {
	t.Helper()
	want, err := fresh.Next(rows)
	if err != nil {
		return want, got, false
	}
	if got, err = recycled.Next(rows); err != nil {
		t.Fatalf("step %d: %v", step, err)
	}
	return want, got, true
}

// firstValue is the address of the first value of rec's column i (nil:
// empty), which tells which buffer the column uses.
func firstValue(rec arrow.RecordBatch, i int) *int64 {
	v := int64Values(rec.Column(i))
	if len(v) == 0 {
		return nil
	}
	return &v[0]
}

// TestRecycledPartsEqualFresh: a generator, routed or not, whose batches
// are given back once read yields, step by step, the rows of one whose
// batches are not; it does write later batches into buffers given back
// (the pool is used); and batches kept instead of given back keep their
// rows to the end.
func TestRecycledPartsEqualFresh(t *testing.T) {
	for _, n := range []int{1, 2} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { testRecycled(t, n) })
	}
}

func testRecycled(t *testing.T, n int) {
	fresh, recycled := routedGen(t, 200000, n), routedGen(t, 200000, n)
	given := map[*int64]bool{} // buffers given back
	reused := 0
	type kept struct {
		rec  arrow.RecordBatch
		rows [][]string
	}
	var keep []kept
	for step := 0; ; step++ {
		want, got, ok := stepBoth(t, fresh, recycled, 2000, step)
		if !ok {
			break
		}
		wantParts := partsOf(want)
		for k, part := range partsOf(got) {
			rows := rowsOf(part)
			if !reflect.DeepEqual(rows, rowsOf(wantParts[k])) {
				t.Fatalf("step %d, part %d: the recycled generator's rows differ", step, k)
			}
			for c := range int(part.NumCols()) {
				if p := firstValue(part, c); p != nil && given[p] {
					reused++
				}
			}
			if step%5 == 0 { // kept, as by an operator that holds its input
				keep = append(keep, kept{part, rows})
				continue
			}
			for c := range int(part.NumCols()) {
				if p := firstValue(part, c); p != nil {
					given[p] = true
				}
			}
			recycled.Recycle(part)
		}
	}
	if reused == 0 {
		t.Fatal("no part was written into a buffer given back")
	}
	for i, k := range keep {
		if !reflect.DeepEqual(rowsOf(k.rec), k.rows) {
			t.Fatalf("kept part %d changed after later steps", i)
		}
	}
}

// oneColumn is a batch of one int64 column over v.
func oneColumn(v []int64) arrow.RecordBatch {
	return array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil),
		[]arrow.Array{int64Array(v, false)}, int64(len(v)))
}

// TestBufPoolForgets: the pool takes back only buffers it lent among the
// last poolLoans; an older one, or one it never lent, a slice of one or
// one already back, is left to the collector and never lent again.
func TestBufPoolForgets(t *testing.T) {
	p := newBufPool()
	src := make([]int64, 100)
	first := p.clone(src)
	for range poolLoans { // loans that come back, so the pool stays on
		p.put(oneColumn(p.clone(src)))
	}
	free := p.freeBytes
	p.put(oneColumn(first))              // forgotten: lent poolLoans loans ago
	p.put(oneColumn(make([]int64, 100))) // never lent
	last := p.clone(src)
	p.put(oneColumn(last[1:])) // not the buffer's start
	if p.off || p.freeBytes != free-cap(last)*8 {
		t.Fatalf("off %v, free bytes %d: the pool took back what it must not (want %d)", p.off, p.freeBytes, free-cap(last)*8)
	}
	p.put(oneColumn(last))
	if p.freeBytes != free {
		t.Fatalf("free bytes %d after the last loan came back, want %d", p.freeBytes, free)
	}
	p.put(oneColumn(last)) // twice: no longer lent
	if p.freeBytes != free {
		t.Fatalf("free bytes %d after a second return", p.freeBytes)
	}
	if b := p.clone(src); &b[0] != &last[0] {
		t.Fatal("the buffer given back last was not lent first")
	}
}

// TestReaderEndFreesPool: when a recycling reader's run ends, its pool
// drops its free buffers and takes nothing back from batches given back
// late: a finished source keeps no memory.
func TestReaderEndFreesPool(t *testing.T) {
	r := NewReader(Config{Table: "bid", Events: 200_000})
	var held []arrow.RecordBatch
	n := 0
	if err := r.Run(context.Background(), func(rec arrow.RecordBatch) error {
		if n++; n%2 == 0 {
			r.Recycle(rec) // written again by a later step
		} else {
			held = append(held, rec)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	p := r.gen.pool
	if p == nil || n < 4 {
		t.Fatalf("pool %v after %d batches: the reader does not recycle", p, n)
	}
	if !p.off || p.freeBytes != 0 || len(p.loans) != 0 {
		t.Fatalf("after the run: off %v, %d bytes free, %d loans remembered", p.off, p.freeBytes, len(p.loans))
	}
	for _, rec := range held {
		r.Recycle(rec)
	}
	if p.freeBytes != 0 {
		t.Fatalf("%d bytes taken back after the run", p.freeBytes)
	}
}

// TestBufPoolTurnsOff: a pool none of whose last poolLoans loans came
// back forgets them all (they are garbage once their consumer drops
// them) and lends unremembered heap memory from then on.
func TestBufPoolTurnsOff(t *testing.T) {
	p := newBufPool()
	src := make([]int64, 100)
	var last []int64
	for range poolLoans {
		last = p.clone(src)
	}
	if !p.off || len(p.loans) != 0 {
		t.Fatalf("off %v with %d loans remembered after %d not given back", p.off, len(p.loans), poolLoans)
	}
	p.put(oneColumn(last))
	b := p.clone(src)
	p.put(oneColumn(b))
	if p.freeBytes != 0 || &b[0] == &last[0] {
		t.Fatalf("a pool turned off took buffers back (%d bytes free)", p.freeBytes)
	}
	if !reflect.DeepEqual(b, src) {
		t.Fatal("a pool turned off lends a wrong copy")
	}
}

// TestBufPoolBounded: the pool keeps at most poolFreeBytes free.
func TestBufPoolBounded(t *testing.T) {
	p := newBufPool()
	src := make([]int64, 1<<18) // 2 MiB buffers
	var recs []arrow.RecordBatch
	for range 8 {
		recs = append(recs, oneColumn(p.clone(src)))
	}
	for _, r := range recs {
		p.put(r)
	}
	if p.freeBytes > poolFreeBytes || p.freeBytes == 0 {
		t.Fatalf("free bytes %d, want at most %d and some", p.freeBytes, poolFreeBytes)
	}
}

// TestRecycleConcurrent: parts given back from another goroutine, as the
// runtime's instances give them back, while the generator goes on: the
// rows stay those of a generator that never recycles (run with -race).
func TestRecycleConcurrent(t *testing.T) {
	const n = 3
	fresh, recycled := routedGen(t, 300000, n), routedGen(t, 300000, n)
	parts := make(chan arrow.RecordBatch, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for p := range parts {
			recycled.Recycle(p)
		}
	}()
	for step := 0; ; step++ {
		want, got, ok := stepBoth(t, fresh, recycled, 3000, step)
		if !ok {
			break
		}
		for k, part := range got.Parts {
			if !reflect.DeepEqual(rowsOf(part), rowsOf(want.Parts[k])) {
				t.Fatalf("step %d, part %d: rows differ", step, k)
			}
			parts <- part
		}
	}
	close(parts)
	<-done
}

package nexmark

import (
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

// firstValue is the address of the first value of rec's column i (nil:
// empty), which tells which buffer the column uses.
func firstValue(rec arrow.RecordBatch, i int) *int64 {
	var v []int64
	switch a := rec.Column(i).(type) {
	case *array.Int64:
		v = a.Int64Values()
	case *array.Timestamp:
		v = arrow.Int64Traits.CastFromBytes(arrow.TimestampTraits.CastToBytes(a.TimestampValues()))
	}
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
		want, err := fresh.Next(2000)
		if err != nil {
			break
		}
		got, err := recycled.Next(2000)
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
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

// TestBufPoolForgets: the pool takes back only buffers it lent among the
// last poolLoans; an older one, or one it never lent, is left to the
// collector and never lent again.
func TestBufPoolForgets(t *testing.T) {
	p := newBufPool()
	rec := func(v []int64) arrow.RecordBatch {
		return array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil),
			[]arrow.Array{int64Array(v, false)}, int64(len(v)))
	}
	src := make([]int64, 100)
	var lent [][]int64
	for range poolLoans + 10 {
		lent = append(lent, p.clone(src))
	}
	p.put(rec(lent[0]))               // forgotten: lent poolLoans loans ago
	p.put(rec(make([]int64, 100)))    // never lent
	p.put(rec(lent[len(lent)-1][1:])) // not the buffer's start
	if p.freeBytes != 0 {
		t.Fatalf("the pool took back %d bytes it must not", p.freeBytes)
	}
	last := lent[len(lent)-1]
	p.put(rec(last))
	if p.freeBytes != cap(last)*8 {
		t.Fatalf("free bytes %d after the last loan came back, want %d", p.freeBytes, cap(last)*8)
	}
	p.put(rec(last)) // twice: no longer lent
	if p.freeBytes != cap(last)*8 {
		t.Fatalf("free bytes %d after a second return", p.freeBytes)
	}
	if b := p.clone(src); &b[0] != &last[0] {
		t.Fatal("the buffer given back was not lent again")
	}
}

// TestBufPoolBounded: the pool keeps at most poolFreeBytes free.
func TestBufPoolBounded(t *testing.T) {
	p := newBufPool()
	src := make([]int64, 1<<18) // 2 MiB buffers
	var recs []arrow.RecordBatch
	for range 8 {
		v := p.clone(src)
		recs = append(recs, array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil),
			[]arrow.Array{int64Array(v, false)}, int64(len(v))))
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
		want, err := fresh.Next(3000)
		if err != nil {
			break
		}
		got, err := recycled.Next(3000)
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
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

package stream

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

// VNodeOfWord and Routing.Owner give a row the vnode and the instance the
// exchange's hashing (VNodeHasher, Splitter) gives it, for bigint and
// integer keys of other widths alike.
func TestRoutingOwnerEqualsSplitter(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	vals := []int64{0, 1, -1, math.MaxInt64, math.MinInt64, 1000, 1001}
	for range 5000 {
		vals = append(vals, r.Int64()>>r.IntN(60))
	}
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.AppendValues(vals, nil)
	a := b.NewArray()
	var x VNodeHasher
	vn := x.VNodes([]arrow.Array{a}, []types.T{types.TInt8}, len(vals), nil)
	b32 := array.NewInt32Builder(memory.DefaultAllocator)
	var small []int64
	for _, v := range vals {
		b32.Append(int32(v))
		small = append(small, int64(int32(v)))
	}
	vn32 := x.VNodes([]arrow.Array{b32.NewArray()}, []types.T{types.TInt4}, len(vals), nil)
	for i, v := range vals {
		if got := VNodeOfWord(v); got != vn[i] {
			t.Fatalf("VNodeOfWord(%d) = %d, VNodeHasher %d", v, got, vn[i])
		}
		if got := VNodeOfWord(small[i]); got != vn32[i] {
			t.Fatalf("VNodeOfWord(%d) = %d, VNodeHasher over int4 %d", small[i], got, vn32[i])
		}
	}
	for _, n := range []int{2, 3, 8} {
		rt := NewRouting(n)
		sp := NewSplitter([]int{0}, []types.T{types.TInt8}, n)
		rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}}, nil), []arrow.Array{a}, int64(len(vals)))
		owner, _ := sp.Route(&Chunk{Rec: rec})
		seen := make([]bool, n)
		for i, v := range vals {
			if got := rt.Owner(v); got != int(owner[i]) {
				t.Fatalf("n %d: Owner(%d) = %d, Splitter %d", n, v, got, owner[i])
			}
			seen[owner[i]] = true
		}
		for k, s := range seen {
			if !s {
				t.Fatalf("n %d: no value for instance %d", n, k)
			}
		}
		for k := range n {
			if p := rt.Part(k); p.Of != rt || p.K != k || p != rt.Part(k) {
				t.Fatalf("Part(%d) = %+v", k, p)
			}
		}
	}
}

// TestRoutingOwner2EqualsSplitter: Routing.Owner2 gives a row of a
// two-bigint key the instance the exchange's Splitter gives it.
func TestRoutingOwner2EqualsSplitter(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	n := 4000
	as, bs := make([]int64, n), make([]int64, n)
	for i := range as {
		as[i], bs[i] = r.Int64()>>r.IntN(60), r.Int64()>>r.IntN(60)
	}
	ab, bb := array.NewInt64Builder(memory.DefaultAllocator), array.NewInt64Builder(memory.DefaultAllocator)
	ab.AppendValues(as, nil)
	bb.AppendValues(bs, nil)
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}, {Name: "b", Type: arrow.PrimitiveTypes.Int64}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{ab.NewArray(), bb.NewArray()}, int64(n))
	for _, k := range []int{2, 3, 8} {
		rt := NewRouting(k)
		owner, _ := NewSplitter([]int{0, 1}, []types.T{types.TInt8, types.TInt8}, k).Route(&Chunk{Rec: rec})
		seen := make([]bool, k)
		for i := range as {
			if got := rt.Owner2(as[i], bs[i]); got != int(owner[i]) {
				t.Fatalf("n %d: Owner2(%d, %d) = %d, Splitter %d", k, as[i], bs[i], got, owner[i])
			}
			seen[owner[i]] = true
		}
		if slices.Contains(seen, false) {
			t.Fatalf("n %d: an instance owns none of %d rows", k, n)
		}
	}
}

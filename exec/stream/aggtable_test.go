package stream

import (
	"cmp"
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

// TestGroupTableInsertRemove checks ids against a map through growth and
// many removals (backward-shift deletion), for word, raw-text and encoded
// keys.
func TestGroupTableInsertRemove(t *testing.T) {
	for _, ts := range [][]types.T{{types.TInt8}, {types.TInt8, types.TInt4}, {types.TText}, {types.TText, types.TInt8}} {
		t.Run(fmt.Sprint(ts), func(t *testing.T) {
			rng := rand.New(rand.NewSource(3))
			tab := newGroupTable(ts, false)
			ids := map[[2]int64]int32{} // key -> id
			live := map[int32]bool{}
			for round := 0; round < 200; round++ {
				n := 1 + rng.Intn(300)
				keys := make([][2]int64, n)
				var nulls []bool
				bs := make([]array.Builder, len(ts))
				for c, tt := range ts {
					bs[c] = types.NewBuilder(memory.DefaultAllocator, tt)
				}
				for i := range keys {
					keys[i] = [2]int64{int64(rng.Intn(2000)), int64(rng.Intn(3))}
					null := rng.Intn(50) == 0
					nulls = append(nulls, null)
					if null {
						keys[i][0] = -1
					}
					for c := range ts {
						v := keys[i][c]
						switch {
						case c == 0 && null:
							bs[c].AppendNull()
						case ts[c].Kind == types.Text:
							bs[c].(*array.StringBuilder).Append(fmt.Sprint("k", v))
						case ts[c].Kind == types.Int4:
							bs[c].(*array.Int32Builder).Append(int32(v))
						default:
							bs[c].(*array.Int64Builder).Append(v)
						}
					}
					if len(ts) == 1 {
						keys[i][1] = 0
					}
				}
				arrs := make([]arrow.Array, len(ts))
				for c := range bs {
					arrs[c] = bs[c].NewArray()
				}
				got := tab.probe(arrs, nil, n, false)
				for i, k := range keys {
					id, ok := ids[k]
					if !ok {
						if live[got[i]] {
							t.Fatalf("round %d: new key %v got live id %d", round, k, got[i])
						}
						ids[k], live[got[i]] = got[i], true
						continue
					}
					if got[i] != id {
						t.Fatalf("round %d: key %v: id %d, want %d", round, k, got[i], id)
					}
				}
				// remove about half of the keys
				for k, id := range ids {
					if rng.Intn(2) == 0 {
						tab.remove(id)
						delete(ids, k)
						delete(live, id)
					}
				}
				if tab.len() != len(ids) {
					t.Fatalf("round %d: len %d, want %d", round, tab.len(), len(ids))
				}
				if tab.cap() > 4000 {
					t.Fatalf("ids not reused: cap %d", tab.cap())
				}
			}
		})
	}
}

// TestSortedSet checks the multiset against a sorted slice under random
// adds and retractions, past block splits and merges.
func TestSortedSet(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	var s sortedSet[uint64]
	want := map[uint64]int64{}
	for i := 0; i < 50000; i++ {
		k := uint64(rng.Intn(3000))
		sign := int64(1)
		if rng.Intn(5) < 2 {
			sign = -1
		}
		err := s.add(k, sign, cmp.Compare[uint64], same[uint64])
		if sign < 0 && want[k] == 0 {
			if err == nil {
				t.Fatalf("retracting absent %d: no error", k)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		want[k] += sign
		if want[k] == 0 {
			delete(want, k)
		}
		if i%997 != 0 {
			continue
		}
		var keys []uint64
		for k := range want {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var got []uint64
		for bi, b := range s.blocks {
			if len(b) == 0 || len(b) > 2*setBlock || s.lasts[bi] != b[len(b)-1].k {
				t.Fatalf("block %d: %d entries, last %d", bi, len(b), s.lasts[bi])
			}
			for _, e := range b {
				if e.n != want[e.k] {
					t.Fatalf("%d: count %d, want %d", e.k, e.n, want[e.k])
				}
				got = append(got, e.k)
			}
		}
		if !slices.Equal(got, keys) {
			t.Fatalf("keys differ: %d vs %d", len(got), len(keys))
		}
		if mn, ok := s.extreme(false); len(keys) > 0 && (!ok || mn != keys[0]) {
			t.Fatalf("min %d, want %d", mn, keys[0])
		}
		if mx, ok := s.extreme(true); len(keys) > 0 && (!ok || mx != keys[len(keys)-1]) {
			t.Fatalf("max %d, want %d", mx, keys[len(keys)-1])
		}
	}
}

// TestLeadTableLoad: a table with a lead (a DISTINCT aggregate's (group,
// value) pairs) fills to three quarters before it grows (a third fewer
// slots than half full), and finds, creates and removes pairs correctly
// at that load (backward-shift deletion in long runs).
func TestLeadTableLoad(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	tab := newGroupTable([]types.T{types.TInt8}, true)
	ids := map[[2]int64]int32{}
	for round := 0; round < 60; round++ {
		n := 1 + rng.Intn(200)
		lead := make([]int32, n)
		b := array.NewInt64Builder(memory.DefaultAllocator)
		keys := make([][2]int64, n)
		for i := range keys {
			keys[i] = [2]int64{int64(rng.Intn(40)), int64(rng.Intn(200))}
			lead[i] = int32(keys[i][0])
			b.Append(keys[i][1])
		}
		vals := b.NewArray()
		got := tab.probe([]arrow.Array{vals}, lead, n, true)
		for i, k := range keys {
			if id, ok := ids[k]; ok {
				if got[i] != id {
					t.Fatalf("round %d: pair %v has id %d, want %d", round, k, got[i], id)
				}
				continue
			}
			ids[k] = got[i]
		}
		vals.Release()
		// remove a few pairs
		for k, id := range ids {
			if rng.Intn(20) == 0 {
				tab.remove(id)
				delete(ids, k)
			}
		}
		if tab.len() != len(ids) {
			t.Fatalf("round %d: %d live pairs, want %d", round, tab.len(), len(ids))
		}
	}
	// 3000 pairs: 4096 slots at three quarters (8192 at half)
	tab = newGroupTable([]types.T{types.TInt8}, true)
	const pairs = 3000
	lead := make([]int32, pairs)
	b := array.NewInt64Builder(memory.DefaultAllocator)
	for i := range pairs {
		lead[i] = int32(i % 7)
		b.Append(int64(i))
	}
	vals := b.NewArray()
	defer vals.Release()
	tab.probe([]arrow.Array{vals}, lead, pairs, true)
	if tab.len() != pairs || len(tab.lslots) != 4096 {
		t.Fatalf("%d pairs in %d slots, want %d in 4096", tab.len(), len(tab.lslots), pairs)
	}
}

// TestLeadTableInsertRemove checks a lead table's (16-byte slot) ids
// against a map under random inserts and removals across several
// doublings: a key keeps its id while live, and a removed key's slot
// never hides another key (backward shift).
func TestLeadTableInsertRemove(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	tab := newGroupTable([]types.T{types.TInt8}, true)
	ids := map[[2]int64]int32{} // (lead, value) -> id
	for round := 0; round < 60; round++ {
		n := 1 + rng.Intn(2000)
		lead := make([]int32, n)
		keys := make([][2]int64, n)
		b := array.NewInt64Builder(memory.DefaultAllocator)
		for i := range keys {
			lead[i] = int32(rng.Intn(5))
			keys[i] = [2]int64{int64(lead[i]), rng.Int63n(int64(1+round*400)) - 100}
			b.Append(keys[i][1])
		}
		vals := b.NewArray()
		got := tab.probe([]arrow.Array{vals}, lead, n, true)
		vals.Release()
		for i, k := range keys {
			if id, ok := ids[k]; ok && got[i] != id {
				t.Fatalf("round %d: key %v: id %d, want %d", round, k, got[i], id)
			} else if !ok {
				ids[k] = got[i]
			}
		}
		for k, id := range ids {
			if rng.Intn(4) == 0 {
				tab.remove(id)
				delete(ids, k)
			}
		}
		if tab.len() != len(ids) {
			t.Fatalf("round %d: len %d, want %d", round, tab.len(), len(ids))
		}
	}
	if len(tab.lslots) < 4*tableInitSlots {
		t.Fatalf("only %d slots: the test never grew the table", len(tab.lslots))
	}
}

// TestLeadTableProbedAhead checks probes of a lead table past
// touchMinSlots (probeLead: hashes and first slots read a block ahead)
// against a map: repeated keys within a chunk, negative leads, tables
// that grow in the middle of a block, and newRows naming exactly the rows
// that created pairs.
func TestLeadTableProbedAhead(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	tab := newGroupTable([]types.T{types.TInt8}, true)
	ids := map[[2]int64]int32{}
	ahead := false
	for round := 0; round < 80; round++ {
		ahead = ahead || len(tab.lslots) >= touchMinSlots
		n := 1 + rng.Intn(5000)
		lead := make([]int32, n)
		keys := make([][2]int64, n)
		b := array.NewInt64Builder(memory.DefaultAllocator)
		for i := range keys {
			lead[i] = int32(rng.Intn(9)) - 1 // -1: not aggregated
			keys[i] = [2]int64{int64(lead[i]), rng.Int63n(int64(1 + round*3000))}
			b.Append(keys[i][1])
		}
		vals := b.NewArray()
		got := tab.probe([]arrow.Array{vals}, lead, n, true)
		vals.Release()
		created := map[int]bool{}
		for _, r := range tab.newRows {
			created[int(r)] = true
		}
		for i, k := range keys {
			if k[0] < 0 {
				if got[i] != -1 || created[i] {
					t.Fatalf("round %d row %d: negative lead got id %d", round, i, got[i])
				}
				continue
			}
			id, ok := ids[k]
			switch {
			case ok && got[i] != id:
				t.Fatalf("round %d: key %v: id %d, want %d", round, k, got[i], id)
			case ok && created[i]:
				t.Fatalf("round %d: row %d listed as new, its key %v had id %d", round, i, k, id)
			case !ok && !created[i]:
				t.Fatalf("round %d: row %d created key %v but is not in newRows", round, i, k)
			case !ok:
				ids[k] = got[i]
			}
		}
		for k, id := range ids {
			if rng.Intn(50) == 0 {
				tab.remove(id)
				delete(ids, k)
			}
		}
		if tab.len() != len(ids) {
			t.Fatalf("round %d: len %d, want %d", round, tab.len(), len(ids))
		}
	}
	if !ahead {
		t.Fatalf("the table reached only %d slots: no probe went ahead", len(tab.lslots))
	}
}

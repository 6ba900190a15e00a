package stream

import (
	"math/rand/v2"
	"testing"
)

// intIndex against a Go map under random puts, gets and deletes, with
// keys drawn from small and wide ranges (long probe runs, wrapping at the
// table's end, deletes inside runs) and through growth.
func TestIntIndexEqualsMap(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		x := newIntIndex(0)
		m := map[int64]int32{}
		span := int64(50)
		if seed%2 == 1 {
			span = 1 << 40
		}
		key := func() int64 { return rng.Int64N(span) - span/3 }
		for op := range 20000 {
			k := key()
			switch rng.IntN(3) {
			case 0:
				v := int32(op)
				x.put(k, v)
				m[k] = v
			case 1:
				x.del(k)
				delete(m, k)
			}
			want, held := m[k]
			if v, ok := x.get(k); ok != held || v != want {
				t.Fatalf("seed %d op %d: get(%d) = %d, %v; want %d, %v", seed, op, k, v, ok, want, held)
			}
			if x.len() != len(m) {
				t.Fatalf("seed %d op %d: %d keys, map %d", seed, op, x.len(), len(m))
			}
		}
		for k, v := range m {
			if got, ok := x.get(k); !ok || got != v {
				t.Fatalf("seed %d: key %d = %d, %v; want %d", seed, k, got, ok, v)
			}
		}
		held := 0
		for _, s := range x.slots {
			if s.used {
				held++
				if v, ok := m[s.key]; !ok || v != s.val {
					t.Fatalf("seed %d: slot holds %d = %d, the map %d, %v", seed, s.key, s.val, v, ok)
				}
			}
		}
		if held != len(m) {
			t.Fatalf("seed %d: %d slots used, %d keys", seed, held, len(m))
		}
	}
}

// Keys that all share one home slot (a run wrapping the table's end),
// deleted in every order, leave the others findable.
func TestIntIndexDeleteInRuns(t *testing.T) {
	x := newIntIndex(0)
	size := len(x.slots)
	var same []int64
	for k := int64(0); len(same) < 8; k++ {
		if x.home(k) == size-2 {
			same = append(same, k)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 50 {
		for i, k := range same {
			x.put(k, int32(i))
		}
		order := rng.Perm(len(same))
		for n, o := range order {
			x.del(same[o])
			for _, p := range order[n+1:] {
				if v, ok := x.get(same[p]); !ok || v != int32(p) {
					t.Fatalf("round %d: after deleting %d keys, %d = %d, %v", round, n+1, same[p], v, ok)
				}
			}
		}
		if x.len() != 0 {
			t.Fatalf("round %d: %d keys left", round, x.len())
		}
	}
}

package exec

import (
	"context"
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/membudget"
	"github.com/streamsql/streamsql/types"
)

// TestDenseHashTableEqualsHashed feeds the same key batches to a table
// that may use the dense index and to a hashed one, and requires the same
// group ids, new rows and lookups from both: keys that stay in a small
// range (with NULLs), that widen it upward and downward batch after batch,
// that leave it for the hashed slots in the middle of a run, and near the
// ends of int64 (where the array's slack must not overflow). It also
// checks where each stream ends up (dense or hashed), so that both paths
// are really taken.
func TestDenseHashTableEqualsHashed(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	const maxI, minI = math.MaxInt64, math.MinInt64
	streams := []struct {
		name      string
		t         types.T
		key       func(batch, i int) any // nil: NULL
		wantDense bool
	}{
		{"small range, NULLs", types.TInt8, func(_, _ int) any {
			if rng.Intn(20) == 0 {
				return nil
			}
			return rng.Intn(3000) - 1500
		}, true},
		{"ascending", types.TInt8, func(b, i int) any { return 1000*b + i }, true},
		{"descending", types.TInt4, func(b, i int) any { return -1000*b - i }, true},
		{"leaves at batch 5", types.TInt8, func(b, _ int) any {
			if b >= 5 && rng.Intn(50) == 0 {
				return rng.Int63()
			}
			if rng.Intn(30) == 0 {
				return nil
			}
			return rng.Intn(500)
		}, false},
		{"near MaxInt64", types.TInt8, func(_, _ int) any { return maxI - int64(rng.Intn(700)) }, true},
		{"near MinInt64", types.TInt8, func(_, _ int) any { return minI + int64(rng.Intn(700)) }, true},
		{"both ends", types.TInt8, func(b, _ int) any {
			if b > 2 && rng.Intn(2) == 0 {
				return maxI - int64(rng.Intn(3))
			}
			return minI + int64(rng.Intn(3))
		}, false},
		{"all NULL then keys", types.TInt8, func(b, _ int) any {
			if b < 2 {
				return nil
			}
			return rng.Intn(100)
		}, true},
	}
	for _, s := range streams {
		dense, hashed := newHashTable([]types.T{s.t}), newHashTable([]types.T{s.t})
		dense.allowDense(0)
		if !dense.dn.on {
			t.Fatalf("%s: allowDense did not take", s.name)
		}
		for b := 0; b < 12; b++ {
			n := 1 + rng.Intn(1000)
			vals := make([]any, n)
			for i := range vals {
				vals[i] = s.key(b, i)
			}
			keys := []arrow.Array{arr(s.t, vals...)}
			g1 := dense.insert(keys, n, nil, false)
			g2 := hashed.insert(keys, n, nil, false)
			if !slices.Equal(g1, g2) {
				t.Fatalf("%s batch %d: dense gids differ from hashed", s.name, b)
			}
			if !slices.Equal(dense.newRows, hashed.newRows) || dense.len() != hashed.len() {
				t.Fatalf("%s batch %d: new rows %v, hashed %v", s.name, b, dense.newRows, hashed.newRows)
			}
			// Lookups: the keys again, keys never inserted, NULLs.
			for i := range vals {
				if rng.Intn(3) == 0 {
					vals[i] = rng.Int63n(5000) - 2500
				}
			}
			keys = []arrow.Array{arr(s.t, vals...)}
			for _, skip := range []bool{false, true} {
				l1 := dense.lookup(keys, n, nil, skip)
				l2 := hashed.lookup(keys, n, nil, skip)
				if !slices.Equal(l1, l2) {
					t.Fatalf("%s batch %d skipNulls=%v: dense lookup differs from hashed", s.name, b, skip)
				}
				if !slices.Equal(dense.hv[:n], hashed.hv[:n]) {
					t.Fatalf("%s batch %d: a lookup's hashes differ", s.name, b)
				}
			}
		}
		if dense.dn.on != s.wantDense {
			t.Errorf("%s: dense at the end %v, want %v", s.name, dense.dn.on, s.wantDense)
		}
	}
}

// TestDenseSpanLimit: the array never grows past maxAggDenseSpan of the
// groups it may hold, and a wide first batch goes straight to hashing.
func TestDenseSpanLimit(t *testing.T) {
	h := newHashTable([]types.T{types.TInt8})
	h.allowDense(0)
	keys := []arrow.Array{arr(types.TInt8, 0, int64(maxAggDenseSpan(2)))}
	h.insert(keys, 2, nil, false)
	if h.dn.on {
		t.Fatalf("a span of %d slots for 2 groups stayed dense", maxAggDenseSpan(2)+1)
	}
	h = newHashTable([]types.T{types.TInt8})
	h.allowDense(0)
	for b := 0; b < 200; b++ {
		keys := []arrow.Array{arr(types.TInt8, b*1000)}
		h.insert(keys, 1, nil, false)
		if h.dn.on && uint64(len(h.dn.slots)) > maxAggDenseSpan(h.len()+1) {
			t.Fatalf("batch %d: %d slots for %d groups", b, len(h.dn.slots), h.len())
		}
	}
	if h.dn.on {
		t.Fatalf("keys 1000 apart stayed dense")
	}
}

// TestDenseBoundedAndCharged: an aggregation's dense index stays within a
// quarter of work_mem, and its bytes are charged to the aggregation's
// account.
func TestDenseBoundedAndCharged(t *testing.T) {
	h := newHashTable([]types.T{types.TInt8})
	h.allowDense(4096) // 1024 slots
	h.insert([]arrow.Array{arr(types.TInt8, 0, 1000)}, 2, nil, false)
	if !h.dn.on {
		t.Fatalf("keys 0 and 1000 left a 1024-slot index")
	}
	h.insert([]arrow.Array{arr(types.TInt8, 1100)}, 1, nil, false)
	if h.dn.on {
		t.Fatalf("key 1100 stayed in a 1024-slot index (%d slots)", len(h.dn.slots))
	}

	q := membudget.NewQuery(nil, 0, 64<<20)
	ctx := &Context{Eval: &expr.Context{Ctx: context.Background(), Budget: q}}
	k := col(0, types.TInt8)
	h2 := aggNode(nil, []expr.Expr{k}, agg(t, "count", true))
	it := &hashAggIter{ctx: ctx, h: h2, acct: membudget.NewAccount(q)}
	r, err := newRun(ctx, h2)
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]any, 1000)
	for i := range vals {
		vals[i] = i * 50 // 1000 groups over 50k keys: dense
	}
	b := newBatch(cols(types.TInt8), []arrow.Array{arr(types.TInt8, vals...)}, len(vals))
	if err := it.fold(r, b, nil, it.acct); err != nil {
		t.Fatal(err)
	}
	if !r.table.dn.on {
		t.Fatal("the run's table is not dense")
	}
	if slots := int64(4 * len(r.table.dn.slots)); it.acct.Used() < slots {
		t.Fatalf("account holds %d bytes, the dense index alone %d", it.acct.Used(), slots)
	}
}

package exec

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// joinSide makes n rows (k int8, t text, v int8): keys from 0..keys-1,
// with skew most rows on key 1, some NULL keys.
func joinSide(r *rand.Rand, n, keys int, skew bool) *srcNode {
	ks, ts, vs := make([]any, n), make([]any, n), make([]any, n)
	for i := range ks {
		k := r.Intn(keys)
		if skew && r.Intn(40) == 0 {
			k = 1 // about 150 x 200 pairs
		}
		ks[i] = k
		ts[i] = fmt.Sprintf("t%d", k)
		if r.Intn(25) == 0 {
			ks[i], ts[i] = nil, nil
		}
		vs[i] = r.Intn(100)
	}
	return src(cols(types.TInt8, types.TText, types.TInt8), 256, ks, ts, vs)
}

// TestHashJoinSpillMatchesMemory: at a 64kB work_mem a hash join whose
// build side passes it partitions both sides to files and joins them
// partition by partition; every join kind, with and without a residual,
// on integer and text keys with NULLs and skew, gives the in-memory rows.
func TestHashJoinSpillMatchesMemory(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	dir := t.TempDir()
	lc, rc := cols(types.TInt8, types.TText, types.TInt8), cols(types.TInt8, types.TText, types.TInt8)
	// The third pair has its build rows on 10 keys: most partitions have
	// probe rows only (outer and anti joins must still emit them).
	for cfg := 0; cfg < 3; cfg++ {
		skew := cfg == 1
		l, rt := joinSide(r, 3000, 3000, skew), joinSide(r, 6000, 4000, skew)
		if cfg == 2 {
			rt = joinSide(r, 4000, 10, false)
		}
		for _, kc := range []int{0, 1} {
			kt := lc[kc].Type
			for _, kind := range []JoinKind{InnerJoin, LeftJoin, RightJoin, FullJoin, SemiJoin, AntiJoin} {
				for _, withRes := range []bool{false, true} {
					var res expr.Expr
					if withRes {
						res = &fnExpr{t: types.TBool, name: "l.v < r.v", f: func(r []any) any { return r[2].(int64) < r[5].(int64) }}
					}
					hj := &HashJoin{Left: l, Right: rt, Kind: kind, LeftKeys: []expr.Expr{col(kc, kt)}, RightKeys: []expr.Expr{col(kc, kt)},
						Residual: res, Cols: joinCols(kind, lc, rc)}
					want, _, err := runBudget(t, hj, 0, 0, "")
					if err != nil {
						t.Fatal(err)
					}
					got, spilled, err := runBudget(t, hj, 0, 64<<10, dir)
					if err != nil {
						t.Fatalf("%s key %d res %v: %v", kind, kc, withRes, err)
					}
					if spilled == 0 {
						t.Fatalf("%s: nothing spilled", kind)
					}
					if len(want) == 0 {
						t.Fatalf("%s: no rows to compare", kind)
					}
					wantSameRows(t, got, want)
				}
			}
		}
	}
}

// TestHashJoinSpillBounded: a statement limit the in-memory build side
// passes (53200, as without a temporary directory) is enough when it
// spills.
func TestHashJoinSpillBounded(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	lc := cols(types.TInt8, types.TText, types.TInt8)
	l, rt := joinSide(r, 20000, 40000, false), joinSide(r, 40000, 40000, false)
	hj := &HashJoin{Left: l, Right: rt, Kind: FullJoin, LeftKeys: []expr.Expr{col(0, types.TInt8)}, RightKeys: []expr.Expr{col(0, types.TInt8)},
		Cols: joinCols(FullJoin, lc, lc)}
	const work = 64 << 10
	_, _, err := runBudget(t, hj, 16*work, work, "")
	if e := pgerr.As(err); e == nil || e.Code != pgerr.OutOfMemory {
		t.Fatalf("without a temporary directory: %v, want 53200", err)
	}
	want, _, err := runBudget(t, hj, 0, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	got, spilled, err := runBudget(t, hj, 16*work, work, t.TempDir())
	if err != nil || spilled == 0 {
		t.Fatalf("spilling: %v (spilled %d)", err, spilled)
	}
	wantSameRows(t, got, want)
}

package exec

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// joinInput makes n rows (k int8, s text, v int8) with NULL keys; keys are
// drawn from span values starting at base.
func joinInput(r *rand.Rand, n int, base, span int64, per int) *srcNode {
	vals := make([][]any, 3)
	for c := range vals {
		vals[c] = make([]any, n)
	}
	for i := 0; i < n; i++ {
		k := base + r.Int63n(span)
		vals[0][i] = k
		vals[1][i] = fmt.Sprintf("t%d", k%50)
		vals[2][i] = r.Intn(100)
		for c := range vals {
			if r.Intn(12) == 0 {
				vals[c][i] = nil
			}
		}
	}
	return src(cols(types.TInt8, types.TText, types.TInt8), per, vals...)
}

// TestParallelHashJoinEqualsSerial runs random joins serially and with
// 2-4 probing workers and requires the same rows in the same order: every
// join kind (right and full stay serial), dense and hashed keys (one
// integer key over a small or a huge range, text, two columns), NULL keys,
// duplicates on the build side, a residual condition, with and without
// spilling.
func TestParallelHashJoinEqualsSerial(t *testing.T) {
	withProcs(t, 4)
	r := rand.New(rand.NewSource(11))
	kinds := []JoinKind{InnerJoin, LeftJoin, SemiJoin, AntiJoin, RightJoin, FullJoin}
	trials := 30
	if testing.Short() {
		trials = 8
	}
	for trial := 0; trial < trials; trial++ {
		span := []int64{50, 3000, 1 << 40}[r.Intn(3)]
		base := r.Int63n(1000) - 500
		maxLeft := 15000
		if testing.Short() {
			maxLeft = 4000
		}
		left := joinInput(r, 1000+r.Intn(maxLeft), base, span, 1+r.Intn(2000))
		right := joinInput(r, 10+r.Intn(3000), base, span, 1+r.Intn(1000))
		var lk, rk []expr.Expr
		switch r.Intn(3) {
		case 0:
			lk, rk = []expr.Expr{col(0, types.TInt8)}, []expr.Expr{col(0, types.TInt8)}
		case 1:
			lk, rk = []expr.Expr{col(1, types.TText)}, []expr.Expr{col(1, types.TText)}
		default:
			lk, rk = []expr.Expr{col(0, types.TInt8), col(1, types.TText)}, []expr.Expr{col(0, types.TInt8), col(1, types.TText)}
		}
		kind := kinds[r.Intn(len(kinds))]
		j := &HashJoin{Left: left, Right: right, Kind: kind, LeftKeys: lk, RightKeys: rk}
		if r.Intn(2) == 0 {
			res, err := expr.NewBinary("<", col(2, types.TInt8), col(5, types.TInt8))
			if err != nil {
				t.Fatal(err)
			}
			j.Residual = res
		}
		cs := append(append([]types.Column(nil), left.cols...), right.cols...)
		if kind == SemiJoin || kind == AntiJoin {
			cs = left.cols
		}
		j.Cols = cs
		var workMem int64
		if r.Intn(3) == 0 {
			workMem = int64(4<<10 + r.Intn(32<<10))
		}
		batch := []int{100, 1000, 4096}[r.Intn(3)]
		want, _ := runWorkers(t, j, 1, batch, workMem)
		for _, w := range []int{2, 3, 4} {
			got, _ := runWorkers(t, j, w, batch, workMem)
			if len(got) != len(want) {
				t.Fatalf("trial %d %s workers=%d: %d rows, serial %d", trial, kind, w, len(got), len(want))
			}
			gk, wk := rowKeys(got), rowKeys(want)
			if workMem > 0 { // spilled partitions come out in hash-seed order
				slices.Sort(gk)
				slices.Sort(wk)
			}
			if i := firstDiff(gk, wk); i >= 0 {
				t.Fatalf("trial %d %s workers=%d workMem=%d: row %d is %v, serial %v", trial, kind, w, workMem, i, gk[i], wk[i])
			}
		}
	}
}

// rowKeys prints each row once.
func rowKeys(rs [][]any) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = rowKey(r)
	}
	return out
}

// firstDiff returns the index of the first differing row, or -1.
func firstDiff(got, want []string) int {
	for i := range got {
		if got[i] != want[i] {
			return i
		}
	}
	return -1
}

// TestHashJoinDenseIndex: one integer key over a small range is indexed
// by the key itself, a wide range by the hash table, with the same rows.
func TestHashJoinDenseIndex(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	for _, c := range []struct {
		span  int64
		dense bool
	}{{100, true}, {1 << 40, false}} {
		left, right := joinInput(r, 5000, -7, c.span, 512), joinInput(r, 500, -7, c.span, 100)
		j := &HashJoin{Left: left, Right: right, Kind: InnerJoin, LeftKeys: []expr.Expr{col(0, types.TInt8)}, RightKeys: []expr.Expr{col(0, types.TInt8)},
			Cols: append(append([]types.Column(nil), left.cols...), right.cols...)}
		got, it := runWorkers(t, j, 1, 1024, 0)
		if d := it.(*hashJoinIter).dense; d != c.dense {
			t.Errorf("span %d: dense %v, want %v", c.span, d, c.dense)
		}
		// The reference: every pair with equal non-NULL keys, in left order.
		var want [][]any
		lrows, rrows := rows(left.batches), rows(right.batches)
		for _, l := range lrows {
			for _, rr := range rrows {
				if l[0] != nil && rr[0] != nil && l[0] == rr[0] {
					want = append(want, append(append([]any(nil), l...), rr...))
				}
			}
		}
		if len(got) != len(want) {
			t.Fatalf("span %d: %d rows, want %d", c.span, len(got), len(want))
		}
		wantRows(t, got, want)
	}
}

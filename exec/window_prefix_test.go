package exec

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// TestWindowSlidingRandomized checks count/sum/avg over sliding ROWS frames
// (the prefix-sum path) and min (the fold path) against a direct reference.
func TestWindowSlidingRandomized(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	n := 700
	ids, gs, vs := make([]any, n), make([]any, n), make([]any, n)
	perm := rng.Perm(n)
	for i := 0; i < n; i++ {
		ids[i], gs[i] = perm[i], rng.Intn(4)
		if rng.Intn(6) > 0 {
			vs[i] = rng.Intn(2000) - 1000
		}
	}
	s := src(cols(types.TInt4, types.TInt4, types.TInt8), 128, ids, gs, vs)
	id, g, v := col(0, types.TInt4), col(1, types.TInt4), col(2, types.TInt8)
	// Reference: partitions' rows ordered by id.
	parts := map[int][]int{}
	for i := 0; i < n; i++ {
		parts[gs[i].(int)] = append(parts[gs[i].(int)], i)
	}
	for _, rows := range parts {
		sort.Slice(rows, func(a, b int) bool { return ids[rows[a]].(int) < ids[rows[b]].(int) })
	}
	for _, ab := range [][2]int{{1, 1}, {3, 0}, {0, 5}, {10, -2}, {-1, 4}} {
		before, after := ab[0], ab[1]
		start := FrameBound{Kind: Preceding, Offset: konst(types.TInt8, int64(max(before, 0)))}
		if before < 0 {
			start = FrameBound{Kind: Following, Offset: konst(types.TInt8, int64(-before))}
		}
		end := FrameBound{Kind: Following, Offset: konst(types.TInt8, int64(max(after, 0)))}
		if after < 0 {
			end = FrameBound{Kind: Preceding, Offset: konst(types.TInt8, int64(-after))}
		}
		fr := Frame{Mode: FrameRows, Start: start, End: end}
		part, ord := []expr.Expr{g}, []SortKey{{E: id}}
		calls := []WindowCall{
			wcall(t, "count", nil, part, ord, fr), wcall(t, "count", []expr.Expr{v}, part, ord, fr),
			wcall(t, "sum", []expr.Expr{v}, part, ord, fr), wcall(t, "avg", []expr.Expr{v}, part, ord, fr),
			wcall(t, "min", []expr.Expr{v}, part, ord, fr),
			wcall(t, "max", []expr.Expr{v}, part, ord, fr),
			wcall(t, "min", []expr.Expr{&expr.Cast{E: v, To: types.TFloat8}}, part, ord, fr),
		}
		cs := cols(types.TInt4, types.TInt4, types.TInt8)
		for _, c := range calls {
			cs = append(cs, types.Column{Name: c.Fn.Name, Type: c.Fn.Return})
		}
		got := map[int64][]any{}
		for _, r := range run(t, &Window{Input: s, Calls: calls, Cols: cs}) {
			got[r[0].(int64)] = r[3:]
		}
		for _, rows := range parts {
			for pos, row := range rows {
				lo, hi := max(pos-before, 0), min(pos+after+1, len(rows))
				var cstar, cnt, sum int64
				var mn, mx any
				for q := lo; q < hi; q++ {
					cstar++
					if x := vs[rows[q]]; x != nil {
						cnt++
						sum += int64(x.(int))
						if mn == nil || int64(x.(int)) < mn.(int64) {
							mn = int64(x.(int))
						}
						if mx == nil || int64(x.(int)) > mx.(int64) {
							mx = int64(x.(int))
						}
					}
				}
				var fmn any
				if mn != nil {
					fmn = float64(mn.(int64))
				}
				want := []any{cstar, cnt, nil, nil, mn, mx, fmn}
				if cnt > 0 {
					want[2] = fmt.Sprint(sum)
					q, err := numericDiv(int128{lo: uint64(sum), hi: sum >> 63}.decimal(), int128{lo: uint64(cnt)}.decimal())
					if err != nil {
						t.Fatal(err)
					}
					want[3] = numericText(q)
				}
				if fmt.Sprint(got[int64(ids[row].(int))]) != fmt.Sprint(want) {
					t.Fatalf("frame %v: id %v got %v want %v", ab, ids[row], got[int64(ids[row].(int))], want)
				}
			}
		}
	}
}

package exec

import (
	"math/rand"
	"testing"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

func joinCols(kind JoinKind, l, r []types.Column) []types.Column {
	if kind == SemiJoin || kind == AntiJoin {
		return l
	}
	return append(append([]types.Column(nil), l...), r...)
}

func TestHashJoinKinds(t *testing.T) {
	lc := cols(types.TInt4, types.TText)
	rc := cols(types.TInt8, types.TText)
	l := src(lc, 2, []any{1, 2, 2, nil, 4}, []any{"a", "b", "c", "d", "e"})
	r := src(rc, 2, []any{2, 2, 3, nil, 1}, []any{"x", "y", "z", "n", "w"})
	hj := func(kind JoinKind) *HashJoin {
		return &HashJoin{Left: l, Right: r, Kind: kind, LeftKeys: []expr.Expr{col(0, types.TInt4)},
			RightKeys: []expr.Expr{col(0, types.TInt8)}, Cols: joinCols(kind, lc, rc)}
	}
	i := func(v int) any { return int64(v) }
	inner := [][]any{{i(1), "a", i(1), "w"}, {i(2), "b", i(2), "x"}, {i(2), "b", i(2), "y"}, {i(2), "c", i(2), "x"}, {i(2), "c", i(2), "y"}}
	wantRows(t, run(t, hj(InnerJoin)), inner)
	wantRows(t, run(t, hj(LeftJoin)), append(append([][]any{}, inner[:5]...), []any{nil, "d", nil, nil}, []any{i(4), "e", nil, nil}))
	wantSameRows(t, run(t, hj(RightJoin)), append(append([][]any{}, inner...), []any{nil, nil, i(3), "z"}, []any{nil, nil, nil, "n"}))
	wantSameRows(t, run(t, hj(FullJoin)), append(append([][]any{}, inner...), []any{nil, "d", nil, nil}, []any{i(4), "e", nil, nil}, []any{nil, nil, i(3), "z"}, []any{nil, nil, nil, "n"}))
	wantRows(t, run(t, hj(SemiJoin)), [][]any{{i(1), "a"}, {i(2), "b"}, {i(2), "c"}})
	wantRows(t, run(t, hj(AntiJoin)), [][]any{{nil, "d"}, {i(4), "e"}})
	// Residual: l.c1 < r.c1 (text).
	res := hj(LeftJoin)
	res.Residual = &fnExpr{t: types.TBool, f: func(r []any) any { return r[1].(string) < "c" && r[3].(string) == "y" }}
	wantRows(t, run(t, res), [][]any{{i(1), "a", nil, nil}, {i(2), "b", i(2), "y"}, {i(2), "c", nil, nil}, {nil, "d", nil, nil}, {i(4), "e", nil, nil}})
}

func TestNestedLoopCross(t *testing.T) {
	l := src(cols(types.TInt8), 2, []any{1, 2})
	r := src(cols(types.TText), 2, []any{"a", "b", "c"})
	nl := &NestedLoopJoin{Left: l, Right: r, Kind: InnerJoin, Cols: cols(types.TInt8, types.TText)}
	wantRows(t, run(t, nl), [][]any{{int64(1), "a"}, {int64(1), "b"}, {int64(1), "c"}, {int64(2), "a"}, {int64(2), "b"}, {int64(2), "c"}})
	empty := src(cols(types.TText), 2, []any{})
	nl2 := &NestedLoopJoin{Left: l, Right: empty, Kind: LeftJoin, Cols: cols(types.TInt8, types.TText)}
	wantRows(t, run(t, nl2), [][]any{{int64(1), nil}, {int64(2), nil}})
	nl3 := &NestedLoopJoin{Left: l, Right: empty, Kind: AntiJoin, Cols: cols(types.TInt8)}
	wantRows(t, run(t, nl3), [][]any{{int64(1)}, {int64(2)}})
}

// TestJoinRandomized compares HashJoin, NestedLoopJoin and a reference
// nested loop over random data with NULLs, duplicates and a residual.
func TestJoinRandomized(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	val := func() any {
		if rng.Intn(8) == 0 {
			return nil
		}
		return rng.Intn(12)
	}
	for trial := 0; trial < 30; trial++ {
		nl, nr := rng.Intn(40), rng.Intn(40)
		lk, lv, rk, rw := make([]any, nl), make([]any, nl), make([]any, nr), make([]any, nr)
		for i := range lk {
			lk[i], lv[i] = val(), val()
		}
		for i := range rk {
			rk[i], rw[i] = val(), val()
		}
		lc, rc := cols(types.TInt8, types.TInt8), cols(types.TInt8, types.TInt8)
		l, r := src(lc, 1+rng.Intn(7), lk, lv), src(rc, 1+rng.Intn(7), rk, rw)
		withRes := trial%2 == 0
		match := func(i, j int) bool {
			if lk[i] == nil || rk[j] == nil || lk[i] != rk[j] {
				return false
			}
			if withRes {
				return lv[i] != nil && rw[j] != nil && lv[i].(int) < rw[j].(int)
			}
			return true
		}
		for _, kind := range []JoinKind{InnerJoin, LeftJoin, RightJoin, FullJoin, SemiJoin, AntiJoin} {
			var want [][]any
			rhit := make([]bool, nr)
			g := func(v any) any {
				if v == nil {
					return nil
				}
				return int64(v.(int))
			}
			for i := 0; i < nl; i++ {
				hit := false
				for j := 0; j < nr; j++ {
					if match(i, j) {
						hit, rhit[j] = true, true
						if kind != SemiJoin && kind != AntiJoin {
							want = append(want, []any{g(lk[i]), g(lv[i]), g(rk[j]), g(rw[j])})
						}
					}
				}
				switch {
				case kind == SemiJoin && hit, kind == AntiJoin && !hit:
					want = append(want, []any{g(lk[i]), g(lv[i])})
				case !hit && (kind == LeftJoin || kind == FullJoin):
					want = append(want, []any{g(lk[i]), g(lv[i]), nil, nil})
				}
			}
			if kind == RightJoin || kind == FullJoin {
				for j := 0; j < nr; j++ {
					if !rhit[j] {
						want = append(want, []any{nil, nil, g(rk[j]), g(rw[j])})
					}
				}
			}
			var res expr.Expr
			cond := expr.Expr(&fnExpr{t: types.TBool, f: func(r []any) any {
				return r[0] != nil && r[2] != nil && r[0] == r[2]
			}})
			if withRes {
				res = cmpCols(1, 3, "<")
				cond = &fnExpr{t: types.TBool, f: func(r []any) any {
					return r[0] != nil && r[2] != nil && r[0] == r[2] && r[1] != nil && r[3] != nil && r[1].(int64) < r[3].(int64)
				}}
			}
			hj := &HashJoin{Left: l, Right: r, Kind: kind, LeftKeys: []expr.Expr{col(0, types.TInt8)}, RightKeys: []expr.Expr{col(0, types.TInt8)},
				Residual: res, Cols: joinCols(kind, lc, rc)}
			wantSameRows(t, run(t, hj), want)
			nlj := &NestedLoopJoin{Left: l, Right: r, Kind: kind, Cond: cond, Cols: joinCols(kind, lc, rc)}
			wantSameRows(t, run(t, nlj), want)
		}
	}
}

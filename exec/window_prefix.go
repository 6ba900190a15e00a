package exec

import (
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

// Sliding frames (those not starting at the partition's first row) of
// count, and of sum and avg over integers, are answered from prefix sums in
// O(1) a row: integer arithmetic is exact, so the difference of two prefix
// sums is exactly the frame's sum. Other aggregates (floats, whose result
// depends on the order of additions, min/max, ...) fold each frame.

// prefixable reports whether the call's aggregate can use prefix sums.
func (wc *windowCall) prefixable() bool {
	f := wc.call.Fn.Agg
	if wc.call.Frame.Exclude != ExcludeNoOthers {
		return false
	}
	switch f.Name {
	case "count":
		return true
	case "sum", "avg":
		return len(f.Args) == 1 && f.Args[0].IsInteger()
	}
	return false
}

func (s int128) sub(o int128) int128 {
	lo, borrow := bits.Sub64(s.lo, o.lo, 0)
	return int128{lo: lo, hi: s.hi - o.hi - int64(borrow)}
}

// prefixAggregate computes the aggregate over each row's frame of the
// partition [ps, pe) from prefix counts and sums.
func (wc *windowCall) prefixAggregate(b array.Builder, fr *framer, ps, pe int) error {
	f := wc.call.Fn.Agg
	n := pe - ps
	cnt := make([]int64, n+1)
	sum := make([]int128, n+1)
	var vals []int64
	var arg interface{ IsValid(int) bool }
	if len(wc.args) > 0 {
		vals, _ = int64Values(wc.args[0])
		arg = wc.args[0]
	}
	for i := 0; i < n; i++ {
		q := ps + i
		cnt[i+1], sum[i+1] = cnt[i], sum[i]
		if (wc.mask != nil && !wc.mask[q]) || (arg != nil && !arg.IsValid(q)) {
			continue
		}
		cnt[i+1]++
		if vals != nil {
			sum[i+1].add(vals[q])
		}
	}
	// One-group states format the results exactly as HashAgg does.
	is := &intSum{avg: f.Name == "avg", numeric: f.Return.Kind == types.Numeric, s: make([]int128, 1), n: make([]int64, 1)}
	for p := ps; p < pe; p++ {
		fs, fe := fr.frame(p)
		c := int64(0)
		var s int128
		if fe > fs {
			c = cnt[fe-ps] - cnt[fs-ps]
			s = sum[fe-ps].sub(sum[fs-ps])
		}
		if f.Name == "count" {
			b.(*array.Int64Builder).Append(c)
			continue
		}
		is.s[0], is.n[0] = s, c
		if err := is.appendResult(b, 0); err != nil {
			return err
		}
	}
	return nil
}

// Sliding min and max over integer-like values use a monotonic deque of
// positions: frames only move forward, so each row enters and leaves once.

// dequeable reports whether the call is min or max over integer-like values.
func (wc *windowCall) dequeable() bool {
	f := wc.call.Fn.Agg
	return wc.call.Frame.Exclude == ExcludeNoOthers && (f.Name == "min" || f.Name == "max") &&
		len(f.Args) == 1 && intLike(f.Args[0])
}

// dequeMinMax computes min or max over each row's frame of [ps, pe).
func (wc *windowCall) dequeMinMax(b array.Builder, fr *framer, ps, pe int) error {
	isMax := wc.call.Fn.Agg.Name == "max"
	a := wc.args[0]
	vals, _ := int64Values(a)
	better := func(x, y int64) bool { // x displaces y from the deque's back
		if isMax {
			return x >= y
		}
		return x <= y
	}
	dq := make([]int, 0, 64) // positions, values monotonic from the front
	next := ps               // first position not yet pushed
	for p := ps; p < pe; p++ {
		fs, fe := fr.frame(p)
		if next < fs {
			next = fs
		}
		for ; next < fe; next++ {
			if a.IsNull(next) || (wc.mask != nil && !wc.mask[next]) {
				continue
			}
			for len(dq) > 0 && better(vals[next], vals[dq[len(dq)-1]]) {
				dq = dq[:len(dq)-1]
			}
			dq = append(dq, next)
		}
		for len(dq) > 0 && dq[0] < fs {
			dq = dq[1:]
		}
		if len(dq) == 0 || fe <= fs {
			b.AppendNull()
			continue
		}
		appendInt64Like(b, vals[dq[0]])
	}
	return nil
}

package stream

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// PairCompare is a conjunct of a join's condition that compares a left
// column with a right one over their int64 values (timestamps in µs of
// the same type, or bigints):
//
//	left[L] - right[R]  Op  D
//
// (Op one of < <= > >= = <>; L and R index the left and the right input's
// columns; D a constant, from intervals added to the columns, within
// ±200 years). A NULL on either side makes it false, as the comparison is
// NULL there. The difference is compared exactly, without overflow.
type PairCompare struct {
	L, R int
	Op   string
	D    int64
}

// String renders the comparison for tests and errors.
func (c PairCompare) String() string {
	return fmt.Sprintf("left[%d] - right[%d] %s %d", c.L, c.R, c.Op, c.D)
}

// compareOutcomes maps an operator to the outcomes of the difference
// against D it accepts: bit 0 below, bit 1 equal, bit 2 above.
var compareOutcomes = map[string]uint8{"<": 1, "<=": 3, "=": 2, ">=": 6, ">": 4, "<>": 5}

// pairCompare is a PairCompare ready to run: the outcomes Op accepts.
type pairCompare struct {
	PairCompare
	accept uint8
}

// newPairCompares checks j.Compares against the inputs' columns lc and rc.
func newPairCompares(cs []PairCompare, lc, rc []types.Column) ([]pairCompare, error) {
	out := make([]pairCompare, len(cs))
	for i, c := range cs {
		acc, ok := compareOutcomes[c.Op]
		if !ok || c.L < 0 || c.L >= len(lc) || c.R < 0 || c.R >= len(rc) {
			return nil, pgerr.Internal("stream: hash join comparison %s over %d and %d columns", c, len(lc), len(rc))
		}
		lk, rk := lc[c.L].Type.Kind, rc[c.R].Type.Kind
		if lk != rk || lk != types.Timestamp && lk != types.TimestampTZ && lk != types.Int8 {
			return nil, pgerr.Internal("stream: hash join comparison %s compares %s with %s", c, lc[c.L].Type, rc[c.R].Type)
		}
		out[i] = pairCompare{PairCompare: c, accept: acc}
	}
	return out, nil
}

// diffOutcome is the bit of compareOutcomes for l - r against d, computed
// without overflow: when l - r overflows, its sign decides (|d| is far
// below 2^63).
func diffOutcome(l, r, d int64) uint8 {
	x := l - r
	if (l^r)&(l^x) < 0 { // overflowed
		if l > r {
			return 4
		}
		return 1
	}
	switch {
	case x < d:
		return 1
	case x == d:
		return 2
	}
	return 4
}

// comparePairs keeps, in place, the candidate pairs (row pl[k] of the
// chunk being consumed, entry pe[k] of the other side) for which every
// comparison holds. It reads the values where they are, in the chunk and
// in the other side's held batches, and builds no array: the cheap part
// of a join condition (the time bounds of an interval join, q4's
// BETWEEN) runs before the rest of it (Residual) is evaluated on the
// pairs that are left.
func (r *joinRun) comparePairs(pl, pe []int32) ([]int32, []int32) {
	s := r.s
	O := r.sides[1-s]
	for _, c := range r.cmps {
		if len(pl) == 0 {
			break
		}
		tc, oc := c.L, c.R
		if s == 1 {
			tc, oc = c.R, c.L
		}
		ta := r.one[0].Column(tc)
		tv := arrow.GetValues[int64](ta.Data(), 1)
		tnull := ta.NullN() > 0
		var cache fixedSegs[int64]
		cur := &cache[0]
		keep := 0
		for k := range pl {
			i := int(pl[k])
			if tnull && ta.IsNull(i) {
				continue
			}
			en := O.entries.at(pe[k])
			if cur.seg != en.seg+1 {
				cur = cache.at(O.recs, oc, en.seg)
			}
			if cur.nulls && cur.a.IsNull(int(en.row)) {
				continue
			}
			l, rv := tv[i], cur.src[en.row]
			if s == 1 {
				l, rv = rv, l
			}
			if diffOutcome(l, rv, c.D)&c.accept == 0 {
				continue
			}
			pl[keep], pe[keep] = pl[k], pe[k]
			keep++
		}
		pl, pe = pl[:keep], pe[:keep]
	}
	return pl, pe
}

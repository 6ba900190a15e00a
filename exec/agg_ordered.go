package exec

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Ordered-set aggregates: percentile_cont(f) / percentile_disc(f) WITHIN
// GROUP (ORDER BY x) (f a fraction, or an array of them for an array of
// percentiles) and mode() WITHIN GROUP (ORDER BY x). The planner
// passes the direct argument(s) followed by x as Args and x's sort key as
// OrderBy; the ORDER BY wrapper (orderedAgg) then feeds rows sorted by x.

type orderedSetAgg struct {
	fn   string // percentile_cont, percentile_disc, mode
	t    types.T
	many bool          // the fraction is an array: the result is the array of percentiles
	arrs []arrow.Array // the x arrays, as fed
	fr   []arrow.Array // the fraction arrays (percentiles)
	refs [][]uint64    // per group: array index << 32 | row of non-NULL x
	frac []uint64      // per group: fraction array index << 32 | row (first row), +1; 0 none
	// bytes is what arrs, fr and refs hold (memSizer).
	bytes int64
}

// memBytes implements memSizer: the input arrays and row references kept.
func (o *orderedSetAgg) memBytes() int64 { return o.bytes }

func (o *orderedSetAgg) grow(n int) { o.refs = growSlice(o.refs, n); o.frac = growSlice(o.frac, n) }

func (o *orderedSetAgg) update(args []arrow.Array, gids []int32) error {
	x := args[len(args)-1]
	ai := uint64(len(o.arrs))
	o.arrs = append(o.arrs, x)
	o.bytes += arrayBytes(x) + 8*int64(len(gids))
	if len(args) > 1 {
		o.fr = append(o.fr, args[0])
		o.bytes += arrayBytes(args[0])
	}
	for i, g := range gids {
		if g < 0 {
			continue
		}
		if len(args) > 1 && o.frac[g] == 0 {
			o.frac[g] = (ai<<32 | uint64(i)) + 1
		}
		if x.IsValid(i) {
			o.refs[g] = append(o.refs[g], ai<<32|uint64(i))
		}
	}
	return nil
}

func (o *orderedSetAgg) at(r uint64) (arrow.Array, int) { return o.arrs[r>>32], int(uint32(r)) }

func (o *orderedSetAgg) appendResult(b array.Builder, g int) error {
	refs := o.refs[g]
	if o.fn == "mode" {
		if len(refs) == 0 {
			b.AppendNull()
			return nil
		}
		// Sorted input: the longest run of equal values, the first on ties.
		var best, run uint64
		bestN, runN := 0, 0
		var prev []byte
		for _, r := range refs {
			a, i := o.at(r)
			k := encodeValue(nil, a, i, o.t)
			if runN > 0 && string(k) == string(prev) {
				runN++
			} else {
				run, runN, prev = r, 1, k
			}
			if runN > bestN {
				best, bestN = run, runN
			}
		}
		a, i := o.at(best)
		copyValue(b, a, i)
		return nil
	}
	if o.frac[g] == 0 {
		b.AppendNull()
		return nil
	}
	fa, fi := o.fr[(o.frac[g]-1)>>32], int(uint32(o.frac[g]-1))
	if fa.IsNull(fi) || len(refs) == 0 {
		b.AppendNull()
		return nil
	}
	if !o.many {
		return o.appendPercentile(b, refs, fa.(*array.Float64).Value(fi))
	}
	l := fa.(*array.List)
	lb := b.(*array.ListBuilder)
	ps := l.ListValues().(*array.Float64)
	start, end := l.ValueOffsets(fi)
	lb.Append(true)
	for k := int(start); k < int(end); k++ {
		if ps.IsNull(k) {
			lb.ValueBuilder().AppendNull()
			continue
		}
		if err := o.appendPercentile(lb.ValueBuilder(), refs, ps.Value(k)); err != nil {
			return err
		}
	}
	return nil
}

// appendPercentile appends the p-th percentile of the sorted rows refs.
func (o *orderedSetAgg) appendPercentile(b array.Builder, refs []uint64, p float64) error {
	if p < 0 || p > 1 || math.IsNaN(p) {
		return pgerr.New(pgerr.NumericValueOutOfRange, "percentile value %g is not between 0 and 1", p)
	}
	n := len(refs)
	if o.fn == "percentile_disc" {
		k := int(math.Ceil(p * float64(n)))
		if k < 1 {
			k = 1
		}
		a, i := o.at(refs[k-1])
		copyValue(b, a, i)
		return nil
	}
	pos := p * float64(n-1)
	lo, hi := int(math.Floor(pos)), int(math.Ceil(pos))
	fv := func(r uint64) float64 {
		a, i := o.at(r)
		return a.(*array.Float64).Value(i)
	}
	v := fv(refs[lo])
	if hi != lo {
		v += (fv(refs[hi]) - v) * (pos - float64(lo))
	}
	b.(*array.Float64Builder).Append(v)
	return nil
}

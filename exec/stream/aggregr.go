package stream

import (
	"cmp"
	"encoding/binary"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/pgerr"
)

// The two-argument statistics fn(y, x) over double precision: corr,
// covar_pop, covar_samp and regr_* (regr_count is the pairs' count). As
// the variance family over floats (aggvar.go), each group keeps
// PostgreSQL's float8_regr_accum state, stepped as PostgreSQL steps it
// for rows that arrive, and over an input that may retract also the
// ordered multiset of its (y, x) pairs, replayed in order when a
// retraction made the state stale. Rows where y or x is NULL are skipped.

// regrCol is one such aggregate. Owned by its operator's goroutine.
type regrCol struct {
	fn   string
	s    []exec.RegrState
	keep *kept[[2]uint64] // the input may retract: the (floatOrd(y), floatOrd(x)) pairs
}

func newRegrCol(fn string, appendOnly bool) *regrCol {
	c := &regrCol{fn: fn}
	if !appendOnly {
		c.keep = &kept[[2]uint64]{cmp: cmpPairs}
	}
	return c
}

func cmpPairs(a, b [2]uint64) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) }

func (c *regrCol) grow(n int) {
	c.s = growSlice(c.s, n)
	if c.keep != nil {
		c.keep.grow(n)
	}
}

func (c *regrCol) reset(g int32) {
	c.s[g] = exec.RegrState{}
	if c.keep != nil {
		c.keep.reset(g)
	}
}

func (c *regrCol) update(arrow.Array, []int32, []int64) error {
	return pgerr.Internal("stream: %s updated without its second argument", c.fn)
}

// updateMulti folds rows (y is arg, x is extra[0]) into their groups.
func (c *regrCol) updateMulti(arg arrow.Array, extra []arrow.Array, gids []int32, signs []int64) error {
	ya, ok1 := arg.(*array.Float64)
	if len(extra) != 1 {
		return pgerr.Internal("stream: %s with %d extra arguments", c.fn, len(extra))
	}
	xa, ok2 := extra[0].(*array.Float64)
	if !ok1 || !ok2 {
		return pgerr.Internal("stream: %s over %s and %s", c.fn, arg.DataType(), extra[0].DataType())
	}
	for i, g := range gids {
		if g < 0 || ya.IsNull(i) || xa.IsNull(i) {
			continue
		}
		y, x, sign := ya.Value(i), xa.Value(i), sgn(signs, i)
		if c.keep != nil {
			empty, err := c.keep.add(g, [2]uint64{floatOrd(y), floatOrd(x)}, sign)
			if err != nil {
				return err
			}
			if empty {
				c.s[g] = exec.RegrState{} // empty again: restart from exactly 0
			}
			if empty || c.keep.stale.get(g) {
				continue
			}
		} else if sign < 0 {
			return pgerr.Internal("stream: %s over an append-only input got a retraction", c.fn)
		}
		for ; sign > 0; sign-- {
			c.s[g].Add(y, x)
		}
	}
	return nil
}

// refresh replays group g's pairs after a retraction.
func (c *regrCol) refresh(g int32) {
	if c.keep == nil || !c.keep.stale.get(g) {
		return
	}
	s := exec.RegrState{}
	c.keep.sets[g].each(func(k [2]uint64, rows int64) {
		y, x := wordFloat(k[0]), wordFloat(k[1])
		for ; rows > 0; rows-- {
			s.Add(y, x)
		}
	})
	c.s[g] = s
	c.keep.stale.set(g, false)
}

func (c *regrCol) results(gs []int32, out []cell) error {
	for i, g := range gs {
		c.refresh(g)
		if c.fn == "regr_count" {
			out[i] = intCell(int64(c.s[g].N))
			continue
		}
		v, null := exec.RegrResult(c.fn, c.s[g])
		if null {
			out[i] = nullCell
		} else {
			out[i] = floatCell(v)
		}
	}
	return nil
}

// merge combines states as PostgreSQL's float8_regr_combine does.
func (c *regrCol) merge(dst []int32, from aggCol, src []int32) error {
	f, ok := from.(*regrCol)
	if !ok || c.keep != nil {
		return errMergeInto
	}
	for i, d := range dst {
		f.refresh(src[i])
		c.s[d].Combine(f.s[src[i]])
	}
	return nil
}

// appendState: the six sums' bits, then (over an input that may retract)
// whether the state is stale and the pairs.
func (c *regrCol) appendState(dst []byte, g int32) []byte {
	s := c.s[g]
	for _, v := range [6]float64{s.N, s.Sx, s.Sy, s.Sxx, s.Syy, s.Sxy} {
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(v))
	}
	if c.keep == nil {
		return dst
	}
	return c.keep.appendState(dst, g, func(dst []byte, k [2]uint64) []byte {
		return appendWord(appendWord(dst, k[0]), k[1])
	})
}

func (c *regrCol) loadState(g int32, b []byte) ([]byte, error) {
	var v [6]float64
	for i := range v {
		u, rest, err := getFixed(b)
		if err != nil {
			return nil, err
		}
		v[i], b = math.Float64frombits(u), rest
	}
	c.s[g] = exec.RegrState{N: v[0], Sx: v[1], Sy: v[2], Sxx: v[3], Syy: v[4], Sxy: v[5]}
	if c.keep == nil {
		return b, nil
	}
	return c.keep.loadState(g, b, func(b []byte) ([2]uint64, []byte, error) {
		y, b, err := getFixed(b)
		if err != nil {
			return [2]uint64{}, nil, err
		}
		x, b, err := getFixed(b)
		return [2]uint64{y, x}, b, err
	})
}

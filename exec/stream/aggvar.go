package stream

import (
	"encoding/binary"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/pgerr"
)

// The variance family over float4 and float8 (var_samp, var_pop,
// stddev_samp, stddev_pop; variance and stddev are the sample forms).
// Each group keeps PostgreSQL's Youngs-Cramer state (float8_accum) over
// its finite values, and how many values it has in all: an infinity or a
// NaN makes the result NaN, as in PostgreSQL, for as long as the group
// holds it. Finite values whose sum or squares overflow make it NaN too,
// where PostgreSQL's float8_accum (and the batch engine) fails: a view
// does not fail on a value. An insert is PostgreSQL's step, so over rows that only arrive
// the result is the batch engine's over the same rows in the same order,
// to the bit.
//
// A retraction has no stable inverse step (taking a large value back out
// of the sum of squared deviations leaves mostly rounding), so over an
// input that may retract each group also keeps the ordered multiset of
// its finite values, as min and max do: a retraction marks the group, and
// its state is recomputed from the multiset, in value order, when its
// result is next read. Integer and numeric arguments never get here: the
// planner computes them exactly from a count and two sums
// (stream_aggvar.go).

// fvar is one group's state.
type fvar struct {
	n       int64   // values (NULLs are not counted)
	fin     int64   // finite values, the ones in sx and sxx
	sx, sxx float64 // the finite values' sum and sum of squared deviations
}

// add folds in finite value v, as PostgreSQL's float8_accum.
func (p *fvar) add(v float64) {
	_, p.sx, p.sxx = exec.FloatStatAdd(float64(p.fin), p.sx, p.sxx, v)
	p.fin++
}

// floatVarCol is one variance-family aggregate over float4 or float8.
// Owned by its operator's goroutine.
type floatVarCol struct {
	fn   string // var_samp, var_pop, stddev_samp or stddev_pop
	s    []fvar
	keep *kept[uint64] // the input may retract: the finite values, as floatOrd words (so in value order)
}

func newFloatVarCol(fn string, appendOnly bool) *floatVarCol {
	c := &floatVarCol{fn: fn}
	if !appendOnly {
		c.keep = &kept[uint64]{cmp: cmpWords}
	}
	return c
}

func (c *floatVarCol) grow(n int) {
	c.s = growSlice(c.s, n)
	if c.keep != nil {
		c.keep.grow(n)
	}
}

func (c *floatVarCol) reset(g int32) {
	c.s[g] = fvar{}
	if c.keep != nil {
		c.keep.reset(g)
	}
}

func (c *floatVarCol) update(arg arrow.Array, gids []int32, signs []int64) error {
	switch x := arg.(type) {
	case *array.Float64:
		return varFloats(c, x.Float64Values(), arg, gids, signs)
	case *array.Float32:
		return varFloats(c, x.Float32Values(), arg, gids, signs)
	}
	return pgerr.Internal("stream: %s over %s", c.fn, arg.DataType())
}

func varFloats[T float32 | float64](c *floatVarCol, vals []T, a arrow.Array, gids []int32, signs []int64) error {
	nulls := a.NullN() > 0
	for i, g := range gids {
		if g < 0 || (nulls && a.IsNull(i)) {
			continue
		}
		v, sign := float64(vals[i]), sgn(signs, i)
		p := &c.s[g]
		p.n += sign
		finite := v-v == 0 // NaN and the infinities are counted in n only
		switch {
		case c.keep != nil && finite:
			empty, err := c.keep.add(g, floatOrd(v), sign)
			if err != nil {
				return err
			}
			if empty { // no finite value left (NaN or infinities may be)
				p.fin, p.sx, p.sxx = 0, 0, 0
			}
		case sign < 0 && c.keep == nil:
			return pgerr.Internal("stream: %s over an append-only input got a retraction", c.fn)
		}
		if p.n == 0 {
			*p = fvar{} // empty again: restart from exactly 0
			if c.keep != nil {
				c.keep.stale.set(g, false)
			}
			continue
		}
		if finite && sign > 0 && (c.keep == nil || !c.keep.stale.get(g)) {
			for k := sign; k > 0; k-- {
				p.add(v)
			}
		}
	}
	return nil
}

// refresh recomputes group g's state from its values after a retraction.
func (c *floatVarCol) refresh(g int32) {
	if c.keep == nil || !c.keep.stale.get(g) {
		return
	}
	p := &c.s[g]
	p.fin, p.sx, p.sxx = 0, 0, 0
	c.keep.sets[g].each(func(w uint64, rows int64) {
		v := wordFloat(w)
		for ; rows > 0; rows-- {
			p.add(v)
		}
	})
	c.keep.stale.set(g, false)
}

func (c *floatVarCol) results(gs []int32, out []cell) error {
	for i, g := range gs {
		c.refresh(g)
		p := c.s[g]
		switch {
		case exec.StatIsNull(c.fn, p.n):
			out[i] = nullCell
		case p.fin < p.n:
			out[i] = floatCell(math.NaN())
		default:
			out[i] = floatCell(exec.FloatStat(c.fn, float64(p.fin), p.sxx))
		}
	}
	return nil
}

// merge combines states as PostgreSQL's float8_combine does (a HOP or
// CUMULATE window's panes, a session's times).
func (c *floatVarCol) merge(dst []int32, from aggCol, src []int32) error {
	f := from.(*floatVarCol)
	if c.keep != nil {
		return errMergeInto
	}
	for i, d := range dst {
		f.refresh(src[i])
		q := f.s[src[i]]
		p := &c.s[d]
		p.n += q.n
		switch {
		case q.fin == 0:
		case p.fin == 0:
			p.fin, p.sx, p.sxx = q.fin, q.sx, q.sxx
		default:
			n1, n2 := float64(p.fin), float64(q.fin)
			t := p.sx/n1 - q.sx/n2
			p.sxx = p.sxx + q.sxx + n1*n2*t*t/(n1+n2) // float8_combine's order
			p.sx += q.sx
			p.fin += q.fin
		}
	}
	return nil
}

// appendState: the sums' bits, the counts, then (over an input that may
// retract) whether the state is stale and the values.
func (c *floatVarCol) appendState(dst []byte, g int32) []byte {
	p := c.s[g]
	dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(p.sx))
	dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(p.sxx))
	dst = appendVarints(dst, p.n, p.fin)
	if c.keep == nil {
		return dst
	}
	return c.keep.appendState(dst, g, appendWord)
}

func (c *floatVarCol) loadState(g int32, b []byte) ([]byte, error) {
	p := &c.s[g]
	u, b, err := getFixed(b)
	if err != nil {
		return nil, err
	}
	w, b, err := getFixed(b)
	if err != nil {
		return nil, err
	}
	p.sx, p.sxx = math.Float64frombits(u), math.Float64frombits(w)
	if b, err = getVarints(b, &p.n, &p.fin); err != nil || c.keep == nil {
		return b, err
	}
	return c.keep.loadState(g, b, getFixed)
}

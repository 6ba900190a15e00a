package stream

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// The ordered-set aggregates percentile_cont(f), percentile_disc(f) and
// mode() WITHIN GROUP (ORDER BY x). Each group keeps the ordered multiset
// of its non-NULL x values, as min and max over an input that may retract
// (aggminmax.go), whatever its input: a percentile needs every value. A
// result is read from the multiset when the group changed: the value at
// the fraction's position (percentile_disc), the interpolation between the
// two values around it (percentile_cont), or the most frequent value, the
// first in the WITHIN GROUP order on ties (mode). The fraction, or the
// array of fractions, is a constant checked when the view is created.
// Values equal to SQL but spelled apart (1.0 and 1.00, 0 and -0) are
// distinct values here, as in the batch engine's mode.

// rankCol is an ordered multiset per group: min/max keeping every value.
type rankCol interface {
	aggCol
	// rows is how many values group g holds.
	rows(g int32) int64
	// nth is group g's k-th value in order (0-based, k < rows(g)).
	nth(g int32, k int64) cell
	// modal is group g's most frequent value: the first in order on ties,
	// or the last when last is set (a DESC order).
	modal(g int32, last bool) cell
	// absorb adds group src of from (the same aggregate) to group dst.
	absorb(dst int32, from rankCol, src int32) error
}

// orderedSetCol is one ordered-set aggregate. Owned by its operator's
// goroutine.
type orderedSetCol struct {
	kind  AggKind // AggPercentileCont, AggPercentileDisc or AggMode
	fracs []float64
	many  bool // the fraction is an array: the result is the array of percentiles
	desc  bool // WITHIN GROUP (ORDER BY x DESC)
	t     types.T
	set   rankCol
}

func newOrderedSetCol(s AggSpec, t types.T) (*orderedSetCol, error) {
	set, ok := newMinMax(t, false, false).(rankCol)
	if !ok {
		return nil, pgerr.Internal("stream: no ordered multiset over %s", t)
	}
	c := &orderedSetCol{kind: s.Kind, fracs: s.Fracs, many: s.ManyFracs, t: t, set: set}
	if len(s.OrderBy) > 0 {
		c.desc = s.OrderBy[0].Desc
	}
	return c, nil
}

func (c *orderedSetCol) grow(n int)    { c.set.grow(n) }
func (c *orderedSetCol) reset(g int32) { c.set.reset(g) }
func (c *orderedSetCol) update(arg arrow.Array, gids []int32, signs []int64) error {
	return c.set.update(arg, gids, signs)
}
func (c *orderedSetCol) appendState(dst []byte, g int32) []byte { return c.set.appendState(dst, g) }
func (c *orderedSetCol) loadState(g int32, b []byte) ([]byte, error) {
	return c.set.loadState(g, b)
}

// merge adds other groups' values (a HOP or CUMULATE window's panes, a
// session's times).
func (c *orderedSetCol) merge(dst []int32, from aggCol, src []int32) error {
	f, ok := from.(*orderedSetCol)
	if !ok {
		return pgerr.Internal("stream: %s merges a %T", aggNames[c.kind], from)
	}
	for i, d := range dst {
		if err := c.set.absorb(d, f.set, src[i]); err != nil {
			return err
		}
	}
	return nil
}

func (c *orderedSetCol) results(gs []int32, out []cell) error {
	for i, g := range gs {
		n := c.set.rows(g)
		switch {
		case n == 0:
			out[i] = nullCell
		case c.kind == AggMode:
			out[i] = c.set.modal(g, c.desc)
		case !c.many:
			out[i] = c.percentile(g, n, c.fracs[0])
		default:
			vals := make([]types.Value, len(c.fracs))
			et := c.t
			if c.kind == AggPercentileCont {
				et = types.TFloat8
			}
			for k, f := range c.fracs {
				if math.IsNaN(f) { // a NULL fraction
					continue
				}
				v, err := cellValue(c.percentile(g, n, f), et)
				if err != nil {
					return err
				}
				vals[k] = v
			}
			out[i] = cell{v: vals}
		}
	}
	return nil
}

// at is the k-th value (0-based) in the WITHIN GROUP order of n values.
func (c *orderedSetCol) at(g int32, n, k int64) cell {
	if c.desc {
		k = n - 1 - k
	}
	return c.set.nth(g, k)
}

// percentile is fraction f of group g's n values, as PostgreSQL's
// percentile_disc_final and percentile_cont_float8_final compute it.
func (c *orderedSetCol) percentile(g int32, n int64, f float64) cell {
	if c.kind == AggPercentileDisc {
		k := max(int64(math.Ceil(f*float64(n))), 1)
		return c.at(g, n, k-1)
	}
	pos := f * float64(n-1)
	lo, hi := int64(math.Floor(pos)), int64(math.Ceil(pos))
	v := floatOf(c.at(g, n, lo))
	if hi != lo {
		v += (floatOf(c.at(g, n, hi)) - v) * (pos - float64(lo))
	}
	return floatCell(v)
}

// cellValue is c as a types.Value of type t.
func cellValue(c cell, t types.T) (types.Value, error) {
	if c.null {
		return nil, nil
	}
	if c.v != nil {
		return c.v, nil
	}
	b := types.NewBuilder(memory.DefaultAllocator, t)
	defer b.Release()
	if err := appendCell(b, c, t); err != nil {
		return nil, err
	}
	a := b.NewArray()
	defer a.Release()
	return ownValue(types.ValueAt(a, 0, t)), nil
}

// orderedSpecFor maps percentile_cont, percentile_disc and mode (call's
// Args: the fraction, then x; mode has x only) to their streaming form.
func orderedSpecFor(call exec.AggCall, spec AggSpec) (AggSpec, error) {
	name := call.Fn.Name
	spec.Kind = map[string]AggKind{"percentile_cont": AggPercentileCont, "percentile_disc": AggPercentileDisc, "mode": AggMode}[name]
	if len(call.Args) == 0 || len(call.OrderBy) != 1 {
		return AggSpec{}, pgerr.Internal("stream: %s without its WITHIN GROUP value", name)
	}
	spec.Arg, spec.OrderBy = call.Args[len(call.Args)-1], call.OrderBy
	if spec.Kind == AggMode {
		return checkedSpec(spec, call)
	}
	fr, err := expr.Fold(&expr.Context{}, call.Args[0])
	if err != nil {
		return AggSpec{}, err
	}
	k, ok := fr.(*expr.Const)
	if !ok {
		return AggSpec{}, pgerr.Unsupported("%s in a materialized view needs a constant fraction, not %s", name, call.Args[0])
	}
	var vals []types.Value
	switch v := k.V.(type) {
	case nil:
		return AggSpec{}, pgerr.Unsupported("%s in a materialized view needs a fraction, not NULL", name)
	case []types.Value:
		spec.ManyFracs, vals = true, v
	default:
		vals = []types.Value{v}
	}
	for _, v := range vals {
		f, ok := v.(float64)
		switch {
		case v == nil && spec.ManyFracs:
			f = math.NaN() // a NULL element: a NULL percentile
		case !ok:
			return AggSpec{}, pgerr.Internal("stream: %s's fraction is %T", name, v)
		case f < 0 || f > 1 || math.IsNaN(f):
			return AggSpec{}, pgerr.New(pgerr.NumericValueOutOfRange, "percentile value %g is not between 0 and 1", f)
		}
		spec.Fracs = append(spec.Fracs, f)
	}
	return checkedSpec(spec, call)
}

// orderedString renders an ordered-set call for EXPLAIN.
func orderedString(s AggSpec) string {
	var sb strings.Builder
	sb.WriteString(aggNames[s.Kind])
	sb.WriteByte('(')
	if s.Kind != AggMode {
		fr := make([]string, len(s.Fracs))
		for i, f := range s.Fracs {
			fr[i] = strconv.FormatFloat(f, 'g', -1, 64)
			if math.IsNaN(f) {
				fr[i] = "NULL"
			}
		}
		if s.ManyFracs {
			fmt.Fprintf(&sb, "'{%s}'", strings.Join(fr, ","))
		} else {
			sb.WriteString(fr[0])
		}
	}
	sb.WriteString(") WITHIN GROUP (ORDER BY ")
	sb.WriteString(s.Arg.String())
	if len(s.OrderBy) > 0 && s.OrderBy[0].Desc {
		sb.WriteString(" DESC")
	}
	sb.WriteByte(')')
	return sb.String()
}

// rows is how many rows the set holds.
func (s *sortedSet[K]) rows() int64 {
	var n int64
	for _, b := range s.blocks {
		for _, e := range b {
			n += e.n
		}
	}
	return n
}

// nth is the k-th key (0-based) counting each key's rows.
func (s *sortedSet[K]) nth(k int64) K {
	for _, b := range s.blocks {
		for _, e := range b {
			if k < e.n {
				return e.k
			}
			k -= e.n
		}
	}
	var zero K
	return zero
}

// modal is the key with the most rows: the first in order on ties, or the
// last when last is set.
func (s *sortedSet[K]) modal(last bool) K {
	var best K
	bestN := int64(0)
	for _, b := range s.blocks {
		for _, e := range b {
			if e.n > bestN || (last && e.n == bestN) {
				best, bestN = e.k, e.n
			}
		}
	}
	return best
}

// absorb adds every key of from, with its rows.
func (s *sortedSet[K]) absorb(from *sortedSet[K], cmp func(a, b K) int, own func(K) K) error {
	var err error
	from.each(func(k K, rows int64) {
		if err == nil {
			err = s.add(k, 1, cmp, own) // a new key starts at one row
		}
		if err == nil && rows > 1 {
			err = s.add(k, rows-1, cmp, own)
		}
	})
	return err
}

func (m *mmWords) rows(g int32) int64 { return m.sets[g].rows() }

// wordCell is the cell of a stored word.
func (m *mmWords) wordCell(v uint64) cell {
	if !m.float {
		return intCell(int64(v ^ 1<<63))
	}
	return cell{a: int64(wordFloatBits(v))}
}

func (m *mmWords) nth(g int32, k int64) cell { return m.wordCell(m.sets[g].nth(k)) }

func (m *mmWords) modal(g int32, last bool) cell { return m.wordCell(m.sets[g].modal(last)) }

func (m *mmWords) absorb(dst int32, from rankCol, src int32) error {
	f := from.(*mmWords)
	return m.sets[dst].absorb(&f.sets[src], cmpWords, same[uint64])
}

func (m *mmOrd[K]) rows(g int32) int64 { return m.sets[g].rows() }

func (m *mmOrd[K]) nth(g int32, k int64) cell { return m.c.cell(m.sets[g].nth(k)) }

func (m *mmOrd[K]) modal(g int32, last bool) cell { return m.c.cell(m.sets[g].modal(last)) }

func (m *mmOrd[K]) absorb(dst int32, from rankCol, src int32) error {
	f := from.(*mmOrd[K])
	return m.sets[dst].absorb(&f.sets[src], m.c.cmp, m.c.own)
}

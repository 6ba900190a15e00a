package stream

import (
	"math/bits"

	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Merging aggregate states, for WindowAgg: a HOP or CUMULATE window's
// result merges the states of its panes, a session's the states of its
// events' times. Every streaming aggregate merges: counts and sums add,
// min/max take the extreme of the extremes, DISTINCT aggregates unite
// their (group, value) pairs. Merges go into an accumulator: a state of
// the same aggregate made by newMergeAcc (min and max keep only their
// running extreme there), read with results and emptied with reset.

// mergeCol is an aggregate state whose groups can absorb other groups'
// states. Owned by one goroutine, like aggCol.
type mergeCol interface {
	aggCol
	// merge folds group src[i] of from (a state of the same aggregate over
	// the same argument type, made by newWinAggCol) into group dst[i].
	merge(dst []int32, from aggCol, src []int32) error
}

// newWinAggCol makes a WindowAgg's state of aggregate s over an argument of
// type t: that of HashAgg, except that DISTINCT aggregates keep their pairs
// per group (winDistinctCol) so that a group can be merged and reset while
// it still holds rows.
func newWinAggCol(s AggSpec, t types.T, appendOnly bool) (aggCol, error) {
	if s.Kind == AggStringAgg || s.Kind == AggArrayAgg {
		return newAggCol(s, t, appendOnly) // DISTINCT when its value is built
	}
	base := s
	base.Distinct = false
	c, err := newAggCol(base, t, appendOnly)
	if err != nil {
		return nil, err
	}
	if s.Distinct && s.Kind != AggCountStar {
		return newWinDistinct(c, t), nil
	}
	return c, nil
}

// newMergeAcc makes an accumulator for merging states of aggregate s.
func newMergeAcc(s AggSpec, t types.T) (mergeCol, error) {
	c, err := newWinAggCol(s, t, true)
	if err != nil {
		return nil, err
	}
	m, ok := c.(mergeCol)
	if !ok {
		return nil, pgerr.Internal("stream: %s cannot merge window panes", s)
	}
	return m, nil
}

func (c *countCol) merge(dst []int32, from aggCol, src []int32) error {
	f := from.(*countCol)
	for i, d := range dst {
		c.n[d] += f.n[src[i]]
	}
	return nil
}

func (s *int128) add128(v int128) {
	var c uint64
	s.lo, c = bits.Add64(s.lo, v.lo, 0)
	s.hi += v.hi + int64(c)
}

func (c *intSumCol) merge(dst []int32, from aggCol, src []int32) error {
	f := from.(*intSumCol)
	for i, d := range dst {
		q := &f.s[src[i]]
		p := &c.s[d]
		p.s.add128(q.s)
		p.n += q.n
	}
	return nil
}

func (c *floatSumCol) merge(dst []int32, from aggCol, src []int32) error {
	f := from.(*floatSumCol)
	for i, d := range dst {
		q := f.s[src[i]]
		if q.n == 0 {
			continue
		}
		p := &c.s[d]
		if c.f32 {
			p.sum = float64(float32(p.sum) + float32(q.sum))
		} else {
			p.sum += q.sum
		}
		p.n += q.n
		p.pinf += q.pinf
		p.ninf += q.ninf
		p.nans += q.nans
	}
	return nil
}

func (c *numericSumCol) merge(dst []int32, from aggCol, src []int32) error {
	f := from.(*numericSumCol)
	for i, d := range dst {
		q := &f.s[src[i]]
		if q.n == 0 {
			continue
		}
		p := &c.s[d]
		if _, err := apd.BaseContext.Add(&p.sum, &p.sum, &q.sum); err != nil {
			return pgerr.Wrap(err, pgerr.NumericValueOutOfRange, "value overflows numeric format")
		}
		p.n += q.n
		p.nans += q.nans
		p.pinf += q.pinf
		p.ninf += q.ninf
		for _, sc := range q.scales {
			p.addScale(sc.scale, sc.n)
		}
	}
	return nil
}

func (c *intervalSumCol) merge(dst []int32, from aggCol, src []int32) error {
	f := from.(*intervalSumCol)
	for i, d := range dst {
		q := f.s[src[i]]
		p := &c.s[d]
		p.months += q.months
		p.days += q.days
		p.nanos += q.nanos
		p.n += q.n
	}
	return nil
}

func (c *boolCol) merge(dst []int32, from aggCol, src []int32) error {
	f := from.(*boolCol)
	for i, d := range dst {
		c.t[d] += f.t[src[i]]
		c.f[d] += f.f[src[i]]
	}
	return nil
}

var errMergeInto = pgerr.Internal("stream: a merge into a state that keeps every value")

func (m *mmWords) merge(dst []int32, from aggCol, src []int32) error {
	if !m.appendOnly {
		return errMergeInto
	}
	f := from.(*mmWords)
	for i, d := range dst {
		s := src[i]
		var v uint64
		if f.appendOnly {
			if !f.has.get(s) {
				continue
			}
			v = f.best[s]
		} else {
			var ok bool
			if v, ok = f.sets[s].extreme(f.max); !ok {
				continue
			}
		}
		if b := m.best[d]; !m.has.get(d) || (m.max && v > b) || (!m.max && v < b) {
			m.best[d] = v
			m.has.set(d, true)
		}
	}
	return nil
}

func (m *mmOrd[K]) merge(dst []int32, from aggCol, src []int32) error {
	if !m.appendOnly {
		return errMergeInto
	}
	f := from.(*mmOrd[K])
	for i, d := range dst {
		s := src[i]
		var v K
		if f.appendOnly {
			if !f.has[s] {
				continue
			}
			v = f.best[s]
		} else {
			var ok bool
			if v, ok = f.sets[s].extreme(f.max); !ok {
				continue
			}
		}
		if !m.has[d] {
			m.best[d], m.has[d] = v, true
			continue
		}
		if c := m.c.cmp(v, m.best[d]); (m.max && c > 0) || (!m.max && c < 0) {
			m.best[d] = v
		}
	}
	return nil
}

// winDistinctCol is a DISTINCT aggregate for WindowAgg: distinctCol with
// each group's pairs linked in a list, so that reset frees a group's pairs
// (a window's state is freed while it holds rows) and merge can enumerate
// them. Owned by one goroutine.
type winDistinctCol struct {
	*distinctCol
}

// pairLists links the pairs of each group: per pair its group and its
// neighbours (+1, 0: none), per group its first pair (+1). Singly linked
// lists (singly) keep only next: their pairs are never unlinked alone.
// The per-pair arrays are paged: the pair table's doublings copy none of
// them.
type pairLists struct {
	pg, next, prev paged[int32] // per pair (pg and prev empty when singly)
	head           []int32      // per group
	singly         bool
}

func newWinDistinct(inner aggCol, t types.T) *winDistinctCol {
	d := newDistinctCol(inner, t)
	d.lists = &pairLists{}
	return &winDistinctCol{d}
}

func (d *winDistinctCol) grow(n int) {
	d.inner.grow(n)
	d.lists.head = growSlice(d.lists.head, n)
}

// reset frees group g's pairs and empties it.
func (d *winDistinctCol) reset(g int32) {
	l := d.lists
	for p := l.head[g] - 1; p >= 0; p = *l.next.at(p) - 1 {
		d.seen.remove(p)
		d.rep.clear(p)
		*d.cnt.at(p) = -1
	}
	l.head[g] = 0
	d.inner.reset(g)
}

// pairs is the number of pair ids the lists cover.
func (l *pairLists) pairs() int { return int(l.next.len()) }

func (l *pairLists) growPairs(n int) {
	l.next.grow(n)
	if !l.singly {
		l.pg.grow(n)
		l.prev.grow(n)
	}
}

func (l *pairLists) link(p, g int32) {
	if l.singly {
		*l.next.at(p), l.head[g] = l.head[g], p+1
		return
	}
	*l.pg.at(p) = g
	*l.prev.at(p) = 0
	*l.next.at(p) = l.head[g]
	if h := l.head[g]; h != 0 {
		*l.prev.at(h - 1) = p + 1
	}
	l.head[g] = p + 1
}

func (l *pairLists) unlink(p int32) {
	next, prev := *l.next.at(p), *l.prev.at(p)
	if next != 0 {
		*l.prev.at(next - 1) = prev
	}
	if prev != 0 {
		*l.next.at(prev - 1) = next
	} else {
		l.head[*l.pg.at(p)] = next
	}
}

// merge adds each distinct value of the source groups to the target
// groups (once per target, however many sources hold it).
func (d *winDistinctCol) merge(dst []int32, from aggCol, src []int32) error {
	f := from.(*winDistinctCol)
	var gids []int32
	var cells []cell
	for i, g := range dst {
		for p := f.lists.head[src[i]] - 1; p >= 0; p = *f.lists.next.at(p) - 1 {
			if *f.cnt.at(p) > 0 {
				gids, cells = append(gids, g), append(cells, f.rep.get(p))
			}
		}
	}
	if len(gids) == 0 {
		return nil
	}
	vals, err := d.cellArray(cells)
	if err != nil {
		return err
	}
	defer vals.Release()
	return d.update(vals, gids, nil)
}

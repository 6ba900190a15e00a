package exec

import "math/bits"

// merger is an aggregate state that can absorb the groups of another
// state of the same aggregate with a result equal to having seen the other
// state's rows itself, whatever the order: the parallel hash aggregation's
// per-worker partial states are merged this way (hashagg_combine.go). Only
// order-insensitive, exact states implement it (counts, integer sums and
// averages in 128 bits, integer min/max); float sums (rounding depends on
// the order), DISTINCT, ORDER BY and collecting aggregates do not.
type merger interface {
	// mergeFrom folds src's groups [base, base+len(gmap)) into this state's
	// groups gmap[j] (grown to hold them); src is not changed.
	mergeFrom(src aggState, base int, gmap []int32)
}

func (c *countAgg) mergeFrom(src aggState, base int, gmap []int32) {
	s := src.(*countAgg)
	for j, g := range gmap {
		c.n[g] += s.n[base+j]
	}
}

// addTo adds t to s.
func (s *int128) addTo(t int128) {
	var c uint64
	s.lo, c = bits.Add64(s.lo, t.lo, 0)
	s.hi += t.hi + int64(c)
}

func (a *intSum) mergeFrom(src aggState, base int, gmap []int32) {
	s := src.(*intSum)
	for j, g := range gmap {
		a.s[g].addTo(s.s[base+j])
		a.n[g] += s.n[base+j]
	}
}

func (m *mmInt) mergeFrom(src aggState, base int, gmap []int32) {
	s := src.(*mmInt)
	for j, g := range gmap {
		if !s.has[base+j] {
			continue
		}
		v := s.v[base+j]
		if !m.has[g] || (m.sign > 0 && v < m.v[g]) || (m.sign < 0 && v > m.v[g]) {
			m.v[g], m.has[g] = v, true
		}
	}
}

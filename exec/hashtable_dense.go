package exec

import (
	"math"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
)

// Dense keys. A hashTable of one integer-like key column made dense-capable
// (allowDense: the hash aggregation's tables) starts by finding groups by
// the key itself: slot key - lo of a flat array holds the group id + 1, so
// a row costs one array read and no hashing (DuckDB's perfect hash
// aggregation does this when its statistics show a small key range; here
// the range is found while the batches come). The array covers [lo, lo +
// len(slots)) and widens, doubling, as keys outside it come; a batch whose
// keys would widen it past maxAggDenseSpan leaves the dense index for the
// hashed slots (islots) for good, its groups moved there with their ids.
// Group ids, newRows and NULL handling are those of the hashed table, so
// callers see no difference but speed. Owned by the table's goroutine.
type denseIndex struct {
	on    bool    // the table finds its groups here
	lo    int64   // the key of slots[0]
	slots []int32 // per key - lo: group id + 1, 0 for none
	null  int32   // group id + 1 of the NULL key, 0 for none
	max   uint64  // the most slots the array may have
}

// maxAggDenseSpan bounds the dense array for a table that will have at most
// groups groups: 16 slots a group (64 bytes, about what the hashed slots
// take at their lowest load) plus 256 KiB, and never more than 2^26 slots.
func maxAggDenseSpan(groups int) uint64 {
	return min(16*uint64(groups)+1<<16, 1<<26)
}

// limit is maxAggDenseSpan within the table's own bound (allowDense).
func (d *denseIndex) limit(groups int) uint64 {
	return min(maxAggDenseSpan(groups), d.max)
}

// allowDense lets an empty table of one integer-like key column find its
// groups by a dense index of at most maxBytes (0: no bound but
// maxAggDenseSpan's); other tables are unchanged.
func (h *hashTable) allowDense(maxBytes int64) {
	if h.mode == modeInt && h.width == 1 && h.n == 0 {
		h.dn.on, h.dn.max = true, 1<<26
		if maxBytes > 0 {
			h.dn.max = min(h.dn.max, uint64(maxBytes/4))
		}
	}
}

// batchRange returns the smallest and largest non-NULL key of the batch;
// ok is false when every key is NULL.
func batchRange(a arrow.Array, v []int64, n int) (lo, hi int64, ok bool) {
	if a.NullN() == 0 {
		if n == 0 {
			return 0, 0, false
		}
		lo, hi = v[0], v[0]
		for _, x := range v[1:n] {
			lo, hi = min(lo, x), max(hi, x)
		}
		return lo, hi, true
	}
	for i := 0; i < n; i++ {
		if a.IsNull(i) {
			continue
		}
		if !ok {
			lo, hi, ok = v[i], v[i], true
		}
		lo, hi = min(lo, v[i]), max(hi, v[i])
	}
	return lo, hi, ok
}

// widenDense makes the dense array cover [blo, bhi], for a table that will
// have at most groups groups; false when that would take it past its
// limit.
func (h *hashTable) widenDense(blo, bhi int64, groups int) bool {
	d := &h.dn
	nlo, nhi := blo, bhi
	up := true // the slack goes above (the array grew upward, or is new)
	if len(d.slots) > 0 {
		hi := d.lo + int64(len(d.slots)) - 1
		if blo >= d.lo && bhi <= hi {
			return true
		}
		nlo, nhi, up = min(blo, d.lo), max(bhi, hi), bhi > hi
	}
	need := uint64(nhi) - uint64(nlo) + 1 // 0: all of int64
	limit := d.limit(groups)
	if need == 0 || need > limit {
		return false
	}
	// Double at least, within the limit and the int64 range.
	size := min(max(need, 2*uint64(len(d.slots)), 1024), limit)
	if up {
		if room := uint64(math.MaxInt64) - uint64(nlo); size-1 > room {
			nlo = math.MaxInt64 - int64(size-1)
		}
	} else if room := uint64(nhi) - 1<<63; size-1 > room {
		nlo = math.MinInt64
	} else {
		nlo = nhi - int64(size-1)
	}
	slots := make([]int32, size)
	if len(d.slots) > 0 {
		copy(slots[uint64(d.lo)-uint64(nlo):], d.slots)
	}
	d.lo, d.slots = nlo, slots
	return true
}

// probeDense is probe for a table on its dense index; it returns false
// (having done nothing) when the batch's keys leave the dense index: the
// table then is a hashed one and the caller probes that.
func (h *hashTable) probeDense(keys []arrow.Array, n int, gids []int32, ins, skipNulls bool) bool {
	a := keys[0]
	v, _ := int64Values(a)
	if ins {
		if lo, hi, ok := batchRange(a, v, n); ok && !h.widenDense(lo, hi, h.n+n) {
			h.leaveDense()
			return false
		}
	} else {
		h.prepare(keys, n) // lookups hand the hashes on (spilling)
	}
	d := &h.dn
	slots, lo := d.slots, d.lo
	if a.NullN() == 0 {
		for i, x := range v[:n] {
			off := uint64(x) - uint64(lo)
			if off >= uint64(len(slots)) {
				gids[i] = -1 // a lookup of a key outside the range
				continue
			}
			g := slots[off]
			if g == 0 {
				if !ins {
					gids[i] = -1
					continue
				}
				g = h.denseGroup(i)
				slots[off] = g
			}
			gids[i] = g - 1
		}
		return true
	}
	for i := 0; i < n; i++ {
		var g int32
		if a.IsNull(i) {
			if skipNulls {
				gids[i] = -1
				continue
			}
			if g = d.null; g == 0 && ins {
				g = h.denseGroup(i)
				d.null = g
			}
		} else if off := uint64(v[i]) - uint64(lo); off < uint64(len(slots)) {
			if g = slots[off]; g == 0 && ins {
				g = h.denseGroup(i)
				slots[off] = g
			}
		}
		gids[i] = g - 1
	}
	return true
}

// denseGroup records a new group first seen at row and returns its id + 1.
func (h *hashTable) denseGroup(row int) int32 {
	h.n++
	h.newRows = append(h.newRows, int32(row))
	return int32(h.n)
}

// leaveDense moves the groups of the dense index into hashed slots.
func (h *hashTable) leaveDense() {
	d := &h.dn
	size := max(1024, 1<<bits.Len(uint(2*h.n+1)))
	h.islots = make([]islot, size)
	h.mask = uint64(size - 1)
	put := func(sl islot) {
		pos := hashInt(sl.k0, sl.k1, sl.nm) & h.mask
		for h.islots[pos].gid != 0 {
			pos = (pos + 1) & h.mask
		}
		h.islots[pos] = sl
	}
	for off, g := range d.slots {
		if g != 0 {
			put(islot{k0: d.lo + int64(off), gid: g})
		}
	}
	if d.null != 0 {
		put(islot{gid: d.null, nm: 1})
	}
	*d = denseIndex{}
}

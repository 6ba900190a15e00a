package stream

// A word-keyed groupTable with a lead (a DISTINCT aggregate's (group,
// value) pairs, WindowAgg's (key, window) groups and entries) keeps its
// slots as lslots: 16 bytes instead of a wslot's 24, so a third more of
// them fit a cache line and the largest table of a q16-like operator
// takes a third fewer fresh pages (docs/benchmarks.md, "q16: compact
// pair slots"). Its keys are never NULL (every probe of a lead table skips
// NULL keys; WindowAgg's keys are ids) and its lead is a non-negative
// int32, so the NULL mask and the lead's upper word need no room.
//
// Ownership: part of its groupTable; one goroutine.

// lslot is a slot of a lead table: the value's word, the lead and id+1
// (0: empty).
type lslot struct {
	k1 int64
	k0 int32
	id int32
}

// findLead is findWord for a lead table: lead g, value word b.
func (t *groupTable) findLead(g int32, b int64, row int) int32 {
	return t.findLeadHash(hashWords(int64(g), b, 0), g, b, row)
}

// findLeadHash is findLead given the key's hash hv.
func (t *groupTable) findLeadHash(hv uint64, g int32, b int64, row int) int32 {
	pos := hv & t.mask
	for {
		sl := &t.lslots[pos]
		if sl.id == 0 {
			id := t.newID()
			*sl = lslot{k1: b, k0: g, id: id + 1}
			t.homes = growSlice(t.homes, t.cap())
			t.homes[id] = uint32(hv)
			t.newRows = append(t.newRows, int32(row))
			if t.overfull(t.live, len(t.lslots)) {
				t.growLead()
			}
			return id
		}
		if sl.k0 == g && sl.k1 == b {
			return sl.id - 1
		}
		pos = (pos + 1) & t.mask
	}
}

// A lead table past a cache's size misses the cache on nearly every
// probe, and a probe's loop waits for its miss before the next row's
// probe starts. So probes of such a table go in blocks of touchBlock rows:
// a first pass hashes the block's rows and reads the first slot of each
// (loads that do not depend on one another, so the processor keeps many
// misses in flight at once), and the second pass probes as findLead does,
// finding most of those slots in the cache.
const (
	touchBlock    = 256
	touchMinSlots = 1 << 16 // 1 MiB of lslots
)

// probeLead is probeWords for a lead table whose value column has no
// NULLs: lead[i] < 0 gives ids[i] = -1.
func (t *groupTable) probeLead(lead []int32, w []int64, ids []int32) {
	var hs [touchBlock]uint64
	var sink int32
	for lo := 0; lo < len(ids); lo += touchBlock {
		hi := min(lo+touchBlock, len(ids))
		mask := t.mask
		for i := lo; i < hi; i++ {
			h := hashWords(int64(lead[i]), w[i], 0)
			hs[i-lo] = h
			sink |= t.lslots[h&mask].id
		}
		for i := lo; i < hi; i++ {
			if lead[i] < 0 {
				ids[i] = -1
				continue
			}
			ids[i] = t.findLeadHash(hs[i-lo], lead[i], w[i], i)
		}
	}
	t.touched += sink // keeps the first pass's loads
}

func (t *groupTable) growLead() {
	old := t.lslots
	t.lslots = make([]lslot, 2*len(old))
	t.mask = uint64(len(t.lslots) - 1)
	// In blocks, as probeLead: the new table is past the cache's size.
	var ps [touchBlock]uint64
	var sink int32
	for lo := 0; lo < len(old); lo += touchBlock {
		blk := old[lo:min(lo+touchBlock, len(old))]
		for i, sl := range blk {
			if sl.id == 0 {
				continue
			}
			pos := hashWords(int64(sl.k0), sl.k1, 0) & t.mask // no random read of homes
			ps[i] = pos
			sink |= t.lslots[pos].id
		}
		for i, sl := range blk {
			if sl.id == 0 {
				continue
			}
			pos := ps[i]
			for t.lslots[pos].id != 0 {
				pos = (pos + 1) & t.mask
			}
			t.lslots[pos] = sl
		}
	}
	t.touched += sink
}

// leadValue is the value word of id's key (a live id of a lead table):
// its slot is found from its home, as remove does.
func (t *groupTable) leadValue(id int32) int64 {
	pos := uint64(t.homes[id]) & t.mask
	for t.lslots[pos].id != id+1 {
		pos = (pos + 1) & t.mask
	}
	return t.lslots[pos].k1
}

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
	hv := hashWords(int64(g), b, 0)
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

func (t *groupTable) growLead() {
	old := t.lslots
	t.lslots = make([]lslot, 2*len(old))
	t.mask = uint64(len(t.lslots) - 1)
	for _, sl := range old {
		if sl.id == 0 {
			continue
		}
		pos := hashWords(int64(sl.k0), sl.k1, 0) & t.mask // no random read of homes
		for t.lslots[pos].id != 0 {
			pos = (pos + 1) & t.mask
		}
		t.lslots[pos] = sl
	}
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

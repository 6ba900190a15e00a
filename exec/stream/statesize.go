package stream

import (
	"unsafe"

	"github.com/streamsql/streamsql/types"
)

// State size estimates (stateSizer, meter.go): each stateful operator's
// running state reports, at every barrier, counts it maintains anyway
// (groups, held rows, map entries) times an estimated size per item. The
// estimates count the rows' values by their types (estRowBytes) plus the
// operator's bookkeeping per item; they cost O(1) (or O(number of
// PARTITION BY groups of a query)), never a walk over the rows. They run
// on the operator's goroutine, which owns the state.

// stateBytes implements stateSizer: per group its key, its aggregates'
// states and the result last emitted, and per-group bookkeeping.
func (s hashAggState) stateBytes() int64 {
	r := s.r
	groups, key := int64(1), int64(0)
	if r.table != nil {
		groups, key = int64(r.table.len()), estRowBytes(r.table.ts)+16 // the key and its hash slot
	}
	perGroup := key + int64(len(r.aggs))*(24+16) + 8 + 2
	return groups*perGroup + distinctBytes(r.aggs)
}

// distinctBytes is what DISTINCT aggregates keep besides their groups:
// one (group, value) pair per distinct value of each group.
func distinctBytes(aggs []aggCol) int64 {
	var n int64
	var shares map[*distinctShare]bool
	for _, a := range aggs {
		if d, ok := a.(*distinctCol); ok && d.seen != nil {
			if d.sh != nil {
				n += int64(d.seen.len()) * 8 // its row count in the shared pair
				if shares[d.sh] {
					continue
				}
				if shares == nil {
					shares = map[*distinctShare]bool{}
				}
				shares[d.sh] = true
			}
			n += int64(d.seen.len()) * (estRowBytes([]types.T{d.t}) + 16 + 8 + 8 + 8)
		}
		if c, ok := a.(*collectCol); ok {
			n += c.stateBytes()
		}
		if c, ok := a.(*floatVarCol); ok && c.keep != nil {
			n += c.keep.entries * (8 + 8) // a kept value and its row count
		}
		if c, ok := a.(*regrCol); ok && c.keep != nil {
			n += c.keep.entries * (16 + 8) // a kept pair and its row count
		}
	}
	return n
}

// stateBytes implements stateSizer: keys, groups (per key and pane or
// session) and the windows' emitted rows.
func (s waggState) stateBytes() int64 {
	r := s.r
	var n int64
	if r.keyTab != nil {
		n += int64(r.keyTab.len()) * (estRowBytes(r.keyTab.ts) + 16 + 4)
	}
	n += int64(r.liveGroups())*(int64(len(r.aggs))*24+8+8+4+16) + distinctBytes(r.aggs)
	if r.etab != nil {
		n += int64(r.etab.len()) * (8*4 + 4 + 4 + int64(len(r.prev))*16)
	}
	return n
}

// stateBytes implements stateSizer: both sides' stored rows, their
// entries and the join keys (an interval join's time queues besides).
func (r *joinRun) stateBytes() int64 {
	var n int64
	for _, sd := range r.sides {
		if sd == nil {
			continue
		}
		n += int64(sd.stored) * estColsBytes(sd.cols)
		n += int64(sd.entries.len()) * int64(unsafe.Sizeof(joinEntry{})+8)
		n += int64(len(sd.index)) * estMapEntry
	}
	if k := r.keys; k != nil {
		n += int64(int(k.groups.len())-len(k.free)) * (int64(unsafe.Sizeof(joinGroup{})) + estMapEntry)
	}
	if iv := r.iv; iv != nil {
		for _, q := range iv.q {
			n += int64(len(q.fifo)-q.head+len(q.heap)) * int64(unsafe.Sizeof(timeItem{}))
		}
	}
	return n
}

// stateBytes implements stateSizer: the partitions and the rows they hold
// (with multiplicity: tnList.held).
func (r *topnRun) stateBytes() int64 {
	parts := int64(len(r.parts.short) + len(r.parts.long))
	n := parts*(int64(unsafe.Sizeof(tnPart{}))+estMapEntry) + r.held*(estColsBytes(r.in)+int64(unsafe.Sizeof(tnEntry{}))+16)
	if r.dedup != nil {
		n += int64(len(r.dedup.slots)) * int64(unsafe.Sizeof(tnDedupSlot{}))
	}
	return n
}

// stateBytes implements stateSizer: the distinct rows held (their values,
// window results and outputs) and the partitions.
func (r *overRun) stateBytes() int64 {
	row := estColsBytes(r.in)
	n := int64(len(r.byVals)) * (2*row + int64(len(r.w.Calls))*24 + int64(unsafe.Sizeof(owRow{})) + estMapEntry)
	for _, g := range r.groups {
		n += int64(len(g.parts)) * (int64(unsafe.Sizeof(owPart{})) + estMapEntry + 16)
	}
	return n
}

// stateBytes implements stateSizer: the rows kept until the bound passes
// them and their heap items.
func (r *tfRun) stateBytes() int64 {
	return int64(len(r.rows))*(estColsBytes(r.cols)+int64(unsafe.Sizeof(tfRow{}))+estMapEntry+16) +
		int64(len(r.order))*int64(unsafe.Sizeof(tfItem{}))
}

// stateBytes implements stateSizer: the rows held until their time
// passes the watermark.
func (r *eowcRun) stateBytes() int64 {
	return int64(len(r.pending)) * (estColsBytes(r.cols) + int64(unsafe.Sizeof(eowcItem{})) + int64(unsafe.Sizeof(eowcHeld{})))
}

// stateBytes implements stateSizer: the view's rows (and the epoch's
// changes not merged yet), keyed by their encoded key.
func (s viewState) stateBytes() int64 {
	v := s.v
	per := estColsBytes(v.m.Cols) + int64(unsafe.Sizeof(entry{})) + estMapEntry + 16
	return int64(len(v.base)+len(v.delta)) * per
}

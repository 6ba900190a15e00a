package stream

import (
	"bytes"
	"hash/maphash"

	"github.com/apache/arrow-go/v18/arrow"
)

// A dedup (row_number() OVER (PARTITION BY ... ORDER BY ...) = 1 over an
// append-only input, Nexmark q18) keeps one row a partition and replaces
// it when a row that ranks first arrives. Its partitions whose encoding
// is short (tnDedupEnc bytes: a few fixed-width keys) live in one
// open-addressing table of 64-byte slots instead of a map of tnParts: a
// slot is the partition's key, its row, the row it emitted at the last
// barrier and the first sort key's norm of its row, so that taking a row
// in costs one probe (most often one cache line) and no entry is followed
// unless the row ties on that norm. A tnPart with its list was ~280 bytes
// and ten pointers a partition, most of what the collector marked; a slot
// holds two. Partitions of longer encodings go the general way (tnParts),
// beside the table, in the same TopN.
//
// The table only grows (an append-only TopN without Close never frees a
// partition). Growing moves the slots: the epoch's touched list, which
// refers to slots by index, is remapped; checkpoint marks refer to
// partitions by their encoding (topnRun.ckEnc). Output and state are the
// general path's: at a barrier a touched slot emits a Delete of the row it
// emitted before (if any) and an Insert of its row (rank 1 with RankCol);
// a checkpoint holds the same records (topn_state.go).

// tnDedupEnc is the longest partition encoding a tnDedupSlot holds.
const tnDedupEnc = 37

// tnDedupSlot is one partition of a dedup. An empty slot has cur nil.
type tnDedupSlot struct {
	cur     *tnEntry // the partition's row
	emitted *tnEntry // the row it emitted at the last barrier (nil: none)
	norm    uint64   // cur.norm
	rank    uint8
	touched bool
	n       uint8 // len(enc)
	enc     [tnDedupEnc]byte
}

func (s *tnDedupSlot) key() []byte { return s.enc[:s.n] }

// tnDedup is the table of a dedup's short partitions, owned by the run's
// goroutine.
type tnDedup struct {
	slots []tnDedupSlot // a power of two of them, or none
	n     int           // slots in use
	seed  maphash.Seed
}

func newTnDedup() *tnDedup { return &tnDedup{seed: maphash.MakeSeed()} }

// find is the index of enc's slot, or of the empty slot where it goes
// (found false); the table must have room (grow).
func (d *tnDedup) find(enc []byte) (int, bool) {
	mask := uint64(len(d.slots) - 1)
	i := maphash.Bytes(d.seed, enc) & mask
	for {
		s := &d.slots[i]
		if s.cur == nil {
			return int(i), false
		}
		if int(s.n) == len(enc) && bytes.Equal(s.enc[:s.n], enc) {
			return int(i), true
		}
		i = (i + 1) & mask
	}
}

// full reports whether one more partition needs a larger table (more
// than 3/4 of the slots in use).
func (d *tnDedup) full() bool { return (d.n+1)*4 > len(d.slots)*3 }

// grow doubles the table (to 1024 slots at first) and returns where each
// old slot in use went.
func (d *tnDedup) grow() map[int]int {
	old := d.slots
	d.slots = make([]tnDedupSlot, max(1024, 2*len(old)))
	moved := make(map[int]int)
	for i := range old {
		if old[i].cur == nil {
			continue
		}
		j, _ := d.find(old[i].key())
		d.slots[j] = old[i]
		if old[i].touched {
			moved[i] = j
		}
	}
	return moved
}

// dedupRow takes row i of a chunk into the dedup partition enc (short).
func (r *topnRun) dedupRow(rec arrow.RecordBatch, keys []arrow.Array, row int) {
	d := r.dedup
	if d.full() {
		moved := d.grow()
		for k, t := range r.touched {
			if t.p == nil {
				r.touched[k].slot = int32(moved[int(t.slot)])
			}
		}
	}
	i, found := d.find(r.enc)
	s := &d.slots[i]
	if !found {
		e := r.entry(rec, keys, row)
		s.cur, s.norm, s.rank, s.n = e, e.norm.w, e.norm.rank, uint8(copy(s.enc[:], r.enc))
		d.n++
		r.held++
		if r.ck {
			r.ckMarkEnc(r.enc, e)
		}
		r.touchSlot(i)
		return
	}
	var e *tnEntry
	norm := tnNorm{rank: 1}
	if len(keys) > 0 {
		norm = r.order.normAt(keys[0], row)
	}
	if c := norm.cmp(tnNorm{w: s.norm, rank: s.rank}); c > 0 {
		return
	} else if c == 0 {
		if c = r.order.compareAt(keys, row, norm, s.cur); c > 0 {
			return
		} else if c == 0 {
			e = r.entry(rec, keys, row)
			if r.order.compare(e, s.cur) >= 0 {
				r.pool.put(e) // not kept
				return
			}
		}
	}
	if e == nil {
		e = r.entry(rec, keys, row)
	}
	old := s.cur
	s.cur, s.norm, s.rank = e, e.norm.w, e.norm.rank
	if r.ck {
		r.ckMarkEnc(r.enc, old)
		r.ckMarkEnc(r.enc, e)
	}
	r.pool.dropped(old)
	r.touchSlot(i)
}

// touchSlot lists slot i among the partitions the epoch changed.
func (r *topnRun) touchSlot(i int) {
	if s := &r.dedup.slots[i]; !s.touched {
		s.touched = true
		r.touched = append(r.touched, tnTouched{slot: int32(i)})
	}
}

// flushSlot queues the output of touched slot i: a Delete of the row it
// emitted (if any), an Insert of its row.
func (r *topnRun) flushSlot(i int) error {
	s := &r.dedup.slots[i]
	s.touched = false
	before, after := s.emitted, s.cur
	if before == after {
		return nil
	}
	if before != nil {
		if err := r.emit(Delete, before, 1); err != nil {
			return err
		}
		before.out = false
		if before.gone && !before.ck {
			before.out = true // queued: flushed frees it
			r.pool.later = append(r.pool.later, before)
		}
	}
	after.out = true
	s.emitted = after
	return r.emit(Insert, after, 1)
}

// holds reports whether the partition enc's row is e's.
func (d *tnDedup) holds(o *tnOrder, enc []byte, e *tnEntry) bool {
	if d == nil || len(d.slots) == 0 {
		return false
	}
	i, found := d.find(enc)
	return found && (d.slots[i].cur == e || o.compare(d.slots[i].cur, e) == 0)
}

// eachSlot calls fn for every partition of the table.
func (d *tnDedup) eachSlot(fn func(s *tnDedupSlot)) {
	if d == nil {
		return
	}
	for i := range d.slots {
		if d.slots[i].cur != nil {
			fn(&d.slots[i])
		}
	}
}

// restoreSlot puts a checkpointed row of the short partition enc into the
// table; a partition holds one copy of one row.
func (r *topnRun) restoreSlot(enc []byte, e *tnEntry, n int64) bool {
	d := r.dedup
	if n != 1 {
		return false
	}
	if d.full() {
		d.grow() // nothing is touched while restoring
	}
	i, found := d.find(enc)
	if found {
		return false
	}
	s := &d.slots[i]
	s.cur, s.emitted, s.norm, s.rank, s.n = e, e, e.norm.w, e.norm.rank, uint8(copy(s.enc[:], enc))
	e.out = true
	d.n++
	r.held++
	return true
}

// useDedup reports whether the TopN is a dedup whose short partitions go
// to a tnDedup: an append-only group top-1 by row_number() that packs
// its entries and recycles them.
func (t *TopN) useDedup(r *topnRun) bool {
	return r.keep == 1 && t.Ties == RowNumber && t.Limit == 1 && t.Offset == 0 && len(t.PartitionBy) > 0 &&
		t.Close == nil && r.pool != nil
}

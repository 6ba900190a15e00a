package stream

import "unsafe"

// Recycling packed entries. An append-only TopN (a dedup, a top-10 per
// auction) replaces or trims a row for most rows it takes in: each new
// row is an entry, each displaced one garbage, and allocating and
// collecting them was most of what such a TopN cost beyond its lookups
// (Nexmark q18, q19). A displaced packed entry is reused instead, for the
// next row whose entry needs the same size class, once nothing refers to
// it any more:
//
//   - its list dropped it (tnEntry.gone: trimmed, or replaced in a top-1);
//   - it is not among its partition's emitted copies (tnEntry.out): the
//     epoch's flush still compares and emits those, so an emitted entry
//     that left its list is freed by flush after it wrote the output
//     (tnPool.later);
//   - it is not in the checkpoint's dirty list (tnEntry.ck): Snapshot
//     frees such entries when it is done with them.
//
// Only TopNs whose lists never take an entry back are recycled (append
// only, no Close: a partition freed by a watermark keeps its entries in
// the closing heap). An entry is reused whole: its header, NULL words and
// slots are rewritten (tnLayout.packed). Entries restored from a
// checkpoint are not reused (their words are 0).

// tnPool is a TopN's free packed entries by size class, owned by the
// run's goroutine.
type tnPool struct {
	slab  []uint64 // the rest of the slab new entries are cut from
	free  [tnPoolClasses][]*tnEntry
	n     int        // entries in free
	later []*tnEntry // dropped while emitted: freed after the epoch's output
}

const (
	tnPoolUnit    = 4       // words: size classes are multiples of 32 bytes
	tnPoolClasses = 64      // entries of up to 2 KiB are recycled
	tnPoolMax     = 1 << 17 // free entries kept at most (the rest is the collector's)
)

// tnClassWords is the size class of an entry of n words, and its words.
func tnClassWords(n int) (class, words int) {
	class = (n + tnPoolUnit - 1) / tnPoolUnit
	return class, class * tnPoolUnit
}

// get is a free entry of class c (nil when there is none); its words are
// stale.
func (p *tnPool) get(c int) *tnEntry {
	if p == nil || c >= tnPoolClasses {
		return nil
	}
	l := p.free[c]
	if len(l) == 0 {
		return nil
	}
	e := l[len(l)-1]
	l[len(l)-1] = nil
	p.free[c] = l[:len(l)-1]
	p.n--
	return e
}

// put frees e, when it is a packed entry the pool has room for.
func (p *tnPool) put(e *tnEntry) {
	if p == nil {
		return
	}
	c := int(e.words) / tnPoolUnit
	if e.words == 0 || c >= tnPoolClasses || p.n >= tnPoolMax {
		return
	}
	p.free[c] = append(p.free[c], e)
	p.n++
}

// dropped records that e left its list for good: it is freed now when
// nothing refers to it, after the epoch's output when it is emitted.
func (p *tnPool) dropped(e *tnEntry) {
	if p == nil {
		return
	}
	e.gone = true
	if e.ck {
		return // Snapshot frees it
	}
	if !e.out {
		p.put(e)
	}
}

// emitted moves a partition's emitted copies from before to after (its
// flush), queueing the entries of before that nothing holds any more.
func (p *tnPool) emitted(before, after []tnRank) {
	if p == nil {
		return
	}
	for _, x := range before {
		x.e.out = false
	}
	for _, x := range after {
		x.e.out = true
	}
	for _, x := range before {
		if e := x.e; !e.out && e.gone && !e.ck {
			e.out = true // queued once, though a row may be emitted twice
			p.later = append(p.later, e)
		}
	}
}

// flushed frees the entries queued by emitted: the epoch's output is
// written.
func (p *tnPool) flushed() {
	if p == nil {
		return
	}
	for _, e := range p.later {
		e.out = false
		p.put(e)
	}
	clear(p.later)
	p.later = p.later[:0]
}

// snapshotted frees e, just dropped from the checkpoint's dirty list,
// when its list dropped it and it is not emitted.
func (p *tnPool) snapshotted(e *tnEntry) {
	if p != nil && e.gone && !e.out {
		p.put(e)
	}
}

// alloc is an entry of n words: a free one of its class, else a new one.
// Its words are not cleared.
func (p *tnPool) alloc(n int) (*tnEntry, []uint64) {
	c, words := tnClassWords(n)
	if e := p.get(c); e != nil {
		return e, unsafe.Slice((*uint64)(unsafe.Pointer(e)), words)
	}
	var buf []uint64
	if p == nil || words > tnSlabWords/8 {
		buf = make([]uint64, words)
	} else {
		if len(p.slab) < words {
			p.slab = make([]uint64, tnSlabWords)
		}
		buf, p.slab = p.slab[:words:words], p.slab[words:]
	}
	e := (*tnEntry)(unsafe.Pointer(&buf[0]))
	if p != nil {
		e.words = uint32(words)
	}
	return e, buf
}

// tnSlabWords is the size of the slabs a pool cuts its new entries from:
// the collector marks a slab, not each entry in it (millions of small
// objects were most of a dedup's marking). A slab lives while one of its
// entries does; its entries are reused, never freed one by one.
const tnSlabWords = 1 << 13

package stream

import (
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

// The state of a running HashJoin, owned by its goroutine: the join keys
// seen (groups, shared by both sides) and, per side, the rows held.
//
// A side keeps its rows in the input record batches they arrived in
// (segments, immutable) and refers to each held row by an entry: its
// location, its multiplicity and its group. Entries of a group form a
// doubly linked list, so adding and removing a row is O(1). Retractions find
// their row through an identity index (row hash -> entries) that a side
// builds only when its first retraction arrives, so append-only inputs never
// hash whole rows. A segment is dropped when none of its rows is held any
// more; when dead rows (or free entries) outnumber held ones, the side
// compacts its live rows into fresh segments and renumbers its entries, and
// the key table likewise renumbers its groups once most are free.

// joinEntry is one distinct held row of a side (or several identical rows,
// count > 1, once the identity index exists). count == 0 marks a free entry.
type joinEntry struct {
	ref
	count      int32
	group      int32
	prev, next int32 // the group's entries of this side; -1 ends
	idNext     int32 // the identity index chain; -1 ends
	hash       uint64
	// matches counts, with multiplicity, the other side's rows that match
	// this row (Cond included); kept only for preserved sides with a Cond.
	matches int64
}

// joinGroup is one join key. head and rows are per side: the first entry
// and the number of rows (with multiplicity) held.
type joinGroup struct {
	head [2]int32
	rows [2]int64
	used bool
	ikey int64  // keyInt
	skey string // keyStr, keyBytes
	// clean is the group's value of the HashJoin.Clean key (cleanSet: known).
	clean    int64
	cleanSet bool
}

// joinSide is one input's rows.
type joinSide struct {
	cols      []types.Column
	preserved bool // emits its rows unmatched: NULL-padded, or semi/anti

	recs    []arrow.RecordBatch // segments; nil when dropped
	segLive []int32             // held rows per segment
	segFree []int32             // dropped segment slots
	curSeg  int32               // the segment of the chunk being consumed, -1 if none yet
	curRec  arrow.RecordBatch

	entries paged[joinEntry]
	// seqs, parallel to entries (kept apart so that the entries the join
	// reads stay small), is each entry's stable identity in checkpoints:
	// the side's seqNext when it was added (entries of a group are listed
	// by descending seq), with ckDirtyBit set while it is in the dirty
	// list (join_state.go).
	seqs    paged[uint64]
	freeEnt []int32
	live    int              // live entries (rows in segments that are referenced)
	stored  int              // rows of all segments
	index   map[uint64]int32 // identity index, nil until the first retraction

	// Checkpoints (join_state.go): once ck is set (after the first
	// snapshot or a restore), the entries whose count or matches changed
	// or that were added since the last snapshot (dirty) and the seqs of
	// the entries written before it that went (deleted).
	ck      bool
	seqNext uint64
	seqBase uint64 // seqNext at the last snapshot
	dirty   []int32
	deleted []uint64
}

// pageShift sizes the pages of paged arrays (1024 elements).
const pageShift = 10

// paged is a growable array kept in fixed-size pages: growing it never
// copies the elements (nor stalls on copying a large state).
type paged[T any] struct {
	pages []*[1 << pageShift]T
	n     int32
}

func (p *paged[T]) at(i int32) *T { return &p.pages[i>>pageShift][i&(1<<pageShift-1)] }

func (p *paged[T]) len() int32 { return p.n }

// push appends a zero element and returns its index.
func (p *paged[T]) push() int32 {
	if int(p.n) == len(p.pages)<<pageShift {
		p.pages = append(p.pages, new([1 << pageShift]T))
	}
	p.n++
	return p.n - 1
}

// grow makes the array at least n elements long; the new ones are zero.
// Unlike a slice's doubling it copies nothing, and the memory it takes
// is the next pages only.
func (p *paged[T]) grow(n int) {
	for len(p.pages)<<pageShift < n {
		p.pages = append(p.pages, new([1 << pageShift]T))
	}
	p.n = max(p.n, int32(n))
}

// joinCompactMin is the least number of dead stored rows that triggers a
// compaction (which also needs dead > live); a variable for tests.
var joinCompactMin = 1 << 14

func newJoinSide(cols []types.Column, preserved bool) *joinSide {
	return &joinSide{cols: cols, preserved: preserved, curSeg: -1}
}

// beginChunk prepares for rows of rec; they are stored only if one is held.
func (sd *joinSide) beginChunk(rec arrow.RecordBatch) {
	sd.curSeg, sd.curRec = -1, rec
}

// endChunk drops the chunk's segment if nothing of it is held, and
// compacts when dead rows or free entries outnumber the live ones; it
// returns the compaction's renumbering of the entries (nil: none).
func (sd *joinSide) endChunk(groups *paged[joinGroup], side int) []int32 {
	if sd.curSeg >= 0 && sd.segLive[sd.curSeg] == 0 {
		sd.dropSeg(sd.curSeg)
	}
	sd.curSeg, sd.curRec = -1, nil
	dead, free := sd.stored-sd.live, len(sd.freeEnt)
	if dead > sd.live && dead >= joinCompactMin || free > sd.live && free >= joinCompactMin {
		return sd.compact(groups, side)
	}
	return nil
}

func (sd *joinSide) segment() int32 {
	if sd.curSeg >= 0 {
		return sd.curSeg
	}
	sd.curRec.Retain()
	if n := len(sd.segFree); n > 0 {
		sd.curSeg = sd.segFree[n-1]
		sd.segFree = sd.segFree[:n-1]
		sd.recs[sd.curSeg], sd.segLive[sd.curSeg] = sd.curRec, 0
	} else {
		sd.curSeg = int32(len(sd.recs))
		sd.recs = append(sd.recs, sd.curRec)
		sd.segLive = append(sd.segLive, 0)
	}
	sd.stored += int(sd.curRec.NumRows())
	return sd.curSeg
}

func (sd *joinSide) dropSeg(s int32) {
	sd.stored -= int(sd.recs[s].NumRows())
	sd.recs[s].Release()
	sd.recs[s] = nil
	sd.segFree = append(sd.segFree, s)
}

// add holds row i of the current chunk in group g (whose rows it has
// already counted), merging it into an identical held row when the index
// exists; it returns the new entry, or -1 when the row was merged.
func (sd *joinSide) add(groups *paged[joinGroup], side int, g int32, i int, h uint64, matches int64) int32 {
	grp := groups.at(g)
	grp.rows[side]++
	if sd.index != nil {
		if e := sd.find(g, i, h); e >= 0 {
			sd.entries.at(e).count++
			sd.touch(e)
			return -1
		}
	}
	seg := sd.segment()
	var e int32
	if n := len(sd.freeEnt); n > 0 {
		e = sd.freeEnt[n-1]
		sd.freeEnt = sd.freeEnt[:n-1]
	} else {
		e = sd.entries.push()
		sd.seqs.push()
	}
	*sd.entries.at(e) = joinEntry{ref: ref{seg, int32(i)}, count: 1, group: g, prev: -1, next: grp.head[side], idNext: -1, hash: h, matches: matches}
	*sd.seqs.at(e) = sd.seqNext
	sd.seqNext++
	sd.touch(e)
	if grp.head[side] >= 0 {
		sd.entries.at(grp.head[side]).prev = e
	}
	grp.head[side] = e
	if sd.index != nil {
		if first, ok := sd.index[h]; ok {
			sd.entries.at(e).idNext = first
		}
		sd.index[h] = e
	}
	sd.segLive[seg]++
	sd.live++
	return e
}

// find returns the held entry identical to row i of the current chunk, or -1.
func (sd *joinSide) find(g int32, i int, h uint64) int32 {
	e, ok := sd.index[h]
	if !ok {
		return -1
	}
	for ; e >= 0; e = sd.entries.at(e).idNext {
		en := sd.entries.at(e)
		if en.hash == h && en.group == g && sameRowAt(sd.recs[en.seg], int(en.row), sd.curRec, i, sd.cols) {
			return e
		}
	}
	return -1
}

// remove retracts one instance of row i of the current chunk from group g;
// false if the side does not hold it. The index must exist.
func (sd *joinSide) remove(groups *paged[joinGroup], side int, g int32, i int, h uint64) bool {
	e := sd.find(g, i, h)
	if e < 0 {
		return false
	}
	groups.at(g).rows[side]--
	en := sd.entries.at(e)
	if en.count--; en.count > 0 {
		sd.touch(e)
		return true
	}
	sd.unlink(groups, side, e)
	sd.free(e)
	return true
}

// unlink takes entry e out of its group's list of the side's entries.
func (sd *joinSide) unlink(groups *paged[joinGroup], side int, e int32) {
	en := sd.entries.at(e)
	if en.prev >= 0 {
		sd.entries.at(en.prev).next = en.next
	} else {
		groups.at(en.group).head[side] = en.next
	}
	if en.next >= 0 {
		sd.entries.at(en.next).prev = en.prev
	}
}

// free forgets entry e, already out of its group's list: it leaves the
// identity index (if any) and its segment, and its slot is reused.
func (sd *joinSide) free(e int32) {
	en := sd.entries.at(e)
	if sd.index != nil {
		if first := sd.index[en.hash]; first == e {
			if en.idNext >= 0 {
				sd.index[en.hash] = en.idNext
			} else {
				delete(sd.index, en.hash)
			}
		} else {
			p := first
			for sd.entries.at(p).idNext != e {
				p = sd.entries.at(p).idNext
			}
			sd.entries.at(p).idNext = en.idNext
		}
	}
	seg := en.seg
	sd.gone(e)
	*en = joinEntry{}
	sd.freeEnt = append(sd.freeEnt, e)
	sd.live--
	if sd.segLive[seg]--; sd.segLive[seg] == 0 && seg != sd.curSeg {
		sd.dropSeg(seg)
	}
}

// buildIndex hashes every held row into the identity index.
func (sd *joinSide) buildIndex() {
	sd.index = make(map[uint64]int32, sd.live)
	hashes := make([][]uint64, len(sd.recs))
	for s, rec := range sd.recs {
		if rec != nil {
			hashes[s] = rowHashes(rec, sd.cols, nil)
		}
	}
	for e := int32(0); e < sd.entries.len(); e++ {
		en := sd.entries.at(e)
		if en.count == 0 {
			continue
		}
		en.hash = hashes[en.seg][en.row]
		en.idNext = -1
		if first, ok := sd.index[en.hash]; ok {
			en.idNext = first
		}
		sd.index[en.hash] = e
	}
}

// compact renumbers the live entries densely (fixing the group lists, the
// identity index and groups' heads) and copies the held rows into fresh
// segments, dropping the old ones. It returns the renumbering (old entry
// -> new, -1 for free entries).
func (sd *joinSide) compact(groups *paged[joinGroup], side int) []int32 {
	renum := make([]int32, sd.entries.len())
	var entries paged[joinEntry]
	var seqs paged[uint64]
	for e := int32(0); e < sd.entries.len(); e++ {
		if sd.entries.at(e).count == 0 {
			renum[e] = -1
			continue
		}
		renum[e] = entries.push()
		*entries.at(renum[e]) = *sd.entries.at(e)
		*seqs.at(seqs.push()) = *sd.seqs.at(e)
	}
	re := func(e int32) int32 {
		if e < 0 {
			return e
		}
		return renum[e]
	}
	for k := int32(0); k < entries.len(); k++ {
		en := entries.at(k)
		en.prev, en.next, en.idNext = re(en.prev), re(en.next), re(en.idNext)
	}
	for g := int32(0); g < groups.len(); g++ {
		if grp := groups.at(g); grp.used {
			grp.head[side] = re(grp.head[side])
		}
	}
	if sd.index != nil {
		index := make(map[uint64]int32, len(sd.index))
		for h, e := range sd.index {
			index[h] = renum[e]
		}
		sd.index = index
	}
	sd.entries, sd.seqs, sd.freeEnt = entries, seqs, nil
	sd.remapDirty(renum)

	const segRows = 4096
	var recs []arrow.RecordBatch
	var segLive []int32
	schema := types.ArrowSchema(sd.cols)
	refs := make([]ref, 0, segRows)
	for from := int32(0); from < entries.len(); from += segRows {
		to := min(from+segRows, entries.len())
		refs = refs[:0]
		for e := from; e < to; e++ {
			refs = append(refs, entries.at(e).ref)
		}
		arrs := make([]arrow.Array, len(sd.cols))
		for c, col := range sd.cols {
			arrs[c] = gather(col.Type, sd.recs, c, refs)
		}
		seg := int32(len(recs))
		recs = append(recs, array.NewRecordBatch(schema, arrs, int64(to-from)))
		releaseAll(arrs)
		segLive = append(segLive, int32(to-from))
		for e := from; e < to; e++ {
			entries.at(e).ref = ref{seg, e - from}
		}
	}
	for _, rec := range sd.recs {
		if rec != nil {
			rec.Release()
		}
	}
	sd.recs, sd.segLive, sd.segFree = recs, segLive, nil
	sd.stored = sd.live
	return renum
}

// release drops every segment.
func (sd *joinSide) release() {
	for _, rec := range sd.recs {
		if rec != nil {
			rec.Release()
		}
	}
	sd.recs = nil
}

// Join key modes.
const (
	keyCross = iota // no keys: one group
	keyInt          // one int-class key on both sides: int64 map
	keyStr          // one raw text key on both sides: string map
	keyBytes        // anything else: encoded keys
)

// keyTable maps join keys to group ids.
type keyTable struct {
	mode   int
	ts     [2][]types.T // key types per side
	ints   *intIndex
	strs   map[string]int32
	groups paged[joinGroup]
	free   []int32
	// probe marks a side whose rows are never held (a TemporalJoin's
	// stream side): lookup creates no group for its keys, a missing key
	// gets -1 (matches nothing).
	probe [2]bool

	iv   []int64 // scratch
	enc  []byte
	offs []int
	gids []int32
}

func newKeyTable(lt, rt []types.T) *keyTable {
	k := &keyTable{ts: [2][]types.T{lt, rt}, mode: keyBytes}
	switch {
	case len(lt) == 0:
		k.mode = keyCross
	case len(lt) == 1 && intClass(lt[0]) != 0 && intClass(lt[0]) == intClass(rt[0]):
		k.mode = keyInt
	case len(lt) == 1 && rawText(lt[0]) && rawText(rt[0]):
		k.mode = keyStr
	}
	switch k.mode {
	case keyCross:
		k.newGroup() // group 0, never freed
	case keyInt:
		k.ints = newIntIndex(0)
	case keyStr, keyBytes:
		k.strs = map[string]int32{}
	}
	return k
}

func (k *keyTable) newGroup() int32 {
	var g int32
	if n := len(k.free); n > 0 {
		g = k.free[n-1]
		k.free = k.free[:n-1]
	} else {
		g = k.groups.push()
	}
	*k.groups.at(g) = joinGroup{head: [2]int32{-1, -1}, used: true}
	return g
}

// lookup returns the group of every row of side's key arrays (n rows),
// creating missing groups (unless side only probes: then -1); -1 for rows
// with a NULL key.
func (k *keyTable) lookup(side int, keys []arrow.Array, n int) []int32 {
	if cap(k.gids) < n {
		k.gids = make([]int32, n)
	}
	gids := k.gids[:n]
	var nulls []bool
	for _, a := range keys {
		if a.NullN() == 0 {
			continue
		}
		if nulls == nil {
			nulls = make([]bool, n)
		}
		for i := 0; i < n; i++ {
			nulls[i] = nulls[i] || a.IsNull(i)
		}
	}
	switch k.mode {
	case keyCross:
		for i := range gids {
			gids[i] = 0
		}
	case keyInt:
		vals := intKeys(keys[0], &k.iv)
		for i, v := range vals[:n] {
			if nulls != nil && nulls[i] {
				gids[i] = -1
				continue
			}
			g, ok := k.ints.get(v)
			if !ok && k.probe[side] {
				g = -1
			} else if !ok {
				g = k.newGroup()
				k.groups.at(g).ikey = v
				k.ints.put(v, g)
			}
			gids[i] = g
		}
	case keyStr:
		s := keys[0].(*array.String)
		for i := 0; i < n; i++ {
			if nulls != nil && nulls[i] {
				gids[i] = -1
				continue
			}
			gids[i] = k.strGroup(s.Value(i), k.probe[side])
		}
	default:
		k.enc, k.offs = k.enc[:0], append(k.offs[:0], 0)
		for i := 0; i < n; i++ {
			if nulls == nil || !nulls[i] {
				for c, a := range keys {
					k.enc = encodeValue(k.enc, a, i, k.ts[side][c])
				}
			}
			k.offs = append(k.offs, len(k.enc))
		}
		for i := 0; i < n; i++ {
			if nulls != nil && nulls[i] {
				gids[i] = -1
				continue
			}
			b := k.enc[k.offs[i]:k.offs[i+1]]
			gids[i] = k.strGroup(unsafe.String(unsafe.SliceData(b), len(b)), k.probe[side])
		}
	}
	return gids
}

// strGroup finds or creates the group of key s (which may alias a buffer);
// with probe it only finds (-1: none).
func (k *keyTable) strGroup(s string, probe bool) int32 {
	if g, ok := k.strs[s]; ok {
		return g
	}
	if probe {
		return -1
	}
	g := k.newGroup()
	s = strings.Clone(s)
	k.groups.at(g).skey = s
	k.strs[s] = g
	return g
}

// compact renumbers the groups densely and rebuilds the key index (it
// never shrinks, nor does a Go map) once free groups outnumber used ones,
// fixing the sides' entries.
func (k *keyTable) compact(sides [2]*joinSide) {
	used := int(k.groups.len()) - len(k.free)
	if k.mode == keyCross || len(k.free) <= used || len(k.free) < joinCompactMin {
		return
	}
	renum := make([]int32, k.groups.len())
	var groups paged[joinGroup]
	for g := int32(0); g < k.groups.len(); g++ {
		if grp := k.groups.at(g); grp.used {
			renum[g] = groups.push()
			*groups.at(renum[g]) = *grp
		}
	}
	switch k.mode {
	case keyInt:
		k.ints = newIntIndex(used)
		for g := int32(0); g < groups.len(); g++ {
			k.ints.put(groups.at(g).ikey, g)
		}
	default:
		k.strs = make(map[string]int32, used)
		for g := int32(0); g < groups.len(); g++ {
			k.strs[groups.at(g).skey] = g
		}
	}
	for _, sd := range sides {
		for e := int32(0); e < sd.entries.len(); e++ {
			if en := sd.entries.at(e); en.count > 0 {
				en.group = renum[en.group]
			}
		}
	}
	k.groups, k.free = groups, nil
}

// freeIfEmpty forgets group g when neither side holds a row of it.
func (k *keyTable) freeIfEmpty(g int32) {
	grp := k.groups.at(g)
	if !grp.used || grp.head[0] >= 0 || grp.head[1] >= 0 {
		return
	}
	switch k.mode {
	case keyInt:
		k.ints.del(grp.ikey)
	case keyStr, keyBytes:
		delete(k.strs, grp.skey)
	case keyCross:
		return // the one group stays
	}
	*grp = joinGroup{}
	k.free = append(k.free, g)
}

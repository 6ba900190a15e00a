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
// more; when dropped rows outweigh held ones, the side compacts its live rows
// into fresh segments.

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

	entries   []joinEntry
	freeEnt   []int32
	live      int // live entries (rows in segments that are referenced)
	stored    int // rows of all segments
	retracted bool
	index     map[uint64]int32 // identity index, nil until the first retraction
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

// endChunk drops the chunk's segment if nothing of it is held and compacts
// when dead rows dominate.
func (sd *joinSide) endChunk() {
	if sd.curSeg >= 0 && sd.segLive[sd.curSeg] == 0 {
		sd.dropSeg(sd.curSeg)
	}
	sd.curSeg, sd.curRec = -1, nil
	if dead := sd.stored - sd.live; dead > sd.live && dead >= joinCompactMin {
		sd.compact()
	}
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
// exists.
func (sd *joinSide) add(groups []joinGroup, side int, g int32, i int, h uint64, matches int64) {
	grp := &groups[g]
	grp.rows[side]++
	if sd.index != nil {
		if e := sd.find(g, i, h); e >= 0 {
			sd.entries[e].count++
			return
		}
	}
	seg := sd.segment()
	var e int32
	if n := len(sd.freeEnt); n > 0 {
		e = sd.freeEnt[n-1]
		sd.freeEnt = sd.freeEnt[:n-1]
	} else {
		e = int32(len(sd.entries))
		sd.entries = append(sd.entries, joinEntry{})
	}
	sd.entries[e] = joinEntry{ref: ref{seg, int32(i)}, count: 1, group: g, prev: -1, next: grp.head[side], idNext: -1, hash: h, matches: matches}
	if grp.head[side] >= 0 {
		sd.entries[grp.head[side]].prev = e
	}
	grp.head[side] = e
	if sd.index != nil {
		if first, ok := sd.index[h]; ok {
			sd.entries[e].idNext = first
		}
		sd.index[h] = e
	}
	sd.segLive[seg]++
	sd.live++
}

// find returns the held entry identical to row i of the current chunk, or -1.
func (sd *joinSide) find(g int32, i int, h uint64) int32 {
	e, ok := sd.index[h]
	if !ok {
		return -1
	}
	for ; e >= 0; e = sd.entries[e].idNext {
		en := &sd.entries[e]
		if en.hash == h && en.group == g && sameRowAt(sd.recs[en.seg], int(en.row), sd.curRec, i, sd.cols) {
			return e
		}
	}
	return -1
}

// remove retracts one instance of row i of the current chunk from group g;
// false if the side does not hold it. The index must exist.
func (sd *joinSide) remove(groups []joinGroup, side int, g int32, i int, h uint64) bool {
	e := sd.find(g, i, h)
	if e < 0 {
		return false
	}
	groups[g].rows[side]--
	en := &sd.entries[e]
	if en.count--; en.count > 0 {
		return true
	}
	if en.prev >= 0 {
		sd.entries[en.prev].next = en.next
	} else {
		groups[g].head[side] = en.next
	}
	if en.next >= 0 {
		sd.entries[en.next].prev = en.prev
	}
	if first := sd.index[h]; first == e {
		if en.idNext >= 0 {
			sd.index[h] = en.idNext
		} else {
			delete(sd.index, h)
		}
	} else {
		p := first
		for sd.entries[p].idNext != e {
			p = sd.entries[p].idNext
		}
		sd.entries[p].idNext = en.idNext
	}
	seg := en.seg
	*en = joinEntry{}
	sd.freeEnt = append(sd.freeEnt, e)
	sd.live--
	if sd.segLive[seg]--; sd.segLive[seg] == 0 && seg != sd.curSeg {
		sd.dropSeg(seg)
	}
	return true
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
	for e := range sd.entries {
		en := &sd.entries[e]
		if en.count == 0 {
			continue
		}
		en.hash = hashes[en.seg][en.row]
		en.idNext = -1
		if first, ok := sd.index[en.hash]; ok {
			en.idNext = first
		}
		sd.index[en.hash] = int32(e)
	}
}

// compact copies the held rows into fresh segments and drops the old ones.
func (sd *joinSide) compact() {
	const segRows = 4096
	var recs []arrow.RecordBatch
	var segLive []int32
	schema := types.ArrowSchema(sd.cols)
	refs := make([]ref, 0, segRows)
	ids := make([]int32, 0, segRows)
	cut := func() {
		arrs := make([]arrow.Array, len(sd.cols))
		for c, col := range sd.cols {
			arrs[c] = gather(col.Type, sd.recs, c, refs)
		}
		seg := int32(len(recs))
		recs = append(recs, array.NewRecordBatch(schema, arrs, int64(len(refs))))
		segLive = append(segLive, int32(len(refs)))
		for k, e := range ids {
			sd.entries[e].ref = ref{seg, int32(k)}
		}
		refs, ids = refs[:0], ids[:0]
	}
	for e := range sd.entries {
		if sd.entries[e].count == 0 {
			continue
		}
		refs = append(refs, sd.entries[e].ref)
		ids = append(ids, int32(e))
		if len(refs) == segRows {
			cut()
		}
	}
	if len(refs) > 0 {
		cut()
	}
	for _, rec := range sd.recs {
		if rec != nil {
			rec.Release()
		}
	}
	sd.recs, sd.segLive, sd.segFree = recs, segLive, nil
	sd.stored = sd.live
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
	ints   map[int64]int32
	strs   map[string]int32
	groups []joinGroup
	free   []int32

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
		k.ints = map[int64]int32{}
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
		g = int32(len(k.groups))
		k.groups = append(k.groups, joinGroup{})
	}
	k.groups[g] = joinGroup{head: [2]int32{-1, -1}, used: true}
	return g
}

// lookup returns the group of every row of side's key arrays (n rows),
// creating missing groups; -1 for rows with a NULL key.
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
			g, ok := k.ints[v]
			if !ok {
				g = k.newGroup()
				k.groups[g].ikey = v
				k.ints[v] = g
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
			gids[i] = k.strGroup(s.Value(i))
		}
	default:
		k.enc, k.offs = k.enc[:0], append(k.offs[:0], 0)
		for i := 0; i < n; i++ {
			if nulls == nil || !nulls[i] {
				for c, a := range keys {
					k.enc = encodeJoinKey(k.enc, a, i, k.ts[side][c])
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
			gids[i] = k.strGroup(unsafe.String(unsafe.SliceData(b), len(b)))
		}
	}
	return gids
}

// strGroup finds or creates the group of key s (which may alias a buffer).
func (k *keyTable) strGroup(s string) int32 {
	if g, ok := k.strs[s]; ok {
		return g
	}
	g := k.newGroup()
	s = strings.Clone(s)
	k.groups[g].skey = s
	k.strs[s] = g
	return g
}

// freeIfEmpty forgets group g when neither side holds a row of it.
func (k *keyTable) freeIfEmpty(g int32) {
	grp := &k.groups[g]
	if !grp.used || grp.head[0] >= 0 || grp.head[1] >= 0 {
		return
	}
	switch k.mode {
	case keyInt:
		delete(k.ints, grp.ikey)
	case keyStr, keyBytes:
		delete(k.strs, grp.skey)
	case keyCross:
		return // the one group stays
	}
	*grp = joinGroup{}
	k.free = append(k.free, g)
}

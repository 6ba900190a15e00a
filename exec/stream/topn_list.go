package stream

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// tnEntry is one distinct row of a TopN partition: the normalized prefix
// of its first sort key, then its values, packed after it in the same
// allocation (topn_pack.go) or boxed (tnBoxed, when the TopN's values do
// not pack: its tnOrder has no layout). Immutable once built (values are
// owned, not pointing into Arrow buffers) but for ck, which the owning
// topnRun sets while the entry is in its ckDirty; how many copies a
// partition holds is kept by its tnList. It holds no pointers: a packed
// entry is scanned by no one.
type tnEntry struct {
	norm  tnNorm
	ck    bool
	boxed bool
	// Recycling (topn_recycle.go): out is set while the entry is among its
	// partition's emitted copies, gone once it left its list for good (an
	// append-only list's trimmed or replaced row); words is a packed
	// entry's allocated size (0: never reused).
	out   bool
	gone  bool
	words uint32
}

// tnBoxed is an entry whose values are boxed: its sort-key values and
// the row. tnEntry is its first field, so an entry whose boxed is set is
// one.
type tnBoxed struct {
	tnEntry
	key []types.Value
	row []types.Value
}

// newTnBoxed is a boxed entry of the row and sort-key values.
func newTnBoxed(norm tnNorm, key, row []types.Value) *tnEntry {
	e := &tnBoxed{tnEntry: tnEntry{norm: norm, boxed: true}, key: key, row: row}
	return &e.tnEntry
}

// boxes is e's boxed values; e must be boxed.
func (e *tnEntry) boxes() *tnBoxed { return (*tnBoxed)(unsafe.Pointer(e)) }

// rowVal is value j of e's row.
func (o *tnOrder) rowVal(e *tnEntry, j int) types.Value {
	if e.boxed {
		return e.boxes().row[j]
	}
	return e.value(o.lay, j)
}

// keyVal is e's value of sort key k.
func (o *tnOrder) keyVal(e *tnEntry, k int) types.Value {
	if e.boxed {
		return e.boxes().key[k]
	}
	return e.value(o.lay, o.lay.keySlot[k])
}

// rowVals appends e's row to dst.
func (o *tnOrder) rowVals(dst []types.Value, e *tnEntry) []types.Value {
	if e.boxed {
		return append(dst, e.boxes().row...)
	}
	for j := 0; j < o.lay.nrow; j++ {
		dst = append(dst, e.value(o.lay, j))
	}
	return dst
}

// keyVals appends e's sort-key values to dst.
func (o *tnOrder) keyVals(dst []types.Value, e *tnEntry) []types.Value {
	if e.boxed {
		return append(dst, e.boxes().key...)
	}
	for k := range o.keys {
		dst = append(dst, o.keyVal(e, k))
	}
	return dst
}

// tnNorm is the first sort key reduced to a word whose order is the
// requested order (direction and NULL placement included) for the
// fixed-width types, and a consistent prefix of it for text and bytea
// (other types: every non-NULL value has the same word). Equal tnNorms
// mean "compare the values"; different ones decide alone. It keeps most
// comparisons inside a tnList's blocks, without following pointers.
type tnNorm struct {
	w    uint64
	rank uint8 // 0: NULLs first, 1: a value, 2: NULLs last
}

func (a tnNorm) cmp(b tnNorm) int {
	switch {
	case a.rank != b.rank:
		return int(a.rank) - int(b.rank)
	case a.w < b.w:
		return -1
	case a.w > b.w:
		return 1
	}
	return 0
}

// tnOrder is the total order of a TopN's rows: the sort keys as
// PostgreSQL orders them (direction, NULLS FIRST/LAST), then the rows'
// values by identity (tnIdentity), so that distinct rows never tie.
// Immutable.
type tnOrder struct {
	keys []exec.SortKey
	ts   []types.T
	lay  *tnLayout // set when entries are packed
}

func newTnOrder(keys []exec.SortKey) tnOrder {
	o := tnOrder{keys: keys, ts: make([]types.T, len(keys))}
	for i, k := range keys {
		o.ts[i] = k.E.Type()
	}
	return o
}

// normOf is the tnNorm of v as the first sort key.
func (o *tnOrder) normOf(v types.Value) tnNorm {
	if len(o.keys) == 0 {
		return tnNorm{rank: 1}
	}
	k := o.keys[0]
	if v == nil {
		if k.NullsFirst {
			return tnNorm{rank: 0}
		}
		return tnNorm{rank: 2}
	}
	var w uint64
	switch x := v.(type) {
	case int64:
		w = uint64(x) ^ 1<<63
	case types.TimestampValue:
		w = uint64(x) ^ 1<<63
	case types.DateValue:
		w = uint64(x) ^ 1<<63
	case types.TimeValue:
		w = uint64(x) ^ 1<<63
	case float64:
		w = floatWord(x)
	case bool:
		if x {
			w = 1
		}
	case string:
		switch o.ts[0].Kind {
		case types.Text, types.Varchar, types.Name, types.Char:
			w = prefixWord(x)
		}
	case []byte:
		w = prefixWord(string(x))
	}
	if k.Desc {
		w = ^w
	}
	return tnNorm{w: w, rank: 1}
}

// normAt is normOf(row i of a, the first sort key's array) without boxing
// the common fixed-width values.
func (o *tnOrder) normAt(a arrow.Array, i int) tnNorm {
	if a.IsValid(i) {
		var w uint64
		switch x := a.(type) {
		case *array.Int64:
			w = uint64(x.Value(i)) ^ 1<<63
		case *array.Timestamp:
			w = uint64(x.Value(i)) ^ 1<<63
		case *array.Float64:
			w = floatWord(x.Value(i))
		default:
			return o.normOf(types.ValueAt(a, i, o.ts[0]))
		}
		if o.keys[0].Desc {
			w = ^w
		}
		return tnNorm{w: w, rank: 1}
	}
	return o.normOf(nil)
}

// floatWord orders floats as PostgreSQL does: -0 = 0, NaN above +Inf.
func floatWord(f float64) uint64 {
	switch {
	case f != f:
		return math.MaxUint64
	case f == 0:
		f = 0
	}
	b := math.Float64bits(f)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

// prefixWord is the first 8 bytes of s, big-endian, zero-padded.
func prefixWord(s string) uint64 {
	var b [8]byte
	copy(b[:], s)
	return binary.BigEndian.Uint64(b[:])
}

// compareKey orders two values of sort key k.
func (o *tnOrder) compareKey(k int, a, b types.Value) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		if o.keys[k].NullsFirst {
			return -1
		}
		return 1
	case b == nil:
		if o.keys[k].NullsFirst {
			return 1
		}
		return -1
	}
	c := types.Compare(a, b, o.ts[k])
	if o.keys[k].Desc {
		c = -c
	}
	return c
}

// compare orders two entries; 0 means the same row.
func (o *tnOrder) compare(a, b *tnEntry) int {
	if a == b {
		return 0
	}
	if c := a.norm.cmp(b.norm); c != 0 {
		return c
	}
	if o.lay != nil {
		return o.comparePacked(a, b)
	}
	x, y := a.boxes(), b.boxes()
	for k := range o.keys {
		if c := o.compareKey(k, x.key[k], y.key[k]); c != 0 {
			return c
		}
	}
	for j := range x.row {
		if c := tnIdentity(x.row[j], y.row[j]); c != 0 {
			return c
		}
	}
	return 0
}

// compareAt orders row i of the evaluated sort-key arrays, whose first key
// has norm, against e by the sort keys only (0: a tie the row must break).
func (o *tnOrder) compareAt(keys []arrow.Array, i int, norm tnNorm, e *tnEntry) int {
	if c := norm.cmp(e.norm); c != 0 {
		return c
	}
	if l := o.lay; l != nil {
		for k, a := range keys {
			s := l.keySlot[k]
			if c := o.cmpKeySlot(k, s, l.slotAt(s, a, i), e.slot(l, s)); c != 0 {
				return c
			}
		}
		return 0
	}
	for k, a := range keys {
		if c := o.compareKey(k, types.ValueAt(a, i, o.ts[k]), e.boxes().key[k]); c != 0 {
			return c
		}
	}
	return 0
}

// tnIdentity totally orders values by identity, as appendKey tells them
// apart (numeric 1.0 and 1.00, or float -0 and 0, differ): by Go form,
// then by value. It breaks ties between rows the sort keys do not order.
func tnIdentity(a, b types.Value) int {
	ta, tb := identityTag(a), identityTag(b)
	if ta != tb {
		return ta - tb
	}
	switch x := a.(type) {
	case nil:
		return 0
	case bool:
		return cmpInt64(b2i(x), b2i(b.(bool)))
	case int64:
		return cmpInt64(x, b.(int64))
	case float64:
		return cmpUint64(math.Float64bits(x), math.Float64bits(b.(float64)))
	case *apd.Decimal:
		return strings.Compare(x.String(), b.(*apd.Decimal).String())
	case string:
		return strings.Compare(x, b.(string))
	case []byte:
		return bytes.Compare(x, b.([]byte))
	case types.DateValue:
		return cmpInt64(int64(x), int64(b.(types.DateValue)))
	case types.TimeValue:
		return cmpInt64(int64(x), int64(b.(types.TimeValue)))
	case types.TimestampValue:
		return cmpInt64(int64(x), int64(b.(types.TimestampValue)))
	case types.IntervalValue:
		y := b.(types.IntervalValue)
		if c := cmpInt64(int64(x.Months), int64(y.Months)); c != 0 {
			return c
		}
		if c := cmpInt64(int64(x.Days), int64(y.Days)); c != 0 {
			return c
		}
		return cmpInt64(x.Micros, y.Micros)
	case []types.Value:
		y := b.([]types.Value)
		for i := 0; i < len(x) && i < len(y); i++ {
			if c := tnIdentity(x[i], y[i]); c != 0 {
				return c
			}
		}
		return len(x) - len(y)
	}
	return strings.Compare(fmt.Sprintf("%T:%v", a, a), fmt.Sprintf("%T:%v", b, b))
}

func identityTag(v types.Value) int {
	switch v.(type) {
	case nil:
		return 0
	case bool:
		return 1
	case int64:
		return 2
	case float64:
		return 3
	case *apd.Decimal:
		return 4
	case string:
		return 5
	case []byte:
		return 6
	case types.DateValue:
		return 7
	case types.TimeValue:
		return 8
	case types.TimestampValue:
		return 9
	case types.IntervalValue:
		return 10
	case []types.Value:
		return 11
	}
	return 12
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func cmpInt64(x, y int64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func cmpUint64(x, y uint64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// tnBlockMax bounds the entries of one block of a tnList.
const tnBlockMax = 128

// tnList is one partition's rows in order, as a multiset: a sorted list of
// blocks of at most tnBlockMax entries, each block keeping its entries'
// tnNorms and copy counts inline and its number of rows, so that searches
// and rank walks mostly stay in contiguous memory. A small partition is one
// sorted slice; in a large one finding a row costs O(log n) comparisons,
// inserting O(n/tnBlockMax) moves at worst, and reaching rank r
// O(r/tnBlockMax) steps. The zero value is empty. Not safe for concurrent
// use.
type tnList struct {
	blocks []tnBlock
	rows   int64
	held   *int64 // the run's count of rows over every list (state size), if set
	hint   int32  // entries a block grows to at once (an append-only top-n's bound), if set
	first  tnFirstBlock
}

// addRows changes the list's row count by n (and the run's).
func (l *tnList) addRows(n int64) {
	l.rows += n
	if l.held != nil {
		*l.held += n
	}
}

type tnBlock struct {
	es    []*tnEntry
	norms []tnNorm // es[i].norm
	ns    []int64  // copies of es[i], > 0
	rows  int64    // sum of ns
}

// tnFirstBlock is a list's first block with room for one entry, inside
// the list (most partitions of a group top-1, a dedup, never hold more);
// growing past it moves the slices out, as append does. A list is not
// copied once it holds rows (blocks may refer to first).
type tnFirstBlock struct {
	b     [1]tnBlock
	es    [1]*tnEntry
	norms [1]tnNorm
	ns    [1]int64
}

// cmp orders entry j of b against e.
func (b *tnBlock) cmp(o *tnOrder, j int, e *tnEntry) int {
	if c := b.norms[j].cmp(e.norm); c != 0 {
		return c
	}
	return o.compare(b.es[j], e)
}

// find returns where e is or would go: block bi (== len(blocks) when e
// sorts after every entry), index i in it, and whether e is there.
func (l *tnList) find(o *tnOrder, e *tnEntry) (bi, i int, found bool) {
	lo, hi := 0, len(l.blocks)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if b := &l.blocks[m]; b.cmp(o, len(b.es)-1, e) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == len(l.blocks) {
		return lo, 0, false
	}
	b := &l.blocks[lo]
	i, hi = 0, len(b.es)-1 // e sorts at or before the last entry
	for i < hi {
		m := int(uint(i+hi) >> 1)
		if b.cmp(o, m, e) < 0 {
			i = m + 1
		} else {
			hi = m
		}
	}
	return lo, i, b.cmp(o, i, e) == 0
}

// add changes the copies of e's row by delta. A new row takes e itself; an
// existing row keeps its entry. It returns false, changing nothing, when
// that would leave fewer than 0 copies.
func (l *tnList) add(o *tnOrder, e *tnEntry, delta int64) bool {
	_, ok := l.addEntry(o, e, delta)
	return ok
}

// addEntry is add that also returns the entry of e's row (the one the list
// holds or held).
func (l *tnList) addEntry(o *tnOrder, e *tnEntry, delta int64) (*tnEntry, bool) {
	bi, i, found := l.find(o, e)
	if !found {
		if delta < 0 {
			return e, false
		}
		if delta > 0 {
			l.insert(bi, i, e, delta)
		}
		return e, true
	}
	b := &l.blocks[bi]
	if b.ns[i]+delta < 0 {
		return b.es[i], false
	}
	held := b.es[i]
	b.ns[i] += delta
	b.rows += delta
	l.addRows(delta)
	if b.ns[i] == 0 {
		l.remove(bi, i)
	}
	return held, true
}

// count returns the copies of e's row the list holds.
func (l *tnList) count(o *tnOrder, e *tnEntry) int64 {
	bi, i, found := l.find(o, e)
	if !found {
		return 0
	}
	return l.blocks[bi].ns[i]
}

// insert puts n copies of e at (bi, i) as find reported it, splitting a
// full block.
func (l *tnList) insert(bi, i int, e *tnEntry, n int64) {
	l.addRows(n)
	if len(l.blocks) == 0 {
		f := &l.first
		f.es, f.norms, f.ns = [1]*tnEntry{e}, [1]tnNorm{e.norm}, [1]int64{n}
		f.b[0] = tnBlock{es: f.es[:], norms: f.norms[:], ns: f.ns[:], rows: n}
		l.blocks = f.b[:]
		return
	}
	if bi == len(l.blocks) {
		bi--
		i = len(l.blocks[bi].es)
	}
	b := &l.blocks[bi]
	if len(b.es) == cap(b.es) && int(l.hint) > cap(b.es) {
		// An append-only top-n's partition fills to its bound: one
		// allocation a slice rather than one a doubling.
		b.es = append(make([]*tnEntry, 0, l.hint), b.es...)
		b.norms = append(make([]tnNorm, 0, l.hint), b.norms...)
		b.ns = append(make([]int64, 0, l.hint), b.ns...)
	}
	b.es = slices.Insert(b.es, i, e)
	b.norms = slices.Insert(b.norms, i, e.norm)
	b.ns = slices.Insert(b.ns, i, n)
	b.rows += n
	if &b.es[0] != &l.first.es[0] {
		l.first.es[0] = nil // moved out: drop the stale reference
	}
	if len(b.es) <= tnBlockMax {
		return
	}
	half := len(b.es) / 2
	right := tnBlock{
		es:    append(make([]*tnEntry, 0, tnBlockMax+1), b.es[half:]...),
		norms: append(make([]tnNorm, 0, tnBlockMax+1), b.norms[half:]...),
		ns:    append(make([]int64, 0, tnBlockMax+1), b.ns[half:]...),
	}
	for _, x := range right.ns {
		right.rows += x
	}
	clear(b.es[half:])
	b.es, b.norms, b.ns = b.es[:half], b.norms[:half], b.ns[:half]
	b.rows -= right.rows
	l.blocks = slices.Insert(l.blocks, bi+1, right)
	l.first.b[0] = tnBlock{} // moved out, if it was there
}

// remove drops the entry at (bi, i), whose count is already 0, and merges
// a block that became small into a neighbour when they fit in one.
func (l *tnList) remove(bi, i int) {
	b := &l.blocks[bi]
	b.es = slices.Delete(b.es, i, i+1)
	b.norms = slices.Delete(b.norms, i, i+1)
	b.ns = slices.Delete(b.ns, i, i+1)
	switch {
	case len(b.es) == 0:
		l.blocks = slices.Delete(l.blocks, bi, bi+1)
	case len(b.es) < tnBlockMax/4:
		if bi+1 < len(l.blocks) && len(b.es)+len(l.blocks[bi+1].es) <= tnBlockMax {
			l.merge(bi)
		} else if bi > 0 && len(b.es)+len(l.blocks[bi-1].es) <= tnBlockMax {
			l.merge(bi - 1)
		}
	}
}

// merge appends block bi+1 to block bi.
func (l *tnList) merge(bi int) {
	b, next := &l.blocks[bi], &l.blocks[bi+1]
	b.es = append(b.es, next.es...)
	b.norms = append(b.norms, next.norms...)
	b.ns = append(b.ns, next.ns...)
	b.rows += next.rows
	l.blocks = slices.Delete(l.blocks, bi+1, bi+2)
}

// replaceSingle puts e in place of the list's only row when it holds
// exactly one copy of one row, returning that row's entry; otherwise it
// changes nothing and returns nil. e must sort before the row it replaces
// (the caller's top-1 keeps the first row).
func (l *tnList) replaceSingle(e *tnEntry) *tnEntry {
	if l.rows != 1 || len(l.blocks) != 1 || len(l.blocks[0].es) != 1 {
		return nil
	}
	b := &l.blocks[0]
	old := b.es[0]
	b.es[0], b.norms[0] = e, e.norm
	return old
}

// last is the entry that sorts last (nil when empty).
func (l *tnList) last() *tnEntry {
	if len(l.blocks) == 0 {
		return nil
	}
	b := &l.blocks[len(l.blocks)-1]
	return b.es[len(b.es)-1]
}

// trim drops rows from the end until at most max remain, appending the
// entries that lost copies to dropped, and returns dropped.
func (l *tnList) trim(max int64, dropped []*tnEntry) []*tnEntry {
	for l.rows > max {
		bi := len(l.blocks) - 1
		b := &l.blocks[bi]
		j := len(b.es) - 1
		dropped = append(dropped, b.es[j])
		d := min(b.ns[j], l.rows-max)
		b.ns[j] -= d
		b.rows -= d
		l.addRows(-d)
		if b.ns[j] == 0 {
			l.remove(bi, j)
		}
	}
	return dropped
}

// tnRank is one copy of a row at a rank (1-based, within its partition).
type tnRank struct {
	e    *tnEntry
	rank int64
}

// appendRange appends to dst the copies at 0-based positions from ..
// from+count-1 (to the end when count < 0), in order, and returns it.
func (l *tnList) appendRange(dst []tnRank, from, count int64) []tnRank {
	end := l.rows
	if count >= 0 && count < l.rows-from {
		end = from + count
	}
	if from >= end {
		return dst
	}
	pos := int64(0) // position of the current block's or entry's first copy
	for bi := range l.blocks {
		b := &l.blocks[bi]
		if pos+b.rows <= from {
			pos += b.rows
			continue
		}
		for j, n := range b.ns {
			for c := max(pos, from); c < pos+n && c < end; c++ {
				dst = append(dst, tnRank{e: b.es[j], rank: c + 1})
			}
			if pos += n; pos >= end {
				return dst
			}
		}
	}
	return dst
}

// appendTies appends to dst, in order, the copies whose rank is at most
// n, with their rank: for rank() 1 + the copies sorting strictly before
// by the sort keys (ties share it, the next rank skips), for dense_rank()
// (dense) 1 + the distinct sort keys before. It walks only what it emits.
func (l *tnList) appendTies(dst []tnRank, o *tnOrder, n int64, dense bool) []tnRank {
	if n <= 0 {
		return dst
	}
	var prev *tnEntry
	pos, rank := int64(0), int64(0)
	for bi := range l.blocks {
		b := &l.blocks[bi]
		for j, e := range b.es {
			if prev == nil || !o.sameKeys(prev, e) {
				if dense {
					rank++
				} else {
					rank = pos + 1
				}
				if rank > n {
					return dst
				}
			}
			for c := int64(0); c < b.ns[j]; c++ {
				dst = append(dst, tnRank{e: e, rank: rank})
			}
			pos += b.ns[j]
			prev = e
		}
	}
	return dst
}

// sameKeys reports whether two entries tie on every sort key.
func (o *tnOrder) sameKeys(a, b *tnEntry) bool {
	if a.norm.cmp(b.norm) != 0 {
		return false
	}
	if l := o.lay; l != nil {
		for k, s := range l.keySlot {
			if o.cmpKeySlot(k, s, a.slot(l, s), b.slot(l, s)) != 0 {
				return false
			}
		}
		return true
	}
	x, y := a.boxes(), b.boxes()
	for k := range x.key {
		if o.compareKey(k, x.key[k], y.key[k]) != 0 {
			return false
		}
	}
	return true
}

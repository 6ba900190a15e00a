package stream

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

// groupTable maps keys to dense ids (0, 1, 2, ...) and back, a chunk at a
// time, with deletion: a removed id goes to a free list and is the next one
// handed out, so per-id state kept in slices indexed by id stays dense.
// Keys are the values of one or more columns of a row, equal as GROUP BY
// sees them (NULL = NULL, -0 = 0, NaN = NaN, numeric 1.0 = 1.00, char(n)
// without trailing spaces, intervals by their 30-day-month span); a key may
// start with a non-negative int32 given apart (lead: the group id, for a
// DISTINCT aggregate's (group, value) pairs).
//
// It is an open-addressing table with linear probing and backward-shift
// deletion (no tombstones), kept at most half full; a table with a lead
// (a DISTINCT aggregate's (group, value) pairs: mostly inserted, rarely
// removed, and the largest table of its operator, one slot per pair) at
// most three quarters full, which saves a doubling of it, and its fresh
// pages, for a third of the pair counts (docs/benchmarks.md, "CPU of the
// parallel plan, fifth step"). Keys of one or two fixed-width words
// (integers, date/time/timestamps, floats, bool, the lead) live inline in
// the slots (16-byte slots with a lead, aggtable_lead.go); other keys are
// encoded into bytes (a single text column: its raw bytes) and kept per
// id. Every id keeps its key's hash, to find its slot again on removal:
// a byte-keyed table all of it (compared before the key), a word-keyed one
// its low 32 bits only (its home slot: a table of int32 ids has at most
// 2^32 slots), 4 bytes less per group or (group, value) pair of fresh
// memory (docs/benchmarks.md, "CPU of the parallel plan, sixth step").
//
// A groupTable is used by one goroutine.
type groupTable struct {
	ts    []types.T
	lead  bool
	words bool // keys are at most two words
	raw   bool // one raw text column, no lead

	mask   uint64
	wslots []wslot  // words, no lead: slots with their keys inline
	lslots []lslot  // words with a lead (aggtable_lead.go)
	slots  []int32  // bytes: id+1, 0 when empty
	hashes []uint64 // bytes, per id: its key's hash (to find its slot again)
	homes  []uint32 // words, per id: its key's hash's low 32 bits
	bkeys  []string
	bnull  []bool // raw: per id, the key is NULL
	seed   maphash.Seed

	live int
	next int32
	free []int32

	// touched sums the slots a probe read ahead of time (aggtable_lead.go),
	// so that the compiler keeps those reads.
	touched int32

	// Per-probe scratch.
	ids     []int32
	newRows []int32 // rows that created an id in the last probe, in order
	rowNull []uint8
	wbuf    [3][]int64
	enc     []byte
	encOffs []int32
}

// wslot is a slot of a word-keyed table: the key's words, its NULL mask
// (bit k: key column k is NULL, its word 0) and id+1 (0: empty).
type wslot struct {
	k0, k1 int64
	id     int32
	nm     uint8
}

const tableInitSlots = 256

func newGroupTable(ts []types.T, lead bool) *groupTable {
	t := &groupTable{ts: ts, lead: lead, seed: maphash.MakeSeed(), mask: tableInitSlots - 1}
	nw := 0
	if lead {
		nw++
	}
	t.words = true
	for _, ct := range ts {
		if !wordType(ct) {
			t.words = false
		}
		nw++
	}
	t.words = t.words && nw <= 2
	t.raw = !t.words && !lead && len(ts) == 1 && rawString(ts[0])
	switch {
	case t.words && lead:
		t.lslots = make([]lslot, tableInitSlots)
	case t.words:
		t.wslots = make([]wslot, tableInitSlots)
	default:
		t.slots = make([]int32, tableInitSlots)
	}
	return t
}

// wordType reports the types whose GROUP BY equality is equality of one
// normalized 64-bit word.
func wordType(t types.T) bool {
	switch storageOf(t) {
	case stInt, stFloat, stBool:
		return true
	}
	return false
}

// rawString reports the types whose equality is byte equality of their text.
func rawString(t types.T) bool {
	switch t.Kind {
	case types.Text, types.Varchar, types.Name, types.Char, types.Unknown, types.JSONB:
		return true
	}
	return false
}

// len is the number of live ids; cap bounds every id handed out so far.
func (t *groupTable) len() int { return t.live }
func (t *groupTable) cap() int { return int(t.next) }

func (t *groupTable) newID() int32 {
	t.live++
	if n := len(t.free); n > 0 {
		id := t.free[n-1]
		t.free = t.free[:n-1]
		return id
	}
	t.next++
	return t.next - 1
}

// probe maps each of the n rows to its id, creating ids for new keys, and
// returns the ids (scratch, valid until the next probe). Rows whose lead is
// negative, and with skipNull (always with a lead) rows with a NULL key
// column, get -1.
// t.newRows lists the rows that created ids.
func (t *groupTable) probe(keys []arrow.Array, lead []int32, n int, skipNull bool) []int32 {
	if cap(t.ids) < n {
		t.ids = make([]int32, n)
		t.rowNull = make([]uint8, n)
	}
	ids := t.ids[:n]
	t.newRows = t.newRows[:0]
	var rn []uint8
	for k, a := range keys {
		if a.NullN() == 0 {
			continue
		}
		if rn == nil {
			rn = t.rowNull[:n]
			clear(rn)
		}
		for i := 0; i < n; i++ {
			if a.IsNull(i) {
				rn[i] |= 1 << k
			}
		}
	}
	switch {
	case t.words:
		t.probeWords(keys, lead, rn, ids, skipNull)
	case t.raw:
		t.probeRaw(keys[0].(*array.String), rn, ids, skipNull)
	default:
		t.probeBytes(keys, lead, rn, ids, skipNull)
	}
	return ids
}

func hashWords(a, b int64, nm uint8) uint64 {
	return mix64(uint64(a)*0x9E3779B97F4A7C15 ^ uint64(b)*0xC2B2AE3D27D4EB4F ^ uint64(nm)<<62)
}

// probeWords handles keys of at most two words.
func (t *groupTable) probeWords(keys []arrow.Array, lead []int32, rn []uint8, ids []int32, skipNull bool) {
	n := len(ids)
	var w [2][]int64
	nw := 0
	if lead != nil {
		b := growSlice(t.wbuf[2][:0], n)
		for i, g := range lead {
			b[i] = int64(g)
		}
		t.wbuf[2] = b
		w[0] = b
		nw = 1
	}
	for k, a := range keys {
		w[nw] = wordsOf(a, &t.wbuf[k])
		nw++
	}
	if nw == 1 {
		w[1] = nil
	}
	if lead != nil && rn == nil && nw == 2 && len(t.lslots) >= touchMinSlots {
		t.probeLead(lead, w[1][:n], ids)
		return
	}
	if lead == nil && rn == nil && nw == 1 {
		w0 := w[0][:n]
		for i := range ids {
			ids[i] = t.findWord(w0[i], 0, 0, i)
		}
		return
	}
	// wbit[j] is the NULL-mask bit of word j's key column (0 for the lead).
	var wbit [2]uint8
	for j, k := 0, 0; j < nw; j++ {
		if j == 0 && lead != nil {
			continue
		}
		wbit[j] = 1 << k
		k++
	}
	for i := range ids {
		if lead != nil && lead[i] < 0 {
			ids[i] = -1
			continue
		}
		var nm uint8
		if rn != nil {
			nm = rn[i]
		}
		if nm != 0 && (skipNull || t.lead) { // a lead table has no NULL keys
			ids[i] = -1
			continue
		}
		var a, b int64
		if nm&wbit[0] == 0 {
			a = w[0][i]
		}
		if w[1] != nil && nm&wbit[1] == 0 {
			b = w[1][i]
		}
		ids[i] = t.findWord(a, b, nm, i)
	}
}

// findWord finds or creates the id of a word key; row is the probing row.
func (t *groupTable) findWord(a, b int64, nm uint8, row int) int32 {
	if t.lead {
		return t.findLead(int32(a), b, row)
	}
	hv := hashWords(a, b, nm)
	pos := hv & t.mask
	for {
		sl := &t.wslots[pos]
		if sl.id == 0 {
			id := t.newID()
			*sl = wslot{k0: a, k1: b, id: id + 1, nm: nm}
			t.homes = growSlice(t.homes, t.cap())
			t.homes[id] = uint32(hv)
			t.newRows = append(t.newRows, int32(row))
			if t.overfull(t.live, len(t.wslots)) {
				t.growWords()
			}
			return id
		}
		if sl.k0 == a && sl.k1 == b && sl.nm == nm {
			return sl.id - 1
		}
		pos = (pos + 1) & t.mask
	}
}

// overfull reports whether live keys overfill slots slots: more than
// half of them, or three quarters with a lead.
func (t *groupTable) overfull(live, slots int) bool {
	if t.lead {
		return live*4 > slots*3
	}
	return live*2 > slots
}

func (t *groupTable) growWords() {
	old := t.wslots
	t.wslots = make([]wslot, 2*len(old))
	t.mask = uint64(len(t.wslots) - 1)
	for _, sl := range old {
		if sl.id == 0 {
			continue
		}
		pos := hashWords(sl.k0, sl.k1, sl.nm) & t.mask
		for t.wslots[pos].id != 0 {
			pos = (pos + 1) & t.mask
		}
		t.wslots[pos] = sl
	}
}

// wordsOf returns a's values as normalized words (NULL rows hold
// anything), converting into *buf when a is not already int64.
func wordsOf(a arrow.Array, buf *[]int64) []int64 {
	n := a.Len()
	conv := func() []int64 {
		*buf = growSlice((*buf)[:0], n)
		return *buf
	}
	switch x := a.(type) {
	case *array.Int64:
		return x.Int64Values()
	case *array.Timestamp:
		return arrow.GetValues[int64](x.Data(), 1)
	case *array.Time64:
		return arrow.GetValues[int64](x.Data(), 1)
	case *array.Int32:
		out := conv()
		for i, v := range x.Int32Values() {
			out[i] = int64(v)
		}
		return out
	case *array.Int16:
		out := conv()
		for i, v := range x.Int16Values() {
			out[i] = int64(v)
		}
		return out
	case *array.Date32:
		out := conv()
		for i, v := range arrow.GetValues[int32](x.Data(), 1) {
			out[i] = int64(v)
		}
		return out
	case *array.Uint32:
		out := conv()
		for i, v := range x.Uint32Values() {
			out[i] = int64(v)
		}
		return out
	case *array.Float64:
		out := conv()
		for i, v := range x.Float64Values() {
			out[i] = int64(floatBits(v))
		}
		return out
	case *array.Float32:
		out := conv()
		for i, v := range x.Float32Values() {
			out[i] = int64(floatBits(float64(v)))
		}
		return out
	case *array.Boolean:
		out := conv()
		for i := range out {
			out[i] = 0
			if x.Value(i) {
				out[i] = 1
			}
		}
		return out
	}
	return conv()
}

// floatBits normalizes a float for equality: -0 = 0, one NaN.
func floatBits(f float64) uint64 {
	switch {
	case f == 0:
		return 0
	case f != f:
		return math.Float64bits(math.NaN())
	}
	return math.Float64bits(f)
}

// probeRaw handles one text column by its raw bytes.
func (t *groupTable) probeRaw(s *array.String, rn []uint8, ids []int32, skipNull bool) {
	for i := range ids {
		null := rn != nil && rn[i] != 0
		if null {
			if skipNull {
				ids[i] = -1
				continue
			}
			ids[i] = t.findBytes(0x5bd1e995, "", true, i)
			continue
		}
		k := s.Value(i)
		ids[i] = t.findBytes(maphash.String(t.seed, k), k, false, i)
	}
}

// probeBytes handles every other key by its encoding.
func (t *groupTable) probeBytes(keys []arrow.Array, lead []int32, rn []uint8, ids []int32, skipNull bool) {
	n := len(ids)
	t.enc = t.enc[:0]
	t.encOffs = growSlice(t.encOffs[:0], n+1)
	for i := 0; i < n; i++ {
		t.encOffs[i] = int32(len(t.enc))
		if lead != nil {
			t.enc = binary.LittleEndian.AppendUint32(t.enc, uint32(lead[i]))
		}
		for k, a := range keys {
			t.enc = encodeKey(t.enc, a, i, t.ts[k])
		}
	}
	t.encOffs[n] = int32(len(t.enc))
	for i := range ids {
		if (lead != nil && lead[i] < 0) || (skipNull && rn != nil && rn[i] != 0) {
			ids[i] = -1
			continue
		}
		k := unsafeString(t.enc[t.encOffs[i]:t.encOffs[i+1]])
		ids[i] = t.findBytes(maphash.String(t.seed, k), k, false, i)
	}
}

func (t *groupTable) findBytes(hv uint64, key string, null bool, row int) int32 {
	pos := hv & t.mask
	for {
		s := t.slots[pos]
		if s == 0 {
			id := t.newID()
			t.slots[pos] = id + 1
			c := t.cap()
			t.hashes = growSlice(t.hashes, c)
			t.bkeys = growSlice(t.bkeys, c)
			t.hashes[id], t.bkeys[id] = hv, strings.Clone(key)
			if t.raw {
				t.bnull = growSlice(t.bnull, c)
				t.bnull[id] = null
			}
			t.newRows = append(t.newRows, int32(row))
			if t.overfull(t.live, len(t.slots)) {
				t.growBytes()
			}
			return id
		}
		id := s - 1
		if t.hashes[id] == hv && t.bkeys[id] == key && (!t.raw || t.bnull[id] == null) {
			return id
		}
		pos = (pos + 1) & t.mask
	}
}

func (t *groupTable) growBytes() {
	old := t.slots
	t.slots = make([]int32, 2*len(old))
	t.mask = uint64(len(t.slots) - 1)
	for _, s := range old {
		if s == 0 {
			continue
		}
		pos := t.hashes[s-1] & t.mask
		for t.slots[pos] != 0 {
			pos = (pos + 1) & t.mask
		}
		t.slots[pos] = s
	}
}

// reserve sizes an empty table for n keys, so that adding them does not
// regrow it (restoring a checkpoint).
func (t *groupTable) reserve(n int) {
	if t.live != 0 {
		return
	}
	size := tableInitSlots
	for t.overfull(n, size) {
		size *= 2
	}
	if t.words && t.lead && size > len(t.lslots) {
		t.lslots = make([]lslot, size)
	} else if t.words && !t.lead && size > len(t.wslots) {
		t.wslots = make([]wslot, size)
	} else if !t.words && size > len(t.slots) {
		t.slots = make([]int32, size)
	} else {
		return
	}
	t.mask = uint64(size - 1)
}

// remove deletes id's key; id goes to the free list.
func (t *groupTable) remove(id int32) {
	switch {
	case t.words && t.lead:
		pos := uint64(t.homes[id]) & t.mask
		removeSlot(t.lslots, t.mask, pos, id, func(s lslot) int32 { return s.id },
			func(s lslot) uint64 { return hashWords(int64(s.k0), s.k1, 0) })
	case t.words:
		pos := uint64(t.homes[id]) & t.mask
		removeSlot(t.wslots, t.mask, pos, id, func(s wslot) int32 { return s.id },
			func(s wslot) uint64 { return hashWords(s.k0, s.k1, s.nm) })
	default:
		pos := t.hashes[id] & t.mask
		removeSlot(t.slots, t.mask, pos, id, func(s int32) int32 { return s },
			func(s int32) uint64 { return t.hashes[s-1] })
		t.bkeys[id] = ""
	}
	t.live--
	t.free = append(t.free, id)
}

// removeSlot empties the slot holding id+1 (idOf; 0: empty) found from
// pos on, then shifts back: pulls later entries of the run into the hole
// unless their home (hash & mask) lies cyclically in (hole, their
// position].
func removeSlot[S any](slots []S, mask, pos uint64, id int32, idOf func(S) int32, hash func(S) uint64) {
	for idOf(slots[pos]) != id+1 {
		pos = (pos + 1) & mask
	}
	for j := pos; ; {
		j = (j + 1) & mask
		sl := slots[j]
		if idOf(sl) == 0 {
			break
		}
		if (j-hash(sl)&mask)&mask >= (j-pos)&mask {
			slots[pos] = sl
			pos = j
		}
	}
	var empty S
	slots[pos] = empty
}

// encodeKey appends a self-delimiting encoding of row i of a such that
// values GROUP BY puts together encode equally: a NULL marker, then the
// value (floats with -0 = 0 and one NaN, char(n) without trailing spaces,
// numeric reduced, intervals by their 30-day-month span).
func encodeKey(dst []byte, a arrow.Array, i int, t types.T) []byte {
	if a.IsNull(i) {
		return append(dst, 0)
	}
	return encodeValue(append(dst, 1), a, i, t)
}

// encodeValue appends row i of a (not NULL) such that values equal under
// SQL = encode equally (join keys and group keys alike): integers of every
// width as 8 bytes, floats with -0 = 0 and one NaN, char(n) without
// trailing blanks, numeric reduced, intervals by their 30-day-month span.
func encodeValue(dst []byte, a arrow.Array, i int, t types.T) []byte {
	switch x := a.(type) {
	case *array.Int16:
		return binary.LittleEndian.AppendUint64(dst, uint64(x.Value(i)))
	case *array.Int32:
		return binary.LittleEndian.AppendUint64(dst, uint64(x.Value(i)))
	case *array.Int64:
		return binary.LittleEndian.AppendUint64(dst, uint64(x.Value(i)))
	case *array.Uint32:
		return binary.LittleEndian.AppendUint64(dst, uint64(x.Value(i)))
	case *array.Float64:
		return binary.LittleEndian.AppendUint64(dst, floatBits(x.Value(i)))
	case *array.Float32:
		return binary.LittleEndian.AppendUint64(dst, floatBits(float64(x.Value(i))))
	case *array.Boolean:
		if x.Value(i) {
			return append(dst, 1)
		}
		return append(dst, 0)
	case *array.Date32:
		return binary.LittleEndian.AppendUint32(dst, uint32(x.Value(i)))
	case *array.Timestamp:
		return binary.LittleEndian.AppendUint64(dst, uint64(x.Value(i)))
	case *array.Time64:
		return binary.LittleEndian.AppendUint64(dst, uint64(x.Value(i)))
	case *array.MonthDayNanoInterval:
		days, rem := intervalSpan(x.Value(i))
		dst = binary.LittleEndian.AppendUint64(dst, uint64(days))
		return binary.LittleEndian.AppendUint64(dst, uint64(rem))
	case *array.String:
		s := x.Value(i)
		switch t.Kind {
		case types.Bpchar:
			s = strings.TrimRight(s, " ")
		case types.Numeric:
			s = numericKey(s)
		}
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		return append(dst, s...)
	case *array.Binary:
		v := x.Value(i)
		dst = binary.AppendUvarint(dst, uint64(len(v)))
		return append(dst, v...)
	}
	// other types (arrays): their identity encoding
	return appendValueKey(dst, types.ValueAt(a, i, t))
}

// numericKey is one text per stored numeric value: 1.50, 1.5 and 1.500
// agree (stored numerics are plain decimal text, or NaN / ±Infinity).
func numericKey(s string) string {
	if strings.IndexByte(s, '.') < 0 {
		if s == "-0" {
			return "0"
		}
		return s
	}
	s = strings.TrimRight(s, "0")
	s = strings.TrimSuffix(s, ".")
	if s == "-0" || s == "" || s == "-" {
		return "0"
	}
	return s
}

// intervalSpan is an interval's length as whole days (a month is 30 days)
// and microseconds in [0, 1 day): equal exactly when PostgreSQL considers
// two intervals equal.
func intervalSpan(v arrow.MonthDayNanoInterval) (days, rem int64) {
	const dayUS = 86400 * 1000000
	us := v.Nanoseconds // µs (types.IntervalToArrow)
	days = int64(v.Months)*30 + int64(v.Days) + us/dayUS
	rem = us % dayUS
	if rem < 0 {
		rem += dayUS
		days--
	}
	return days, rem
}

// unsafeString views b as a string without copying; b must not change while
// the string is in use.
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

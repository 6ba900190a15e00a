package exec

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

// hashTable assigns dense group ids (0, 1, 2, ...) to distinct keys, a key
// being the values of one or more columns in a row. NULLs are equal to each
// other here (GROUP BY, DISTINCT, set operations); joins skip NULL keys.
//
// It is an open-addressing table with linear probing over slots holding
// group id + 1. Keys live in flat per-group storage: int64 words for one or
// two integer-like columns, or an arena of bytes (the raw value for one text
// column, an order-preserving-equality encoding for anything else). Hashes
// are computed for a whole batch first, then probed in one tight loop.
//
// A hashTable is used by one goroutine.
type hashTable struct {
	mode   keyMode
	ts     []types.T
	slots  []int32
	mask   uint64
	hashes []uint64 // per group
	n      int      // number of groups

	islots []islot // modeInt: slots holding their key inline (one cache miss a probe)
	width  int
	nulls  []uint8 // per group: bit k set when key column k is NULL (modeStr)

	arena []byte  // modeStr, modeBytes: key bytes of every group
	offs  []int32 // group g's key is arena[offs[g]:offs[g+1]]

	seed    maphash.Seed
	hv      []uint64 // per-row scratch
	enc     []byte   // modeBytes: encoded keys of a batch
	encOffs []int32
	rowNull []uint8
	iv      [2][]int64

	dn denseIndex // modeInt, one column: groups found by key (hashtable_dense.go)

	// newRows lists, after insert, the rows that created new groups, in
	// group id order.
	newRows []int32
}

// islot is a slot of an integer-keyed table: the key (one or two words
// and a NULL mask) and its group id + 1 (0: empty).
type islot struct {
	k0, k1 int64
	gid    int32
	nm     uint8
}

type keyMode uint8

const (
	modeInt   keyMode = iota // one or two integer-like columns
	modeStr                  // one text-like column, raw bytes
	modeBytes                // anything else, encoded
)

// newHashTable makes a table for keys of the given types.
func newHashTable(ts []types.T) *hashTable {
	h := &hashTable{ts: ts, seed: maphash.MakeSeed(), mode: modeBytes}
	switch {
	case len(ts) >= 1 && len(ts) <= 2 && intLike(ts[0]) && (len(ts) == 1 || intLike(ts[1])):
		h.mode, h.width = modeInt, len(ts)
	case len(ts) == 1 && rawString(ts[0]):
		h.mode = modeStr
	}
	if h.mode == modeInt {
		h.islots = make([]islot, 1024)
	} else {
		h.slots = make([]int32, 1024)
	}
	h.mask = 1023
	h.offs = []int32{0}
	return h
}

func intLike(t types.T) bool {
	switch t.Kind {
	case types.Int2, types.Int4, types.Int8, types.Date, types.Time, types.Timestamp, types.TimestampTZ,
		types.Oid, types.RegClass, types.RegType, types.RegProc:
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

func mix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// len returns the number of groups.
func (h *hashTable) len() int { return h.n }

// insert maps each of the n rows of keys to its group, creating groups for
// new keys, and returns gids (reused when large enough). With skipNulls,
// rows with a NULL key get -1 and create nothing (a join's build side).
func (h *hashTable) insert(keys []arrow.Array, n int, gids []int32, skipNulls bool) []int32 {
	return h.probe(keys, n, gids, true, skipNulls)
}

// lookup maps each row to its existing group or -1; with skipNulls, rows
// with a NULL key get -1 (join probes: NULL never matches).
func (h *hashTable) lookup(keys []arrow.Array, n int, gids []int32, skipNulls bool) []int32 {
	return h.probe(keys, n, gids, false, skipNulls)
}

func (h *hashTable) probe(keys []arrow.Array, n int, gids []int32, ins, skipNulls bool) []int32 {
	if cap(gids) < n {
		gids = make([]int32, n)
	}
	gids = gids[:n]
	h.newRows = h.newRows[:0]
	if h.dn.on && h.probeDense(keys, n, gids, ins, skipNulls) {
		return gids
	}
	h.prepare(keys, n)
	switch h.mode {
	case modeInt:
		h.probeInt(n, gids, ins, skipNulls)
	case modeStr:
		h.probeStr(keys[0].(*array.String), n, gids, ins, skipNulls)
	default:
		h.probeBytes(n, gids, ins, skipNulls)
	}
	return gids
}

// prepare computes per-row null masks and hashes (and encodings) for a batch.
func (h *hashTable) prepare(keys []arrow.Array, n int) {
	if cap(h.hv) < n {
		h.hv = make([]uint64, n)
		h.rowNull = make([]uint8, n)
	}
	hv, rn := h.hv[:n], h.rowNull[:n]
	clear(rn)
	for k, a := range keys {
		if a.NullN() > 0 {
			for i := 0; i < n; i++ {
				if a.IsNull(i) {
					rn[i] |= 1 << k
				}
			}
		}
	}
	switch h.mode {
	case modeInt:
		for k, a := range keys {
			v, _ := int64Values(a)
			h.iv[k] = v
		}
		v0, v1 := h.iv[0], h.iv[1]
		anyNull := keys[0].NullN() > 0 || (h.width == 2 && keys[1].NullN() > 0)
		switch {
		case h.width == 1 && !anyNull:
			for i := 0; i < n; i++ {
				hv[i] = hashInt(v0[i], 0, 0)
			}
		case !anyNull:
			for i := 0; i < n; i++ {
				hv[i] = hashInt(v0[i], v1[i], 0)
			}
		default:
			for i := 0; i < n; i++ {
				a, b := h.intKey(i, rn[i])
				hv[i] = hashInt(a, b, rn[i])
			}
		}
	case modeStr:
		s := keys[0].(*array.String)
		for i := 0; i < n; i++ {
			if rn[i] != 0 {
				hv[i] = 0x5bd1e995
			} else {
				hv[i] = maphash.String(h.seed, s.Value(i))
			}
		}
	default:
		h.encodeBatch(keys, n)
		for i := 0; i < n; i++ {
			hv[i] = maphash.Bytes(h.seed, h.enc[h.encOffs[i]:h.encOffs[i+1]])
		}
	}
}

// newGroup records a new group with hash hv whose free slot is pos; it
// grows (and rebuilds) the slots when they get half full.
func (h *hashTable) newGroup(hv uint64, row int, pos uint64) int32 {
	g := int32(h.n)
	h.n++
	h.hashes = append(h.hashes, hv)
	h.newRows = append(h.newRows, int32(row))
	if h.n*2 > len(h.slots) {
		h.grow() // places g too
	} else {
		h.slots[pos] = g + 1
	}
	return g
}

// place puts group g into the first free slot of its probe sequence.
func (h *hashTable) place(g int32) {
	pos := h.hashes[g] & h.mask
	for h.slots[pos] != 0 {
		pos = (pos + 1) & h.mask
	}
	h.slots[pos] = g + 1
}

func (h *hashTable) grow() {
	h.slots = make([]int32, len(h.slots)*2)
	h.mask = uint64(len(h.slots) - 1)
	for g := 0; g < h.n; g++ {
		h.place(int32(g))
	}
}

// hashInt hashes an integer key (b is 0 for one-column keys; NULL words are 0).
func hashInt(a, b int64, nm uint8) uint64 {
	return mix64(uint64(a)*0x9E3779B97F4A7C15 ^ mix64(uint64(b)) ^ uint64(nm)<<62)
}

// intKey returns row i's key words, 0 for NULL columns.
func (h *hashTable) intKey(i int, nm uint8) (a, b int64) {
	if nm&1 == 0 {
		a = h.iv[0][i]
	}
	if h.width == 2 && nm&2 == 0 {
		b = h.iv[1][i]
	}
	return a, b
}

func (h *hashTable) probeInt(n int, gids []int32, ins, skipNulls bool) {
	hv, rn := h.hv[:n], h.rowNull[:n]
	for i := 0; i < n; i++ {
		nm := rn[i]
		if nm != 0 && skipNulls {
			gids[i] = -1
			continue
		}
		a, b := h.intKey(i, nm)
		pos := hv[i] & h.mask
		for {
			sl := &h.islots[pos]
			if sl.gid == 0 {
				if !ins {
					gids[i] = -1
					break
				}
				g := int32(h.n)
				h.n++
				h.newRows = append(h.newRows, int32(i))
				*sl = islot{k0: a, k1: b, gid: g + 1, nm: nm}
				if h.n*2 > len(h.islots) {
					h.growInt()
				}
				gids[i] = g
				break
			}
			if sl.k0 == a && sl.k1 == b && sl.nm == nm {
				gids[i] = sl.gid - 1
				break
			}
			pos = (pos + 1) & h.mask
		}
	}
}

// growInt doubles an integer table, re-placing every key by its hash.
func (h *hashTable) growInt() {
	old := h.islots
	h.islots = make([]islot, len(old)*2)
	h.mask = uint64(len(h.islots) - 1)
	for _, sl := range old {
		if sl.gid == 0 {
			continue
		}
		pos := hashInt(sl.k0, sl.k1, sl.nm) & h.mask
		for h.islots[pos].gid != 0 {
			pos = (pos + 1) & h.mask
		}
		h.islots[pos] = sl
	}
}

func (h *hashTable) probeStr(s *array.String, n int, gids []int32, ins, skipNulls bool) {
	hv, rn := h.hv[:n], h.rowNull[:n]
	for i := 0; i < n; i++ {
		nm := rn[i]
		if nm != 0 && skipNulls {
			gids[i] = -1
			continue
		}
		var key string
		if nm == 0 {
			key = s.Value(i)
		}
		gids[i] = h.findBytes(hv[i], key, nm, i, ins)
	}
}

func (h *hashTable) probeBytes(n int, gids []int32, ins, skipNulls bool) {
	hv, rn := h.hv[:n], h.rowNull[:n]
	for i := 0; i < n; i++ {
		if rn[i] != 0 && skipNulls {
			gids[i] = -1
			continue
		}
		key := h.enc[h.encOffs[i]:h.encOffs[i+1]]
		gids[i] = h.findBytes(hv[i], unsafeString(key), 0, i, ins)
	}
}

// findBytes finds (or with ins, creates) the group of a byte key.
func (h *hashTable) findBytes(hv uint64, key string, nm uint8, row int, ins bool) int32 {
	pos := hv & h.mask
	for {
		s := h.slots[pos]
		if s == 0 {
			if !ins {
				return -1
			}
			h.arena = append(h.arena, key...)
			h.offs = append(h.offs, int32(len(h.arena)))
			h.nulls = append(h.nulls, nm)
			return h.newGroup(hv, row, pos)
		}
		g := s - 1
		if h.hashes[g] == hv && h.nulls[g] == nm && unsafeString(h.arena[h.offs[g]:h.offs[g+1]]) == key {
			return g
		}
		pos = (pos + 1) & h.mask
	}
}

// encodeBatch encodes every row's key so that equal keys (as PostgreSQL's
// equality sees them) have equal bytes.
func (h *hashTable) encodeBatch(keys []arrow.Array, n int) {
	h.enc = h.enc[:0]
	if cap(h.encOffs) < n+1 {
		h.encOffs = make([]int32, n+1)
	}
	h.encOffs = h.encOffs[:n+1]
	for i := 0; i < n; i++ {
		h.encOffs[i] = int32(len(h.enc))
		for k, a := range keys {
			h.enc = encodeValue(h.enc, a, i, h.ts[k])
		}
	}
	h.encOffs[n] = int32(len(h.enc))
}

// encodeValue appends a self-delimiting encoding of row i of a: a NULL
// marker, then the value normalized so that equal values encode equally.
func encodeValue(dst []byte, a arrow.Array, i int, t types.T) []byte {
	if a.IsNull(i) {
		return append(dst, 0)
	}
	dst = append(dst, 1)
	switch x := a.(type) {
	case *array.Int64:
		return binary.LittleEndian.AppendUint64(dst, uint64(x.Value(i)))
	case *array.Int32:
		return binary.LittleEndian.AppendUint64(dst, uint64(int64(x.Value(i))))
	case *array.Int16:
		return binary.LittleEndian.AppendUint64(dst, uint64(int64(x.Value(i))))
	case *array.Uint32:
		return binary.LittleEndian.AppendUint64(dst, uint64(x.Value(i)))
	case *array.Date32:
		return binary.LittleEndian.AppendUint64(dst, uint64(int64(x.Value(i))))
	case *array.Time64:
		return binary.LittleEndian.AppendUint64(dst, uint64(x.Value(i)))
	case *array.Timestamp:
		return binary.LittleEndian.AppendUint64(dst, uint64(x.Value(i)))
	case *array.Float64:
		return binary.LittleEndian.AppendUint64(dst, floatKey(x.Value(i)))
	case *array.Float32:
		return binary.LittleEndian.AppendUint64(dst, floatKey(float64(x.Value(i))))
	case *array.Boolean:
		if x.Value(i) {
			return append(dst, 1)
		}
		return append(dst, 0)
	case *array.MonthDayNanoInterval:
		d, r := intervalSpan(x.Value(i))
		dst = binary.LittleEndian.AppendUint64(dst, uint64(d))
		return binary.LittleEndian.AppendUint64(dst, uint64(r))
	case *array.String:
		s := x.Value(i)
		switch t.Kind {
		case types.Numeric:
			s = numericKey(s)
		case types.Bpchar:
			s = strings.TrimRight(s, " ")
		}
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		return append(dst, s...)
	case *array.Binary:
		v := x.Value(i)
		dst = binary.AppendUvarint(dst, uint64(len(v)))
		return append(dst, v...)
	case *array.List:
		s, e := x.ValueOffsets(i)
		dst = binary.AppendUvarint(dst, uint64(e-s))
		et := types.TUnknown
		if t.Elem != nil {
			et = *t.Elem
		}
		for j := s; j < e; j++ {
			dst = encodeValue(dst, x.ListValues(), int(j), et)
		}
		return dst
	case *array.Struct:
		fs := t.Fields()
		for j := 0; j < x.NumField() && j < len(fs); j++ {
			dst = encodeValue(dst, x.Field(j), i, fs[j])
		}
		return dst
	}
	return append(dst, 0xff)
}

// floatKey normalizes -0 to 0 and every NaN to one NaN.
func floatKey(f float64) uint64 {
	switch {
	case f == 0:
		return 0
	case math.IsNaN(f):
		return 0x7ff8000000000001
	}
	return math.Float64bits(f)
}

// view returns a table sharing h's groups with scratch of its own, for
// lookups from another goroutine; h must no longer change.
func (h *hashTable) view() *hashTable {
	v := *h
	v.hv, v.rowNull, v.enc, v.encOffs, v.newRows = nil, nil, nil, nil, nil
	v.iv = [2][]int64{}
	return &v
}

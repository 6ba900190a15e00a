package stream

import (
	"fmt"
	"math"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// A packed tnEntry is one allocation of words with no pointers in it, so
// the collector marks it without scanning it (a top-n keeping every row,
// a dedup, holds millions): the header (tnEntry), one word a slot (a value
// of the row, then each sort key that is not a row column), a NULL bitmap
// (a word per 64 slots), then the text and bytea values' bytes. A slot's
// word is the value itself for the fixed-width kinds (tnWordKind) and
// offset<<32 | length of its bytes, from the entry's start, for the others.
// A TopN packs its entries when every column and sort key is of a kind
// that packs (tnLayout); other rows' entries box their values (tnBoxed).
// Values read from a packed entry are immutable views of it: a string
// refers to the entry's bytes and keeps the entry alive.

// tnClass is how a slot's word is compared.
type tnClass uint8

const (
	tnInt   tnClass = iota // a signed integer (and date, time, timestamp)
	tnFloat                // float64 bits
	tnBool                 // 0 or 1
	tnStr                  // text-like bytes
	tnBytes                // bytea
)

// tnLayout is how a TopN's entries are packed. Immutable.
type tnLayout struct {
	ts      []types.T // per slot
	cls     []tnClass // per slot
	nrow    int       // row slots (the first)
	keySlot []int     // per sort key, its slot
	extra   []int     // the sort keys with a slot of their own, in slot order
}

// tnHdrWords is the header's size in words.
const tnHdrWords = int(unsafe.Sizeof(tnEntry{}) / 8)

// tnClassOf is the class of kind k's values, false when they do not pack.
func tnClassOf(t types.T) (tnClass, bool) {
	switch t.Kind {
	case types.Bool:
		return tnBool, true
	case types.Int2, types.Int4, types.Int8, types.Oid, types.RegClass, types.RegType, types.RegProc,
		types.Date, types.Time, types.Timestamp, types.TimestampTZ:
		return tnInt, true
	case types.Float4, types.Float8, types.Enum: // an enum is its float64 sort position
		return tnFloat, true
	case types.Bytea:
		return tnBytes, true
	case types.Numeric, types.Interval, types.Void, types.Array:
		return 0, false
	}
	return tnStr, true // ValueAt's text-likes
}

// newTnLayout is the layout of rows of in ordered by keys, nil when a
// value does not pack.
func newTnLayout(in []types.Column, keys []expr.Expr) *tnLayout {
	l := &tnLayout{nrow: len(in), keySlot: make([]int, len(keys))}
	add := func(t types.T) bool {
		c, ok := tnClassOf(t)
		l.ts, l.cls = append(l.ts, t), append(l.cls, c)
		return ok
	}
	for _, c := range in {
		if !add(c.Type) {
			return nil
		}
	}
	for k, e := range keys {
		if ref, ok := e.(*expr.ColRef); ok && ref.Idx < len(in) {
			l.keySlot[k] = ref.Idx
			continue
		}
		l.keySlot[k] = len(l.ts)
		l.extra = append(l.extra, k)
		if !add(e.Type()) {
			return nil
		}
	}
	return l
}

// tnSlot is one value of a packed entry (or one to compare with it).
type tnSlot struct {
	w    uint64
	s    string // tnStr, tnBytes
	null bool
}

func (e *tnEntry) base() unsafe.Pointer { return unsafe.Pointer(e) }

// slot reads slot i of packed entry e.
func (e *tnEntry) slot(l *tnLayout, i int) tnSlot {
	n := len(l.ts)
	nulls := *(*uint64)(unsafe.Add(e.base(), (tnHdrWords+n+i/64)*8))
	if nulls&(1<<(i%64)) != 0 {
		return tnSlot{null: true}
	}
	w := *(*uint64)(unsafe.Add(e.base(), (tnHdrWords+i)*8))
	if c := l.cls[i]; c == tnStr || c == tnBytes {
		size := int(uint32(w))
		if size == 0 {
			return tnSlot{}
		}
		return tnSlot{s: unsafe.String((*byte)(unsafe.Add(e.base(), int(w>>32))), size)}
	}
	return tnSlot{w: w}
}

// value is slot i of packed entry e as types.ValueAt gives it.
func (e *tnEntry) value(l *tnLayout, i int) types.Value {
	s := e.slot(l, i)
	if s.null {
		return nil
	}
	switch l.ts[i].Kind {
	case types.Bool:
		return s.w != 0
	case types.Float4, types.Float8, types.Enum:
		return math.Float64frombits(s.w)
	case types.Date:
		return types.DateValue(int32(s.w))
	case types.Time:
		return types.TimeValue(s.w)
	case types.Timestamp, types.TimestampTZ:
		return types.TimestampValue(s.w)
	case types.Bytea:
		return []byte(s.s)
	}
	if l.cls[i] == tnInt {
		return int64(s.w)
	}
	return s.s
}

// slotOf is v (of slot i's type) as a slot; false when its Go form is not
// the one its type has.
func (l *tnLayout) slotOf(i int, v types.Value) (tnSlot, bool) {
	if v == nil {
		return tnSlot{null: true}, true
	}
	switch x := v.(type) {
	case bool:
		if l.cls[i] == tnBool {
			if x {
				return tnSlot{w: 1}, true
			}
			return tnSlot{}, true
		}
	case int64:
		if l.cls[i] == tnInt {
			return tnSlot{w: uint64(x)}, true
		}
	case types.DateValue:
		if l.ts[i].Kind == types.Date {
			return tnSlot{w: uint64(int64(x))}, true
		}
	case types.TimeValue:
		if l.ts[i].Kind == types.Time {
			return tnSlot{w: uint64(x)}, true
		}
	case types.TimestampValue:
		if k := l.ts[i].Kind; k == types.Timestamp || k == types.TimestampTZ {
			return tnSlot{w: uint64(x)}, true
		}
	case float64:
		if l.cls[i] == tnFloat {
			return tnSlot{w: math.Float64bits(x)}, true
		}
	case string:
		if l.cls[i] == tnStr {
			return tnSlot{s: x}, true
		}
	case []byte:
		if l.cls[i] == tnBytes {
			return tnSlot{s: string(x)}, true
		}
	}
	return tnSlot{}, false
}

// slotAt is row i of a (slot j's array) as a slot, without boxing.
func (l *tnLayout) slotAt(j int, a arrow.Array, i int) tnSlot {
	if a.IsNull(i) {
		return tnSlot{null: true}
	}
	switch x := a.(type) {
	case *array.Int64:
		return tnSlot{w: uint64(x.Value(i))}
	case *array.Timestamp:
		return tnSlot{w: uint64(x.Value(i))}
	case *array.String:
		return tnSlot{s: x.Value(i)}
	case *array.Int32:
		return tnSlot{w: uint64(int64(x.Value(i)))}
	case *array.Float64:
		return tnSlot{w: math.Float64bits(x.Value(i))}
	}
	s, _ := l.slotOf(j, types.ValueAt(a, i, l.ts[j])) // the array's own type
	return s
}

// packed builds a packed entry of the slots (a row, then the extra sort
// keys): one allocation, or a free entry of pool (topn_recycle.go; pool
// may be nil).
func (l *tnLayout) packed(slots []tnSlot, pool *tnPool) *tnEntry {
	n := len(l.ts)
	size := 0
	for _, s := range slots {
		size += len(s.s)
	}
	head := tnHdrWords + n + (n+63)/64
	e, buf := pool.alloc(head + (size+7)/8)
	words := e.words
	clear(buf[:head]) // the header, the slots and the NULL words
	e.words = words
	bytes := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), len(buf)*8)
	off := head * 8
	for i, s := range slots {
		switch {
		case s.null:
			buf[tnHdrWords+n+i/64] |= 1 << (i % 64)
		case l.cls[i] == tnStr || l.cls[i] == tnBytes:
			copy(bytes[off:], s.s)
			buf[tnHdrWords+i] = uint64(off)<<32 | uint64(len(s.s))
			off += len(s.s)
		default:
			buf[tnHdrWords+i] = s.w
		}
	}
	return e
}

// packEntry is entry for a packing TopN: row i of rec and of the extra
// sort keys' arrays.
func (r *topnRun) packEntry(rec arrow.RecordBatch, keys []arrow.Array, i int) *tnEntry {
	l := r.order.lay
	slots := r.slots[:0]
	for j := 0; j < l.nrow; j++ {
		slots = append(slots, l.slotAt(j, rec.Column(j), i))
	}
	for _, k := range l.extra {
		slots = append(slots, l.slotAt(len(slots), keys[k], i))
	}
	e := l.packed(slots, r.pool)
	e.norm = r.order.normSlot(slots, l)
	clear(slots) // drop the references into the input
	r.slots = slots[:0]
	return e
}

// normSlot is the tnNorm of the first sort key of the slots.
func (o *tnOrder) normSlot(slots []tnSlot, l *tnLayout) tnNorm {
	if len(o.keys) == 0 {
		return tnNorm{rank: 1}
	}
	i := l.keySlot[0]
	s := slots[i]
	if s.null {
		return o.normOf(nil)
	}
	var w uint64
	switch l.cls[i] {
	case tnInt:
		w = s.w ^ 1<<63
	case tnFloat:
		w = floatWord(math.Float64frombits(s.w))
	case tnBool:
		w = s.w
	case tnBytes:
		w = prefixWord(s.s)
	case tnStr:
		switch l.ts[i].Kind {
		case types.Text, types.Varchar, types.Name, types.Char:
			w = prefixWord(s.s)
		}
	}
	if o.keys[0].Desc {
		w = ^w
	}
	return tnNorm{w: w, rank: 1}
}

// packValues is a packed entry of a row and its sort keys' values (a
// restored row); an error when a value's Go form is not its type's.
func (o *tnOrder) packValues(row, key []types.Value) (*tnEntry, error) {
	l := o.lay
	if len(row) != l.nrow || len(key) != len(l.keySlot) {
		return nil, fmt.Errorf("a row of %d values and %d keys for %d columns and %d keys", len(row), len(key), l.nrow, len(l.keySlot))
	}
	slots := make([]tnSlot, len(l.ts))
	for i := range slots {
		var v types.Value
		if i < l.nrow {
			v = row[i]
		} else {
			v = key[l.extra[i-l.nrow]]
		}
		s, ok := l.slotOf(i, v)
		if !ok {
			return nil, fmt.Errorf("a %T value in a %s slot", v, l.ts[i])
		}
		slots[i] = s
	}
	e := l.packed(slots, nil)
	e.norm = o.normSlot(slots, l)
	return e, nil
}

// cmpSlot orders two non-NULL values of slot i by their type.
func (l *tnLayout) cmpSlot(i int, a, b tnSlot) int {
	switch l.cls[i] {
	case tnInt:
		return cmpInt64(int64(a.w), int64(b.w))
	case tnFloat:
		return types.CompareFloat(math.Float64frombits(a.w), math.Float64frombits(b.w))
	case tnBool:
		return cmpUint64(a.w, b.w)
	case tnBytes:
		return strings.Compare(a.s, b.s)
	}
	switch l.ts[i].Kind {
	case types.Bpchar, types.JSONB:
		return types.Compare(a.s, b.s, l.ts[i])
	}
	return strings.Compare(a.s, b.s)
}

// cmpKeySlot orders two values of sort key k (at slot i) as compareKey.
func (o *tnOrder) cmpKeySlot(k, i int, a, b tnSlot) int {
	switch {
	case a.null && b.null:
		return 0
	case a.null:
		if o.keys[k].NullsFirst {
			return -1
		}
		return 1
	case b.null:
		if o.keys[k].NullsFirst {
			return 1
		}
		return -1
	}
	c := o.lay.cmpSlot(i, a, b)
	if o.keys[k].Desc {
		c = -c
	}
	return c
}

// identitySlot orders two values of slot i by identity, as tnIdentity
// orders the values they are.
func (l *tnLayout) identitySlot(i int, a, b tnSlot) int {
	switch {
	case a.null && b.null:
		return 0
	case a.null:
		return -1
	case b.null:
		return 1
	}
	switch l.cls[i] {
	case tnInt:
		return cmpInt64(int64(a.w), int64(b.w))
	case tnFloat, tnBool:
		return cmpUint64(a.w, b.w)
	}
	return strings.Compare(a.s, b.s)
}

// comparePacked is compare for packed entries.
func (o *tnOrder) comparePacked(a, b *tnEntry) int {
	l := o.lay
	for k, i := range l.keySlot {
		if c := o.cmpKeySlot(k, i, a.slot(l, i), b.slot(l, i)); c != 0 {
			return c
		}
	}
	for i := 0; i < l.nrow; i++ {
		if c := l.identitySlot(i, a.slot(l, i), b.slot(l, i)); c != 0 {
			return c
		}
	}
	return 0
}

// appendSlot appends slot i of packed entry e to b (of slot i's type).
func (e *tnEntry) appendSlot(l *tnLayout, i int, b array.Builder) error {
	s := e.slot(l, i)
	if s.null {
		b.AppendNull()
		return nil
	}
	switch bb := b.(type) {
	case *array.Int64Builder:
		bb.Append(int64(s.w))
		return nil
	case *array.TimestampBuilder:
		bb.Append(arrow.Timestamp(s.w))
		return nil
	case *array.StringBuilder:
		bb.Append(s.s)
		return nil
	case *array.Int32Builder:
		bb.Append(int32(s.w))
		return nil
	case *array.Float64Builder:
		bb.Append(math.Float64frombits(s.w))
		return nil
	}
	return types.AppendValue(b, e.value(l, i), l.ts[i])
}

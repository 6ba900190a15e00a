package stream

import (
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// Boxed entries (a TopN whose values do not all pack, topn_pack.go):
// tnEntryInline8 and tnEntryInline16 are a tnBoxed with room for its
// values (row and sort keys); the first also for what its integer,
// timestamp and text values hold (words, strs: see entry), sized to fill
// a Go size class (288 bytes): a Nexmark bid row (four integers and
// timestamps, three texts) fits it. Wider rows box their values: room for
// them made q6's and q9's joined rows larger and no faster.
type tnEntryInline8 struct {
	tnBoxed
	vals  [8]types.Value
	words [4]int64
	strs  [3]string
}

type tnEntryInline16 struct {
	tnBoxed
	vals [16]types.Value
}

// tnPend is a text value of the row being built, before its copy.
type tnPend struct {
	j      int
	s      string
	inline bool // boxed in the entry's strs
}

// entry builds row i's entry, owning its values: packed (topn_pack.go)
// when the TopN's values pack, else boxed: the entry and its values
// are one allocation when the row is narrow (tnEntryInline8, 16), and the
// row's strings share one copy of their bytes. An int8, timestamp or text
// value of a narrow entry is an interface whose data is a word or string
// header of the entry itself (boxAt) rather than a box of its own, while
// the entry has room: a wide row is one allocation instead of one a
// value, which is most of what a top-n keeping every row (a dedup) costs
// the collector. An entry's values never change once built (a better
// row replaces the entry, not its values).
func (r *topnRun) entry(rec arrow.RecordBatch, keys []arrow.Array, i int) *tnEntry {
	if r.order.lay != nil {
		return r.packEntry(rec, keys, i)
	}
	nv := len(r.in) + len(keys)
	var e *tnBoxed
	var vals []types.Value
	var words []int64
	var strs []string
	switch {
	case nv <= 8:
		x := &tnEntryInline8{}
		e, vals, words, strs = &x.tnBoxed, x.vals[:nv:nv], x.words[:], x.strs[:]
	case nv <= 16:
		x := &tnEntryInline16{}
		e, vals = &x.tnBoxed, x.vals[:nv:nv]
	default:
		e, vals = &tnBoxed{}, make([]types.Value, nv)
	}
	row, key := vals[:len(r.in):len(r.in)], vals[len(r.in):]
	size, nw, ns := 0, 0, 0
	pend := r.pend[:0]
	for j, c := range r.in {
		col := rec.Column(j)
		if col.IsNull(i) {
			continue
		}
		switch c.Type.Kind {
		case types.Int8:
			if nw < len(words) {
				words[nw] = col.(*array.Int64).Value(i)
				row[j] = boxAt(int64Type, unsafe.Pointer(&words[nw]))
				nw++
				continue
			}
		case types.Timestamp, types.TimestampTZ:
			if nw < len(words) {
				words[nw] = int64(col.(*array.Timestamp).Value(i))
				row[j] = boxAt(timestampType, unsafe.Pointer(&words[nw]))
				nw++
				continue
			}
		case types.Text, types.Varchar:
			s := col.(*array.String).Value(i)
			size += len(s)
			pend = append(pend, tnPend{j: j, s: s, inline: ns < len(strs)})
			if ns < len(strs) {
				ns++
			}
			continue
		}
		v := types.ValueAt(col, i, c.Type)
		switch x := v.(type) {
		case string:
			size += len(x)
			pend = append(pend, tnPend{j: j, s: x})
			continue
		case []byte, []types.Value:
			v = ownDeep(x)
		}
		row[j] = v
	}
	if len(pend) > 0 {
		// One copy of the row's strings, which share it (they are immutable).
		var sb strings.Builder
		sb.Grow(size)
		for _, p := range pend {
			sb.WriteString(p.s)
		}
		all, off, k := sb.String(), 0, 0
		for _, p := range pend {
			s := all[off : off+len(p.s)]
			off += len(p.s)
			if p.inline {
				strs[k] = s
				row[p.j] = boxAt(stringType, unsafe.Pointer(&strs[k]))
				k++
			} else {
				row[p.j] = s
			}
		}
		clear(pend) // drop the references into the input
	}
	r.pend = pend[:0]
	for k, a := range keys {
		if ref, ok := r.t.Order[k].E.(*expr.ColRef); ok && ref.Idx < len(row) {
			key[k] = row[ref.Idx]
		} else {
			key[k] = ownDeep(types.ValueAt(a, i, r.order.ts[k]))
		}
	}
	var first types.Value
	if len(key) > 0 {
		first = key[0]
	}
	e.norm, e.boxed, e.key, e.row = r.order.normOf(first), true, key, row
	return &e.tnEntry
}

// eface is the layout of an interface value (the runtime's).
type eface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

func efaceType(v any) unsafe.Pointer { return (*eface)(unsafe.Pointer(&v)).typ }

var (
	int64Type     = efaceType(int64(0))
	timestampType = efaceType(types.TimestampValue(0))
	stringType    = efaceType("")
)

// boxAt returns the interface of dynamic type typ (one of the types above)
// whose value is the one at p, without copying it into a box of its own:
// the interface refers to p, which keeps p's object alive. p's value must
// never change afterwards (an interface's value is immutable).
func boxAt(typ, p unsafe.Pointer) types.Value {
	var v any
	e := (*eface)(unsafe.Pointer(&v))
	e.typ, e.data = typ, p
	return v
}

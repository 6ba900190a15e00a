package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TakeRowsFrom returns one new batch of schema holding, in order, rows
// idx[i] of recs[i] for each i (every row of recs[i] when idx[i] is nil):
// one copy of each value into the new batch's buffers, however many
// batches the rows come from. The streaming runtime's hash exchange
// gathers the rows of several input chunks bound for one instance with
// it. Every column type is taken, intervals included.
func TakeRowsFrom(mem memory.Allocator, schema *arrow.Schema, recs []arrow.RecordBatch, idx [][]int32) arrow.RecordBatch {
	n := 0
	for i, r := range recs {
		if idx[i] == nil {
			n += int(r.NumRows())
		} else {
			n += len(idx[i])
		}
	}
	out := make([]arrow.Array, len(schema.Fields()))
	parts := make([]arrow.Array, len(recs))
	for c := range out {
		for i, r := range recs {
			parts[i] = r.Column(c)
		}
		out[c] = takeMulti(mem, parts, idx, n)
	}
	return array.NewRecordBatch(schema, out, int64(n))
}

// takeMulti gathers rows idx[i] of parts[i] (all of them when nil), n in
// all, into one new array.
func takeMulti(mem memory.Allocator, parts []arrow.Array, idx [][]int32, n int) arrow.Array {
	switch parts[0].DataType().ID() {
	case arrow.INT64, arrow.TIMESTAMP, arrow.TIME64:
		return takeMultiFixed[int64](parts, idx, n)
	case arrow.INT32, arrow.DATE32:
		return takeMultiFixed[int32](parts, idx, n)
	case arrow.UINT32:
		return takeMultiFixed[uint32](parts, idx, n)
	case arrow.INT16:
		return takeMultiFixed[int16](parts, idx, n)
	case arrow.FLOAT64:
		return takeMultiFixed[float64](parts, idx, n)
	case arrow.FLOAT32:
		return takeMultiFixed[float32](parts, idx, n)
	case arrow.INTERVAL_MONTH_DAY_NANO:
		return takeMultiFixed[arrow.MonthDayNanoInterval](parts, idx, n)
	case arrow.STRING:
		return takeMultiString(parts, idx, n)
	}
	b := array.NewBuilder(mem, parts[0].DataType())
	defer b.Release()
	b.Reserve(n)
	for i, a := range parts {
		if idx[i] == nil {
			for r := range a.Len() {
				copyValue(b, a, r)
			}
			continue
		}
		for _, r := range idx[i] {
			copyValue(b, a, int(r))
		}
	}
	return b.NewArray()
}

// multiValidity builds the validity bitmap of a gathered array, allocated
// at its first NULL.
type multiValidity struct {
	bits  []byte
	nulls int
	n     int
}

func (v *multiValidity) set(k int, valid bool) {
	if valid {
		if v.bits != nil {
			bitutil.SetBit(v.bits, k)
		}
		return
	}
	if v.bits == nil {
		v.bits = make([]byte, bitutil.BytesForBits(int64(v.n)))
		bitutil.SetBitsTo(v.bits, 0, int64(k), true)
	}
	v.nulls++
}

func (v *multiValidity) buffer() *memory.Buffer {
	if v.bits == nil {
		return nil
	}
	return memory.NewBufferBytes(v.bits)
}

func takeMultiFixed[T arrow.FixedWidthType](parts []arrow.Array, idx [][]int32, n int) arrow.Array {
	vals := make([]T, n)
	v := multiValidity{n: n}
	k := 0
	for i, a := range parts {
		src := arrow.GetValues[T](a.Data(), 1)
		nulls := a.NullN() > 0
		switch {
		case idx[i] == nil && !nulls:
			copy(vals[k:], src[:a.Len()])
			if v.bits != nil {
				bitutil.SetBitsTo(v.bits, int64(k), int64(a.Len()), true)
			}
			k += a.Len()
		case idx[i] == nil:
			for r := range a.Len() {
				vals[k] = src[r]
				v.set(k, a.IsValid(r))
				k++
			}
		case !nulls:
			ix := idx[i]
			dst := vals[k : k+len(ix)]
			for j, r := range ix {
				dst[j] = src[r]
			}
			if v.bits != nil {
				bitutil.SetBitsTo(v.bits, int64(k), int64(len(ix)), true)
			}
			k += len(ix)
		default:
			for _, r := range idx[i] {
				vals[k] = src[r]
				v.set(k, a.IsValid(int(r)))
				k++
			}
		}
	}
	d := array.NewData(parts[0].DataType(), n, []*memory.Buffer{v.buffer(), memory.NewBufferBytes(arrow.GetBytes(vals))}, nil, v.nulls, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

func takeMultiString(parts []arrow.Array, idx [][]int32, n int) arrow.Array {
	size := 0
	for i, a := range parts {
		offs := a.(*array.String).ValueOffsets()
		if idx[i] == nil {
			size += int(offs[a.Len()] - offs[0])
			continue
		}
		for _, r := range idx[i] {
			size += int(offs[r+1] - offs[r])
		}
	}
	out := make([]int32, n+1)
	data := make([]byte, 0, size)
	v := multiValidity{n: n}
	k := 0
	add := func(s *array.String, offs []int32, raw []byte, r int) {
		if s.IsNull(r) {
			v.set(k, false)
		} else {
			v.set(k, true)
			data = append(data, raw[offs[r]:offs[r+1]]...)
		}
		k++
		out[k] = int32(len(data))
	}
	for i, a := range parts {
		s := a.(*array.String)
		offs := s.ValueOffsets()
		var raw []byte
		if buf := s.Data().Buffers()[2]; buf != nil {
			raw = buf.Bytes()
		}
		if idx[i] == nil {
			for r := range s.Len() {
				add(s, offs, raw, r)
			}
			continue
		}
		for _, r := range idx[i] {
			add(s, offs, raw, int(r))
		}
	}
	d := array.NewData(arrow.BinaryTypes.String, n, []*memory.Buffer{v.buffer(), memory.NewBufferBytes(arrow.GetBytes(out)), memory.NewBufferBytes(data)}, nil, v.nulls, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

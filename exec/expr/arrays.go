package expr

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Low-level helpers over Arrow buffers shared by the kernels: reading the
// values of fixed-width arrays as Go slices, combining validity bitmaps,
// building arrays from slices, and gathering rows (take) across any storage.

// prim is the set of Go element types of the fixed-width storages we use.
type prim interface {
	~int16 | ~int32 | ~int64 | ~uint32 | ~float32 | ~float64
}

// vals returns the values of a fixed-width array as a slice (offset applied).
func vals[T arrow.FixedWidthType](a arrow.Array) []T {
	d := a.Data()
	buf := d.Buffers()[1]
	if buf == nil || buf.Len() == 0 {
		return make([]T, a.Len())
	}
	return arrow.GetData[T](buf.Bytes())[d.Offset() : d.Offset()+d.Len()]
}

// validity returns a's validity bitmap starting at bit 0 (copied when the
// array has an offset), or nil when a has no NULLs.
func validity(a arrow.Array) []byte {
	if a.NullN() == 0 {
		return nil
	}
	if a.NullN() == a.Len() && a.Data().Buffers()[0] == nil {
		return make([]byte, bitutil.BytesForBits(int64(a.Len())))
	}
	d := a.Data()
	bm := d.Buffers()[0].Bytes()
	if d.Offset() == 0 {
		return bm
	}
	out := make([]byte, bitutil.BytesForBits(int64(d.Len())))
	bitutil.CopyBitmap(bm, d.Offset(), d.Len(), out, 0)
	return out
}

// andValidity combines the validity of several arrays of length n: the result
// is nil when every row is valid in all of them.
func andValidity(n int, arrs ...arrow.Array) []byte {
	var out []byte
	for _, a := range arrs {
		v := validity(a)
		if v == nil {
			continue
		}
		if out == nil {
			out = make([]byte, bitutil.BytesForBits(int64(n)))
			copy(out, v)
			continue
		}
		bitutil.BitmapAnd(out, v, 0, 0, out, 0, int64(n))
	}
	return out
}

// nullCount counts the unset bits of a validity bitmap (nil: none).
func nullCount(bm []byte, n int) int {
	if bm == nil {
		return 0
	}
	return n - bitutil.CountSetBits(bm, 0, n)
}

// isValid reports whether row i is valid under bitmap bm (nil: all valid).
func isValid(bm []byte, i int) bool { return bm == nil || bitutil.BitIsSet(bm, i) }

// makePrim wraps a slice of fixed-width values and a validity bitmap as an
// array of type dt.
func makePrim[T arrow.FixedWidthType](dt arrow.DataType, v []T, bm []byte) arrow.Array {
	n := len(v)
	var vb *memory.Buffer
	if nc := nullCount(bm, n); nc > 0 {
		vb = memory.NewBufferBytes(bm)
		d := array.NewData(dt, n, []*memory.Buffer{vb, memory.NewBufferBytes(arrow.GetBytes(v))}, nil, nc, 0)
		defer d.Release()
		return array.MakeFromData(d)
	}
	d := array.NewData(dt, n, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.GetBytes(v))}, nil, 0, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// makeBool builds a boolean array from a value bitmap and a validity bitmap.
func makeBool(n int, bits, bm []byte) arrow.Array {
	nc := nullCount(bm, n)
	var vb *memory.Buffer
	if nc > 0 {
		vb = memory.NewBufferBytes(bm)
	}
	d := array.NewData(arrow.FixedWidthTypes.Boolean, n, []*memory.Buffer{vb, memory.NewBufferBytes(bits)}, nil, nc, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// newBits allocates a zeroed bitmap for n bits.
func newBits(n int) []byte { return make([]byte, bitutil.BytesForBits(int64(n))) }

// allNull returns an array of n NULLs of storage type dt.
func allNull(mem memory.Allocator, dt arrow.DataType, n int) arrow.Array {
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	b.AppendNulls(n)
	return b.NewArray()
}

// takeRows gathers rows idx of a (idx[i] < 0 gives NULL). It handles every
// storage type in types/arrow.go.
func takeRows(mem memory.Allocator, a arrow.Array, idx []int) arrow.Array {
	switch a := a.(type) {
	case *array.Int16:
		return takePrim(a, vals[int16](a), idx)
	case *array.Int32:
		return takePrim(a, vals[int32](a), idx)
	case *array.Int64:
		return takePrim(a, vals[int64](a), idx)
	case *array.Uint32:
		return takePrim(a, vals[uint32](a), idx)
	case *array.Float32:
		return takePrim(a, vals[float32](a), idx)
	case *array.Float64:
		return takePrim(a, vals[float64](a), idx)
	case *array.Date32:
		return takePrim(a, vals[int32](a), idx)
	case *array.Time64:
		return takePrim(a, vals[int64](a), idx)
	case *array.Timestamp:
		return takePrim(a, vals[int64](a), idx)
	case *array.MonthDayNanoInterval:
		return takePrim(a, vals[arrow.MonthDayNanoInterval](a), idx)
	case *array.Boolean:
		bits, bm := newBits(len(idx)), newBits(len(idx))
		for i, j := range idx {
			if j >= 0 && a.IsValid(j) {
				bitutil.SetBit(bm, i)
				if a.Value(j) {
					bitutil.SetBit(bits, i)
				}
			}
		}
		return makeBool(len(idx), bits, bm)
	case *array.String:
		return takeVarBinary(a, a.ValueOffsets(), a.ValueBytes(), idx)
	case *array.Binary:
		return takeVarBinary(a, a.ValueOffsets(), a.ValueBytes(), idx)
	case *array.Null:
		return array.NewNull(len(idx))
	case *array.List:
		return takeList(mem, a, idx)
	case *array.Struct:
		return takeStruct(mem, a, idx)
	}
	return allNull(mem, a.DataType(), len(idx))
}

// takeStruct gathers record rows: each field is gathered alike and the
// records' own validity is carried over.
func takeStruct(mem memory.Allocator, a *array.Struct, idx []int) arrow.Array {
	bm := newBits(len(idx))
	nulls := 0
	for i, j := range idx {
		if j >= 0 && a.IsValid(j) {
			bitutil.SetBit(bm, i)
		} else {
			nulls++
		}
	}
	st := a.DataType().(*arrow.StructType)
	kids := make([]arrow.ArrayData, a.NumField())
	for f := range kids {
		c := takeRows(mem, a.Field(f), idx)
		kids[f] = c.Data()
		defer c.Release()
	}
	var vb *memory.Buffer
	if nulls > 0 {
		vb = memory.NewBufferBytes(bm)
	}
	d := array.NewData(st, len(idx), []*memory.Buffer{vb}, kids, nulls, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// takeList gathers list rows: the child rows of every selected list are
// gathered in order and new offsets are written.
func takeList(mem memory.Allocator, a *array.List, idx []int) arrow.Array {
	offs := make([]int32, len(idx)+1)
	bm := newBits(len(idx))
	var child []int
	for i, j := range idx {
		if j >= 0 && a.IsValid(j) {
			bitutil.SetBit(bm, i)
			s, e := a.ValueOffsets(j)
			for k := s; k < e; k++ {
				child = append(child, int(k))
			}
		}
		offs[i+1] = int32(len(child))
	}
	values := takeRows(mem, a.ListValues(), child)
	defer values.Release()
	nc := nullCount(bm, len(idx))
	var vb *memory.Buffer
	if nc > 0 {
		vb = memory.NewBufferBytes(bm)
	}
	d := array.NewData(a.DataType(), len(idx), []*memory.Buffer{vb, memory.NewBufferBytes(arrow.GetBytes(offs))}, []arrow.ArrayData{values.Data()}, nc, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// takeVarBinary gathers rows of a string or binary array (offs and data
// its absolute offsets and bytes, data starting at offs[0]) into new
// buffers sized up front: one pass sums the lengths, one copies.
func takeVarBinary(a arrow.Array, offs []int32, data []byte, idx []int) arrow.Array {
	base := offs[0]
	hasNull := a.NullN() > 0
	total := 0
	for _, j := range idx {
		if j >= 0 {
			total += int(offs[j+1] - offs[j])
		}
	}
	out := make([]int32, len(idx)+1)
	buf := make([]byte, 0, total)
	var bm []byte
	for i, j := range idx {
		if j < 0 || (hasNull && a.IsNull(j)) {
			if bm == nil {
				bm = newBits(len(idx))
				bitutil.SetBitsTo(bm, 0, int64(len(idx)), true)
			}
			bitutil.ClearBit(bm, i)
		} else {
			buf = append(buf, data[offs[j]-base:offs[j+1]-base]...)
		}
		out[i+1] = int32(len(buf))
	}
	nc := nullCount(bm, len(idx))
	var vb *memory.Buffer
	if nc > 0 {
		vb = memory.NewBufferBytes(bm)
	}
	d := array.NewData(a.DataType(), len(idx), []*memory.Buffer{vb, memory.NewBufferBytes(arrow.GetBytes(out)), memory.NewBufferBytes(buf)}, nil, nc, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

func takePrim[T arrow.FixedWidthType](a arrow.Array, v []T, idx []int) arrow.Array {
	out := make([]T, len(idx))
	var bm []byte
	hasNull := a.NullN() > 0
	for i, j := range idx {
		if j < 0 || (hasNull && a.IsNull(j)) {
			if bm == nil {
				bm = newBits(len(idx))
				bitutil.SetBitsTo(bm, 0, int64(len(idx)), true)
			}
			bitutil.ClearBit(bm, i)
			continue
		}
		out[i] = v[j]
	}
	return makePrim(a.DataType(), out, bm)
}

// sliceBatch returns the rows idx of b as a new batch, for evaluating e
// only on the rows that need it. The columns e does not read are not
// copied: they stay in the batch (whose schema e's column references
// index) as a slice of their first len(idx) rows, never read.
func sliceBatch(mem memory.Allocator, b arrow.RecordBatch, idx []int, e Expr) arrow.RecordBatch {
	used := make([]bool, b.NumCols())
	all := !readsColumns(e, used) // reads.go
	cols := make([]arrow.Array, b.NumCols())
	for i := range cols {
		if all || used[i] {
			cols[i] = takeRows(mem, b.Column(i), idx)
		} else {
			cols[i] = array.NewSlice(b.Column(i), 0, int64(len(idx)))
		}
	}
	r := array.NewRecordBatch(b.Schema(), cols, int64(len(idx)))
	for _, c := range cols {
		c.Release()
	}
	return r
}

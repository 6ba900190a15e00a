package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// takeArray gathers rows idx of a into a new array; an index of -1 produces a
// NULL (the missing side of an outer join).
func takeArray(mem memory.Allocator, a arrow.Array, idx []int32) arrow.Array {
	switch a.DataType().ID() {
	case arrow.INT64, arrow.TIMESTAMP, arrow.TIME64:
		return takeFixed[int64](mem, a, idx)
	case arrow.INT32, arrow.DATE32:
		return takeFixed[int32](mem, a, idx)
	case arrow.UINT32:
		return takeFixed[uint32](mem, a, idx)
	case arrow.INT16:
		return takeFixed[int16](mem, a, idx)
	case arrow.FLOAT64:
		return takeFixed[float64](mem, a, idx)
	case arrow.FLOAT32:
		return takeFixed[float32](mem, a, idx)
	case arrow.INTERVAL_MONTH_DAY_NANO:
		return takeFixed[arrow.MonthDayNanoInterval](mem, a, idx)
	case arrow.STRING:
		return takeString(mem, a.(*array.String), idx)
	}
	b := array.NewBuilder(mem, a.DataType())
	defer b.Release()
	b.Reserve(len(idx))
	for _, i := range idx {
		if i < 0 {
			b.AppendNull()
		} else {
			copyValue(b, a, int(i))
		}
	}
	return b.NewArray()
}

// takeFixed gathers a fixed-width array by building its buffers directly.
func takeFixed[T arrow.FixedWidthType](mem memory.Allocator, a arrow.Array, idx []int32) arrow.Array {
	src := arrow.GetValues[T](a.Data(), 1)
	n := len(idx)
	vals := make([]T, n)
	nulls := 0
	var valid []byte
	if a.NullN() == 0 {
		for k, i := range idx {
			if i < 0 {
				nulls++
				continue
			}
			vals[k] = src[i]
		}
	} else {
		for k, i := range idx {
			if i < 0 || a.IsNull(int(i)) {
				nulls++
				continue
			}
			vals[k] = src[i]
		}
	}
	if nulls > 0 {
		valid = make([]byte, bitutil.BytesForBits(int64(n)))
		for k, i := range idx {
			if i >= 0 && a.IsValid(int(i)) {
				bitutil.SetBit(valid, k)
			}
		}
	}
	var vb *memory.Buffer
	if valid != nil {
		vb = memory.NewBufferBytes(valid)
	}
	d := array.NewData(a.DataType(), n, []*memory.Buffer{vb, memory.NewBufferBytes(arrow.GetBytes(vals))}, nil, nulls, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// takeString gathers a string array, building its offsets and data buffers
// directly.
func takeString(mem memory.Allocator, a *array.String, idx []int32) arrow.Array {
	offs := a.ValueOffsets()
	var raw []byte
	if buf := a.Data().Buffers()[2]; buf != nil {
		raw = buf.Bytes()
	}
	n := len(idx)
	size := 0
	for _, i := range idx {
		if i >= 0 {
			size += int(offs[i+1] - offs[i])
		}
	}
	out := make([]int32, n+1)
	data := make([]byte, 0, size)
	nulls := 0
	var valid []byte
	hasNulls := a.NullN() > 0
	for k, i := range idx {
		if i < 0 || (hasNulls && a.IsNull(int(i))) {
			if valid == nil {
				valid = make([]byte, bitutil.BytesForBits(int64(n)))
				bitutil.SetBitsTo(valid, 0, int64(k), true)
			}
			nulls++
			out[k+1] = int32(len(data))
			continue
		}
		if valid != nil {
			bitutil.SetBit(valid, k)
		}
		data = append(data, raw[offs[i]:offs[i+1]]...)
		out[k+1] = int32(len(data))
	}
	var vb *memory.Buffer
	if valid != nil {
		vb = memory.NewBufferBytes(valid)
	}
	d := array.NewData(arrow.BinaryTypes.String, n, []*memory.Buffer{vb, memory.NewBufferBytes(arrow.GetBytes(out)), memory.NewBufferBytes(data)}, nil, nulls, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// takeBatch gathers rows idx of every column of b.
func takeBatch(mem memory.Allocator, schema *arrow.Schema, cols []arrow.Array, idx []int32) arrow.RecordBatch {
	out := make([]arrow.Array, len(cols))
	for c, a := range cols {
		out[c] = takeArray(mem, a, idx)
	}
	return array.NewRecordBatch(schema, out, int64(len(idx)))
}

// copyValue appends row i of a to b (same Arrow type), NULLs included.
func copyValue(b array.Builder, a arrow.Array, i int) {
	if a.IsNull(i) {
		b.AppendNull()
		return
	}
	switch x := a.(type) {
	case *array.Boolean:
		b.(*array.BooleanBuilder).Append(x.Value(i))
	case *array.Int16:
		b.(*array.Int16Builder).Append(x.Value(i))
	case *array.Int32:
		b.(*array.Int32Builder).Append(x.Value(i))
	case *array.Int64:
		b.(*array.Int64Builder).Append(x.Value(i))
	case *array.Uint32:
		b.(*array.Uint32Builder).Append(x.Value(i))
	case *array.Float32:
		b.(*array.Float32Builder).Append(x.Value(i))
	case *array.Float64:
		b.(*array.Float64Builder).Append(x.Value(i))
	case *array.String:
		b.(*array.StringBuilder).Append(x.Value(i))
	case *array.Binary:
		b.(*array.BinaryBuilder).Append(x.Value(i))
	case *array.Date32:
		b.(*array.Date32Builder).Append(x.Value(i))
	case *array.Time64:
		b.(*array.Time64Builder).Append(x.Value(i))
	case *array.Timestamp:
		b.(*array.TimestampBuilder).Append(x.Value(i))
	case *array.MonthDayNanoInterval:
		b.(*array.MonthDayNanoIntervalBuilder).Append(x.Value(i))
	case *array.List:
		lb := b.(*array.ListBuilder)
		lb.Append(true)
		s, e := x.ValueOffsets(i)
		vb := lb.ValueBuilder()
		for j := s; j < e; j++ {
			copyValue(vb, x.ListValues(), int(j))
		}
	case *array.Struct:
		sb := b.(*array.StructBuilder)
		sb.Append(true)
		for j := 0; j < x.NumField(); j++ {
			copyValue(sb.FieldBuilder(j), x.Field(j), i)
		}
	case *array.Null:
		b.AppendNull()
	default:
		panic(fmt.Sprintf("exec: copyValue: unsupported arrow type %s", a.DataType()))
	}
}

// SelectRows returns the rows of b whose keep[i] equals want, in order: b
// itself when that is every row, else a new batch (possibly empty). Unlike
// Arrow's compute filter it takes every column type, intervals included.
func SelectRows(mem memory.Allocator, b arrow.RecordBatch, keep []bool, want bool) arrow.RecordBatch {
	idx := make([]int32, 0, len(keep))
	for i, k := range keep {
		if k == want {
			idx = append(idx, int32(i))
		}
	}
	if len(idx) == int(b.NumRows()) {
		return b
	}
	return takeBatch(mem, b.Schema(), b.Columns(), idx)
}

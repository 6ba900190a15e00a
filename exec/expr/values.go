package expr

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

// Row-at-a-time access between Arrow arrays and types.Value, following the
// mapping in types/arrow.go. Used for constants, parameters and the
// row-at-a-time kernels (RowKernel); hot kernels read the buffers directly.

// valueAt reads row i of a (storage of t) as a Value; nil when NULL.
func valueAt(a arrow.Array, i int, t types.T) types.Value { return types.ValueAt(a, i, t) }

// appendValue appends v (nil = NULL) to b, a builder for t's storage.
func appendValue(b array.Builder, v types.Value, t types.T) error { return types.AppendValue(b, v, t) }

// constArray returns an array of n copies of v with type t.
func constArray(mem memory.Allocator, v types.Value, t types.T, n int) (arrow.Array, error) {
	if v == nil {
		return allNull(mem, t.ArrowType(), n), nil
	}
	dt := t.ArrowType()
	switch t.Kind {
	case types.Int2:
		if x, ok := v.(int64); ok {
			return makePrim(dt, fill(int16(x), n), nil), nil
		}
	case types.Int4:
		if x, ok := v.(int64); ok {
			return makePrim(dt, fill(int32(x), n), nil), nil
		}
	case types.Int8:
		if x, ok := v.(int64); ok {
			return makePrim(dt, fill(x, n), nil), nil
		}
	case types.Float8:
		if x, ok := v.(float64); ok {
			return makePrim(dt, fill(x, n), nil), nil
		}
	case types.Text, types.Varchar, types.Bpchar, types.Name, types.Char, types.JSON, types.JSONB, types.Unknown:
		if x, ok := v.(string); ok {
			return repeatString(x, n), nil
		}
	case types.Bool:
		if x, ok := v.(bool); ok {
			bits := newBits(n)
			if x {
				for i := range bits {
					bits[i] = 0xff
				}
			}
			return makeBool(n, bits, nil), nil
		}
	}
	return types.ConstArray(mem, t, v, n)
}

func fill[T any](x T, n int) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = x
	}
	return out
}

// rowsOf returns every row of a as Values.
func rowsOf(a arrow.Array, t types.T) []types.Value {
	out := make([]types.Value, a.Len())
	for i := range out {
		out[i] = valueAt(a, i, t)
	}
	return out
}

// buildValues builds an array of type t from Values.
func buildValues(mem memory.Allocator, vs []types.Value, t types.T) (arrow.Array, error) {
	return types.MakeArray(mem, t, vs)
}

// storageType guesses a SQL type from an Arrow storage type, for values whose
// SQL type is not known exactly (row kernels registered without argument
// types, subquery columns of a different type than expected).
func storageType(dt arrow.DataType) types.T {
	switch dt.ID() {
	case arrow.BOOL:
		return types.TBool
	case arrow.INT16:
		return types.TInt2
	case arrow.INT32:
		return types.TInt4
	case arrow.INT64:
		return types.TInt8
	case arrow.FLOAT32:
		return types.TFloat4
	case arrow.FLOAT64:
		return types.TFloat8
	case arrow.BINARY:
		return types.TBytea
	case arrow.DATE32:
		return types.TDate
	case arrow.TIME64:
		return types.TTime
	case arrow.TIMESTAMP:
		if dt.(*arrow.TimestampType).TimeZone != "" {
			return types.TTimestampTZ
		}
		return types.TTimestamp
	case arrow.INTERVAL_MONTH_DAY_NANO:
		return types.TInterval
	case arrow.UINT32:
		return types.TOid
	case arrow.NULL:
		return types.TVoid
	case arrow.LIST:
		return types.ArrayOf(storageType(dt.(*arrow.ListType).Elem()))
	}
	return types.TText
}

// fitType returns t if a is stored as t, else the type a's storage suggests.
func fitType(a arrow.Array, t types.T) types.T {
	if arrow.TypeEqual(a.DataType(), t.ArrowType()) {
		return t
	}
	return storageType(a.DataType())
}

// repeatString builds a string array of n copies of s directly in its
// buffers.
func repeatString(s string, n int) arrow.Array {
	offs := make([]int32, n+1)
	data := make([]byte, 0, len(s)*n)
	for i := 0; i < n; i++ {
		data = append(data, s...)
		offs[i+1] = int32(len(data))
	}
	d := array.NewData(arrow.BinaryTypes.String, n, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.GetBytes(offs)), memory.NewBufferBytes(data)}, nil, 0, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

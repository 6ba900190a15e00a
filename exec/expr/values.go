package expr

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/types"
)

// Row-at-a-time access between Arrow arrays and types.Value, following the
// mapping in types/arrow.go. Used for constants, parameters and the
// row-at-a-time kernels (RowKernel); hot kernels read the buffers directly.

// valueAt reads row i of a (storage of t) as a Value; nil when NULL.
func valueAt(a arrow.Array, i int, t types.T) types.Value {
	if a.IsNull(i) {
		return nil
	}
	switch a := a.(type) {
	case *array.Boolean:
		return a.Value(i)
	case *array.Int16:
		return int64(a.Value(i))
	case *array.Int32:
		return int64(a.Value(i))
	case *array.Int64:
		return a.Value(i)
	case *array.Uint32:
		return int64(a.Value(i))
	case *array.Float32:
		return float64(a.Value(i))
	case *array.Float64:
		return a.Value(i)
	case *array.String:
		if t.Kind == types.Numeric {
			d, _, err := apd.NewFromString(a.Value(i))
			if err != nil {
				return nil
			}
			return d
		}
		return a.Value(i)
	case *array.Binary:
		return append([]byte(nil), a.Value(i)...)
	case *array.Date32:
		return types.DateValue(a.Value(i))
	case *array.Time64:
		return types.TimeValue(a.Value(i))
	case *array.Timestamp:
		return types.TimestampValue(a.Value(i))
	case *array.MonthDayNanoInterval:
		v := a.Value(i)
		return types.IntervalValue{Months: v.Months, Days: v.Days, Micros: v.Nanoseconds / 1000}
	case *array.List:
		s, e := a.ValueOffsets(i)
		out := make([]types.Value, 0, e-s)
		for k := s; k < e; k++ {
			out = append(out, valueAt(a.ListValues(), int(k), *t.Elem))
		}
		return out
	}
	return nil
}

// appendValue appends v (nil = NULL) to b, a builder for t's storage.
func appendValue(b array.Builder, v types.Value, t types.T) error {
	if v == nil {
		b.AppendNull()
		return nil
	}
	bad := func() error { return fmt.Errorf("expr: value %T does not fit type %s", v, t) }
	switch b := b.(type) {
	case *array.BooleanBuilder:
		x, ok := v.(bool)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.Int16Builder:
		x, ok := v.(int64)
		if !ok {
			return bad()
		}
		b.Append(int16(x))
	case *array.Int32Builder:
		x, ok := v.(int64)
		if !ok {
			return bad()
		}
		b.Append(int32(x))
	case *array.Int64Builder:
		x, ok := v.(int64)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.Uint32Builder:
		x, ok := v.(int64)
		if !ok {
			return bad()
		}
		b.Append(uint32(x))
	case *array.Float32Builder:
		x, ok := v.(float64)
		if !ok {
			return bad()
		}
		b.Append(float32(x))
	case *array.Float64Builder:
		x, ok := v.(float64)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.StringBuilder:
		switch x := v.(type) {
		case string:
			b.Append(x)
		case *apd.Decimal:
			b.Append(x.Text('f'))
		default:
			return bad()
		}
	case *array.BinaryBuilder:
		x, ok := v.([]byte)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.Date32Builder:
		x, ok := v.(types.DateValue)
		if !ok {
			return bad()
		}
		b.Append(arrow.Date32(x))
	case *array.Time64Builder:
		x, ok := v.(types.TimeValue)
		if !ok {
			return bad()
		}
		b.Append(arrow.Time64(x))
	case *array.TimestampBuilder:
		x, ok := v.(types.TimestampValue)
		if !ok {
			return bad()
		}
		b.Append(arrow.Timestamp(x))
	case *array.MonthDayNanoIntervalBuilder:
		x, ok := v.(types.IntervalValue)
		if !ok {
			return bad()
		}
		b.Append(arrow.MonthDayNanoInterval{Months: x.Months, Days: x.Days, Nanoseconds: x.Micros * 1000})
	case *array.ListBuilder:
		x, ok := v.([]types.Value)
		if !ok {
			return bad()
		}
		b.Append(true)
		vb := b.ValueBuilder()
		for _, e := range x {
			if err := appendValue(vb, e, *t.Elem); err != nil {
				return err
			}
		}
	case *array.NullBuilder:
		b.AppendNull()
	default:
		return bad()
	}
	return nil
}

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
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	b.Reserve(n)
	for i := 0; i < n; i++ {
		if err := appendValue(b, v, t); err != nil {
			return nil, err
		}
	}
	return b.NewArray(), nil
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
	b := array.NewBuilder(mem, t.ArrowType())
	defer b.Release()
	b.Reserve(len(vs))
	for _, v := range vs {
		if err := appendValue(b, v, t); err != nil {
			return nil, err
		}
	}
	return b.NewArray(), nil
}

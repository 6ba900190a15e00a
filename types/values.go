package types

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/apd/v3"
	"github.com/streamsql/streamsql/pgerr"
)

// ValueAt reads row i of a (storage type of t) as a Value; nil when NULL.
// numeric is decoded from its canonical text (every value AppendValue
// writes decodes); only text AppendValue never writes reads as nil.
func ValueAt(a arrow.Array, i int, t T) Value {
	if a.IsNull(i) {
		return nil
	}
	switch t.Kind {
	case Bool:
		return a.(*array.Boolean).Value(i)
	case Int2:
		return int64(a.(*array.Int16).Value(i))
	case Int4:
		return int64(a.(*array.Int32).Value(i))
	case Int8:
		return a.(*array.Int64).Value(i)
	case Float4:
		return float64(a.(*array.Float32).Value(i))
	case Float8, Enum:
		return a.(*array.Float64).Value(i)
	case Numeric:
		d, err := decodeStoredNumeric(a.(*array.String).Value(i))
		if err != nil {
			return nil
		}
		return d
	case Bytea:
		return a.(*array.Binary).Value(i)
	case Date:
		return DateValue(a.(*array.Date32).Value(i))
	case Time:
		return TimeValue(a.(*array.Time64).Value(i))
	case Timestamp, TimestampTZ:
		return TimestampValue(a.(*array.Timestamp).Value(i))
	case Interval:
		return IntervalFromArrow(a.(*array.MonthDayNanoInterval).Value(i))
	case Oid, RegClass, RegType, RegProc:
		return int64(a.(*array.Uint32).Value(i))
	case Void:
		return nil
	case Array:
		l := a.(*array.List)
		start, end := l.ValueOffsets(i)
		child := l.ListValues()
		out := make([]Value, 0, end-start)
		for j := int(start); j < int(end); j++ {
			out = append(out, ValueAt(child, j, *t.Elem))
		}
		return out
	case Record:
		return recordValueAt(a, i, t)
	default: // text-likes, json, jsonb, unknown
		return a.(*array.String).Value(i)
	}
}

// decodeStoredNumeric parses the canonical numeric text kept in Arrow. apd
// parses the common case; numeric_in's scanner takes whatever apd refuses,
// so that no stored value reads as NULL.
func decodeStoredNumeric(s string) (*apd.Decimal, error) {
	d, _, err := apd.NewFromString(s)
	if err == nil {
		return d, nil
	}
	if d, ok := scanNumeric(s); ok {
		return d, nil
	}
	return nil, err
}

// NewBuilder returns a builder for t's Arrow storage type.
func NewBuilder(mem memory.Allocator, t T) array.Builder {
	return array.NewBuilder(mem, t.ArrowType())
}

// AppendValue appends v (nil = NULL) to a builder made by NewBuilder(t).
// v must be in t's Go form (see arrow.go); for convenience, integer kinds also
// accept int and int32, floats accept float32, and numeric accepts apd.Decimal,
// int64 and its text form.
func AppendValue(b array.Builder, v Value, t T) error {
	if v == nil {
		b.AppendNull()
		return nil
	}
	bad := func() error {
		return fmt.Errorf("types: cannot append %T as %s", v, t)
	}
	switch t.Kind {
	case Bool:
		x, ok := v.(bool)
		if !ok {
			return bad()
		}
		b.(*array.BooleanBuilder).Append(x)
	case Int2, Int4, Int8, Oid, RegClass, RegType, RegProc:
		x, ok := asInt64(v)
		if !ok {
			return bad()
		}
		switch bb := b.(type) {
		case *array.Int16Builder:
			bb.Append(int16(x))
		case *array.Int32Builder:
			bb.Append(int32(x))
		case *array.Int64Builder:
			bb.Append(x)
		case *array.Uint32Builder:
			bb.Append(uint32(x))
		default:
			return bad()
		}
	case Float4, Float8, Enum:
		var x float64
		switch f := v.(type) {
		case float64:
			x = f
		case float32:
			x = float64(f)
		default:
			return bad()
		}
		if t.Kind == Float4 {
			b.(*array.Float32Builder).Append(float32(x))
		} else {
			b.(*array.Float64Builder).Append(x)
		}
	case Numeric:
		var s string
		switch d := v.(type) {
		case *apd.Decimal:
			if err := checkNumericLimits(d); err != nil {
				return err
			}
			s = string(appendNumeric(nil, d))
		case apd.Decimal:
			if err := checkNumericLimits(&d); err != nil {
				return err
			}
			s = string(appendNumeric(nil, &d))
		case int64:
			s = fmt.Sprint(d)
		case string:
			p, err := parseNumeric(d, -1)
			if err != nil {
				return err
			}
			s = string(appendNumeric(nil, p))
		default:
			return bad()
		}
		b.(*array.StringBuilder).Append(s)
	case Bytea:
		x, ok := v.([]byte)
		if !ok {
			return bad()
		}
		b.(*array.BinaryBuilder).Append(x)
	case Date:
		x, ok := v.(DateValue)
		if !ok {
			return bad()
		}
		b.(*array.Date32Builder).Append(arrow.Date32(x))
	case Time:
		x, ok := v.(TimeValue)
		if !ok {
			return bad()
		}
		b.(*array.Time64Builder).Append(arrow.Time64(x))
	case Timestamp, TimestampTZ:
		x, ok := v.(TimestampValue)
		if !ok {
			return bad()
		}
		b.(*array.TimestampBuilder).Append(arrow.Timestamp(x))
	case Interval:
		x, ok := v.(IntervalValue)
		if !ok {
			return bad()
		}
		b.(*array.MonthDayNanoIntervalBuilder).Append(IntervalToArrow(x))
	case Void:
		b.AppendNull()
	case Record:
		return appendRecord(b, v, t)
	case Array:
		x, ok := v.([]Value)
		if !ok {
			return bad()
		}
		lb := b.(*array.ListBuilder)
		lb.Append(true)
		vb := lb.ValueBuilder()
		for _, e := range x {
			if _, nested := e.([]Value); nested {
				return pgerr.Unsupported("multidimensional arrays are not supported in storage")
			}
			if err := AppendValue(vb, e, *t.Elem); err != nil {
				return err
			}
		}
	default:
		x, ok := v.(string)
		if !ok {
			return bad()
		}
		b.(*array.StringBuilder).Append(x)
	}
	return nil
}

func asInt64(v Value) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case int16:
		return int64(x), true
	case uint32:
		return int64(x), true
	}
	return 0, false
}

// MakeArray builds an Arrow array of t's storage type holding vals (nil = NULL).
// The caller owns the result.
func MakeArray(mem memory.Allocator, t T, vals []Value) (arrow.Array, error) {
	b := NewBuilder(mem, t)
	defer b.Release()
	b.Reserve(len(vals))
	for _, v := range vals {
		if err := AppendValue(b, v, t); err != nil {
			return nil, err
		}
	}
	return b.NewArray(), nil
}

// ConstArray builds an Arrow array of n copies of v (nil = all NULL), as used
// for constants in vectorized evaluation. The caller owns the result.
func ConstArray(mem memory.Allocator, t T, v Value, n int) (arrow.Array, error) {
	if v == nil {
		if t.Kind == Void {
			return array.NewNull(n), nil
		}
		return array.MakeArrayOfNull(mem, t.ArrowType(), n), nil
	}
	b := NewBuilder(mem, t)
	defer b.Release()
	b.Reserve(n)
	switch bb := b.(type) {
	case *array.Int64Builder:
		x, ok := asInt64(v)
		if !ok {
			return nil, fmt.Errorf("types: cannot append %T as %s", v, t)
		}
		for i := 0; i < n; i++ {
			bb.UnsafeAppend(x)
		}
		return b.NewArray(), nil
	case *array.Float64Builder:
		x, ok := v.(float64)
		if !ok {
			return nil, fmt.Errorf("types: cannot append %T as %s", v, t)
		}
		for i := 0; i < n; i++ {
			bb.UnsafeAppend(x)
		}
		return b.NewArray(), nil
	}
	if sb, ok := b.(*array.StringBuilder); ok && n > 1 {
		// Text storage (text, numeric, ...): format once, repeat the bytes.
		if err := AppendValue(sb, v, t); err != nil {
			return nil, err
		}
		one := sb.NewStringArray()
		defer one.Release()
		s := one.Value(0)
		if int64(len(s))*int64(n) <= math.MaxInt32 {
			return repeatString(s, n), nil
		}
		for i := 0; i < n; i++ {
			sb.Append(s)
		}
		return sb.NewArray(), nil
	}
	// Generic path: append once to validate, then repeat.
	for i := 0; i < n; i++ {
		if err := AppendValue(b, v, t); err != nil {
			return nil, err
		}
	}
	return b.NewArray(), nil
}

// repeatString returns a String array of n copies of s, built directly.
func repeatString(s string, n int) arrow.Array {
	offs := make([]int32, n+1)
	data := make([]byte, len(s)*n)
	for i := 0; i < n; i++ {
		copy(data[i*len(s):], s)
		offs[i+1] = int32((i + 1) * len(s))
	}
	d := array.NewData(arrow.BinaryTypes.String, n, []*memory.Buffer{nil,
		memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offs)), memory.NewBufferBytes(data)}, nil, 0, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

package expr

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// The Cast node: vectorized fast paths between the numeric storages, and a
// row-at-a-time path (castValue, cast_value.go) for everything else.

// Type returns the target type.
func (e *Cast) Type() types.T { return e.To }

func (e *Cast) String() string {
	return "(" + e.E.String() + ")::" + e.To.String()
}

// Eval converts the input array.
func (e *Cast) Eval(ctx *Context, b arrow.RecordBatch) (arrow.Array, error) {
	in, err := e.E.Eval(ctx, b)
	if err != nil {
		return nil, err
	}
	defer in.Release()
	return castArray(ctx, in, e.E.Type(), e.To, e.Explicit)
}

// sameStorageNoop reports casts that leave the stored data unchanged.
func sameStorageNoop(from, to types.T) bool {
	if from.Kind == types.Unknown || to.Typmod >= 0 {
		return false
	}
	if from.SameKind(to) {
		return true
	}
	switch from.Kind {
	case types.Text, types.Varchar, types.Name:
		return to.Kind == types.Text || to.Kind == types.Varchar || to.Kind == types.Name
	case types.Oid, types.RegClass, types.RegType, types.RegProc:
		return to.Kind == types.Oid || to.Kind == types.RegClass || to.Kind == types.RegType || to.Kind == types.RegProc
	case types.JSONB:
		return to.Kind == types.JSON
	}
	return false
}

func castArray(ctx *Context, in arrow.Array, from, to types.T, explicit bool) (arrow.Array, error) {
	if sameStorageNoop(from, to) {
		in.Retain()
		return in, nil
	}
	n := in.Len()
	bm := validity(in)
	if to.Typmod < 0 {
		switch {
		case from.IsInteger() && to.IsInteger():
			return castIntInt(in, from, to, bm)
		case (from.IsInteger() || from.IsFloat()) && to.IsFloat():
			out := make([]float64, n)
			readFloat(in, out)
			if to.Kind == types.Float8 {
				return makePrim(to.ArrowType(), out, bm), nil
			}
			o32 := make([]float32, n)
			for i, x := range out {
				f := float32(x)
				if isValid(bm, i) {
					if math.IsInf(float64(f), 0) && !math.IsInf(x, 0) {
						return nil, pgerr.New(pgerr.NumericValueOutOfRange, "value out of range: overflow")
					}
					if f == 0 && x != 0 {
						return nil, pgerr.New(pgerr.NumericValueOutOfRange, "value out of range: underflow")
					}
				}
				o32[i] = f
			}
			return makePrim(to.ArrowType(), o32, bm), nil
		case from.IsFloat() && to.IsInteger():
			f := make([]float64, n)
			readFloat(in, f)
			out := make([]int64, n)
			for i, x := range f {
				r := math.RoundToEven(x)
				if isValid(bm, i) && (math.IsNaN(r) || r < minOf(to) || r >= -minOf(to)) {
					return nil, outOfRange(to)
				}
				out[i] = int64(r)
			}
			return narrowInts(out, to, bm), nil
		case from.IsInteger() && (to.Kind == types.Text || to.Kind == types.Numeric):
			// An integer's numeric text is its decimal digits.
			iv := make([]int64, n)
			readInt(in, iv)
			return intsToText(iv, bm), nil
		}
	}
	// Row at a time.
	out := make([]types.Value, n)
	for i := range out {
		v := valueAt(in, i, from)
		if v == nil {
			continue
		}
		r, err := castValue(ctx, v, from, to, explicit)
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	return buildValues(ctx.Allocator(), out, to)
}

func minOf(t types.T) float64 {
	switch t.Kind {
	case types.Int2:
		return math.MinInt16
	case types.Int4:
		return math.MinInt32
	}
	return math.MinInt64
}

// outOfRange is PostgreSQL's overflow error for an integer type.
func outOfRange(t types.T) error {
	switch t.Kind {
	case types.Int2:
		return pgerr.New(pgerr.NumericValueOutOfRange, "smallint out of range")
	case types.Int4:
		return pgerr.New(pgerr.NumericValueOutOfRange, "integer out of range")
	}
	return pgerr.New(pgerr.NumericValueOutOfRange, "bigint out of range")
}

// readInt widens any integer array into out.
func readInt(a arrow.Array, out []int64) {
	switch a := a.(type) {
	case *array.Int16:
		for i, x := range vals[int16](a) {
			out[i] = int64(x)
		}
	case *array.Int32:
		for i, x := range vals[int32](a) {
			out[i] = int64(x)
		}
	case *array.Int64:
		copy(out, vals[int64](a))
	case *array.Uint32:
		for i, x := range vals[uint32](a) {
			out[i] = int64(x)
		}
	}
}

// readFloat converts any integer or float array into out.
func readFloat(a arrow.Array, out []float64) {
	switch a := a.(type) {
	case *array.Float32:
		for i, x := range vals[float32](a) {
			out[i] = float64(x)
		}
	case *array.Float64:
		copy(out, vals[float64](a))
	default:
		iv := make([]int64, len(out))
		readInt(a, iv)
		for i, x := range iv {
			out[i] = float64(x)
		}
	}
}

// narrowInts stores int64 values in t's storage (range already checked).
func narrowInts(v []int64, t types.T, bm []byte) arrow.Array {
	switch t.Kind {
	case types.Int2:
		o := make([]int16, len(v))
		for i, x := range v {
			o[i] = int16(x)
		}
		return makePrim(t.ArrowType(), o, bm)
	case types.Int4:
		o := make([]int32, len(v))
		for i, x := range v {
			o[i] = int32(x)
		}
		return makePrim(t.ArrowType(), o, bm)
	}
	return makePrim(t.ArrowType(), v, bm)
}

func castIntInt(in arrow.Array, from, to types.T, bm []byte) (arrow.Array, error) {
	v := make([]int64, in.Len())
	readInt(in, v)
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	switch to.Kind {
	case types.Int2:
		lo, hi = math.MinInt16, math.MaxInt16
	case types.Int4:
		lo, hi = math.MinInt32, math.MaxInt32
	}
	for i, x := range v {
		if (x < lo || x > hi) && isValid(bm, i) {
			return nil, outOfRange(to)
		}
	}
	return narrowInts(v, to, bm), nil
}

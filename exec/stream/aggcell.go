package stream

import (
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/types"
)

// Per-group values of one SQL type, kept column-wise: the group keys and the
// aggregate results a HashAgg last emitted, and the representatives of
// DISTINCT aggregates. A value travels between them as a cell, a small
// tagged union that needs no allocation for fixed-width types.

// storage is how a SQL type's values are kept in a cell.
type storage uint8

const (
	stInt      storage = iota // integers, date, time, timestamp(tz), oid: a
	stFloat                   // float4, float8: a holds the float64 bits (one NaN)
	stBool                    // a is 0 or 1
	stStr                     // text-likes, json: s
	stNumeric                 // numeric: s (canonical text), or when wide an integer in a (low) and b (high)
	stBytes                   // bytea: s holds the bytes
	stInterval                // a = months<<32 | uint32(days), b = nanoseconds
	stAny                     // anything else (arrays): v
)

func storageOf(t types.T) storage {
	switch t.Kind {
	case types.Int2, types.Int4, types.Int8, types.Date, types.Time, types.Timestamp, types.TimestampTZ,
		types.Oid, types.RegClass, types.RegType, types.RegProc:
		return stInt
	case types.Float4, types.Float8, types.Enum: // an enum is its float64 sort position
		return stFloat
	case types.Bool:
		return stBool
	case types.Bytea:
		return stBytes
	case types.Interval:
		return stInterval
	case types.Numeric:
		return stNumeric
	case types.Array, types.Void:
		return stAny
	}
	return stStr
}

// cell is one SQL value or NULL (see storage for which fields are used).
// A wide cell is a numeric integer as an int128 (a low word, b high word),
// turned into text only when output: sum(int8) needs no text per group.
type cell struct {
	null bool
	wide bool
	a, b int64
	s    string
	v    types.Value
}

var nullCell = cell{null: true}

func intCell(v int64) cell     { return cell{a: v} }
func strCell(s string) cell    { return cell{s: s} }
func floatCell(f float64) cell { return cell{a: int64(canonFloatBits(f))} }

func intervalCell(v arrow.MonthDayNanoInterval) cell {
	return cell{a: int64(v.Months)<<32 | int64(uint32(v.Days)), b: v.Nanoseconds}
}

func floatOf(c cell) float64 { return math.Float64frombits(uint64(c.a)) }

func wideCell(v int128) cell { return cell{wide: true, a: int64(v.lo), b: v.hi} }

// appendWide appends a wide cell's integer as text.
func (c cell) appendWide(dst []byte) []byte {
	v := int128{lo: uint64(c.a), hi: c.b}
	if v.isInt64() {
		return strconv.AppendInt(dst, int64(v.lo), 10)
	}
	return v.bigInt().Append(dst, 10)
}

func (c cell) interval() arrow.MonthDayNanoInterval {
	return arrow.MonthDayNanoInterval{Months: int32(c.a >> 32), Days: int32(uint32(c.a)), Nanoseconds: c.b}
}

// canonFloatBits is f's bits with every NaN made one NaN.
func canonFloatBits(f float64) uint64 {
	if f != f {
		return 0x7ff8000000000000
	}
	return math.Float64bits(f)
}

// same reports whether two cells hold the identical value (not SQL
// equality: 1.0 and 1.00, or 0 and -0, differ), as the view needs to tell an
// update from no change.
func (c cell) same(d cell) bool {
	if c.null || d.null {
		return c.null == d.null
	}
	if c.a != d.a || c.b != d.b || c.s != d.s || c.wide != d.wide {
		return false
	}
	if c.v == nil && d.v == nil {
		return true
	}
	return string(appendValueKey(nil, c.v)) == string(appendValueKey(nil, d.v))
}

// cellAt reads row i of a (of SQL type t, stored as st). Strings are
// copied: the cell may outlive the array.
func cellAt(a arrow.Array, i int, st storage, t types.T) cell {
	if a.IsNull(i) {
		return nullCell
	}
	switch st {
	case stInt:
		switch x := a.(type) {
		case *array.Int64:
			return intCell(x.Value(i))
		case *array.Int32:
			return intCell(int64(x.Value(i)))
		case *array.Int16:
			return intCell(int64(x.Value(i)))
		case *array.Date32:
			return intCell(int64(x.Value(i)))
		case *array.Time64:
			return intCell(int64(x.Value(i)))
		case *array.Timestamp:
			return intCell(int64(x.Value(i)))
		case *array.Uint32:
			return intCell(int64(x.Value(i)))
		}
	case stFloat:
		switch x := a.(type) {
		case *array.Float64:
			return floatCell(x.Value(i))
		case *array.Float32:
			return floatCell(float64(x.Value(i)))
		}
	case stBool:
		if a.(*array.Boolean).Value(i) {
			return intCell(1)
		}
		return intCell(0)
	case stStr, stNumeric:
		return strCell(strings.Clone(a.(*array.String).Value(i)))
	case stBytes:
		return strCell(string(a.(*array.Binary).Value(i)))
	case stInterval:
		return intervalCell(a.(*array.MonthDayNanoInterval).Value(i))
	}
	return cell{v: ownValue(types.ValueAt(a, i, t))}
}

// ownValue copies values that may point into an Arrow buffer.
func ownValue(v types.Value) types.Value {
	switch x := v.(type) {
	case string:
		return strings.Clone(x)
	case []byte:
		return append([]byte(nil), x...)
	case []types.Value:
		out := make([]types.Value, len(x))
		for i, e := range x {
			out[i] = ownValue(e)
		}
		return out
	}
	return v
}

// appendCell appends c to b, a builder made by types.NewBuilder(t).
func appendCell(b array.Builder, c cell, t types.T) error {
	if c.null {
		b.AppendNull()
		return nil
	}
	switch x := b.(type) {
	case *array.Int64Builder:
		x.Append(c.a)
	case *array.Int32Builder:
		x.Append(int32(c.a))
	case *array.Int16Builder:
		x.Append(int16(c.a))
	case *array.Uint32Builder:
		x.Append(uint32(c.a))
	case *array.Date32Builder:
		x.Append(arrow.Date32(c.a))
	case *array.Time64Builder:
		x.Append(arrow.Time64(c.a))
	case *array.TimestampBuilder:
		x.Append(arrow.Timestamp(c.a))
	case *array.Float64Builder:
		x.Append(floatOf(c))
	case *array.Float32Builder:
		x.Append(float32(floatOf(c)))
	case *array.BooleanBuilder:
		x.Append(c.a != 0)
	case *array.StringBuilder:
		if c.wide {
			x.BinaryBuilder.Append(c.appendWide(nil))
		} else {
			x.Append(c.s)
		}
	case *array.BinaryBuilder:
		x.AppendString(c.s)
	case *array.MonthDayNanoIntervalBuilder:
		x.Append(c.interval())
	default:
		return types.AppendValue(b, c.v, t)
	}
	return nil
}

// cellCol keeps one value (or NULL) per group, for groups [0, len). Only the
// slices its storage uses are allocated (numeric's a and b at its first
// wide value). Owned by one goroutine.
type cellCol struct {
	st   storage
	t    types.T
	n    int
	null bitmap
	wide bitmap
	a, b []int64
	s    []string
	v    []types.Value
}

func newCellCol(t types.T) *cellCol { return &cellCol{st: storageOf(t), t: t} }

func (c *cellCol) grow(n int) {
	c.n = max(c.n, n)
	c.null.grow(n)
	switch c.st {
	case stInt, stFloat, stBool:
		c.a = growSlice(c.a, n)
	case stInterval:
		c.a = growSlice(c.a, n)
		c.b = growSlice(c.b, n)
	case stNumeric:
		c.s = growSlice(c.s, n)
		c.wide.grow(n)
		if c.a != nil {
			c.a, c.b = growSlice(c.a, n), growSlice(c.b, n)
		}
	case stStr, stBytes:
		c.s = growSlice(c.s, n)
	default:
		c.v = growSlice(c.v, n)
	}
}

func (c *cellCol) set(g int32, x cell) {
	c.null.set(g, x.null)
	switch c.st {
	case stInt, stFloat, stBool:
		c.a[g] = x.a
	case stInterval:
		c.a[g], c.b[g] = x.a, x.b
	case stNumeric:
		c.wide.set(g, x.wide)
		c.s[g] = x.s
		if x.wide {
			if c.a == nil {
				c.a, c.b = make([]int64, c.n), make([]int64, c.n)
			}
			c.a[g], c.b[g] = x.a, x.b
		}
	case stStr, stBytes:
		c.s[g] = x.s
	default:
		c.v[g] = x.v
	}
}

func (c *cellCol) get(g int32) cell {
	if c.null.get(g) {
		return nullCell
	}
	switch c.st {
	case stInt, stFloat, stBool:
		return cell{a: c.a[g]}
	case stInterval:
		return cell{a: c.a[g], b: c.b[g]}
	case stNumeric:
		if c.wide.get(g) {
			return cell{wide: true, a: c.a[g], b: c.b[g]}
		}
		return cell{s: c.s[g]}
	case stStr, stBytes:
		return cell{s: c.s[g]}
	}
	return cell{v: c.v[g]}
}

// clear drops group g's value (so the garbage collector can take it).
func (c *cellCol) clear(g int32) { c.set(g, nullCell) }

// growSlice extends s with zero values to length n.
func growSlice[T any](s []T, n int) []T {
	if n <= len(s) {
		return s
	}
	if n <= cap(s) {
		return s[:n]
	}
	ns := make([]T, n, max(n, 2*len(s)))
	copy(ns, s)
	return ns
}

// bitmap is a growable set of bits: small enough to stay in cache for a
// million groups.
type bitmap []uint64

func (m *bitmap) grow(n int) { *m = growSlice(*m, (n+63)/64) }

func (m bitmap) get(i int32) bool { return m[i>>6]&(1<<(i&63)) != 0 }

func (m bitmap) set(i int32, v bool) {
	if v {
		m[i>>6] |= 1 << (i & 63)
	} else {
		m[i>>6] &^= 1 << (i & 63)
	}
}

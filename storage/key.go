package storage

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/types"
)

// Primary key encoding. A key is the concatenation of its columns' encodings;
// two keys encode to the same bytes exactly when PostgreSQL's equality
// operator for the column types says they are equal:
//
//   - integers and oids: 8 bytes; floats: 8 bytes with -0 folded into 0 and one NaN
//     (PostgreSQL's float equality treats NaN as equal to NaN);
//   - numeric: its text with trailing fractional zeros removed (1.50 = 1.5);
//   - text-like and bytea: length-prefixed bytes; character(n) ignores trailing spaces;
//   - date/time/timestamp: 8 bytes; interval: days and microseconds after folding
//     months into 30 days and whole days out of the microseconds (1 mon = 30 days);
//   - arrays: element count then each element (null flag + encoding).
//
// keyAt reads a value from an Arrow array and keyValue from a Go value
// (types.Value); they produce identical bytes for equal values.

func appendUint64(dst []byte, v uint64) []byte { return binary.BigEndian.AppendUint64(dst, v) }

func appendKeyBytes(dst []byte, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

func appendKeyString(dst []byte, s string, t types.T) []byte {
	switch t.Kind {
	case types.Bpchar:
		s = strings.TrimRight(s, " ")
	case types.Numeric:
		s = normalizeNumeric(s)
	}
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// normalizeNumeric removes trailing fractional zeros and the sign of zero.
func normalizeNumeric(s string) string {
	if strings.IndexByte(s, '.') >= 0 && !strings.ContainsAny(s, "eE") {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

func appendKeyFloat(dst []byte, f float64) []byte {
	switch {
	case f == 0:
		f = 0
	case math.IsNaN(f):
		f = math.NaN()
	}
	return appendUint64(dst, math.Float64bits(f))
}

const microsPerDay = 86400 * 1000000

func appendKeyInterval(dst []byte, months, days int32, micros int64) []byte {
	totalDays := int64(months)*30 + int64(days)
	whole := micros / microsPerDay
	rest := micros % microsPerDay
	if rest < 0 {
		whole--
		rest += microsPerDay
	}
	dst = appendUint64(dst, uint64(totalDays+whole))
	return appendUint64(dst, uint64(rest))
}

// keyAt appends the key encoding of row i of a (storage of t; not null).
func keyAt(dst []byte, a arrow.Array, i int, t types.T) []byte {
	switch a := a.(type) {
	case *array.Boolean:
		if a.Value(i) {
			return append(dst, 1)
		}
		return append(dst, 0)
	case *array.Int16:
		return appendUint64(dst, uint64(a.Value(i)))
	case *array.Int32:
		return appendUint64(dst, uint64(a.Value(i)))
	case *array.Int64:
		return appendUint64(dst, uint64(a.Value(i)))
	case *array.Uint32:
		return appendUint64(dst, uint64(a.Value(i)))
	case *array.Float32:
		return appendKeyFloat(dst, float64(a.Value(i)))
	case *array.Float64:
		return appendKeyFloat(dst, a.Value(i))
	case *array.String:
		return appendKeyString(dst, a.Value(i), t)
	case *array.Binary:
		return appendKeyBytes(dst, a.Value(i))
	case *array.Date32:
		return appendUint64(dst, uint64(int64(a.Value(i))))
	case *array.Time64:
		return appendUint64(dst, uint64(a.Value(i)))
	case *array.Timestamp:
		return appendUint64(dst, uint64(a.Value(i)))
	case *array.MonthDayNanoInterval:
		v := a.Value(i)
		return appendKeyInterval(dst, v.Months, v.Days, v.Nanoseconds) // µs (types.IntervalToArrow)
	case *array.List:
		start, end := a.ValueOffsets(i)
		dst = binary.AppendUvarint(dst, uint64(end-start))
		child := a.ListValues()
		for j := int(start); j < int(end); j++ {
			if child.IsNull(j) {
				dst = append(dst, 0)
				continue
			}
			dst = append(dst, 1)
			dst = keyAt(dst, child, j, *t.Elem)
		}
		return dst
	}
	return dst
}

// keyValue appends the key encoding of a Go value of type t (non-nil).
func keyValue(dst []byte, v types.Value, t types.T) ([]byte, error) {
	switch t.Kind {
	case types.Bool:
		if b, ok := v.(bool); ok {
			if b {
				return append(dst, 1), nil
			}
			return append(dst, 0), nil
		}
	case types.Int2, types.Int4, types.Int8, types.Oid, types.RegClass, types.RegType, types.RegProc:
		switch x := v.(type) {
		case int64:
			return appendUint64(dst, uint64(x)), nil
		case int:
			return appendUint64(dst, uint64(x)), nil
		case int32:
			return appendUint64(dst, uint64(x)), nil
		}
	case types.Float4, types.Float8, types.Enum: // an enum is its float64 sort position
		if f, ok := v.(float64); ok {
			if t.Kind == types.Float4 {
				f = float64(float32(f))
			}
			return appendKeyFloat(dst, f), nil
		}
	case types.Numeric:
		switch x := v.(type) {
		case *apd.Decimal:
			return appendKeyString(dst, x.Text('f'), t), nil
		case string:
			return appendKeyString(dst, x, t), nil
		}
	case types.Bytea:
		if b, ok := v.([]byte); ok {
			return appendKeyBytes(dst, b), nil
		}
	case types.Date:
		if d, ok := v.(types.DateValue); ok {
			return appendUint64(dst, uint64(int64(d))), nil
		}
	case types.Time:
		if d, ok := v.(types.TimeValue); ok {
			return appendUint64(dst, uint64(d)), nil
		}
	case types.Timestamp, types.TimestampTZ:
		if d, ok := v.(types.TimestampValue); ok {
			return appendUint64(dst, uint64(d)), nil
		}
	case types.Interval:
		if d, ok := v.(types.IntervalValue); ok {
			return appendKeyInterval(dst, d.Months, d.Days, d.Micros), nil
		}
	case types.Array:
		if elems, ok := v.([]types.Value); ok {
			dst = binary.AppendUvarint(dst, uint64(len(elems)))
			for _, e := range elems {
				if e == nil {
					dst = append(dst, 0)
					continue
				}
				dst = append(dst, 1)
				var err error
				if dst, err = keyValue(dst, e, *t.Elem); err != nil {
					return nil, err
				}
			}
			return dst, nil
		}
	default: // text-like kinds
		if s, ok := v.(string); ok {
			return appendKeyString(dst, s, t), nil
		}
	}
	return nil, fmt.Errorf("storage: key value %T does not fit type %s", v, t)
}

// intKeyAt reads an integer-kind key column as int64.
func intKeyAt(a arrow.Array, i int) int64 {
	switch a := a.(type) {
	case *array.Int16:
		return int64(a.Value(i))
	case *array.Int32:
		return int64(a.Value(i))
	case *array.Int64:
		return a.Value(i)
	case *array.Uint32:
		return int64(a.Value(i))
	}
	return 0
}

// isIntKind reports the kinds whose keys fit the int64 fast path.
func isIntKind(t types.T) bool {
	switch t.Kind {
	case types.Int2, types.Int4, types.Int8, types.Oid, types.RegClass, types.RegType, types.RegProc:
		return true
	}
	return false
}

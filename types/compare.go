package types

import (
	"bytes"
	"math"
	"strings"

	"github.com/cockroachdb/apd/v3"
)

// Compare orders two non-NULL values of type t as PostgreSQL does: text in
// byte order (the C collation), char(n) ignoring trailing spaces, NaN above
// every other float or numeric and equal to itself, intervals by their
// 30-day-month span, arrays element by element (NULL elements last) then by
// length, jsonb by PostgreSQL's jsonb ordering. Returns -1, 0 or +1.
func Compare(a, b Value, t T) int {
	switch t.Kind {
	case Bool:
		x, y := a.(bool), b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case Int2, Int4, Int8, Oid, RegClass, RegType, RegProc:
		x, _ := asInt64(a)
		y, _ := asInt64(b)
		return cmpInt(x, y)
	case Float4, Float8, Enum:
		return CompareFloat(toFloat(a), toFloat(b))
	case Numeric:
		return compareNumeric(toDecimal(a), toDecimal(b))
	case Bytea:
		return bytes.Compare(a.([]byte), b.([]byte))
	case Date:
		return cmpInt(int64(a.(DateValue)), int64(b.(DateValue)))
	case Time:
		return cmpInt(int64(a.(TimeValue)), int64(b.(TimeValue)))
	case Timestamp, TimestampTZ:
		return cmpInt(int64(a.(TimestampValue)), int64(b.(TimestampValue)))
	case Interval:
		return CompareInterval(a.(IntervalValue), b.(IntervalValue))
	case Bpchar:
		return strings.Compare(strings.TrimRight(a.(string), " "), strings.TrimRight(b.(string), " "))
	case JSONB:
		return compareJSONB(a.(string), b.(string))
	case Array:
		return CompareSeq(a.([]Value), b.([]Value), func(_ int, ex, ey Value) int {
			if sx, ok := ex.([]Value); ok {
				return Compare(sx, ey, t)
			}
			return Compare(ex, ey, *t.Elem)
		})
	case Record:
		return CompareRecords(a.(RowValue), b.(RowValue), t, Compare)
	case Void:
		return 0
	}
	return strings.Compare(a.(string), b.(string))
}

func cmpInt(x, y int64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// CompareFloat orders floats as PostgreSQL does: NaN equals NaN and sorts
// above everything, including Infinity; -0 equals 0.
func CompareFloat(x, y float64) int {
	xn, yn := math.IsNaN(x), math.IsNaN(y)
	switch {
	case xn && yn:
		return 0
	case xn:
		return 1
	case yn:
		return -1
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func toFloat(v Value) float64 {
	switch f := v.(type) {
	case float64:
		return f
	case float32:
		return float64(f)
	}
	return math.NaN()
}

func toDecimal(v Value) *apd.Decimal {
	switch d := v.(type) {
	case *apd.Decimal:
		return d
	case apd.Decimal:
		return &d
	case int64:
		return apd.New(d, 0)
	}
	return &apd.Decimal{Form: apd.NaN}
}

// compareNumeric orders numerics: NaN above everything (equal to NaN),
// -Infinity < finite < Infinity.
func compareNumeric(x, y *apd.Decimal) int {
	xn := x.Form == apd.NaN || x.Form == apd.NaNSignaling
	yn := y.Form == apd.NaN || y.Form == apd.NaNSignaling
	switch {
	case xn && yn:
		return 0
	case xn:
		return 1
	case yn:
		return -1
	}
	return x.Cmp(y)
}

// CompareInterval orders intervals as PostgreSQL does: by their span with
// a month counted as 30 days, so '1 month' = '30 days' and '1 day' = '24 hours'.
func CompareInterval(x, y IntervalValue) int {
	dx, rx := intervalSpan(x)
	dy, ry := intervalSpan(y)
	if c := cmpInt(dx, dy); c != 0 {
		return c
	}
	return cmpInt(rx, ry)
}

// intervalSpan returns the interval as whole days plus microseconds in [0, 1 day).
func intervalSpan(v IntervalValue) (days, rem int64) {
	d, r := floorDiv(v.Micros, usPerDay)
	return int64(v.Months)*30 + int64(v.Days) + d, r
}

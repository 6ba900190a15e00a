package expr

import (
	"bytes"
	"cmp"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/types"
)

// Comparison operators (= <> < <= > >=) for every type. Fixed-width types
// compare straight from their buffers; text compares bytes (the C
// collation); floats order NaN above everything and equal to itself, as
// PostgreSQL does.

var cmpOps = []string{"=", "<>", "<", "<=", ">", ">="}

// cmpTest turns a three-way result into the operator's truth value.
func cmpTest(op string, c int) bool {
	switch op {
	case "=":
		return c == 0
	case "<>":
		return c != 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	}
	return c >= 0
}

// ordCompare compares ordered fixed-width values.
func ordCompare[T int16 | int32 | int64 | uint32](op string) kernel {
	return func(_ *Context, args []arrow.Array, n int) (arrow.Array, error) {
		x, y := vals[T](args[0]), vals[T](args[1])
		bits := newBits(n)
		switch op {
		case "=":
			for i := 0; i < n; i++ {
				if x[i] == y[i] {
					bits[i>>3] |= 1 << (i & 7)
				}
			}
		case "<>":
			for i := 0; i < n; i++ {
				if x[i] != y[i] {
					bits[i>>3] |= 1 << (i & 7)
				}
			}
		case "<":
			for i := 0; i < n; i++ {
				if x[i] < y[i] {
					bits[i>>3] |= 1 << (i & 7)
				}
			}
		case "<=":
			for i := 0; i < n; i++ {
				if x[i] <= y[i] {
					bits[i>>3] |= 1 << (i & 7)
				}
			}
		case ">":
			for i := 0; i < n; i++ {
				if x[i] > y[i] {
					bits[i>>3] |= 1 << (i & 7)
				}
			}
		case ">=":
			for i := 0; i < n; i++ {
				if x[i] >= y[i] {
					bits[i>>3] |= 1 << (i & 7)
				}
			}
		}
		return makeBool(n, bits, andValidity(n, args[0], args[1])), nil
	}
}

// floatCmp is PostgreSQL's float comparison: NaN = NaN, NaN > any number.
func floatCmp(a, b float64) int {
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func floatCompare[T float](op string) kernel {
	return func(_ *Context, args []arrow.Array, n int) (arrow.Array, error) {
		x, y := vals[T](args[0]), vals[T](args[1])
		bits := newBits(n)
		for i := 0; i < n; i++ {
			if cmpTest(op, floatCmp(float64(x[i]), float64(y[i]))) {
				bits[i>>3] |= 1 << (i & 7)
			}
		}
		return makeBool(n, bits, andValidity(n, args[0], args[1])), nil
	}
}

// stringCompare compares string storages byte-wise; bpchar ignores
// trailing spaces.
func stringCompare(op string, bpchar bool) kernel {
	return func(_ *Context, args []arrow.Array, n int) (arrow.Array, error) {
		x, y := args[0].(*array.String), args[1].(*array.String)
		bits := newBits(n)
		bm := andValidity(n, args[0], args[1])
		if !bpchar && (op == "=" || op == "<>") {
			// equality: lengths from the offsets first, then the bytes.
			// ValueBytes starts at the first row's offset (the array may be
			// a slice), ValueOffsets are absolute: rebase them.
			xo, yo := x.ValueOffsets(), y.ValueOffsets()
			xb, yb := x.ValueBytes(), y.ValueBytes()
			xbase, ybase := xo[0], yo[0]
			want := op == "="
			for i := 0; i < n; i++ {
				eq := xo[i+1]-xo[i] == yo[i+1]-yo[i] &&
					bytes.Equal(xb[xo[i]-xbase:xo[i+1]-xbase], yb[yo[i]-ybase:yo[i+1]-ybase])
				if eq == want {
					bits[i>>3] |= 1 << (i & 7)
				}
			}
			return makeBool(n, bits, bm), nil
		}
		for i := 0; i < n; i++ {
			a, b := x.Value(i), y.Value(i)
			if bpchar {
				a, b = strings.TrimRight(a, " "), strings.TrimRight(b, " ")
			}
			var ok bool
			switch op {
			case "=":
				ok = a == b
			case "<>":
				ok = a != b
			default:
				ok = cmpTest(op, strings.Compare(a, b))
			}
			if ok {
				bits[i>>3] |= 1 << (i & 7)
			}
		}
		return makeBool(n, bits, bm), nil
	}
}

// valueCompare compares any type row by row with compareValues.
func valueCompare(op string, t types.T) kernel {
	return func(_ *Context, args []arrow.Array, n int) (arrow.Array, error) {
		bits := newBits(n)
		bm := andValidity(n, args[0], args[1])
		for i := 0; i < n; i++ {
			if !isValid(bm, i) {
				continue
			}
			if cmpTest(op, compareValues(valueAt(args[0], i, t), valueAt(args[1], i, t), t)) {
				bits[i>>3] |= 1 << (i & 7)
			}
		}
		return makeBool(n, bits, bm), nil
	}
}

// compareValues orders two non-NULL values of type t as PostgreSQL does.
func compareValues(a, b types.Value, t types.T) int {
	switch x := a.(type) {
	case int64:
		return cmp.Compare(x, b.(int64))
	case float64:
		return floatCmp(x, b.(float64))
	case bool:
		y := b.(bool)
		if x == y {
			return 0
		}
		if !x {
			return -1
		}
		return 1
	case string:
		y := b.(string)
		if t.Kind == types.Bpchar {
			x, y = strings.TrimRight(x, " "), strings.TrimRight(y, " ")
		}
		if t.Kind == types.JSONB {
			return compareJSONB(x, y)
		}
		return strings.Compare(x, y)
	case []byte:
		return bytes.Compare(x, b.([]byte))
	case *apd.Decimal:
		return compareNumeric(x, b.(*apd.Decimal))
	case types.DateValue:
		return cmp.Compare(x, b.(types.DateValue))
	case types.TimeValue:
		return cmp.Compare(x, b.(types.TimeValue))
	case types.TimestampValue:
		return cmp.Compare(x, b.(types.TimestampValue))
	case types.IntervalValue:
		return types.CompareInterval(x, b.(types.IntervalValue))
	case []types.Value:
		return types.CompareSeq(x, b.([]types.Value), func(_ int, p, q types.Value) int { return compareValues(p, q, *t.Elem) })
	case types.RowValue:
		return types.CompareRecords(x, b.(types.RowValue), t, compareValues)
	}
	return 0
}

// numericCompare compares numerics straight from their canonical text
// (plain decimals compare digit by digit, without parsing into apd); a
// value in any other form (NaN, Infinity, an exponent) goes through apd.
func numericCompare(op string) kernel {
	return func(_ *Context, args []arrow.Array, n int) (arrow.Array, error) {
		x, y := args[0].(*array.String), args[1].(*array.String)
		bits := newBits(n)
		bm := andValidity(n, args[0], args[1])
		for i := 0; i < n; i++ {
			if !isValid(bm, i) {
				continue
			}
			a, b := x.Value(i), y.Value(i)
			c, ok := comparePlainDecimals(a, b)
			if !ok {
				c = compareValues(valueAt(args[0], i, types.TNumeric), valueAt(args[1], i, types.TNumeric), types.TNumeric)
			}
			if cmpTest(op, c) {
				bits[i>>3] |= 1 << (i & 7)
			}
		}
		return makeBool(n, bits, bm), nil
	}
}

// plainDecimal splits s, of the form -?[0-9]+(\.[0-9]+)?, into its sign
// and its integer digits without leading zeros and fraction digits without
// trailing zeros (zero is never negative); ok is false for any other form.
func plainDecimal(s string) (neg bool, whole, frac string, ok bool) {
	if s != "" && s[0] == '-' {
		neg, s = true, s[1:]
	}
	dot := len(s)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '.' && dot == len(s) && i > 0 && i < len(s)-1 {
			dot = i
			continue
		}
		if c < '0' || c > '9' {
			return false, "", "", false
		}
	}
	if dot == 0 {
		return false, "", "", false
	}
	whole = strings.TrimLeft(s[:dot], "0")
	if dot < len(s) {
		frac = strings.TrimRight(s[dot+1:], "0")
	}
	if whole == "" && frac == "" {
		neg = false
	}
	return neg, whole, frac, true
}

// comparePlainDecimals orders two numerics in plain decimal text as
// compareNumeric orders their values; ok is false when either is in
// another form.
func comparePlainDecimals(a, b string) (int, bool) {
	an, aw, af, ok := plainDecimal(a)
	if !ok {
		return 0, false
	}
	bn, bw, bf, ok := plainDecimal(b)
	if !ok {
		return 0, false
	}
	if an != bn {
		if an {
			return -1, true
		}
		return 1, true
	}
	c := cmp.Compare(len(aw), len(bw))
	if c == 0 {
		c = strings.Compare(aw, bw)
	}
	if c == 0 {
		c = strings.Compare(af, bf)
	}
	if an {
		c = -c
	}
	return c, true
}

// compareNumeric orders numerics with NaN above everything (PostgreSQL).
func compareNumeric(a, b *apd.Decimal) int {
	an, bn := a.Form == apd.NaN || a.Form == apd.NaNSignaling, b.Form == apd.NaN || b.Form == apd.NaNSignaling
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	return a.Cmp(b)
}

func init() {
	ord := func(t types.T, k func(op string) kernel) {
		for _, op := range cmpOps {
			register(&Func{Name: op, Args: []types.T{t, t}, Return: types.TBool, Strict: true, Kernel: k(op)})
		}
	}
	ord(types.TInt2, ordCompare[int16])
	ord(types.TInt4, ordCompare[int32])
	ord(types.TInt8, ordCompare[int64])
	ord(types.TOid, ordCompare[uint32])
	ord(types.TDate, ordCompare[int32])
	ord(types.TTime, ordCompare[int64])
	ord(types.TTimestamp, ordCompare[int64])
	ord(types.TTimestampTZ, ordCompare[int64])
	ord(types.TFloat4, floatCompare[float32])
	ord(types.TFloat8, floatCompare[float64])
	ord(types.TText, func(op string) kernel { return stringCompare(op, false) })
	ord(types.TName, func(op string) kernel { return stringCompare(op, false) })
	ord(types.TChar, func(op string) kernel { return stringCompare(op, false) })
	ord(types.TBpchar, func(op string) kernel { return stringCompare(op, true) })
	// a uuid's canonical text orders as its bytes (types/uuid.go)
	ord(types.TUUID, func(op string) kernel { return stringCompare(op, false) })
	ord(types.TNumeric, numericCompare)
	for _, t := range []types.T{types.TBool, types.TBytea, types.TInterval, types.TJSONB} {
		t := t
		ord(t, func(op string) kernel { return valueCompare(op, t) })
	}
}

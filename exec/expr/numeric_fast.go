package expr

import (
	"math"
	"math/bits"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/pgerr"
)

// Numeric +, - and * on small values without apd: a numeric value is its
// text (numeric_out's plain notation), and most values in practice have at
// most 18 digits, so they fit an int64 coefficient and a scale. Rows whose
// operands or result do not fit take the apd path (numericOp), so results
// are always the same text: + and - keep the larger scale, * adds them.

// smallDec is coef / 10^scale.
type smallDec struct {
	coef  int64
	scale int32
}

// maxSmallDigits bounds the digits of a parsed smallDec (10^18 < 2^63).
const maxSmallDigits = 18

// parseSmallDec parses "[-]digits[.digits]" with at most maxSmallDigits
// digits; ok is false for anything else (NaN, Infinity, longer values).
func parseSmallDec(s string) (d smallDec, ok bool) {
	i, neg := 0, false
	if len(s) > 0 && s[0] == '-' {
		i, neg = 1, true
	}
	var c uint64
	digits, scale := 0, int32(-1)
	for ; i < len(s); i++ {
		ch := s[i]
		if ch == '.' {
			if scale >= 0 {
				return d, false
			}
			scale = 0
			continue
		}
		if ch < '0' || ch > '9' {
			return d, false
		}
		c = c*10 + uint64(ch-'0')
		if digits++; digits > maxSmallDigits {
			return d, false
		}
		if scale >= 0 {
			scale++
		}
	}
	if digits == 0 || scale == 0 {
		return d, false
	}
	d.coef, d.scale = int64(c), max(scale, 0)
	if neg {
		d.coef = -d.coef
	}
	return d, true
}

var pow10 = func() (p [19]int64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return
}()

// rescale returns d with the larger scale s, if the coefficient still fits.
func rescale(d smallDec, s int32) (smallDec, bool) {
	k := s - d.scale
	if k == 0 {
		return d, true
	}
	if k > maxSmallDigits {
		return d, false
	}
	m := pow10[k]
	if d.coef > math.MaxInt64/m || d.coef < -math.MaxInt64/m {
		return d, false
	}
	return smallDec{d.coef * m, s}, true
}

// smallOp computes x op y for op in + - *; ok is false on overflow.
func smallOp(op byte, x, y smallDec) (smallDec, bool) {
	switch op {
	case '*':
		ax, ay := uint64(x.coef), uint64(y.coef)
		neg := false
		if x.coef < 0 {
			ax, neg = uint64(-x.coef), true
		}
		if y.coef < 0 {
			ay, neg = uint64(-y.coef), !neg
		}
		hi, lo := bits.Mul64(ax, ay)
		if hi != 0 || lo > math.MaxInt64 {
			return smallDec{}, false
		}
		c := int64(lo)
		if neg {
			c = -c
		}
		return smallDec{c, x.scale + y.scale}, true
	case '-':
		y.coef = -y.coef
		fallthrough
	case '+':
		s := max(x.scale, y.scale)
		var ok bool
		if x, ok = rescale(x, s); !ok {
			return smallDec{}, false
		}
		if y, ok = rescale(y, s); !ok {
			return smallDec{}, false
		}
		r := x.coef + y.coef // wraps on overflow: both operands have one sign and r the other
		if (x.coef >= 0) == (y.coef >= 0) && (r >= 0) != (x.coef >= 0) {
			return smallDec{}, false
		}
		return smallDec{r, s}, true
	}
	return smallDec{}, false
}

// appendSmallDec appends numeric_out's text of d: plain, with d.scale
// digits after the point.
func appendSmallDec(dst []byte, d smallDec) []byte {
	u := uint64(d.coef)
	if d.coef < 0 {
		dst = append(dst, '-')
		u = uint64(-d.coef)
	}
	var buf [20]byte
	digits := strconv.AppendUint(buf[:0], u, 10)
	s := int(d.scale)
	if s == 0 {
		return append(dst, digits...)
	}
	if len(digits) <= s {
		dst = append(dst, '0', '.')
		for k := len(digits); k < s; k++ {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	dst = append(dst, digits[:len(digits)-s]...)
	dst = append(dst, '.')
	return append(dst, digits[len(digits)-s:]...)
}

// numericBinarySmall computes x op y (+ - *) row by row into a numeric
// (text) array, in int64 arithmetic where the values allow and with apd
// elsewhere. A run of equal operand texts (a constant) is parsed once.
func numericBinarySmall(op byte, xa, ya *array.String, n int) (arrow.Array, error) {
	bm := andValidity(n, xa, ya)
	offs := make([]int32, n+1)
	// A result has at most the digits of both operands, a sign and a point.
	data := make([]byte, 0, textBytes(xa)+textBytes(ya)+2*n)
	var (
		px, py       string
		dx, dy       smallDec
		okx, oky     bool
		seenx, seeny bool
	)
	for i := 0; i < n; i++ {
		if !isValid(bm, i) {
			offs[i+1] = int32(len(data))
			continue
		}
		xs, ys := xa.Value(i), ya.Value(i)
		if !seenx || xs != px {
			px, seenx = xs, true
			dx, okx = parseSmallDec(xs)
		}
		if !seeny || ys != py {
			py, seeny = ys, true
			dy, oky = parseSmallDec(ys)
		}
		var r smallDec
		ok := okx && oky
		if ok {
			r, ok = smallOp(op, dx, dy)
		}
		if ok {
			data = appendSmallDec(data, r)
		} else {
			x, err := parseNumeric(xs)
			if err != nil {
				return nil, err
			}
			y, err := parseNumeric(ys)
			if err != nil {
				return nil, err
			}
			d, err := numericOp(op, x, y)
			if err != nil {
				return nil, err
			}
			data = append(data, numericString(d)...)
		}
		if len(data) > math.MaxInt32 {
			return nil, pgerr.New(pgerr.ProgramLimitExceeded, "numeric results of one batch exceed 2 GB")
		}
		offs[i+1] = int32(len(data))
	}
	nc := nullCount(bm, n)
	var vb *memory.Buffer
	if nc > 0 {
		vb = memory.NewBufferBytes(bm)
	}
	d := array.NewData(arrow.BinaryTypes.String, n, []*memory.Buffer{vb,
		memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offs)), memory.NewBufferBytes(data)}, nil, nc, 0)
	defer d.Release()
	return array.MakeFromData(d), nil
}

// textBytes is the size of a string array's values.
func textBytes(a *array.String) int {
	offs := a.ValueOffsets()
	if len(offs) == 0 {
		return 0
	}
	return int(offs[len(offs)-1] - offs[0])
}

// intsToText returns the decimal texts of iv as a String array (text and
// numeric storage) with validity bm (nil: all valid).
func intsToText(iv []int64, bm []byte) arrow.Array {
	n := len(iv)
	offs := make([]int32, n+1)
	data := make([]byte, 0, 8*n)
	for i, x := range iv {
		if isValid(bm, i) {
			data = strconv.AppendInt(data, x, 10)
		}
		offs[i+1] = int32(len(data)) // at most 20 bytes a row; batches hold far fewer than 100M rows
	}
	nc := nullCount(bm, n)
	var vb *memory.Buffer
	if nc > 0 {
		vb = memory.NewBufferBytes(bm)
	}
	d := array.NewData(arrow.BinaryTypes.String, n, []*memory.Buffer{vb,
		memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offs)), memory.NewBufferBytes(data)}, nil, nc, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

package types

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/pgerr"
)

// appendFloat appends float4out/float8out's text. With extra_float_digits > 0
// (the default 1) it is the shortest text that reads back exactly, in %e style
// when the decimal exponent is < -4 or >= 15 (6 for real); otherwise %.*g with
// 15 (6) + extra_float_digits significant digits.
func appendFloat(dst []byte, f float64, bits int, extra int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	}
	digs := 15
	if bits == 32 {
		digs = 6
	}
	if extra <= 0 {
		p := digs + extra
		if p < 1 {
			p = 1
		}
		return strconv.AppendFloat(dst, f, 'g', p, bits)
	}
	// The shortest digits of f have a decimal exponent in [-4, 15) (real:
	// [-4, 6)) exactly when f is in [1e-4, 1e15) as a float: rounding is
	// monotonic, so the thresholds carry over from the digits to the floats.
	a := math.Abs(f)
	if bits == 64 {
		if a >= 1e-4 && a < 1e15 {
			return strconv.AppendFloat(dst, f, 'f', -1, 64)
		}
	} else if a >= float64(float32(1e-4)) && a < 1e6 {
		return strconv.AppendFloat(dst, f, 'f', -1, 32)
	}
	if f == 0 {
		if math.Signbit(f) {
			return append(dst, "-0"...)
		}
		return append(dst, '0')
	}
	// %e style: Go's shortest 'e' output has C's layout (1e+20, 1.5e-07).
	n := len(dst)
	dst = strconv.AppendFloat(dst, f, 'e', -1, bits)
	if onRoundingBoundary(f, bits, dst[n:]) {
		dst = shortestInside(dst[:n], f, bits)
	}
	return dst
}

// onRoundingBoundary reports whether the shortest text s of f lies exactly
// halfway to a neighbouring float. Go's shortest output accepts such a
// text when f's mantissa is even (it reads back by ties-to-even), while
// PostgreSQL's Ryu excludes the bounds. Only floats of magnitude >= 2^53
// (2^24 for real) can have a short halfway text, so others are not checked.
func onRoundingBoundary(f float64, bits int, s []byte) bool {
	a := math.Abs(f)
	if bits == 64 {
		if a < 1<<53 || math.Float64bits(a)&1 != 0 {
			return false
		}
	} else if a < 1<<24 || math.Float32bits(float32(a))&1 != 0 {
		return false
	}
	r, ok := new(big.Rat).SetString(string(s))
	if !ok {
		return false
	}
	r.Abs(r)
	return r.Cmp(midpoint(a, bits, true)) == 0 || r.Cmp(midpoint(a, bits, false)) == 0
}

func midpoint(a float64, bits int, up bool) *big.Rat {
	var n float64
	if bits == 64 {
		if up {
			n = math.Nextafter(a, math.Inf(1))
		} else {
			n = math.Nextafter(a, 0)
		}
	} else {
		if up {
			n = float64(math.Nextafter32(float32(a), float32(math.Inf(1))))
		} else {
			n = float64(math.Nextafter32(float32(a), 0))
		}
	}
	if math.IsInf(n, 0) {
		n = a * 2 // no neighbour: any text reads back
	}
	m := new(big.Rat).SetFloat64(a)
	m.Add(m, new(big.Rat).SetFloat64(n))
	return m.Quo(m, big.NewRat(2, 1))
}

// shortestInside returns the shortest correctly rounded %e text of f that
// lies strictly inside f's rounding interval.
func shortestInside(dst []byte, f float64, bits int) []byte {
	maxDigits := 17
	if bits == 32 {
		maxDigits = 9
	}
	n := len(dst)
	for d := 1; d <= maxDigits; d++ {
		dst = strconv.AppendFloat(dst[:n], f, 'e', d-1, bits)
		back, err := strconv.ParseFloat(string(dst[n:]), bits)
		if err == nil && back == f && !onRoundingBoundary(f, bits, dst[n:]) {
			return dst
		}
	}
	return strconv.AppendFloat(dst[:n], f, 'e', maxDigits-1, bits)
}

// nan is the NaN PostgreSQL produces and sends (C's NAN).
var nan = math.Float64frombits(0x7ff8000000000000)

// parseFloat parses float4in/float8in's syntax.
func parseFloat(s string, bits int) (float64, error) {
	name := "double precision"
	if bits == 32 {
		name = "real"
	}
	t := strings.Trim(s, " \t\n\r\v\f")
	body := t
	neg := false
	if len(body) > 0 && (body[0] == '+' || body[0] == '-') {
		neg = body[0] == '-'
		body = body[1:]
	}
	switch strings.ToLower(body) {
	case "nan":
		if neg {
			return math.Copysign(nan, -1), nil // strtod keeps the sign
		}
		return nan, nil
	case "infinity", "inf":
		if neg {
			return math.Inf(-1), nil
		}
		return math.Inf(1), nil
	}
	if len(body) > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X') {
		return parseHexFloat(s, body, neg, bits, name)
	}
	// Validate the decimal syntax strtod accepts (no underscores).
	i, sawDigit, nonzero := 0, false, false
	for i < len(body) && body[i] >= '0' && body[i] <= '9' {
		sawDigit = true
		nonzero = nonzero || body[i] != '0'
		i++
	}
	if i < len(body) && body[i] == '.' {
		i++
		for i < len(body) && body[i] >= '0' && body[i] <= '9' {
			sawDigit = true
			nonzero = nonzero || body[i] != '0'
			i++
		}
	}
	if !sawDigit {
		return 0, pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type %s: \"%s\"", name, s)
	}
	if i < len(body) && (body[i] == 'e' || body[i] == 'E') {
		j := i + 1
		if j < len(body) && (body[j] == '+' || body[j] == '-') {
			j++
		}
		k := j
		for k < len(body) && body[k] >= '0' && body[k] <= '9' {
			k++
		}
		if k > j {
			i = k
		}
	}
	if i != len(body) {
		return 0, pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type %s: \"%s\"", name, s)
	}
	f, err := strconv.ParseFloat(t, bits)
	if err != nil && !isRangeErr(err) {
		return 0, pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type %s: \"%s\"", name, s)
	}
	if math.IsInf(f, 0) || (f == 0 && nonzero) {
		return 0, pgerr.New(pgerr.NumericValueOutOfRange, "\"%s\" is out of range for type %s", s, name)
	}
	return f, nil
}

// parseHexFloat reads C's hexadecimal floating-point syntax (0x1.8p3, 0x10),
// which PostgreSQL accepts through strtod.
func parseHexFloat(s, body string, neg bool, bits int, name string) (float64, error) {
	digits, nonzero := 0, false
	i := 2
	for i < len(body) && (isHex(body[i]) || body[i] == '.') {
		if body[i] != '.' {
			digits++
			nonzero = nonzero || body[i] != '0'
		}
		i++
	}
	if strings.Count(body[2:i], ".") > 1 || digits == 0 {
		return 0, pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type %s: \"%s\"", name, s)
	}
	text := body
	if i == len(body) {
		text += "p0"
	} else if body[i] != 'p' && body[i] != 'P' {
		return 0, pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type %s: \"%s\"", name, s)
	}
	f, err := strconv.ParseFloat(text, bits)
	if err != nil && !isRangeErr(err) {
		return 0, pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type %s: \"%s\"", name, s)
	}
	if math.IsInf(f, 0) || (f == 0 && nonzero) {
		return 0, pgerr.New(pgerr.NumericValueOutOfRange, "\"%s\" is out of range for type %s", s, name)
	}
	if neg {
		f = -f
	}
	return f, nil
}

func isHex(c byte) bool {
	_, ok := unhex(c)
	return ok
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

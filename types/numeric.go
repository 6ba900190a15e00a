package types

import (
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"
	"github.com/streamsql/streamsql/pgerr"
)

// numericCtx does numeric rounding as PostgreSQL does: half away from zero,
// with room for every digit PostgreSQL can hold.
var numericCtx = apd.Context{
	Precision:   200000,
	MaxExponent: apd.MaxExponent,
	MinExponent: apd.MinExponent,
	Rounding:    apd.RoundHalfUp,
}

// parseNumeric parses numeric_in's syntax: optional spaces and sign, digits with
// an optional point, an optional exponent, NaN, Infinity/inf; then applies the
// typmod (numeric(p,s)) when typmod >= 0.
func parseNumeric(s string, typmod int32) (*apd.Decimal, error) {
	d, ok := scanNumeric(s)
	if !ok {
		return nil, pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type numeric: \"%s\"", s)
	}
	if err := checkNumericLimits(d); err != nil {
		return nil, err
	}
	if err := applyNumericTypmod(d, typmod); err != nil {
		return nil, err
	}
	return d, nil
}

// PostgreSQL's numeric range: NumericMaxDigits digits before the point
// (a weight of 32767 base-10000 digits) and NumericDscaleMax after it
// (NUMERIC_DSCALE_MAX).
const (
	NumericMaxDigits = 131072
	NumericDscaleMax = 16383
)

// CheckNumericRange reports PostgreSQL's "value overflows numeric format"
// (22003) for a finite d outside numeric's range: more than
// NumericMaxDigits digits before the point or more than NumericDscaleMax
// after it. NaN and the infinities pass. Every place that makes a numeric
// value (input, literals, casts, operators, functions, aggregates) checks
// its result with it, since apd itself allows far larger exponents.
func CheckNumericRange(d *apd.Decimal) error { return checkNumericLimits(d) }

// checkNumericLimits is CheckNumericRange.
func checkNumericLimits(d *apd.Decimal) error {
	if d.Form != apd.Finite {
		return nil
	}
	if -int64(d.Exponent) > NumericDscaleMax {
		return pgerr.New(pgerr.NumericValueOutOfRange, "value overflows numeric format")
	}
	if d.Coeff.Sign() == 0 || MaxNumDigits(d)+int64(d.Exponent) <= NumericMaxDigits {
		return nil // the common case, without counting digits exactly
	}
	if d.NumDigits()+int64(d.Exponent) > NumericMaxDigits {
		return pgerr.New(pgerr.NumericValueOutOfRange, "value overflows numeric format")
	}
	return nil
}

// MaxNumDigits bounds the number of digits of d's coefficient from above
// (exact or one more) from its bit length: apd's NumDigits computes a power
// of ten for coefficients beyond 64 bits, which costs more than the
// arithmetic it guards.
func MaxNumDigits(d *apd.Decimal) int64 {
	return int64(float64(d.Coeff.BitLen())*0.30102999566398120) + 1
}

func scanNumeric(s string) (*apd.Decimal, bool) {
	t := strings.Trim(s, " \t\n\r\v\f")
	d := new(apd.Decimal)
	neg := false
	body := t
	if len(body) > 0 && (body[0] == '+' || body[0] == '-') {
		neg = body[0] == '-'
		body = body[1:]
	}
	switch strings.ToLower(body) {
	case "nan":
		if len(body) != len(t) {
			return nil, false
		}
		d.Form = apd.NaN
		return d, true
	case "infinity", "inf":
		d.Form = apd.Infinite
		d.Negative = neg
		return d, true
	}
	digits := make([]byte, 0, len(body))
	i, scale, sawDigit, sawPoint := 0, 0, false, false
	for ; i < len(body); i++ {
		c := body[i]
		if c >= '0' && c <= '9' {
			digits = append(digits, c)
			sawDigit = true
			if sawPoint {
				scale++
			}
		} else if c == '.' && !sawPoint {
			sawPoint = true
		} else {
			break
		}
	}
	if !sawDigit {
		return nil, false
	}
	exp := int64(0)
	if i < len(body) && (body[i] == 'e' || body[i] == 'E') {
		j := i + 1
		if j < len(body) && (body[j] == '+' || body[j] == '-') {
			j++
		}
		k := j
		for k < len(body) && body[k] >= '0' && body[k] <= '9' {
			k++
		}
		if k == j {
			return nil, false
		}
		e, err := strconv.ParseInt(body[i+1:k], 10, 64)
		if err != nil || e > 1<<30 || e < -(1<<30) {
			e = 1 << 40 // reported as overflow below
		}
		exp = e
		i = k
	}
	if i != len(body) {
		return nil, false
	}
	if _, ok := d.Coeff.SetString(string(digits), 10); !ok {
		return nil, false
	}
	// PostgreSQL's display scale: digits after the point minus the exponent,
	// never negative.
	// A positive exponent stays: 'f' output writes the zeros (dscale 0).
	e := exp - int64(scale)
	if e > 1<<31-1 || e < -(1<<31) {
		e = 1<<31 - 1
	}
	if e > 0 && d.Coeff.Sign() == 0 {
		e = 0
	}
	d.Exponent = int32(e)
	d.Negative = neg && !(d.Coeff.Sign() == 0)
	return d, true
}

// numericTypmod splits a numeric typmod into precision and scale.
func numericTypmod(typmod int32) (prec, scale int) {
	m := typmod - 4
	prec = int((m >> 16) & 0xffff)
	scale = int(((m & 0x7ff) ^ 1024) - 1024)
	return
}

// ApplyNumericTypmod rounds d in place to numeric(p,s) (s may be negative,
// or above p) and checks its magnitude, with PostgreSQL's "numeric field
// overflow" error; NaN passes, infinities do not.
func ApplyNumericTypmod(d *apd.Decimal, typmod int32) error { return applyNumericTypmod(d, typmod) }

// applyNumericTypmod rounds d to numeric(p,s) and checks its magnitude, with
// PostgreSQL's "numeric field overflow" error.
func applyNumericTypmod(d *apd.Decimal, typmod int32) error {
	if typmod < 4 {
		return nil
	}
	prec, scale := numericTypmod(typmod)
	if d.Form == apd.NaN {
		return nil
	}
	if d.Form == apd.Infinite {
		return pgerr.New(pgerr.NumericValueOutOfRange, "numeric field overflow").
			WithDetail("A field with precision %d, scale %d cannot hold an infinite value.", prec, scale)
	}
	if _, err := numericCtx.Quantize(d, d, int32(-scale)); err != nil {
		return pgerr.Wrap(err, pgerr.NumericValueOutOfRange, "numeric field overflow")
	}
	if d.Coeff.Sign() == 0 {
		d.Negative = false
	}
	maxDigits := prec - scale
	// digits before the point = number of coefficient digits + exponent
	nd := int(d.NumDigits()) + int(d.Exponent)
	if !(d.Coeff.Sign() == 0) && nd > maxDigits {
		if maxDigits != 0 {
			return pgerr.New(pgerr.NumericValueOutOfRange, "numeric field overflow").
				WithDetail("A field with precision %d, scale %d must round to an absolute value less than 10^%d.", prec, scale, maxDigits)
		}
		return pgerr.New(pgerr.NumericValueOutOfRange, "numeric field overflow").
			WithDetail("A field with precision %d, scale %d must round to an absolute value less than 1.", prec, scale)
	}
	return nil
}

// appendNumeric appends numeric_out's text: plain notation keeping the scale,
// NaN, Infinity, -Infinity.
func appendNumeric(dst []byte, d *apd.Decimal) []byte {
	switch d.Form {
	case apd.NaN, apd.NaNSignaling:
		return append(dst, "NaN"...)
	case apd.Infinite:
		if d.Negative {
			return append(dst, "-Infinity"...)
		}
		return append(dst, "Infinity"...)
	}
	if d.Coeff.Sign() == 0 && (d.Negative || d.Exponent > 0) {
		c := *d
		c.Negative = false
		if c.Exponent > 0 {
			c.Exponent = 0
		}
		return c.Append(dst, 'f')
	}
	return d.Append(dst, 'f')
}

// Numeric binary format (numeric_send): int16 ndigits, int16 weight, uint16
// sign, uint16 dscale, then ndigits base-10000 digits.
const (
	numPos  = 0x0000
	numNeg  = 0x4000
	numNaN  = 0xC000
	numPinf = 0xD000
	numNinf = 0xF000
)

func appendNumericBinary(dst []byte, d *apd.Decimal) []byte {
	hdr := func(nd, weight int, sign, dscale uint16) {
		dst = binary.BigEndian.AppendUint16(dst, uint16(int16(nd)))
		dst = binary.BigEndian.AppendUint16(dst, uint16(int16(weight)))
		dst = binary.BigEndian.AppendUint16(dst, sign)
		dst = binary.BigEndian.AppendUint16(dst, dscale)
	}
	switch d.Form {
	case apd.NaN, apd.NaNSignaling:
		hdr(0, 0, numNaN, 0)
		return dst
	case apd.Infinite:
		// PostgreSQL sends a display scale of 32 for infinities.
		if d.Negative {
			hdr(0, 0, numNinf, 32)
		} else {
			hdr(0, 0, numPinf, 32)
		}
		return dst
	}
	dscale := 0
	if d.Exponent < 0 {
		dscale = int(-d.Exponent)
	}
	digits := d.Coeff.Append(nil, 10)
	if d.Coeff.Sign() == 0 {
		hdr(0, 0, numPos, uint16(dscale))
		return dst
	}
	// Place the decimal digits on a base-10000 grid. The value is
	// digits * 10^exp; the grid is aligned so that groups start at the point.
	exp := int(d.Exponent)
	// intDigits = number of digits before the point (may be <= 0).
	intDigits := len(digits) + exp
	// Pad on the left so that the integer part is a multiple of 4.
	lead := (4 - ((intDigits%4)+4)%4) % 4
	s := make([]byte, 0, len(digits)+8)
	for i := 0; i < lead; i++ {
		s = append(s, '0')
	}
	s = append(s, digits...)
	for i := 0; i < exp; i++ {
		s = append(s, '0')
	}
	for len(s)%4 != 0 {
		s = append(s, '0')
	}
	weight := (intDigits+lead)/4 - 1
	groups := make([]uint16, 0, len(s)/4)
	for i := 0; i < len(s); i += 4 {
		g := uint16(s[i]-'0')*1000 + uint16(s[i+1]-'0')*100 + uint16(s[i+2]-'0')*10 + uint16(s[i+3]-'0')
		groups = append(groups, g)
	}
	// strip leading and trailing zero groups
	for len(groups) > 0 && groups[0] == 0 {
		groups = groups[1:]
		weight--
	}
	for len(groups) > 0 && groups[len(groups)-1] == 0 {
		groups = groups[:len(groups)-1]
	}
	sign := uint16(numPos)
	if d.Negative {
		sign = numNeg
	}
	hdr(len(groups), weight, sign, uint16(dscale))
	for _, g := range groups {
		dst = binary.BigEndian.AppendUint16(dst, g)
	}
	return dst
}

func parseNumericBinary(b []byte) (*apd.Decimal, error) {
	if len(b) < 8 {
		return nil, errShortBinary()
	}
	nd := int(int16(binary.BigEndian.Uint16(b)))
	weight := int(int16(binary.BigEndian.Uint16(b[2:])))
	sign := binary.BigEndian.Uint16(b[4:])
	dscale := int(binary.BigEndian.Uint16(b[6:]))
	b = b[8:]
	d := new(apd.Decimal)
	switch sign {
	case numNaN:
		d.Form = apd.NaN
		return d, nil
	case numPinf:
		d.Form = apd.Infinite
		return d, nil
	case numNinf:
		d.Form = apd.Infinite
		d.Negative = true
		return d, nil
	case numPos, numNeg:
	default:
		return nil, pgerr.New(pgerr.InvalidBinaryRepresentation, "invalid sign in external \"numeric\" value")
	}
	if nd < 0 || len(b) < 2*nd {
		return nil, errShortBinary()
	}
	if dscale > 0x3FFF {
		return nil, pgerr.New(pgerr.InvalidBinaryRepresentation, "invalid scale in external \"numeric\" value")
	}
	buf := make([]byte, 0, 4*nd+4)
	for i := 0; i < nd; i++ {
		g := binary.BigEndian.Uint16(b[2*i:])
		if g >= 10000 {
			return nil, pgerr.New(pgerr.InvalidBinaryRepresentation, "invalid digit in external \"numeric\" value")
		}
		buf = append(buf, byte('0'+g/1000), byte('0'+g/100%10), byte('0'+g/10%10), byte('0'+g%10))
	}
	if nd == 0 {
		buf = append(buf, '0')
		d.Coeff.SetInt64(0)
		d.Exponent = int32(-dscale)
		return d, nil
	}
	// value = 0.buf * 10^(4*(weight+1))
	exp := 4*(weight+1) - len(buf)
	d.Coeff.SetString(string(buf), 10)
	d.Exponent = int32(exp)
	d.Negative = sign == numNeg
	// Adjust to the display scale: round (PostgreSQL does) or pad.
	if _, err := numericCtx.Quantize(d, d, int32(-dscale)); err != nil {
		return nil, pgerr.Wrap(err, pgerr.InvalidBinaryRepresentation, "invalid external \"numeric\" value")
	}
	return d, nil
}

package exec

import (
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/cockroachdb/apd/v3"
)

// Numeric helpers for aggregates and comparisons. numeric values are stored
// as their canonical text (types/arrow.go); aggregates compute with apd.

// parseNumeric parses a stored numeric; NaN is reported separately because
// PostgreSQL orders it above every number and treats NaN = NaN.
func parseNumeric(s string, d *apd.Decimal) (nan bool) {
	if s == "NaN" {
		return true
	}
	if _, _, err := d.SetString(s); err != nil {
		return true
	}
	return d.Form == apd.NaN
}

// numericText renders d as PostgreSQL prints numeric (plain notation, its
// scale kept, no negative zero).
func numericText(d *apd.Decimal) string {
	if d.Form == apd.NaN {
		return "NaN"
	}
	if d.IsZero() {
		d.Negative = false
	}
	return d.Text('f')
}

// numericScale is the display scale of d (digits after the decimal point).
func numericScale(d *apd.Decimal) int32 {
	if d.Exponent < 0 {
		return -d.Exponent
	}
	return 0
}

// numericKey normalizes a stored numeric for hashing: equal values (1.0 and
// 1.00) give equal keys.
func numericKey(s string) string {
	if strings.IndexByte(s, '.') < 0 {
		if s == "-0" {
			return "0"
		}
		return s
	}
	s = strings.TrimRight(s, "0")
	s = strings.TrimSuffix(s, ".")
	if s == "-0" || s == "" || s == "-" {
		return "0"
	}
	return s
}

// base10000 returns PostgreSQL's NumericVar weight and first digit of |d|
// (digits in base 10000), as select_div_scale sees them.
func base10000(d *apd.Decimal) (weight int, first int) {
	if d.IsZero() {
		return 0, 0
	}
	digits := d.Coeff.String()
	p := len(digits) - 1 + int(d.Exponent) // power of ten of the leading digit
	weight = floorDiv(p, 4)
	k := p - 4*weight + 1 // decimal digits in the first base-10000 digit
	for i := 0; i < k; i++ {
		first *= 10
		if i < len(digits) {
			first += int(digits[i] - '0')
		}
	}
	return weight, first
}

func floorDiv(a, b int) int {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// divScale is PostgreSQL's select_div_scale: at least 16 significant digits,
// and no less than either input's scale.
func divScale(x, y *apd.Decimal) int32 {
	w1, f1 := base10000(x)
	w2, f2 := base10000(y)
	qweight := w1 - w2
	if f1 <= f2 {
		qweight--
	}
	rscale := int32(16 - qweight*4)
	rscale = max(rscale, numericScale(x), numericScale(y), 0)
	return min(rscale, 1000)
}

// numericDiv computes x / y rounded half away from zero to PostgreSQL's
// division scale.
func numericDiv(x, y *apd.Decimal) (*apd.Decimal, error) {
	return numericDivScale(x, y, divScale(x, y))
}

// numericDivScale computes x / y rounded half away from zero to scale digits.
func numericDivScale(x, y *apd.Decimal, scale int32) (*apd.Decimal, error) {
	intDigits := int64(x.NumDigits()) + int64(x.Exponent) - int64(y.NumDigits()) - int64(y.Exponent) + 2
	prec := uint32(max(int64(scale)+intDigits+4, 20))
	c := apd.BaseContext.WithPrecision(prec)
	c.Rounding = apd.RoundDown
	q := new(apd.Decimal)
	if _, err := c.Quo(q, x, y); err != nil {
		return nil, fmt.Errorf("exec: numeric division: %w", err)
	}
	return roundScale(q, scale)
}

// roundScale rounds d half away from zero to scale digits after the point.
func roundScale(d *apd.Decimal, scale int32) (*apd.Decimal, error) {
	c := apd.BaseContext.WithPrecision(uint32(max(int64(d.NumDigits())+int64(scale)+int64(max(d.Exponent, 0))+2, 20)))
	c.Rounding = apd.RoundHalfUp
	r := new(apd.Decimal)
	if _, err := c.Quantize(r, d, -scale); err != nil {
		return nil, fmt.Errorf("exec: numeric rounding: %w", err)
	}
	return r, nil
}

// numericSqrt is PostgreSQL's sqrt_var rounded to scale digits.
func numericSqrt(x *apd.Decimal, scale int32) (*apd.Decimal, error) {
	// Guard digits beyond the argument's own twice over, as expr's sqrt:
	// the root of 4611686016279904256 is 2147483647.49999999994..., and
	// rounding it to 19 digits first would round it twice, to ...48.
	c := apd.BaseContext.WithPrecision(uint32(int64(x.NumDigits())/2 + int64(max(x.Exponent, 0)) + int64(scale) + 2*int64(x.NumDigits()) + 10))
	r := new(apd.Decimal)
	if _, err := c.Sqrt(r, x); err != nil {
		return nil, fmt.Errorf("exec: numeric sqrt: %w", err)
	}
	return roundScale(r, scale)
}

// Interval spans: PostgreSQL compares intervals by their total length with
// a month of 30 days and a day of 24 hours ('1 day' = '24 hours').

const usecsPerDay = 86400 * 1000000

// intervalSpan returns the interval's total length as whole days and a
// remainder in [0, usecsPerDay) microseconds: exact, and equal exactly when
// PostgreSQL considers the intervals equal.
func intervalSpan(v arrow.MonthDayNanoInterval) (days int64, rem int64) {
	micros := v.Nanoseconds // µs (types.IntervalToArrow)
	days = int64(v.Months)*30 + int64(v.Days) + micros/usecsPerDay
	rem = micros % usecsPerDay
	if rem < 0 {
		rem += usecsPerDay
		days--
	}
	return days, rem
}

// cmpInterval orders two intervals as PostgreSQL does.
func cmpInterval(a, b arrow.MonthDayNanoInterval) int {
	ad, ar := intervalSpan(a)
	bd, br := intervalSpan(b)
	switch {
	case ad < bd:
		return -1
	case ad > bd:
		return 1
	case ar < br:
		return -1
	case ar > br:
		return 1
	}
	return 0
}

// cmpFloat orders floats as PostgreSQL does: NaN equals NaN and sorts above
// every other value; -0 equals 0.
func cmpFloat(a, b float64) int {
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an || bn:
		if an && bn {
			return 0
		}
		if an {
			return 1
		}
		return -1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// cmpNumeric orders parsed numerics, NaN above everything.
func cmpNumeric(a *apd.Decimal, an bool, b *apd.Decimal, bn bool) int {
	if an || bn {
		switch {
		case an && bn:
			return 0
		case an:
			return 1
		}
		return -1
	}
	return a.Cmp(b)
}

package expr

import (
	"math"

	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// ln, log and non-integral powers of numeric, with PostgreSQL 15's result
// scales: each estimates the decimal weight of its result the way
// PostgreSQL's estimate_ln_dweight does (from the first base-10000 digits of
// the argument, or from x-1 when 0.9 <= x <= 1.1) and keeps 16 significant
// digits after it, never fewer decimals than an argument has, at most 1000.
// apd computes the value to that many digits plus guard digits. Pure
// functions, safe for concurrent use.

// numericMinSigDigits and numericMaxDisplayScale are PostgreSQL's
// NUMERIC_MIN_SIG_DIGITS and NUMERIC_MAX_DISPLAY_SCALE.
const (
	numericMinSigDigits    = 16
	numericMaxDisplayScale = 1000
)

// decimalWeight is the power of ten of d's leading digit (d finite, non-zero).
func decimalWeight(d *apd.Decimal) int64 {
	return d.NumDigits() + int64(d.Exponent) - 1
}

// estimateLnDweight is PostgreSQL's estimate_ln_dweight for a positive
// finite d: roughly floor(log10(|ln(d)|)).
func estimateLnDweight(d *apd.Decimal) int32 {
	if d.Negative || d.IsZero() || d.Form != apd.Finite {
		return 0
	}
	if d.Cmp(apd.New(9, -1)) >= 0 && d.Cmp(apd.New(11, -1)) <= 0 {
		// ln(d) ~= d - 1: the weight of its leading decimal digit
		var x apd.Decimal
		if _, err := roundCtx.WithPrecision(uint32(max(d.NumDigits(), 1))+2).Sub(&x, d, apd.New(1, 0)); err != nil || x.IsZero() {
			return 0
		}
		return int32(decimalWeight(&x))
	}
	// ln(d) = ln(digits) + dweight*ln(10), digits the first one or two
	// base-10000 digits of d and dweight the power of ten of the last of them.
	w := floorDiv64(decimalWeight(d), 4) // base-10000 weight of the leading group
	var head apd.Decimal
	head.Set(d)
	head.Exponent -= int32(4 * (w - 1)) // the first two groups before the point
	var two apd.Decimal
	_, _ = quantize(&two, &head, 0)
	if head.Cmp(&two) < 0 { // Quantize rounded up: take the floor
		_, _ = roundCtx.Sub(&two, &two, apd.New(1, 0))
	}
	v, _ := two.Int64()
	digits, dweight := float64(v/10000), 4*w
	if v%10000 != 0 || head.Cmp(&two) != 0 { // more than one group
		digits, dweight = float64(v), 4*(w-1)
	}
	lnv := cLog(digits) + float64(dweight)*2.302585092994046
	return int32(cLog10(math.Abs(lnv)))
}

// lnScale is the result scale of a logarithm whose result has decimal
// weight about dweight, of arguments with the given scales.
func lnScale(dweight int32, args ...*apd.Decimal) int32 {
	s := numericMinSigDigits - dweight
	for _, a := range args {
		s = max(s, scaleOf(a))
	}
	return min(max(s, 0), numericMaxDisplayScale)
}

// lnContext has room for a result of decimal weight dweight to scale digits.
func lnContext(dweight, scale int32) *apd.Context {
	return roundCtx.WithPrecision(uint32(max(dweight+1, 1) + max(scale, 0) + 20))
}

// numericLn is ln(numeric), or log(numeric) (base 10) with log10.
func numericLn(d *apd.Decimal, log10 bool) (*apd.Decimal, error) {
	switch {
	case d.IsZero():
		return nil, errLogZero
	case d.Negative:
		return nil, errLogNeg
	case d.Form != apd.Finite: // NaN or Infinity
		return d, nil
	}
	// log(x) is log(10, x) in PostgreSQL: ln(10)'s estimated weight is 0.
	dw := estimateLnDweight(d)
	scale := lnScale(dw, d)
	r := new(apd.Decimal)
	c := lnContext(dw, scale)
	var err error
	if log10 {
		_, err = c.Log10(r, d)
	} else {
		_, err = c.Ln(r, d)
	}
	if err != nil {
		return nil, pgerr.Wrap(err, pgerr.NumericValueOutOfRange, "value overflows numeric format")
	}
	_, err = quantize(r, r, -scale)
	return r, err
}

// numericLogBase is log(b, x) = ln(x) / ln(b) with PostgreSQL's scale.
func numericLogBase(b, x *apd.Decimal) (types.Value, error) {
	if b.Form != apd.Finite || x.Form != apd.Finite { // as PostgreSQL's numeric_log: NaN first, then signs
		switch {
		case isNaN(b) || isNaN(x):
			return &apd.Decimal{Form: apd.NaN}, nil
		case b.Negative || x.Negative:
			return nil, errLogNeg
		case b.IsZero() || x.IsZero():
			return nil, errLogZero
		}
	}
	for _, d := range []*apd.Decimal{b, x} {
		switch {
		case d.IsZero():
			return nil, errLogZero
		case d.Negative:
			return nil, errLogNeg
		}
	}
	switch {
	case b.Form == apd.Infinite && x.Form == apd.Infinite:
		return &apd.Decimal{Form: apd.NaN}, nil
	case b.Form == apd.Infinite:
		return new(apd.Decimal), nil
	case x.Form == apd.Infinite:
		return x, nil
	}
	dwb, dwx := estimateLnDweight(b), estimateLnDweight(x)
	dw := dwx - dwb
	scale := lnScale(dw, b, x)
	// ln(b) and ln(x) each to enough significant digits for the quotient
	c := roundCtx.WithPrecision(uint32(max(dw+1, 1)+scale+max(-dwb, 0)+max(-dwx, 0)) + 30)
	lb, lx := new(apd.Decimal), new(apd.Decimal)
	if _, err := c.Ln(lb, b); err != nil {
		return nil, err
	}
	if _, err := c.Ln(lx, x); err != nil {
		return nil, err
	}
	if lb.IsZero() {
		return nil, errDivZero
	}
	r := new(apd.Decimal)
	if _, err := c.Quo(r, lx, lb); err != nil {
		return nil, err
	}
	_, err := quantize(r, r, -scale)
	return r, err
}

// numericPowerFinite is x ^ y for finite x != 0 (x < 0 only with an
// integral y) as PostgreSQL's power_var: an exponent that is an int32 keeps
// max(16, scale(x)) decimals (power_var_int); any other exponent 16
// significant digits of the result, never fewer decimals than x or y has.
// A result certain to be below the last decimal is 0; one beyond numeric's
// range is an error.
func numericPowerFinite(x, y *apd.Decimal) (*apd.Decimal, error) {
	overflow := func() error { return pgerr.New(pgerr.NumericValueOutOfRange, "value overflows numeric format") }
	zero := func(scale int32) (*apd.Decimal, error) {
		r := new(apd.Decimal)
		_, err := quantize(r, r, -scale)
		return r, err
	}
	// y * ln|x| to about 20 digits: ln of the result
	lc := roundCtx.WithPrecision(20)
	var ax, lnxy apd.Decimal
	ax.Abs(x)
	if _, err := lc.Ln(&lnxy, &ax); err != nil {
		return nil, pgerr.Wrap(err, pgerr.NumericValueOutOfRange, "value overflows numeric format")
	}
	_, _ = lc.Mul(&lnxy, &lnxy, y)
	val, _ := lnxy.Float64()
	var scale int32
	var yi apd.Decimal
	_, _ = roundCtx.RoundToIntegralValue(&yi, y)
	iy, ierr := yi.Int64()
	if yi.Cmp(y) == 0 && ierr == nil && iy >= math.MinInt32 && iy <= math.MaxInt32 {
		scale = min(max(numericMinSigDigits, scaleOf(x), 0), numericMaxDisplayScale)
		f := val / math.Ln10 // log10 of the result
		if f > 3*32767*4 {
			return nil, overflow()
		}
		if f+1 < -float64(scale) || f+1 < -numericMaxDisplayScale {
			return zero(scale)
		}
	} else {
		if math.IsNaN(val) || math.Abs(val) > 2000*3.01 {
			if val > 0 || math.IsNaN(val) {
				return nil, overflow()
			}
			return zero(numericMaxDisplayScale)
		}
		scale = numericMinSigDigits - int32(val*0.434294481903252)
		scale = min(max(scale, scaleOf(x), scaleOf(y), 0), numericMaxDisplayScale)
	}
	dw := int32(math.Floor(val / math.Ln10)) // the result's decimal weight, about
	r := new(apd.Decimal)
	c := roundCtx.WithPrecision(uint32(max(dw+scale+1, 1) + 30))
	if _, err := c.Pow(r, x, y); err != nil {
		return nil, pgerr.Wrap(err, pgerr.NumericValueOutOfRange, "value overflows numeric format")
	}
	if _, err := quantize(r, r, -scale); err != nil {
		return nil, pgerr.Wrap(err, pgerr.NumericValueOutOfRange, "value overflows numeric format")
	}
	return r, nil
}

package expr

import (
	"encoding/binary"
	"math"
	"math/rand/v2"

	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Mathematical functions for double precision (vectorized) and numeric
// (with PostgreSQL's result scales), plus the integer ones (abs, mod, gcd...).

var (
	errSqrtNeg  = pgerr.New(pgerr.InvalidArgumentForPower, "cannot take square root of a negative number")
	errLogZero  = pgerr.New(pgerr.InvalidArgumentForLog, "cannot take logarithm of zero")
	errLogNeg   = pgerr.New(pgerr.InvalidArgumentForLog, "cannot take logarithm of a negative number")
	errPowZero  = pgerr.New(pgerr.InvalidArgumentForPower, "zero raised to a negative power is undefined")
	errPowCmplx = pgerr.New(pgerr.InvalidArgumentForPower, "a negative number raised to a non-integer power yields a complex result")
	errOverflow = pgerr.New(pgerr.NumericValueOutOfRange, "value out of range: overflow")
	errInputOOR = pgerr.New(pgerr.NumericValueOutOfRange, "input is out of range")
)

func pure(f func(float64) float64) func(float64) (float64, error) {
	return func(x float64) (float64, error) { return f(x), nil }
}

// finiteIn is f failing on an infinite input, as PostgreSQL's dsin, dcos,
// dtan and dcot do.
func finiteIn(f func(float64) float64) func(float64) (float64, error) {
	return func(x float64) (float64, error) {
		if math.IsInf(x, 0) {
			return 0, errInputOOR
		}
		return f(x), nil
	}
}

func logf(f func(float64) float64) func(float64) (float64, error) {
	return func(x float64) (float64, error) {
		switch {
		case x == 0:
			return 0, errLogZero
		case x < 0:
			return 0, errLogNeg
		}
		return f(x), nil
	}
}

func floatPow(x, y float64) (float64, error) {
	if math.IsNaN(x) || math.IsNaN(y) {
		return math.Pow(x, y), nil // NaN, except 1^NaN and NaN^0 (1), as POSIX and PostgreSQL
	}
	if x == 0 && y < 0 {
		return 0, errPowZero
	}
	if x < 0 && y != math.Trunc(y) && !math.IsInf(y, 0) {
		return 0, errPowCmplx
	}
	r := cPow(x, y)
	if math.IsInf(x, 0) || math.IsInf(y, 0) {
		return r, nil
	}
	if math.IsInf(r, 0) {
		return 0, errOverflow
	}
	if r == 0 && x != 0 { // PostgreSQL's dpow
		return 0, pgerr.New(pgerr.NumericValueOutOfRange, "value out of range: underflow")
	}
	return r, nil
}

// numericRound rounds d to scale digits (negative: left of the point), half
// away from zero; the result keeps max(scale, 0) decimals.
func numericRound(d *apd.Decimal, scale int64, trunc bool) (*apd.Decimal, error) {
	if d.Form != apd.Finite {
		return d, nil
	}
	// PostgreSQL's limits: 131072 digits before the point, 16383 after,
	// and one more digit before the point that the rounding may carry into
	// (overflowing; the range check is numericResult's)
	scale = max(min(scale, numericDscaleMax), -types.NumericMaxDigits-1)
	c := *exactCtx('+', d, apd.New(1, int32(-max(scale, 0))))
	if trunc {
		c.Rounding = apd.RoundDown
	}
	r := new(apd.Decimal)
	if _, err := c.Quantize(r, d, int32(-scale)); err != nil {
		return nil, pgerr.Wrap(err, pgerr.NumericValueOutOfRange, "value overflows numeric format")
	}
	if scale < 0 {
		_, _ = c.Quantize(r, r, 0)
	}
	return r, nil
}

func numericFloorCeil(d *apd.Decimal, ceil bool) *apd.Decimal {
	if d.Form != apd.Finite {
		return d
	}
	// Truncate, then step away from zero when a fraction was dropped on
	// the side that rounds outwards (apd's Ceiling and Floor roundings
	// ignore a dropped fraction below one half of the last place).
	r := new(apd.Decimal)
	c := *roundCtx
	c.Rounding = apd.RoundDown
	_, _ = c.Quantize(r, d, 0)
	if r.Cmp(d) != 0 && d.Negative != ceil {
		step := apd.New(1, 0)
		if !ceil {
			step.Negative = true
		}
		_, _ = c.Add(r, r, step)
	}
	if r.IsZero() {
		r.Negative = false
	}
	return r
}

// numericSqrt uses PostgreSQL's scale: 16 significant digits, at least the
// input's scale.
func numericSqrt(d *apd.Decimal) (*apd.Decimal, error) {
	if d.Negative && !d.IsZero() {
		return nil, errSqrtNeg
	}
	if d.Form != apd.Finite {
		return d, nil
	}
	// PostgreSQL's weight is in base-10000 digits.
	w := int32(0)
	if !d.IsZero() {
		w = floorDiv(int32(d.NumDigits())+d.Exponent-1, 4)
	}
	sweight := (w+1)*4/2 - 1
	scale := max(16-sweight, scaleOf(d), 0)
	scale = min(scale, 1000)
	r := new(apd.Decimal)
	// Guard digits beyond the argument's own twice over: the square root of
	// 1+e (e of n digits) runs 9s or 0s to about 2n digits, and rounding
	// there first would round twice (sqrt(1.000000000000003) is
	// 1.000000000000001, not ...002).
	c := roundCtx.WithPrecision(uint32(max(int32(d.NumDigits())+d.Exponent, 1) + scale + 2*int32(d.NumDigits()) + 10))
	if _, err := c.Sqrt(r, d); err != nil {
		return nil, err
	}
	_, err := quantize(r, r, -scale)
	return r, err
}

func gcd64(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	if a < 0 {
		a = -a
	}
	return a
}

func init() {
	F8, NU, I2, I4, I8 := types.TFloat8, types.TNumeric, types.TInt2, types.TInt4, types.TInt8
	f8 := func(name string, f func(float64) (float64, error)) *Func {
		return &Func{Name: name, Args: []types.T{F8}, Return: F8, Strict: true, Kernel: float8Func(f)}
	}
	register(
		f8("abs", pure(math.Abs)),
		f8("ceil", pure(math.Ceil)), f8("ceiling", pure(math.Ceil)),
		f8("floor", pure(math.Floor)),
		f8("round", pure(math.RoundToEven)),
		f8("trunc", pure(math.Trunc)),
		f8("sign", func(x float64) (float64, error) {
			switch {
			case x > 0:
				return 1, nil
			case x < 0:
				return -1, nil
			}
			return 0, nil
		}),
		f8("sqrt", func(x float64) (float64, error) {
			if x < 0 {
				return 0, errSqrtNeg
			}
			return math.Sqrt(x), nil
		}),
		f8("cbrt", pure(cCbrt)),
		f8("exp", func(x float64) (float64, error) {
			r := cExp(x)
			if math.IsInf(r, 0) && !math.IsInf(x, 0) {
				return 0, errOverflow
			}
			if r == 0 && !math.IsInf(x, 0) {
				return 0, pgerr.New(pgerr.NumericValueOutOfRange, "value out of range: underflow")
			}
			return r, nil
		}),
		f8("ln", logf(cLog)),
		f8("log", logf(cLog10)),
		f8("log10", logf(cLog10)),
		// by PostgreSQL's RADIANS_PER_DEGREE (funcs_trig.go), as its degrees
		// and radians do (x * Pi / 180 rounds differently)
		f8("degrees", func(x float64) (float64, error) { return x / radiansPerDegree, nil }),
		f8("radians", func(x float64) (float64, error) { return x * radiansPerDegree, nil }),
		f8("sin", finiteIn(cSin)), f8("cos", finiteIn(cCos)), f8("tan", finiteIn(cTan)),
		f8("cot", finiteIn(func(x float64) float64 { return 1 / cTan(x) })),
		f8("asin", func(x float64) (float64, error) {
			if x < -1 || x > 1 {
				return 0, errInputOOR
			}
			return cAsin(x), nil
		}),
		f8("acos", func(x float64) (float64, error) {
			if x < -1 || x > 1 {
				return 0, errInputOOR
			}
			return cAcos(x), nil
		}),
		f8("atan", pure(cAtan)),
	)
	floatPowK := func(_ *Context, a []types.Value) (types.Value, error) {
		return floatPow(a[0].(float64), a[1].(float64))
	}
	define(
		fn0("pi", F8, false, func(*Context) (types.Value, error) { return math.Pi, nil }),
		fn0("random", F8, true, func(*Context) (types.Value, error) { return rand.Float64(), nil }),
		// float8send is the binary send form: the IEEE 754 bits, big-endian
		rowFn("float8send", types.TBytea, []types.T{F8}, func(_ *Context, a []types.Value) (types.Value, error) {
			return binary.BigEndian.AppendUint64(nil, math.Float64bits(a[0].(float64))), nil
		}),
		rowFn("power", F8, []types.T{F8, F8}, floatPowK),
		rowFn("pow", F8, []types.T{F8, F8}, floatPowK),
		rowFn("^", F8, []types.T{F8, F8}, floatPowK),
		rowFn("atan2", F8, []types.T{F8, F8}, func(_ *Context, a []types.Value) (types.Value, error) {
			return cAtan2(a[0].(float64), a[1].(float64)), nil
		}),
		rowFn("width_bucket", I4, []types.T{F8, F8, F8, I4}, func(_ *Context, a []types.Value) (types.Value, error) {
			return widthBucket(a[0].(float64), a[1].(float64), a[2].(float64), a[3].(int64))
		}),
	)
	num := func(a []types.Value, i int) *apd.Decimal { return a[i].(*apd.Decimal) }
	numFn := func(name string, f func(d *apd.Decimal) (types.Value, error)) *Func {
		return rowFn(name, NU, []types.T{NU}, func(_ *Context, a []types.Value) (types.Value, error) { return f(num(a, 0)) })
	}
	define(
		numFn("abs", func(d *apd.Decimal) (types.Value, error) { return new(apd.Decimal).Abs(d), nil }),
		numFn("ceil", func(d *apd.Decimal) (types.Value, error) { return numericFloorCeil(d, true), nil }),
		numFn("ceiling", func(d *apd.Decimal) (types.Value, error) { return numericFloorCeil(d, true), nil }),
		numFn("floor", func(d *apd.Decimal) (types.Value, error) { return numericFloorCeil(d, false), nil }),
		numFn("round", func(d *apd.Decimal) (types.Value, error) { return numericRound(d, 0, false) }),
		numFn("trunc", func(d *apd.Decimal) (types.Value, error) { return numericRound(d, 0, true) }),
		numFn("sqrt", func(d *apd.Decimal) (types.Value, error) { return numericSqrt(d) }),
		numFn("ln", func(d *apd.Decimal) (types.Value, error) { return numericLn(d, false) }),
		// numeric_inc is PostgreSQL's x + 1 (its sequence support function)
		numFn("numeric_inc", func(d *apd.Decimal) (types.Value, error) { return numericOp('+', d, apd.New(1, 0)) }),
		// log(numeric) and log10(numeric) are SQL functions calling
		// log(10, x) in PostgreSQL: their errors say so.
		numFn("log", func(d *apd.Decimal) (types.Value, error) { return sqlFunction("log")(numericLn(d, true)) }),
		numFn("log10", func(d *apd.Decimal) (types.Value, error) { return sqlFunction("log10")(numericLn(d, true)) }),
		numFn("exp", numericExp),
		numFn("sign", func(d *apd.Decimal) (types.Value, error) {
			switch {
			case isNaN(d):
				return d, nil
			case d.IsZero():
				return apd.New(0, 0), nil
			case d.Negative:
				return apd.New(-1, 0), nil
			}
			return apd.New(1, 0), nil
		}),
		rowFn("round", NU, []types.T{NU, I4}, func(_ *Context, a []types.Value) (types.Value, error) {
			return numericRound(num(a, 0), a[1].(int64), false)
		}),
		rowFn("trunc", NU, []types.T{NU, I4}, func(_ *Context, a []types.Value) (types.Value, error) {
			return numericRound(num(a, 0), a[1].(int64), true)
		}),
		rowFn("power", NU, []types.T{NU, NU}, func(_ *Context, a []types.Value) (types.Value, error) { return numericPower(num(a, 0), num(a, 1)) }),
		rowFn("pow", NU, []types.T{NU, NU}, func(_ *Context, a []types.Value) (types.Value, error) { return numericPower(num(a, 0), num(a, 1)) }),
		rowFn("mod", NU, []types.T{NU, NU}, func(_ *Context, a []types.Value) (types.Value, error) { return numericOp('%', num(a, 0), num(a, 1)) }),
		rowFn("div", NU, []types.T{NU, NU}, func(_ *Context, a []types.Value) (types.Value, error) {
			if isNaN(num(a, 0)) || isNaN(num(a, 1)) {
				return &apd.Decimal{Form: apd.NaN}, nil
			}
			if num(a, 0).Form == apd.Infinite || num(a, 1).Form == apd.Infinite {
				return numericInfOp('/', num(a, 0), num(a, 1))
			}
			if num(a, 1).IsZero() {
				return nil, errDivZero
			}
			r := new(apd.Decimal)
			if _, err := roundCtx.QuoInteger(r, num(a, 0), num(a, 1)); err != nil {
				return nil, pgerr.Wrap(err, pgerr.NumericValueOutOfRange, "value overflows numeric format")
			}
			return r, nil
		}),
		rowFn("log", NU, []types.T{NU, NU}, func(_ *Context, a []types.Value) (types.Value, error) {
			return numericLogBase(num(a, 0), num(a, 1))
		}),
		// scale and min_scale of NaN and infinities are NULL
		rowFn("scale", I4, []types.T{NU}, func(_ *Context, a []types.Value) (types.Value, error) {
			if num(a, 0).Form != apd.Finite {
				return nil, nil
			}
			return numericScale(num(a, 0)), nil
		}),
		rowFn("min_scale", I4, []types.T{NU}, func(_ *Context, a []types.Value) (types.Value, error) {
			if num(a, 0).Form != apd.Finite {
				return nil, nil
			}
			return numericMinScale(num(a, 0)), nil
		}),
		rowFn("trim_scale", NU, []types.T{NU}, func(_ *Context, a []types.Value) (types.Value, error) {
			return numericRound(num(a, 0), numericMinScale(num(a, 0)), false)
		}),
		rowFn("factorial", NU, []types.T{I8}, func(_ *Context, a []types.Value) (types.Value, error) {
			n := a[0].(int64)
			if n < 0 {
				return nil, pgerr.New(pgerr.NumericValueOutOfRange, "factorial of a negative number is undefined")
			}
			if n > 32177 {
				return nil, pgerr.New(pgerr.NumericValueOutOfRange, "value overflows numeric format")
			}
			r := apd.New(1, 0)
			for i := int64(2); i <= n; i++ {
				_, _ = roundCtx.Mul(r, r, apd.New(i, 0))
			}
			return r, nil
		}),
		rowFn("width_bucket", I4, []types.T{NU, NU, NU, I4}, func(_ *Context, a []types.Value) (types.Value, error) {
			return widthBucketNumeric(num(a, 0), num(a, 1), num(a, 2), a[3].(int64))
		}),
	)
	for _, t := range []types.T{I2, I4, I8} {
		t := t
		define(
			rowFn("abs", t, []types.T{t}, func(_ *Context, a []types.Value) (types.Value, error) {
				x := a[0].(int64)
				if x < 0 {
					if _, err := castFromInt(-x, types.TInt8, t); err != nil || x == math.MinInt64 {
						return nil, outOfRange(t)
					}
					return -x, nil
				}
				return x, nil
			}),
			rowFn("mod", t, []types.T{t, t}, func(_ *Context, a []types.Value) (types.Value, error) {
				if a[1].(int64) == 0 {
					return nil, errDivZero
				}
				if a[1].(int64) == -1 {
					return int64(0), nil
				}
				return a[0].(int64) % a[1].(int64), nil
			}),
		)
		if t.Kind != types.Int2 {
			define(
				rowFn("gcd", t, []types.T{t, t}, func(_ *Context, a []types.Value) (types.Value, error) {
					g := gcd64(a[0].(int64), a[1].(int64))
					if g < 0 || (t.Kind == types.Int4 && g > math.MaxInt32) {
						return nil, outOfRange(t)
					}
					return g, nil
				}),
				rowFn("lcm", t, []types.T{t, t}, func(_ *Context, a []types.Value) (types.Value, error) {
					x, y := a[0].(int64), a[1].(int64)
					if x == 0 || y == 0 {
						return int64(0), nil
					}
					g := gcd64(x, y)
					r := x / g * y
					if r/y != x/g || r == math.MinInt64 {
						return nil, outOfRange(t)
					}
					if r < 0 {
						r = -r
					}
					return castFromInt(r, types.TInt8, t)
				}),
			)
		}
	}
}

// widthBucket is width_bucket(x, lo, hi, n) for lo < hi or lo > hi.
func widthBucketErr(msg string) error {
	return pgerr.New(pgerr.InvalidArgumentForWidthBucket, "%s", msg)
}

// widthBucket is width_bucket(float8, float8, float8, int), with
// PostgreSQL's checks in its order.
func widthBucket(x, lo, hi float64, n int64) (types.Value, error) {
	if n <= 0 {
		return nil, widthBucketErr("count must be greater than zero")
	}
	if math.IsNaN(x) || math.IsNaN(lo) || math.IsNaN(hi) {
		return nil, widthBucketErr("operand, lower bound, and upper bound cannot be NaN")
	}
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return nil, widthBucketErr("lower and upper bounds must be finite")
	}
	if lo == hi {
		return nil, widthBucketErr("lower bound cannot equal upper bound")
	}
	if lo < hi {
		switch {
		case x < lo:
			return int64(0), nil
		case x >= hi:
			return n + 1, nil
		}
		return int64(float64(n)*(x-lo)/(hi-lo)) + 1, nil
	}
	switch {
	case x > lo:
		return int64(0), nil
	case x <= hi:
		return n + 1, nil
	}
	return int64(float64(n)*(lo-x)/(lo-hi)) + 1, nil
}

// widthBucketNumeric is width_bucket(numeric, numeric, numeric, int),
// computed in decimal: floor(count * (x - lo) / (hi - lo)) + 1.
func widthBucketNumeric(x, lo, hi *apd.Decimal, n int64) (types.Value, error) {
	if n <= 0 {
		return nil, widthBucketErr("count must be greater than zero")
	}
	if x.Form == apd.NaN || lo.Form == apd.NaN || hi.Form == apd.NaN {
		return nil, widthBucketErr("operand, lower bound, and upper bound cannot be NaN")
	}
	if lo.Form == apd.Infinite || hi.Form == apd.Infinite {
		return nil, widthBucketErr("lower and upper bounds must be finite")
	}
	c := lo.Cmp(hi)
	if c == 0 {
		return nil, widthBucketErr("lower bound cannot equal upper bound")
	}
	if c > 0 { // reversed: mirror everything
		x, lo, hi = new(apd.Decimal).Neg(x), new(apd.Decimal).Neg(lo), new(apd.Decimal).Neg(hi)
	}
	if x.Cmp(lo) < 0 {
		return int64(0), nil
	}
	if x.Cmp(hi) >= 0 {
		if n == math.MaxInt64 {
			return nil, pgerr.New(pgerr.NumericValueOutOfRange, "integer out of range")
		}
		return n + 1, nil
	}
	ctx := apd.BaseContext.WithPrecision(1000)
	var num, den, q apd.Decimal
	ctx.Sub(&num, x, lo)
	ctx.Mul(&num, &num, apd.New(n, 0))
	ctx.Sub(&den, hi, lo)
	ctx.QuoInteger(&q, &num, &den)
	b, err := q.Int64()
	if err != nil {
		return nil, pgerr.New(pgerr.NumericValueOutOfRange, "integer out of range")
	}
	return b + 1, nil
}

// numericExp is exp(numeric) with PostgreSQL's scale: 16 significant digits.
func numericExp(d *apd.Decimal) (types.Value, error) {
	switch {
	case d.Form == apd.NaN:
		return d, nil
	case d.Form == apd.Infinite && d.Negative:
		return new(apd.Decimal), nil // exp(-Infinity) is 0
	case d.Form == apd.Infinite:
		return d, nil
	}
	f, _ := d.Float64()
	if f >= 6000 {
		return nil, pgerr.New(pgerr.NumericValueOutOfRange, "value overflows numeric format")
	}
	dw := int32(f * 0.434294481903252)
	scale := min(max(16-dw, scaleOf(d), 0), 1000)
	r := new(apd.Decimal)
	c := roundCtx.WithPrecision(uint32(max(dw, 0) + scale + 10))
	if err := expLarge(c, r, d, f); err != nil {
		return nil, pgerr.Wrap(err, pgerr.NumericValueOutOfRange, "value overflows numeric format")
	}
	_, err := quantize(r, r, -scale)
	return r, err
}

// expLarge is c.Exp(r, d) for any |d| up to 6000 (f is d as a float).
// apd's series gives up ("too many iterations") beyond about 2500 digits
// unless the argument is small, so, as PostgreSQL's exp_var does, it
// halves d m times to below 0.01, takes exp with 0.302*m more digits (the
// squarings multiply the relative error by 2^m) and squares m times.
func expLarge(c *apd.Context, r, d *apd.Decimal, f float64) error {
	if c.Precision <= 1000 || math.Abs(f) < 0.01 {
		_, err := c.Exp(r, d)
		return err
	}
	m := 0
	for a := math.Abs(f); a >= 0.01; a /= 2 {
		m++
	}
	wc := c.WithPrecision(c.Precision + uint32(float64(m)*0.30103) + 10)
	var x apd.Decimal
	if _, err := wc.Quo(&x, d, apd.New(1<<m, 0)); err != nil {
		return err
	}
	if _, err := wc.Exp(r, &x); err != nil {
		return err
	}
	for range m {
		if _, err := wc.Mul(r, r, r); err != nil {
			return err
		}
	}
	_, err := c.Round(r, r)
	return err
}

// numericScale is scale(numeric): the number of decimal digits.
func numericScale(d *apd.Decimal) int64 { return int64(scaleOf(d)) }

// numericMinScale is min_scale: the scale without trailing zeros.
func numericMinScale(d *apd.Decimal) int64 {
	if d.Form != apd.Finite {
		return 0
	}
	var r apd.Decimal
	r.Reduce(d)
	return int64(scaleOf(&r))
}

// sqlFunction adds PostgreSQL's CONTEXT line of a built-in that is an SQL
// function in its catalog (SQL function "name" statement 1) to an error.
func sqlFunction(name string) func(v types.Value, err error) (types.Value, error) {
	return func(v types.Value, err error) (types.Value, error) {
		if e := pgerr.As(err); e != nil && e.Where == "" {
			return v, e.WithWhere("SQL function \"%s\" statement 1", name)
		}
		return v, err
	}
}

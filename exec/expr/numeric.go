package expr

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// numeric arithmetic with apd, following PostgreSQL's result scales:
// + and - keep the larger scale, * adds the scales, / uses select_div_scale,
// rounding half away from zero.

// roundCtx is the apd context for exact work: huge precision, PostgreSQL's
// rounding (half away from zero).
var roundCtx = func() *apd.Context {
	c := apd.BaseContext.WithPrecision(2000)
	c.Rounding = apd.RoundHalfUp
	c.MaxExponent = apd.MaxExponent
	c.MinExponent = apd.MinExponent
	return c
}()

// quantize is roundCtx.Quantize(r, x, exp) with the precision the result
// needs: roundCtx's 2000 digits are too few for values up to numeric's
// 131072 digits before the point.
func quantize(r, x *apd.Decimal, exp int32) (apd.Condition, error) {
	c := roundCtx
	if x.Form == apd.Finite {
		if p := max(types.MaxNumDigits(x)+int64(x.Exponent), 1) - int64(min(exp, 0)) + 2; p > int64(c.Precision) {
			c = roundCtx.WithPrecision(uint32(min(p, 1<<20)))
		}
	}
	return c.Quantize(r, x, exp)
}

// numericString renders a numeric as PostgreSQL's numeric_out does.
func numericString(d *apd.Decimal) string {
	switch d.Form {
	case apd.NaN, apd.NaNSignaling:
		return "NaN"
	case apd.Infinite:
		if d.Negative {
			return "-Infinity"
		}
		return "Infinity"
	}
	s := d.Text('f')
	if s == "-0" || strings.HasPrefix(s, "-0.") && strings.Trim(s[3:], "0") == "" {
		s = s[1:]
	}
	return s
}

// scaleOf is the number of digits after the decimal point (dscale).
func scaleOf(d *apd.Decimal) int32 {
	if d.Form != apd.Finite || d.Exponent >= 0 {
		return 0
	}
	return -d.Exponent
}

// numericTypmod rounds d to numeric(p,s) (types.ApplyNumericTypmod: a
// negative scale rounds left of the point) on a copy.
func numericTypmod(d *apd.Decimal, typmod int32) (*apd.Decimal, error) {
	if typmod < 4 || d.Form == apd.NaN {
		return d, nil
	}
	r := new(apd.Decimal).Set(d)
	if err := types.ApplyNumericTypmod(r, typmod); err != nil {
		return nil, err
	}
	return r, nil
}

// readNumerics parses a numeric array (canonical decimal strings).
func readNumerics(a arrow.Array) ([]*apd.Decimal, error) {
	s := a.(*array.String)
	out := make([]*apd.Decimal, a.Len())
	prev, prevD := "", (*apd.Decimal)(nil)
	for i := range out {
		if s.IsNull(i) {
			continue
		}
		v := s.Value(i)
		if prevD != nil && v == prev {
			out[i] = prevD // runs of one value (constants) parse once; decimals are never mutated
			continue
		}
		d, err := parseNumeric(v)
		if err != nil {
			return nil, err
		}
		out[i], prev, prevD = d, v, d
	}
	return out, nil
}

func parseNumeric(s string) (*apd.Decimal, error) {
	switch s {
	case "NaN":
		return &apd.Decimal{Form: apd.NaN}, nil
	case "Infinity":
		return &apd.Decimal{Form: apd.Infinite}, nil
	case "-Infinity":
		return &apd.Decimal{Form: apd.Infinite, Negative: true}, nil
	}
	d, _, err := apd.NewFromString(s)
	if err != nil {
		return nil, pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type numeric: \"%s\"", s)
	}
	return d, nil
}

// numericResult builds a numeric array from decimals (nil = NULL), with
// PostgreSQL's range check on each (types.CheckNumericRange).
func numericResult(ctx *Context, ds []*apd.Decimal) (arrow.Array, error) {
	for _, d := range ds {
		if d != nil {
			if err := types.CheckNumericRange(d); err != nil {
				return nil, err
			}
		}
	}
	b := array.NewStringBuilder(ctx.Allocator())
	defer b.Release()
	b.Reserve(len(ds))
	for _, d := range ds {
		if d == nil {
			b.AppendNull()
		} else {
			b.Append(numericString(d))
		}
	}
	return b.NewArray(), nil
}

func isNaN(d *apd.Decimal) bool { return d.Form == apd.NaN || d.Form == apd.NaNSignaling }

// divScale is PostgreSQL's select_div_scale: enough digits for at least 16
// significant digits, no fewer than either input's scale, at most 1000.
func divScale(x, y *apd.Decimal) int32 {
	weight := func(d *apd.Decimal) int32 {
		// PostgreSQL weights are in base-10000 digits; estimate the first
		// significant decimal digit position, then map to NBASE groups.
		if d.IsZero() {
			return 0
		}
		e := int32(d.NumDigits()) + d.Exponent - 1 // decimal exponent of the leading digit
		return floorDiv(e, 4)
	}
	first := func(d *apd.Decimal) int32 {
		if d.IsZero() {
			return 0
		}
		// leading base-10000 digit value
		e := int32(d.NumDigits()) + d.Exponent - 1
		lead := leadingDigits(d, int(e-floorDiv(e, 4)*4)+1)
		return lead
	}
	qweight := weight(x) - weight(y)
	// Equal first digits: assume x < y, as PostgreSQL does.
	if first(x) <= first(y) {
		qweight--
	}
	rscale := 16 - qweight*4
	if s := scaleOf(x); rscale < s {
		rscale = s
	}
	if s := scaleOf(y); rscale < s {
		rscale = s
	}
	if rscale < 0 {
		rscale = 0
	}
	if rscale > 1000 {
		rscale = 1000
	}
	return rscale
}

// adjusted is the decimal exponent of d's leading digit (0 for zero).
func adjusted(d *apd.Decimal) int64 {
	if d.Form != apd.Finite || d.IsZero() {
		return 0
	}
	return d.NumDigits() + int64(d.Exponent) - 1
}

func floorDiv(a, b int32) int32 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// leadingDigits returns the first n decimal digits of d's coefficient.
func leadingDigits(d *apd.Decimal, n int) int32 {
	s := d.Coeff.String()
	for len(s) < n {
		s += "0"
	}
	v := int32(0)
	for _, c := range s[:n] {
		v = v*10 + int32(c-'0')
	}
	return v
}

// numericDscaleMax is PostgreSQL's NUMERIC_DSCALE_MAX: the most decimals a
// numeric keeps.
const numericDscaleMax = types.NumericDscaleMax

// exactCtx has the precision for the exact sum, difference or product of
// finite x and y (at most numeric's 147455 digits; more overflows anyway).
func exactCtx(op byte, x, y *apd.Decimal) *apd.Context {
	var p int64
	if op == '*' {
		p = x.NumDigits() + y.NumDigits()
	} else {
		hi := max(x.NumDigits()+int64(x.Exponent), y.NumDigits()+int64(y.Exponent))
		p = hi - int64(min(x.Exponent, y.Exponent)) + 1
	}
	return roundCtx.WithPrecision(uint32(min(max(p, int64(roundCtx.Precision)), 150000)))
}

// numericOp applies one numeric operator to two finite-or-special values.
func numericOp(op byte, x, y *apd.Decimal) (*apd.Decimal, error) {
	r := new(apd.Decimal)
	if op == '^' {
		return numericPower(x, y) // NaN ^ 0 and 1 ^ NaN are 1
	}
	if isNaN(x) || isNaN(y) {
		return &apd.Decimal{Form: apd.NaN}, nil
	}
	if op != '^' && (x.Form == apd.Infinite || y.Form == apd.Infinite) {
		return numericInfOp(op, x, y)
	}
	var err error
	switch op {
	case '+':
		_, err = exactCtx(op, x, y).Add(r, x, y)
	case '-':
		_, err = exactCtx(op, x, y).Sub(r, x, y)
	case '*':
		// exact, then rounded to the most decimals a numeric keeps
		if _, err = exactCtx(op, x, y).Mul(r, x, y); err == nil && scaleOf(r) > numericDscaleMax {
			_, err = exactCtx(op, r, r).Quantize(r, r, -numericDscaleMax)
		}
	case '/':
		if y.IsZero() {
			return nil, errDivZero
		}
		if x.Form == apd.Infinite || y.Form == apd.Infinite {
			_, err = roundCtx.Quo(r, x, y)
			break
		}
		var q apd.Decimal
		scale := divScale(x, y)
		// every digit of the quotient before the point, scale after, and
		// guard digits for the rounding
		p := max(x.NumDigits()+y.NumDigits()+1100, adjusted(x)-adjusted(y)+2+int64(scale)+2)
		c := roundCtx.WithPrecision(uint32(min(p, 1<<20)))
		if _, err = c.Quo(&q, x, y); err == nil {
			_, err = quantize(r, &q, -scale)
		}
	case '%':
		if y.IsZero() {
			return nil, errDivZero
		}
		// the integral quotient must fit the precision
		p := max(int64(roundCtx.Precision), adjusted(x)+1-int64(min(x.Exponent, y.Exponent))+2)
		_, err = roundCtx.WithPrecision(uint32(min(p, 1<<20))).Rem(r, x, y)
	case '^':
		return numericPower(x, y)
	}
	if err != nil {
		return nil, pgerr.Wrap(err, pgerr.NumericValueOutOfRange, "value overflows numeric format")
	}
	if op == '+' || op == '-' {
		if s := max(scaleOf(x), scaleOf(y)); scaleOf(r) < s && r.Form == apd.Finite {
			_, _ = quantize(r, r, -s)
		}
	}
	return r, nil
}

func numericBinary(op byte) kernel {
	return func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		if op == '+' || op == '-' || op == '*' {
			xa, okx := args[0].(*array.String)
			ya, oky := args[1].(*array.String)
			if okx && oky {
				return numericBinarySmall(op, xa, ya, n) // numeric_fast.go
			}
		}
		x, err := readNumerics(args[0])
		if err != nil {
			return nil, err
		}
		y, err := readNumerics(args[1])
		if err != nil {
			return nil, err
		}
		out := make([]*apd.Decimal, n)
		for i := range out {
			if x[i] == nil || y[i] == nil {
				continue
			}
			if out[i], err = numericOp(op, x[i], y[i]); err != nil {
				return nil, err
			}
		}
		return numericResult(ctx, out)
	}
}

func numericUnary(op byte) kernel {
	return func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		x, err := readNumerics(args[0])
		if err != nil {
			return nil, err
		}
		out := make([]*apd.Decimal, n)
		for i, d := range x {
			if d == nil {
				continue
			}
			r := new(apd.Decimal)
			switch op {
			case '-':
				r.Neg(d)
				if r.IsZero() {
					r.Negative = false
				}
			case '@':
				r.Abs(d)
			default:
				r.Set(d)
			}
			out[i] = r
		}
		return numericResult(ctx, out)
	}
}

func init() {
	for _, op := range []byte{'+', '-', '*', '/', '%', '^'} {
		register(&Func{Name: string(op), Args: []types.T{types.TNumeric, types.TNumeric}, Return: types.TNumeric, Strict: true, Kernel: numericBinary(op)})
	}
	for _, op := range []byte{'-', '+', '@'} {
		register(&Func{Name: string(op), Args: []types.T{types.TNumeric}, Return: types.TNumeric, Strict: true, Kernel: numericUnary(op)})
	}
}

// numericPower is numeric ^ numeric with PostgreSQL's result scale: about 16
// significant digits, never fewer decimals than either input has.
func numericPower(x, y *apd.Decimal) (*apd.Decimal, error) {
	if x.Form != apd.Finite || y.Form != apd.Finite {
		return numericSpecialPower(x, y)
	}
	if x.IsZero() && !y.Negative {
		// 0^0 is 1, 0^y is 0 (apd refuses fractional powers of zero).
		r := new(apd.Decimal)
		if y.IsZero() {
			r.SetInt64(1)
		}
		scale := int32(16)
		var yi apd.Decimal
		if _, err := roundCtx.RoundToIntegralValue(&yi, y); err == nil && yi.Cmp(y) == 0 {
			scale = max(scale, scaleOf(x))
		}
		_, err := quantize(r, r, -scale)
		return r, err
	}
	if x.IsZero() && y.Negative {
		return nil, pgerr.New(pgerr.InvalidArgumentForPower, "zero raised to a negative power is undefined")
	}
	if x.Negative {
		var frac apd.Decimal
		if _, err := roundCtx.RoundToIntegralValue(&frac, y); err == nil && frac.Cmp(y) != 0 {
			return nil, pgerr.New(pgerr.InvalidArgumentForPower, "a negative number raised to a non-integer power yields a complex result")
		}
	}
	return numericPowerFinite(x, y)
}

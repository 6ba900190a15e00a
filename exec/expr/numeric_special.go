package expr

import (
	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/pgerr"
)

// Numeric arithmetic on the special values NaN, Infinity and -Infinity,
// following PostgreSQL 15 (which follows POSIX pow() for power). Pure
// functions, safe for concurrent use.

// numericInfOp is numericOp when x or y is ±Infinity (neither NaN), with
// PostgreSQL's results: NaN for inf-inf, inf*0, inf/inf and inf%y; 0 for
// finite/inf; x for finite%inf; division by zero still refused.
func numericInfOp(op byte, x, y *apd.Decimal) (*apd.Decimal, error) {
	nan := &apd.Decimal{Form: apd.NaN}
	inf := func(neg bool) *apd.Decimal { return &apd.Decimal{Form: apd.Infinite, Negative: neg} }
	switch op {
	case '+', '-':
		yneg := y.Negative != (op == '-')
		switch {
		case x.Form == apd.Infinite && y.Form == apd.Infinite:
			if x.Negative != yneg {
				return nan, nil
			}
			return inf(x.Negative), nil
		case x.Form == apd.Infinite:
			return inf(x.Negative), nil
		}
		return inf(yneg), nil
	case '*':
		if x.IsZero() || y.IsZero() {
			return nan, nil
		}
		return inf(x.Negative != y.Negative), nil
	case '/', '%':
		if y.IsZero() {
			return nil, errDivZero
		}
		switch {
		case x.Form == apd.Infinite && y.Form == apd.Infinite:
			return nan, nil
		case x.Form == apd.Infinite && op == '/':
			return inf(x.Negative != y.Negative), nil
		case x.Form == apd.Infinite:
			return nan, nil
		case op == '/':
			return new(apd.Decimal), nil
		}
		return x, nil
	}
	return nil, pgerr.Internal("numeric operator %c", op)
}

// numericSpecialPower is x ^ y when x or y is NaN or infinite: 1^NaN and
// NaN^0 are 1, other NaNs give NaN; the zero and negative-base errors of
// finite powers still apply (infinity counts as an integer).
func numericSpecialPower(x, y *apd.Decimal) (*apd.Decimal, error) {
	one, zero := apd.New(1, 0), new(apd.Decimal)
	nan := &apd.Decimal{Form: apd.NaN}
	inf := func(neg bool) *apd.Decimal { return &apd.Decimal{Form: apd.Infinite, Negative: neg} }
	switch {
	case isNaN(x):
		if y.Form == apd.Finite && y.IsZero() {
			return one, nil
		}
		return nan, nil
	case isNaN(y):
		if x.Form == apd.Finite && x.Cmp(one) == 0 {
			return one, nil
		}
		return nan, nil
	}
	if x.IsZero() && y.Negative {
		return nil, pgerr.New(pgerr.InvalidArgumentForPower, "zero raised to a negative power is undefined")
	}
	integral := y.Form == apd.Infinite
	if !integral {
		var yi apd.Decimal
		_, err := roundCtx.RoundToIntegralValue(&yi, y)
		integral = err == nil && yi.Cmp(y) == 0
	}
	if x.Negative && !x.IsZero() && !integral {
		return nil, pgerr.New(pgerr.InvalidArgumentForPower, "a negative number raised to a non-integer power yields a complex result")
	}
	if y.IsZero() {
		return one, nil
	}
	if x.Form == apd.Infinite {
		switch {
		case y.Negative:
			return zero, nil
		case !x.Negative:
			return inf(false), nil
		}
		// -Infinity to a positive power: negative for odd integers.
		odd := false
		if y.Form == apd.Finite {
			var h, hi apd.Decimal
			_, _ = roundCtx.Quo(&h, y, apd.New(2, 0))
			_, err := roundCtx.RoundToIntegralValue(&hi, &h)
			odd = err == nil && hi.Cmp(&h) != 0
		}
		return inf(odd), nil
	}
	// y is ±Infinity, x finite: compare |x| with 1.
	var ax apd.Decimal
	ax.Abs(x)
	switch c := ax.Cmp(one); {
	case c == 0:
		return one, nil
	case (c < 0) != y.Negative:
		return zero, nil
	}
	return inf(false), nil
}

package expr

import (
	"math/big"

	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// gcd and lcm of numeric, as PostgreSQL 15: on the values scaled to the
// larger of the two scales (gcd(43312.5, 4637.5) is 87.5), never negative,
// NaN when either is NaN or infinite; lcm with a zero is 0. Pure functions.

func init() {
	NU := types.TNumeric
	define(
		rowFn("gcd", NU, []types.T{NU, NU}, func(_ *Context, a []types.Value) (types.Value, error) {
			return numericGcdLcm(a[0].(*apd.Decimal), a[1].(*apd.Decimal), false)
		}),
		rowFn("lcm", NU, []types.T{NU, NU}, func(_ *Context, a []types.Value) (types.Value, error) {
			return numericGcdLcm(a[0].(*apd.Decimal), a[1].(*apd.Decimal), true)
		}),
	)
}

func numericGcdLcm(x, y *apd.Decimal, lcm bool) (*apd.Decimal, error) {
	if x.Form != apd.Finite || y.Form != apd.Finite {
		return &apd.Decimal{Form: apd.NaN}, nil
	}
	scale := max(scaleOf(x), scaleOf(y))
	// the integers x*10^scale and y*10^scale
	whole := func(d *apd.Decimal) *big.Int {
		v := new(big.Int).Abs(d.Coeff.MathBigInt())
		if e := int64(d.Exponent) + int64(scale); e > 0 {
			v.Mul(v, new(big.Int).Exp(big.NewInt(10), big.NewInt(e), nil))
		}
		return v
	}
	a, b := whole(x), whole(y)
	g := new(big.Int).GCD(nil, nil, a, b)
	r := g
	if lcm {
		r = new(big.Int)
		if g.Sign() != 0 {
			r.Quo(a, g).Mul(r, b)
		}
	}
	out := new(apd.Decimal)
	out.Coeff.SetMathBigInt(r)
	out.Exponent = -scale
	if lcm && out.NumDigits()-int64(scale) > 131072 {
		return nil, pgerr.New(pgerr.NumericValueOutOfRange, "value overflows numeric format")
	}
	return out, nil
}

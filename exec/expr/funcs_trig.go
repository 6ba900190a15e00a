package expr

import (
	"math"

	"github.com/streamsql/streamsql/types"
)

// Trigonometry in degrees (sind, cosd, tand, cotd, asind, acosd, atand,
// atan2d) and the hyperbolic functions, for double precision. The degree
// functions follow PostgreSQL's float.c: the argument is reduced to the
// first quadrant and the result scaled by the libm value at a landmark
// angle, so that sind(30) is exactly 0.5 and tand(45) exactly 1. The
// functions are pure and safe for concurrent use.

// The landmark values, computed once with libm as PostgreSQL does (a
// variable, not a constant: the products must be rounded as float64 like
// C's).
var (
	radiansPerDegree = 0.0174532925199432957692
	sin30            = cSin(30.0 * radiansPerDegree)
	oneMinusCos60    = 1.0 - cCos(60.0*radiansPerDegree)
	asin05           = cAsin(0.5)
	acos05           = cAcos(0.5)
	atan10           = cAtan(1.0)
	tan45            = sindQ1(45) / cosdQ1(45)
	cot45            = cosdQ1(45) / sindQ1(45)
)

func sind0to30(x float64) float64 {
	s := cSin(x * radiansPerDegree)
	return float64(s/sin30) / 2.0
}

func cosd0to60(x float64) float64 {
	omc := 1.0 - cCos(x*radiansPerDegree)
	return 1.0 - float64(omc/oneMinusCos60)/2.0
}

func sindQ1(x float64) float64 {
	if x <= 30 {
		return sind0to30(x)
	}
	return cosd0to60(90 - x)
}

func cosdQ1(x float64) float64 {
	if x <= 60 {
		return cosd0to60(x)
	}
	return sind0to30(90 - x)
}

func asindQ1(x float64) float64 {
	if x <= 0.5 {
		return float64(cAsin(x)/asin05) * 30.0
	}
	return 90.0 - float64(cAcos(x)/acos05)*60.0
}

func acosdQ1(x float64) float64 {
	if x <= 0.5 {
		return 90.0 - float64(cAsin(x)/asin05)*30.0
	}
	return float64(cAcos(x)/acos05) * 60.0
}

// reduceOdd folds x (degrees) into [0, 90] for an odd function with
// period 360 whose value at 180-x is the negation (tan, cot) or the same
// (sin, when sameAt180 is set); it returns the reduced angle and sign.
func reduceOdd(x float64, sameAt180 bool) (float64, float64) {
	x = math.Mod(x, 360)
	sign := 1.0
	if x < 0 {
		x, sign = -x, -sign
	}
	if x > 180 {
		x, sign = 360-x, -sign
	}
	if x > 90 {
		x = 180 - x
		if !sameAt180 {
			sign = -sign
		}
	}
	return x, sign
}

func degreeArg(x float64) (nan bool, err error) {
	if math.IsNaN(x) {
		return true, nil
	}
	if math.IsInf(x, 0) {
		return false, errInputOOR
	}
	return false, nil
}

func sind(x float64) (float64, error) {
	if nan, err := degreeArg(x); nan || err != nil {
		return math.NaN(), err
	}
	x, sign := reduceOdd(x, true)
	return sign * sindQ1(x), nil
}

func cosd(x float64) (float64, error) {
	if nan, err := degreeArg(x); nan || err != nil {
		return math.NaN(), err
	}
	x = math.Abs(math.Mod(x, 360))
	sign := 1.0
	if x > 180 {
		x = 360 - x
	}
	if x > 90 {
		x, sign = 180-x, -sign
	}
	return sign * cosdQ1(x), nil
}

func tand(x float64) (float64, error) {
	if nan, err := degreeArg(x); nan || err != nil {
		return math.NaN(), err
	}
	x, sign := reduceOdd(x, false)
	r := sign * float64(sindQ1(x)/cosdQ1(x)/tan45)
	if r == 0 {
		r = 0 // no minus zero
	}
	return r, nil
}

func cotd(x float64) (float64, error) {
	if nan, err := degreeArg(x); nan || err != nil {
		return math.NaN(), err
	}
	x, sign := reduceOdd(x, false)
	r := sign * float64(cosdQ1(x)/sindQ1(x)/cot45)
	if r == 0 {
		r = 0
	}
	return r, nil
}

func asind(x float64) (float64, error) {
	switch {
	case math.IsNaN(x):
		return x, nil
	case x < -1 || x > 1:
		return 0, errInputOOR
	case x >= 0:
		return asindQ1(x), nil
	}
	return -asindQ1(-x), nil
}

func acosd(x float64) (float64, error) {
	switch {
	case math.IsNaN(x):
		return x, nil
	case x < -1 || x > 1:
		return 0, errInputOOR
	case x >= 0:
		return acosdQ1(x), nil
	}
	return 90 + asindQ1(-x), nil
}

func init() {
	F8 := types.TFloat8
	f8 := func(name string, f func(float64) (float64, error)) *Func {
		return &Func{Name: name, Args: []types.T{F8}, Return: F8, Strict: true, Kernel: float8Func(f)}
	}
	register(
		f8("sind", sind), f8("cosd", cosd), f8("tand", tand), f8("cotd", cotd),
		f8("asind", asind), f8("acosd", acosd),
		f8("atand", func(x float64) (float64, error) {
			if math.IsNaN(x) {
				return x, nil
			}
			return float64(cAtan(x)/atan10) * 45.0, nil
		}),
		f8("sinh", pure(cSinh)), f8("cosh", pure(cCosh)), f8("tanh", pure(cTanh)),
		f8("asinh", pure(cAsinh)),
		f8("acosh", func(x float64) (float64, error) {
			if x < 1 {
				return 0, errInputOOR
			}
			return cAcosh(x), nil
		}),
		f8("atanh", func(x float64) (float64, error) {
			if x < -1 || x > 1 {
				return 0, errInputOOR
			}
			if x == 1 || x == -1 {
				return math.Copysign(math.Inf(1), x), nil
			}
			return cAtanh(x), nil
		}),
		f8("|/", func(x float64) (float64, error) {
			if x < 0 {
				return 0, errSqrtNeg
			}
			return math.Sqrt(x), nil
		}),
		f8("||/", pure(cCbrt)),
	)
	define(rowFn("atan2d", F8, []types.T{F8, F8}, func(_ *Context, a []types.Value) (types.Value, error) {
		y, x := a[0].(float64), a[1].(float64)
		if math.IsNaN(y) || math.IsNaN(x) {
			return math.NaN(), nil
		}
		return float64(cAtan2(y, x)/atan10) * 45.0, nil
	}))
}

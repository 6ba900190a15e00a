package expr

import (
	"math"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// PostgreSQL's float8 aggregate support functions, callable from SQL as in
// PostgreSQL: float8_accum and float8_combine over the transition array
// {N, Sx, Sxx} of avg/variance/stddev over float8, float8_regr_accum and
// float8_regr_combine over {N, Sx, Sxx, Sy, Syy, Sxy} of the regr_* and
// corr/covar aggregates. They use the Youngs-Cramer updates (the aggregates
// themselves are in exec/agg_sum.go and exec/agg_regr.go). Pure functions of
// their arguments; safe for concurrent use.

// float8Trans reads a transition array of n elements; PostgreSQL refuses
// another length or a NULL element as an internal error.
func float8Trans(fn string, v types.Value, n int) ([]float64, error) {
	a, ok := v.([]types.Value)
	if ok && len(a) == n {
		out := make([]float64, n)
		for i, e := range a {
			f, isF := e.(float64)
			if !isF {
				ok = false
				break
			}
			out[i] = f
		}
		if ok {
			return out, nil
		}
	}
	return nil, pgerr.New(pgerr.InternalError, "%s: expected %d-element float8 array", fn, n)
}

func float8Array(fs ...float64) types.Value {
	a := make([]types.Value, len(fs))
	for i, f := range fs {
		a[i] = f
	}
	return a
}

func isInfF(f float64) bool { return math.IsInf(f, 0) }

func isNaNOrInf(f float64) bool { return math.IsNaN(f) || math.IsInf(f, 0) }

// float8Plus is float8_pl: overflow to infinity from finite inputs is an error.
func float8Plus(a, b float64) (float64, error) {
	r := a + b
	if isInfF(r) && !isInfF(a) && !isInfF(b) {
		return 0, errOverflow
	}
	return r, nil
}

func float8Accum(t []float64, x float64) (types.Value, error) {
	n0, sx, sxx := t[0], t[1], t[2]
	n := n0 + 1
	sx += x
	if n0 > 0 {
		tmp := x*n - sx
		sxx += tmp * tmp / (n * n0)
		if isInfF(sx) || isInfF(sxx) {
			if !isInfF(t[1]) && !isInfF(x) {
				return nil, errOverflow
			}
			sxx = math.NaN()
		}
	} else if isNaNOrInf(x) {
		sxx = math.NaN()
	}
	return float8Array(n, sx, sxx), nil
}

func float8RegrAccum(t []float64, y, x float64) (types.Value, error) {
	n0, sx, sxx, sy, syy, sxy := t[0], t[1], t[2], t[3], t[4], t[5]
	n := n0 + 1
	sx += x
	sy += y
	if n0 > 0 {
		tx, ty := x*n-sx, y*n-sy
		scale := 1 / (n * n0)
		sxx += tx * tx * scale
		syy += ty * ty * scale
		sxy += tx * ty * scale
		if isInfF(sx) || isInfF(sxx) || isInfF(sy) || isInfF(syy) || isInfF(sxy) {
			if (isInfF(sx) || isInfF(sxx)) && !isInfF(t[1]) && !isInfF(x) ||
				(isInfF(sy) || isInfF(syy)) && !isInfF(t[3]) && !isInfF(y) ||
				isInfF(sxy) && !isInfF(t[1]) && !isInfF(x) && !isInfF(t[3]) && !isInfF(y) {
				return nil, errOverflow
			}
			if isInfF(sxx) {
				sxx = math.NaN()
			}
			if isInfF(syy) {
				syy = math.NaN()
			}
			if isInfF(sxy) {
				sxy = math.NaN()
			}
		}
	} else {
		if isNaNOrInf(x) {
			sxx, sxy = math.NaN(), math.NaN()
		}
		if isNaNOrInf(y) {
			syy, sxy = math.NaN(), math.NaN()
		}
	}
	return float8Array(n, sx, sxx, sy, syy, sxy), nil
}

// float8Combine merges two {N, Sx, Sxx} arrays (float8_combine).
func float8Combine(a, b []float64) (types.Value, error) {
	return float8Merge(a, b, [][3]int{{1, 2, 1}})
}

// float8RegrCombine merges two {N, Sx, Sxx, Sy, Syy, Sxy} arrays
// (float8_regr_combine).
func float8RegrCombine(a, b []float64) (types.Value, error) {
	return float8Merge(a, b, [][3]int{{1, 2, 1}, {3, 4, 3}, {1, 5, 3}})
}

// float8Merge combines transition arrays whose element 0 is N: each term
// {u, s, v} is the co-moment a[s] of the sums at u and v (a sum of squares
// when u == v), merged as PostgreSQL's combine functions do; every sum
// named by a term (u) is added, with float8_pl's overflow check.
func float8Merge(a, b []float64, terms [][3]int) (types.Value, error) {
	switch {
	case a[0] == 0:
		return float8Array(b...), nil
	case b[0] == 0:
		return float8Array(a...), nil
	}
	out := make([]float64, len(a))
	out[0] = a[0] + b[0]
	for _, t := range terms {
		u, s, v := t[0], t[1], t[2]
		if u == v {
			sum, err := float8Plus(a[u], b[u])
			if err != nil {
				return nil, err
			}
			out[u] = sum
		}
		du := a[u]/a[0] - b[u]/b[0]
		dv := a[v]/a[0] - b[v]/b[0]
		out[s] = a[s] + b[s] + a[0]*b[0]*du*dv/out[0]
		if isInfF(out[s]) && !isInfF(a[s]) && !isInfF(b[s]) {
			return nil, errOverflow
		}
	}
	return float8Array(out...), nil
}

func init() {
	F8 := types.TFloat8
	A := types.ArrayOf(F8)
	fn := func(name string, args []types.T, f func(args []types.Value) (types.Value, error)) *Func {
		return &Func{Name: name, Args: args, Return: A, Strict: true,
			Kernel: RowKernel(A, args, func(_ *Context, v []types.Value) (types.Value, error) { return f(v) })}
	}
	define(
		fn("float8_accum", []types.T{A, F8}, func(v []types.Value) (types.Value, error) {
			t, err := float8Trans("float8_accum", v[0], 3)
			if err != nil {
				return nil, err
			}
			return float8Accum(t, v[1].(float64))
		}),
		fn("float8_regr_accum", []types.T{A, F8, F8}, func(v []types.Value) (types.Value, error) {
			t, err := float8Trans("float8_regr_accum", v[0], 6)
			if err != nil {
				return nil, err
			}
			return float8RegrAccum(t, v[1].(float64), v[2].(float64))
		}),
		fn("float8_combine", []types.T{A, A}, func(v []types.Value) (types.Value, error) {
			a, err := float8Trans("float8_combine", v[0], 3)
			if err != nil {
				return nil, err
			}
			b, err := float8Trans("float8_combine", v[1], 3)
			if err != nil {
				return nil, err
			}
			return float8Combine(a, b)
		}),
		fn("float8_regr_combine", []types.T{A, A}, func(v []types.Value) (types.Value, error) {
			a, err := float8Trans("float8_regr_combine", v[0], 6)
			if err != nil {
				return nil, err
			}
			b, err := float8Trans("float8_regr_combine", v[1], 6)
			if err != nil {
				return nil, err
			}
			return float8RegrCombine(a, b)
		}),
	)
}

package exec

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// regrAgg is the two-argument statistics family over double precision,
// fn(Y, X): corr, covar_pop, covar_samp and regr_*. Like PostgreSQL's
// float8_regr_accum it keeps N, Sx, Sy, Sxx, Syy and Sxy with the
// Youngs-Cramer updates; rows where either argument is NULL are skipped.
type regrAgg struct {
	fn string
	s  []RegrState
}

// RegrState is PostgreSQL's float8_regr_accum state: the count, the sums
// of x and y, and the sums of squared deviations and of the products of
// deviations.
type RegrState struct{ N, Sx, Sy, Sxx, Syy, Sxy float64 }

// Add folds in the pair (y, x) as float8_regr_accum does: an infinite or
// NaN input, or an overflow, makes the sums of deviations it reaches NaN.
func (r *RegrState) Add(y, x float64) {
	n0 := r.N
	n := n0 + 1
	sx, sy := r.Sx+x, r.Sy+y
	if n0 > 0 {
		tx, ty := x*n-sx, y*n-sy
		scale := 1 / (n * n0)
		r.Sxx += tx * tx * scale
		r.Syy += ty * ty * scale
		r.Sxy += tx * ty * scale
		if math.IsInf(sx, 0) || math.IsInf(r.Sxx, 0) {
			r.Sxx, r.Sxy = math.NaN(), math.NaN()
		}
		if math.IsInf(sy, 0) || math.IsInf(r.Syy, 0) {
			r.Syy, r.Sxy = math.NaN(), math.NaN()
		}
	} else {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			r.Sxx, r.Sxy = math.NaN(), math.NaN()
		}
		if math.IsNaN(y) || math.IsInf(y, 0) {
			r.Syy, r.Sxy = math.NaN(), math.NaN()
		}
	}
	r.N, r.Sx, r.Sy = n, sx, sy
}

// Combine folds in another state, as PostgreSQL's float8_regr_combine.
func (r *RegrState) Combine(o RegrState) {
	switch {
	case o.N == 0:
		return
	case r.N == 0:
		*r = o
		return
	}
	n := r.N + o.N
	tx := r.Sx/r.N - o.Sx/o.N
	ty := r.Sy/r.N - o.Sy/o.N
	r.Sxx = r.Sxx + o.Sxx + r.N*o.N*tx*tx/n
	r.Syy = r.Syy + o.Syy + r.N*o.N*ty*ty/n
	r.Sxy = r.Sxy + o.Sxy + r.N*o.N*tx*ty/n
	r.N, r.Sx, r.Sy = n, r.Sx+o.Sx, r.Sy+o.Sy
}

// RegrResult is fn's value over state r (corr, covar_pop, covar_samp,
// regr_avgx, regr_avgy, regr_intercept, regr_r2, regr_slope, regr_sxx,
// regr_sxy, regr_syy; regr_count is r.N), or null, as PostgreSQL's final
// functions give them.
func RegrResult(fn string, r RegrState) (v float64, null bool) {
	n, sx, sy, sxx, syy, sxy := r.N, r.Sx, r.Sy, r.Sxx, r.Syy, r.Sxy
	if n < 1 || (fn == "covar_samp" && n < 2) {
		return 0, true
	}
	switch fn {
	case "covar_pop":
		v = sxy / n
	case "covar_samp":
		v = sxy / (n - 1)
	case "corr":
		if sxx == 0 || syy == 0 {
			return 0, true
		}
		v = sxy / math.Sqrt(sxx*syy)
	case "regr_slope", "regr_intercept":
		if sxx == 0 {
			return 0, true
		}
		v = sxy / sxx
		if fn == "regr_intercept" {
			v = (sy - sx*sxy/sxx) / n
		}
	case "regr_r2":
		switch {
		case sxx == 0:
			return 0, true
		case syy == 0:
			v = 1
		default:
			v = sxy * sxy / (sxx * syy)
		}
	case "regr_avgx":
		v = sx / n
	case "regr_avgy":
		v = sy / n
	case "regr_sxx":
		v = sxx
	case "regr_syy":
		v = syy
	case "regr_sxy":
		v = sxy
	}
	return v, false
}

func (r *regrAgg) grow(n int) { r.s = growSlice(r.s, n) }

func (r *regrAgg) update(args []arrow.Array, gids []int32) error {
	ya, xa := args[0].(*array.Float64), args[1].(*array.Float64)
	for i, g := range gids {
		if g < 0 || ya.IsNull(i) || xa.IsNull(i) {
			continue
		}
		r.s[g].Add(ya.Value(i), xa.Value(i))
	}
	return nil
}

func (r *regrAgg) appendResult(b array.Builder, g int) error {
	if r.fn == "regr_count" {
		b.(*array.Int64Builder).Append(int64(r.s[g].N))
		return nil
	}
	fb := b.(*array.Float64Builder)
	if v, null := RegrResult(r.fn, r.s[g]); null {
		fb.AppendNull()
	} else {
		fb.Append(v)
	}
	return nil
}

// bitAgg is bit_and, bit_or and bit_xor over integers.
type bitAgg struct {
	op  byte // '&', '|', '^'
	v   []int64
	has []bool
}

func (m *bitAgg) grow(n int) { m.v = growSlice(m.v, n); m.has = growSlice(m.has, n) }

func (m *bitAgg) update(args []arrow.Array, gids []int32) error {
	x := args[0]
	vals, _ := int64Values(x)
	for i, g := range gids {
		if g < 0 || x.IsNull(i) {
			continue
		}
		v := vals[i]
		switch {
		case !m.has[g]:
			m.v[g], m.has[g] = v, true
		case m.op == '&':
			m.v[g] &= v
		case m.op == '|':
			m.v[g] |= v
		default:
			m.v[g] ^= v
		}
	}
	return nil
}

func (m *bitAgg) appendResult(b array.Builder, g int) error {
	if !m.has[g] {
		b.AppendNull()
	} else {
		appendInt64Like(b, m.v[g])
	}
	return nil
}

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
	fn                       string
	n, sx, sy, sxx, syy, sxy []float64
}

func (r *regrAgg) grow(n int) {
	r.n, r.sx, r.sy = growSlice(r.n, n), growSlice(r.sx, n), growSlice(r.sy, n)
	r.sxx, r.syy, r.sxy = growSlice(r.sxx, n), growSlice(r.syy, n), growSlice(r.sxy, n)
}

func (r *regrAgg) update(args []arrow.Array, gids []int32) error {
	ya, xa := args[0].(*array.Float64), args[1].(*array.Float64)
	for i, g := range gids {
		if g < 0 || ya.IsNull(i) || xa.IsNull(i) {
			continue
		}
		y, x := ya.Value(i), xa.Value(i)
		n0 := r.n[g]
		n := n0 + 1
		sx, sy := r.sx[g]+x, r.sy[g]+y
		if n0 > 0 {
			tx, ty := x*n-sx, y*n-sy
			scale := 1 / (n * n0)
			r.sxx[g] += tx * tx * scale
			r.syy[g] += ty * ty * scale
			r.sxy[g] += tx * ty * scale
			if math.IsInf(sx, 0) || math.IsInf(r.sxx[g], 0) {
				r.sxx[g], r.sxy[g] = math.NaN(), math.NaN()
			}
			if math.IsInf(sy, 0) || math.IsInf(r.syy[g], 0) {
				r.syy[g], r.sxy[g] = math.NaN(), math.NaN()
			}
		} else {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				r.sxx[g], r.sxy[g] = math.NaN(), math.NaN()
			}
			if math.IsNaN(y) || math.IsInf(y, 0) {
				r.syy[g], r.sxy[g] = math.NaN(), math.NaN()
			}
		}
		r.n[g], r.sx[g], r.sy[g] = n, sx, sy
	}
	return nil
}

func (r *regrAgg) appendResult(b array.Builder, g int) error {
	n, sx, sy, sxx, syy, sxy := r.n[g], r.sx[g], r.sy[g], r.sxx[g], r.syy[g], r.sxy[g]
	if r.fn == "regr_count" {
		b.(*array.Int64Builder).Append(int64(n))
		return nil
	}
	fb := b.(*array.Float64Builder)
	if n < 1 || (r.fn == "covar_samp" && n < 2) {
		fb.AppendNull()
		return nil
	}
	var v float64
	switch r.fn {
	case "covar_pop":
		v = sxy / n
	case "covar_samp":
		v = sxy / (n - 1)
	case "corr":
		if sxx == 0 || syy == 0 {
			fb.AppendNull()
			return nil
		}
		v = sxy / math.Sqrt(sxx*syy)
	case "regr_slope", "regr_intercept":
		if sxx == 0 {
			fb.AppendNull()
			return nil
		}
		v = sxy / sxx
		if r.fn == "regr_intercept" {
			v = (sy - sx*sxy/sxx) / n
		}
	case "regr_r2":
		switch {
		case sxx == 0:
			fb.AppendNull()
			return nil
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
	fb.Append(v)
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

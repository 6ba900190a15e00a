package exec

import (
	"math"
	"math/big"
	"math/bits"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/pgerr"
)

// count(*) and count(x).
type countAgg struct {
	star bool
	n    []int64
}

func (c *countAgg) grow(n int) { c.n = growSlice(c.n, n) }

func (c *countAgg) update(args []arrow.Array, gids []int32) error {
	cnt := c.n
	if c.star || args[0].NullN() == 0 {
		for _, g := range gids {
			if g >= 0 {
				cnt[g]++
			}
		}
		return nil
	}
	a := args[0]
	for i, g := range gids {
		if g >= 0 && a.IsValid(i) {
			cnt[g]++
		}
	}
	return nil
}

func (c *countAgg) appendResult(b array.Builder, g int) error {
	b.(*array.Int64Builder).Append(c.n[g])
	return nil
}

// int128 is a signed 128-bit accumulator: sums of bigints never overflow.
type int128 struct {
	lo uint64
	hi int64
}

func (s *int128) add(v int64) {
	var c uint64
	s.lo, c = bits.Add64(s.lo, uint64(v), 0)
	s.hi += (v >> 63) + int64(c)
}

func (s int128) decimal() *apd.Decimal {
	if s.hi == int64(s.lo)>>63 {
		return apd.New(int64(s.lo), 0)
	}
	bi := new(big.Int).SetInt64(s.hi)
	bi.Lsh(bi, 64)
	bi.Add(bi, new(big.Int).SetUint64(s.lo))
	d := new(apd.Decimal)
	d.Coeff.SetMathBigInt(bi)
	if d.Coeff.Sign() < 0 {
		d.Coeff.Neg(&d.Coeff)
		d.Negative = true
	}
	return d
}

func (s int128) text() string {
	if s.hi == int64(s.lo)>>63 {
		return strconv.FormatInt(int64(s.lo), 10)
	}
	return numericText(s.decimal())
}

// intSum sums integers: sum(int2/int4) is bigint (errors on overflow),
// sum(int8) is numeric (int128, cannot overflow), avg(int*) is numeric.
type intSum struct {
	avg     bool
	numeric bool // sum result is numeric
	s       []int128
	n       []int64
}

func (a *intSum) grow(n int) {
	a.s = growSlice(a.s, n)
	a.n = growSlice(a.n, n)
}

func (a *intSum) update(args []arrow.Array, gids []int32) error {
	s, cnt := a.s, a.n
	x := args[0]
	v, _ := int64Values(x)
	if x.NullN() == 0 {
		for i, g := range gids {
			if g >= 0 {
				s[g].add(v[i])
				cnt[g]++
			}
		}
		return nil
	}
	for i, g := range gids {
		if g >= 0 && x.IsValid(i) {
			s[g].add(v[i])
			cnt[g]++
		}
	}
	return nil
}

func (a *intSum) appendResult(b array.Builder, g int) error {
	if a.n[g] == 0 {
		b.AppendNull()
		return nil
	}
	s := a.s[g]
	switch {
	case a.avg:
		if s.hi == int64(s.lo)>>63 {
			if txt, ok := avgIntText(int64(s.lo), a.n[g]); ok {
				b.(*array.StringBuilder).Append(txt)
				return nil
			}
		}
		q, err := numericDiv(s.decimal(), apd.New(a.n[g], 0))
		if err != nil {
			return err
		}
		b.(*array.StringBuilder).Append(numericText(q))
	case a.numeric:
		b.(*array.StringBuilder).Append(s.text())
	default:
		if s.hi != int64(s.lo)>>63 {
			return pgerr.New(pgerr.NumericValueOutOfRange, "bigint out of range")
		}
		b.(*array.Int64Builder).Append(int64(s.lo))
	}
	return nil
}

// floatSum is sum(real) (accumulated in float4, as PostgreSQL does) and
// sum(double precision).
type floatSum struct {
	f32 bool
	s   []float64
	has []bool
}

func (a *floatSum) grow(n int) {
	a.s = growSlice(a.s, n)
	a.has = growSlice(a.has, n)
}

func (a *floatSum) update(args []arrow.Array, gids []int32) error {
	x := args[0]
	switch v := x.(type) {
	case *array.Float32:
		vals := v.Float32Values()
		for i, g := range gids {
			if g >= 0 && x.IsValid(i) {
				a.s[g] = float64(float32(a.s[g]) + vals[i])
				a.has[g] = true
			}
		}
	case *array.Float64:
		vals := v.Float64Values()
		for i, g := range gids {
			if g >= 0 && x.IsValid(i) {
				a.s[g] += vals[i]
				a.has[g] = true
			}
		}
	}
	return nil
}

func (a *floatSum) appendResult(b array.Builder, g int) error {
	if !a.has[g] {
		b.AppendNull()
		return nil
	}
	appendFloat(b, a.s[g])
	return nil
}

// floatStats is PostgreSQL's float8_accum (Youngs-Cramer): avg, variance
// and stddev over real and double precision.
type floatStats struct {
	fn         string
	n, sx, sxx []float64
}

func (a *floatStats) grow(n int) {
	a.n = growSlice(a.n, n)
	a.sx = growSlice(a.sx, n)
	a.sxx = growSlice(a.sxx, n)
}

// add folds x into group g; finite values whose sum or squares overflow
// fail, as in PostgreSQL's float8_accum.
func (a *floatStats) add(g int32, x float64) error {
	var over bool
	a.n[g], a.sx[g], a.sxx[g], over = floatStatStep(a.n[g], a.sx[g], a.sxx[g], x)
	if over {
		return pgerr.New(pgerr.NumericValueOutOfRange, "value out of range: overflow")
	}
	return nil
}

// FloatStatAdd folds x into a Youngs-Cramer state (n values, their sum sx
// and the sum of their squared deviations sxx), as PostgreSQL's
// float8_accum does: an infinite or NaN input, or an overflow, makes sxx
// NaN. (Where finite values overflow, PostgreSQL fails, as the batch
// engine does; a view's state takes the NaN instead: exec/stream/aggvar.go.)
func FloatStatAdd(n0, sx, sxx, x float64) (n, sx1, sxx1 float64) {
	n, sx1, sxx1, _ = floatStatStep(n0, sx, sxx, x)
	return n, sx1, sxx1
}

// floatStatStep is FloatStatAdd that also reports an overflow of finite
// values (float8_accum's float_overflow_error).
func floatStatStep(n0, sx0, sxx, x float64) (n, sx, sxx1 float64, overflow bool) {
	n = n0 + 1
	sx = sx0 + x
	if n0 > 0 {
		t := x*n - sx
		sxx += t * t / (n * n0)
		if math.IsInf(sx, 0) || math.IsInf(sxx, 0) {
			overflow = !math.IsInf(sx0, 0) && !math.IsInf(x, 0)
			sxx = math.NaN()
		}
	} else if math.IsNaN(x) || math.IsInf(x, 0) {
		sxx = math.NaN()
	}
	return n, sx, sxx, overflow
}

// FloatStat is the variance-family aggregate fn over a Youngs-Cramer state
// of n values (n past StatIsNull), as PostgreSQL's float8_var_samp and the
// like compute it.
func FloatStat(fn string, n, sxx float64) float64 {
	var v float64
	switch fn {
	case "var_pop", "stddev_pop":
		v = sxx / n
	default:
		v = sxx / (n - 1)
	}
	if fn == "stddev" || fn == "stddev_samp" || fn == "stddev_pop" {
		v = math.Sqrt(v)
	}
	return v
}

func (a *floatStats) update(args []arrow.Array, gids []int32) error {
	x := args[0]
	switch v := x.(type) {
	case *array.Float32:
		for i, g := range gids {
			if g >= 0 && x.IsValid(i) {
				if err := a.add(g, float64(v.Value(i))); err != nil {
					return err
				}
			}
		}
	case *array.Float64:
		for i, g := range gids {
			if g >= 0 && x.IsValid(i) {
				if err := a.add(g, v.Value(i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (a *floatStats) appendResult(b array.Builder, g int) error {
	n, sx, sxx := a.n[g], a.sx[g], a.sxx[g]
	fb := b.(*array.Float64Builder)
	switch a.fn {
	case "avg":
		if n == 0 {
			fb.AppendNull()
		} else {
			fb.Append(sx / n)
		}
	default: // the variance family
		if StatIsNull(a.fn, int64(n)) {
			fb.AppendNull()
			return nil
		}
		fb.Append(FloatStat(a.fn, n, sxx))
	}
	return nil
}

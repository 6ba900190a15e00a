package exec

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// numericAgg computes sum and avg of numeric, and the variance family over
// integers and numeric, exactly with apd, with PostgreSQL's result scales.
type numericAgg struct {
	fn      string // sum, avg, variance, var_samp, var_pop, stddev, stddev_samp, stddev_pop
	n       []int64
	sx, sxx []apd.Decimal
	nan     []bool
	// pinf, ninf: the group had a +Infinity / -Infinity input (kept apart
	// from sx, as PostgreSQL's NumericAggState counts them)
	pinf, ninf []bool
	tmp, sq    apd.Decimal
}

func (a *numericAgg) stats() bool { return a.fn != "sum" && a.fn != "avg" }

func (a *numericAgg) grow(n int) {
	a.n = growSlice(a.n, n)
	a.sx = growSlice(a.sx, n)
	a.nan = growSlice(a.nan, n)
	a.pinf = growSlice(a.pinf, n)
	a.ninf = growSlice(a.ninf, n)
	if a.stats() {
		a.sxx = growSlice(a.sxx, n)
	}
}

func (a *numericAgg) add(g int32, x *apd.Decimal) error {
	a.n[g]++
	if _, err := apd.BaseContext.Add(&a.sx[g], &a.sx[g], x); err != nil {
		return pgerr.Wrap(err, pgerr.NumericValueOutOfRange, "value overflows numeric format")
	}
	if a.stats() {
		if _, err := apd.BaseContext.Mul(&a.sq, x, x); err != nil {
			return pgerr.Wrap(err, pgerr.NumericValueOutOfRange, "value overflows numeric format")
		}
		if _, err := apd.BaseContext.Add(&a.sxx[g], &a.sxx[g], &a.sq); err != nil {
			return pgerr.Wrap(err, pgerr.NumericValueOutOfRange, "value overflows numeric format")
		}
	}
	return nil
}

func (a *numericAgg) update(args []arrow.Array, gids []int32) error {
	x := args[0]
	if s, ok := x.(*array.String); ok {
		for i, g := range gids {
			if g < 0 || s.IsNull(i) {
				continue
			}
			if parseNumeric(s.Value(i), &a.tmp) {
				a.n[g]++
				a.nan[g] = true
				continue
			}
			if a.tmp.Form == apd.Infinite {
				a.n[g]++
				if a.tmp.Negative {
					a.ninf[g] = true
				} else {
					a.pinf[g] = true
				}
				continue
			}
			if err := a.add(g, &a.tmp); err != nil {
				return err
			}
		}
		return nil
	}
	v, _ := int64Values(x)
	for i, g := range gids {
		if g < 0 || x.IsNull(i) {
			continue
		}
		a.tmp.SetInt64(v[i])
		if err := a.add(g, &a.tmp); err != nil {
			return err
		}
	}
	return nil
}

func (a *numericAgg) appendResult(b array.Builder, g int) error {
	sb := b.(*array.StringBuilder)
	n := a.n[g]
	if n == 0 || (n == 1 && a.fn != "sum" && a.fn != "avg" && a.fn != "var_pop" && a.fn != "stddev_pop") {
		sb.AppendNull()
		return nil
	}
	// NaN, or infinities: the variance family is NaN, sum and avg follow
	// the infinity's sign (NaN when both signs appear).
	if a.nan[g] || (a.pinf[g] && a.ninf[g]) || (a.stats() && (a.pinf[g] || a.ninf[g])) {
		sb.Append("NaN")
		return nil
	}
	if a.pinf[g] {
		sb.Append("Infinity")
		return nil
	}
	if a.ninf[g] {
		sb.Append("-Infinity")
		return nil
	}
	switch a.fn {
	case "sum":
		if err := types.CheckNumericRange(&a.sx[g]); err != nil {
			return err
		}
		sb.Append(numericText(&a.sx[g]))
		return nil
	case "avg":
		// PostgreSQL makes the sum a numeric before dividing: a sum beyond
		// numeric's range overflows even when the average would not
		if err := types.CheckNumericRange(&a.sx[g]); err != nil {
			return err
		}
		q, err := numericDiv(&a.sx[g], apd.New(n, 0))
		if err != nil {
			return err
		}
		sb.Append(numericText(q))
		return nil
	}
	q, err := NumericStat(a.fn, n, &a.sx[g], &a.sxx[g])
	if err != nil {
		return err
	}
	sb.Append(numericText(q))
	return nil
}

// StatIsNull reports whether the variance-family aggregate fn (variance,
// var_samp, var_pop, stddev, stddev_samp, stddev_pop) is NULL over n
// values: none, or one for the sample forms.
func StatIsNull(fn string, n int64) bool {
	if fn == "var_pop" || fn == "stddev_pop" {
		return n == 0
	}
	return n <= 1
}

// NumericStat is PostgreSQL's numeric_stddev_internal: the variance-family
// aggregate fn over n finite values whose sum is sx and sum of squares sxx,
// with PostgreSQL's result scale (n past StatIsNull).
func NumericStat(fn string, n int64, sx, sxx *apd.Decimal) (*apd.Decimal, error) {
	var num, t apd.Decimal
	vn := apd.New(n, 0)
	if _, err := apd.BaseContext.Mul(&t, sx, sx); err != nil {
		return nil, err
	}
	if _, err := apd.BaseContext.Mul(&num, vn, sxx); err != nil {
		return nil, err
	}
	if _, err := apd.BaseContext.Sub(&num, &num, &t); err != nil {
		return nil, err
	}
	if num.Sign() <= 0 {
		return apd.New(0, 0), nil
	}
	var den apd.Decimal
	switch fn {
	case "var_pop", "stddev_pop":
		apd.BaseContext.Mul(&den, vn, vn)
	default:
		apd.BaseContext.Mul(&den, vn, apd.New(n-1, 0))
	}
	scale := divScale(&num, &den)
	q, err := numericDivScale(&num, &den, scale)
	if err != nil {
		return nil, err
	}
	if fn == "stddev" || fn == "stddev_samp" || fn == "stddev_pop" {
		if q, err = numericSqrt(q, scale); err != nil {
			return nil, err
		}
	}
	if err := types.CheckNumericRange(q); err != nil {
		return nil, err
	}
	return q, nil
}

// intervalAgg is sum(interval) and avg(interval).
type intervalAgg struct {
	avg bool
	s   []arrow.MonthDayNanoInterval
	n   []int64
}

func (a *intervalAgg) grow(n int) {
	a.s = growSlice(a.s, n)
	a.n = growSlice(a.n, n)
}

func (a *intervalAgg) update(args []arrow.Array, gids []int32) error {
	x := args[0].(*array.MonthDayNanoInterval)
	for i, g := range gids {
		if g < 0 || x.IsNull(i) {
			continue
		}
		v := x.Value(i)
		s := &a.s[g]
		m := int64(s.Months) + int64(v.Months)
		d := int64(s.Days) + int64(v.Days)
		if m != int64(int32(m)) || d != int64(int32(d)) {
			return pgerr.New(pgerr.DatetimeFieldOverflow, "interval out of range")
		}
		s.Months, s.Days = int32(m), int32(d)
		s.Nanoseconds += v.Nanoseconds
		a.n[g]++
	}
	return nil
}

func (a *intervalAgg) appendResult(b array.Builder, g int) error {
	ib := b.(*array.MonthDayNanoIntervalBuilder)
	if a.n[g] == 0 {
		ib.AppendNull()
		return nil
	}
	v := a.s[g]
	if a.avg {
		v = intervalDiv(v, float64(a.n[g]))
	}
	ib.Append(v)
	return nil
}

// intervalDiv is PostgreSQL's interval_div: months and days divide, their
// fractions cascade down to days and microseconds.
func intervalDiv(v arrow.MonthDayNanoInterval, f float64) arrow.MonthDayNanoInterval {
	const daysPerMonth, secsPerDay = 30.0, 86400.0
	tsround := func(x float64) float64 { return math.RoundToEven(x*1e6) / 1e6 }
	months := int32(float64(v.Months) / f)
	days := int32(float64(v.Days) / f)
	monthRemDays := tsround((float64(v.Months)/f - float64(months)) * daysPerMonth)
	secRem := tsround((float64(v.Days)/f - float64(days) + monthRemDays - float64(int64(monthRemDays))) * secsPerDay)
	if math.Abs(secRem) >= secsPerDay {
		days += int32(secRem / secsPerDay)
		secRem -= float64(int64(secRem/secsPerDay)) * secsPerDay
	}
	days += int32(monthRemDays)
	micros := math.RoundToEven(float64(v.Nanoseconds)/f + secRem*1e6) // the field holds µs
	return arrow.MonthDayNanoInterval{Months: months, Days: days, Nanoseconds: int64(micros)}
}

// NumericStatFunc is the scalar function that finishes the variance-family
// aggregate fn (variance, var_samp, var_pop, stddev, stddev_samp,
// stddev_pop) over integers or numeric from the count of its values (int8),
// their sum and the sum of their squares (numeric): a streaming
// aggregation keeps the three exactly, and this computes what
// PostgreSQL's numeric_stddev_internal does. A NaN or an infinity in the
// sums makes it NaN, as an infinite input makes PostgreSQL's.
func NumericStatFunc(fn string) *expr.Func {
	return &expr.Func{
		Name:   fn,
		Args:   []types.T{types.TInt8, types.TNumeric, types.TNumeric},
		Return: types.TNumeric,
		Kernel: func(ctx *expr.Context, args []arrow.Array, n int) (arrow.Array, error) {
			cnt, _ := args[0].(*array.Int64)
			sx, _ := args[1].(*array.String)
			sxx, _ := args[2].(*array.String)
			if cnt == nil || sx == nil || sxx == nil {
				return nil, pgerr.Internal("exec: %s's finish over %s, %s, %s", fn, args[0].DataType(), args[1].DataType(), args[2].DataType())
			}
			b := array.NewStringBuilder(ctx.Allocator())
			defer b.Release()
			var x, xx apd.Decimal
			for i := range n {
				if cnt.IsNull(i) || StatIsNull(fn, cnt.Value(i)) || sx.IsNull(i) || sxx.IsNull(i) {
					b.AppendNull()
					continue
				}
				if parseNumeric(sx.Value(i), &x) || parseNumeric(sxx.Value(i), &xx) || x.Form != apd.Finite || xx.Form != apd.Finite {
					b.Append("NaN")
					continue
				}
				q, err := NumericStat(fn, cnt.Value(i), &x, &xx)
				if err != nil {
					return nil, err
				}
				b.Append(numericText(q))
			}
			return b.NewArray(), nil
		},
	}
}

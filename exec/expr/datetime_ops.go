package expr

import (
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Date/time arithmetic operators, applied as PostgreSQL does: an interval's
// months, days and microseconds are added in that order; months clamp the
// day to the end of the month; for timestamptz the month and day parts are
// applied on the session's local clock.

var errTSRange = pgerr.New(pgerr.DatetimeFieldOverflow, "timestamp out of range")

// addMonthsDays adds months and days to a wall-clock timestamp; false when
// the timestamp after the months, or after the days, is out of range (as
// PostgreSQL's timestamp_pl_interval checks each step).
func addMonthsDays(us int64, months, days int32) (int64, bool) {
	if months == 0 && days == 0 {
		return us, true
	}
	t := wallTime(us)
	y, m, d := t.Date()
	if months != 0 {
		mm := int(m) - 1 + int(months)
		y += floorDivInt(mm, 12)
		m = time.Month(mm - floorDivInt(mm, 12)*12 + 1)
		if dim := daysIn(y, m); d > dim {
			d = dim
		}
	}
	tod := us - floorDiv64(us, usPerDay)*usPerDay
	day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
	if months != 0 && !tsDayInRange(day, tod) {
		return 0, false
	}
	day += int64(days)
	if !tsDayInRange(day, tod) {
		return 0, false
	}
	return day*usPerDay + tod, true
}

// tsDayInRange reports whether day (since 1970-01-01) at time of day tod
// is a finite timestamp.
func tsDayInRange(day, tod int64) bool {
	if day < types.TimestampMin/usPerDay-1 || day > types.TimestampMax/usPerDay {
		return false
	}
	r := day*usPerDay + tod
	return r >= types.TimestampMin && r <= types.TimestampMax
}

func floorDivInt(a, b int) int {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func daysIn(y int, m time.Month) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// tsPlusInterval is timestamp + interval; tz selects timestamptz semantics.
func tsPlusInterval(us int64, iv types.IntervalValue, tz bool, loc *time.Location) (int64, error) {
	if isInfTS(us) {
		return us, nil
	}
	if tz && (iv.Months != 0 || iv.Days != 0) {
		wall, ok := addMonthsDays(instantToWall(us, loc), iv.Months, iv.Days)
		if !ok {
			return 0, errTSRange
		}
		us = wallToInstant(wall, loc)
	} else {
		var ok bool
		if us, ok = addMonthsDays(us, iv.Months, iv.Days); !ok {
			return 0, errTSRange
		}
	}
	r := us + iv.Micros
	if (iv.Micros > 0 && r < us) || (iv.Micros < 0 && r > us) || r < types.TimestampMin || r > types.TimestampMax {
		return 0, errTSRange
	}
	return r, nil
}

func negInterval(v types.IntervalValue) (types.IntervalValue, error) {
	if v.Months == math.MinInt32 || v.Days == math.MinInt32 || v.Micros == math.MinInt64 {
		return v, pgerr.New(pgerr.DatetimeFieldOverflow, "interval out of range")
	}
	return types.IntervalValue{Months: -v.Months, Days: -v.Days, Micros: -v.Micros}, nil
}

// tsDiff is timestamp - timestamp: a day-and-time interval, hours folded
// into days as justify_hours does.
func tsDiff(a, b int64) (types.IntervalValue, error) {
	if isInfTS(a) || isInfTS(b) {
		return types.IntervalValue{}, pgerr.New(pgerr.DatetimeFieldOverflow, "cannot subtract infinite timestamps")
	}
	return justifyHours(types.IntervalValue{Micros: a - b})
}

func intervalOutOfRange() error {
	return pgerr.New(pgerr.DatetimeFieldOverflow, "interval out of range")
}

// addDays32 adds to an interval's int32 days or months, false on overflow.
func addDays32(a *int32, b int64) bool {
	c := int64(*a) + b
	if c < math.MinInt32 || c > math.MaxInt32 {
		return false
	}
	*a = int32(c)
	return true
}

// justifyHours is interval_justify_hours: whole days out of the time.
func justifyHours(v types.IntervalValue) (types.IntervalValue, error) {
	d := v.Micros / usPerDay
	v.Micros -= d * usPerDay
	if !addDays32(&v.Days, d) {
		return v, intervalOutOfRange()
	}
	if v.Days > 0 && v.Micros < 0 {
		v.Micros += usPerDay
		v.Days--
	} else if v.Days < 0 && v.Micros > 0 {
		v.Micros -= usPerDay
		v.Days++
	}
	return v, nil
}

// justifyDays is interval_justify_days: 30-day months out of the days.
func justifyDays(v types.IntervalValue) (types.IntervalValue, error) {
	m := v.Days / 30
	v.Days -= m * 30
	if !addDays32(&v.Months, int64(m)) {
		return v, intervalOutOfRange()
	}
	if v.Months > 0 && v.Days < 0 {
		v.Days += 30
		v.Months--
	} else if v.Months < 0 && v.Days > 0 {
		v.Days -= 30
		v.Months++
	}
	return v, nil
}

// justifyInterval is interval_justify_interval: both, with one sign.
func justifyInterval(v types.IntervalValue) (types.IntervalValue, error) {
	if (v.Days > 0 && v.Micros > 0) || (v.Days < 0 && v.Micros < 0) {
		// pre-justify days when it might prevent an overflow
		m := v.Days / 30
		v.Days -= m * 30
		if !addDays32(&v.Months, int64(m)) {
			return v, intervalOutOfRange()
		}
	}
	d := v.Micros / usPerDay
	v.Micros -= d * usPerDay
	v.Days += int32(d) // |days| < 30 here, or of the other sign: no overflow
	m := v.Days / 30
	v.Days -= m * 30
	if !addDays32(&v.Months, int64(m)) {
		return v, intervalOutOfRange()
	}
	if v.Months > 0 && (v.Days < 0 || v.Days == 0 && v.Micros < 0) {
		v.Days += 30
		v.Months--
	} else if v.Months < 0 && (v.Days > 0 || v.Days == 0 && v.Micros > 0) {
		v.Days -= 30
		v.Months++
	}
	if v.Days > 0 && v.Micros < 0 {
		v.Micros += usPerDay
		v.Days--
	} else if v.Days < 0 && v.Micros > 0 {
		v.Micros -= usPerDay
		v.Days++
	}
	return v, nil
}

// intervalMul is interval * factor with PostgreSQL's cascading of
// fractional months into days and fractional days into time.
func intervalMul(v types.IntervalValue, f float64) (types.IntervalValue, error) {
	return intervalScale(v, f, false)
}

// tsRound is PostgreSQL's TSROUND: rounds to microsecond precision.
func tsRound(x float64) float64 { return math.RoundToEven(x*1e6) / 1e6 }

// intervalScale is interval_mul (div false: v * f) and interval_div (div
// true: v / f): whole months and days are kept, their fractions cascade
// down (a month is 30 days, a day 86400 seconds), never up.
func intervalScale(v types.IntervalValue, f float64, div bool) (types.IntervalValue, error) {
	overflow := pgerr.New(pgerr.DatetimeFieldOverflow, "interval out of range")
	if math.IsNaN(f) || math.IsInf(f, 0) && !div { // PostgreSQL 15: v / ±Infinity is 0
		return v, overflow
	}
	op := func(x float64) float64 {
		if div {
			return x / f
		}
		return x * f
	}
	months, days := op(float64(v.Months)), op(float64(v.Days))
	if math.IsNaN(months) || math.Abs(months) > math.MaxInt32 || math.IsNaN(days) || math.Abs(days) > math.MaxInt32 {
		return v, overflow
	}
	rm, rd := int32(months), int64(int32(days))
	monthRemDays := tsRound((months - float64(rm)) * 30)
	secRem := tsRound((days - float64(int32(days)) + monthRemDays - math.Trunc(monthRemDays)) * 86400)
	if math.Abs(secRem) >= 86400 {
		rd += int64(secRem / 86400)
		secRem -= math.Trunc(secRem/86400) * 86400
	}
	rd += int64(monthRemDays)
	if rd > math.MaxInt32 || rd < math.MinInt32 {
		return v, overflow
	}
	micros := math.RoundToEven(op(float64(v.Micros)) + secRem*1e6)
	if math.IsNaN(micros) || micros >= 9.2233720368547758e18 || micros < -9.2233720368547758e18 {
		return v, overflow
	}
	return types.IntervalValue{Months: rm, Days: int32(rd), Micros: int64(micros)}, nil
}

// dtKernel builds a strict row kernel over typed values.
func dtKernel(ret types.T, args []types.T, fn func(ctx *Context, a []types.Value) (types.Value, error)) *Func {
	return &Func{Args: args, Return: ret, Strict: true, Kernel: RowKernel(ret, args, fn)}
}

func named(name string, f *Func) *Func { f.Name = name; return f }

func init() {
	D, I4, TS, TZ, IV, T, F8 := types.TDate, types.TInt4, types.TTimestamp, types.TTimestampTZ, types.TInterval, types.TTime, types.TFloat8
	dateInt := func(sign int64) func(*Context, []types.Value) (types.Value, error) {
		return func(_ *Context, a []types.Value) (types.Value, error) {
			d := int64(a[0].(types.DateValue))
			if d == dateInfinity || d == dateNegInf {
				return a[0], nil
			}
			r := d + sign*a[1].(int64)
			if !types.DateInRange(r) { // PostgreSQL's date_pli and date_mii
				return nil, pgerr.New(pgerr.DatetimeFieldOverflow, "date out of range")
			}
			return types.DateValue(r), nil
		}
	}
	tsIv := func(sign int32, tz bool) func(*Context, []types.Value) (types.Value, error) {
		return func(ctx *Context, a []types.Value) (types.Value, error) {
			iv := a[1].(types.IntervalValue)
			if sign < 0 {
				var err error
				if iv, err = negInterval(iv); err != nil {
					return nil, err
				}
			}
			var us int64
			switch x := a[0].(type) {
			case types.DateValue:
				us = dateToTS(int32(x))
			case types.TimestampValue:
				us = int64(x)
			}
			r, err := tsPlusInterval(us, iv, tz, ctx.location())
			return types.TimestampValue(r), err
		}
	}
	swap := func(f func(*Context, []types.Value) (types.Value, error)) func(*Context, []types.Value) (types.Value, error) {
		return func(ctx *Context, a []types.Value) (types.Value, error) { return f(ctx, []types.Value{a[1], a[0]}) }
	}
	ivIv := func(sign int64) func(*Context, []types.Value) (types.Value, error) {
		return func(_ *Context, a []types.Value) (types.Value, error) {
			x, y := a[0].(types.IntervalValue), a[1].(types.IntervalValue)
			ym := sign * y.Micros
			m, d, us := int64(x.Months)+sign*int64(y.Months), int64(x.Days)+sign*int64(y.Days), x.Micros+ym
			if m != int64(int32(m)) || d != int64(int32(d)) || (us^x.Micros)&(us^ym) < 0 {
				return nil, pgerr.New(pgerr.DatetimeFieldOverflow, "interval out of range")
			}
			return types.IntervalValue{Months: int32(m), Days: int32(d), Micros: us}, nil
		}
	}
	ivMul := func(_ *Context, a []types.Value) (types.Value, error) {
		return intervalMul(a[0].(types.IntervalValue), a[1].(float64))
	}
	tsTs := func(_ *Context, a []types.Value) (types.Value, error) {
		return tsDiff(int64(a[0].(types.TimestampValue)), int64(a[1].(types.TimestampValue)))
	}
	timeIv := func(sign int64) func(*Context, []types.Value) (types.Value, error) {
		return func(_ *Context, a []types.Value) (types.Value, error) {
			t := int64(a[0].(types.TimeValue)) + sign*a[1].(types.IntervalValue).Micros
			t %= usPerDay
			if t < 0 {
				t += usPerDay
			}
			return types.TimeValue(t), nil
		}
	}
	define(
		named("+", dtKernel(D, []types.T{D, I4}, dateInt(1))),
		named("+", dtKernel(D, []types.T{I4, D}, swap(dateInt(1)))),
		named("-", dtKernel(D, []types.T{D, I4}, dateInt(-1))),
		named("-", dtKernel(I4, []types.T{D, D}, func(_ *Context, a []types.Value) (types.Value, error) {
			x, y := a[0].(types.DateValue), a[1].(types.DateValue)
			if x == dateInfinity || x == dateNegInf || y == dateInfinity || y == dateNegInf {
				return nil, pgerr.New(pgerr.DatetimeFieldOverflow, "cannot subtract infinite dates")
			}
			return int64(x) - int64(y), nil
		})),
		named("+", dtKernel(TS, []types.T{D, IV}, tsIv(1, false))),
		named("+", dtKernel(TS, []types.T{IV, D}, swap(tsIv(1, false)))),
		named("-", dtKernel(TS, []types.T{D, IV}, tsIv(-1, false))),
		named("+", dtKernel(TS, []types.T{TS, IV}, tsIv(1, false))),
		named("+", dtKernel(TS, []types.T{IV, TS}, swap(tsIv(1, false)))),
		named("-", dtKernel(TS, []types.T{TS, IV}, tsIv(-1, false))),
		named("+", dtKernel(TZ, []types.T{TZ, IV}, tsIv(1, true))),
		named("+", dtKernel(TZ, []types.T{IV, TZ}, swap(tsIv(1, true)))),
		named("-", dtKernel(TZ, []types.T{TZ, IV}, tsIv(-1, true))),
		named("-", dtKernel(IV, []types.T{TS, TS}, tsTs)),
		named("-", dtKernel(IV, []types.T{TZ, TZ}, tsTs)),
		named("+", dtKernel(IV, []types.T{IV, IV}, ivIv(1))),
		named("-", dtKernel(IV, []types.T{IV, IV}, ivIv(-1))),
		named("-", dtKernel(IV, []types.T{IV}, func(_ *Context, a []types.Value) (types.Value, error) {
			return negInterval(a[0].(types.IntervalValue))
		})),
		named("*", dtKernel(IV, []types.T{IV, F8}, ivMul)),
		named("*", dtKernel(IV, []types.T{F8, IV}, swap(ivMul))),
		named("/", dtKernel(IV, []types.T{IV, F8}, func(_ *Context, a []types.Value) (types.Value, error) {
			f := a[1].(float64)
			if f == 0 {
				return nil, errDivZero
			}
			return intervalScale(a[0].(types.IntervalValue), f, true)
		})),
		named("+", dtKernel(TS, []types.T{D, T}, func(_ *Context, a []types.Value) (types.Value, error) {
			return types.TimestampValue(dateToTS(int32(a[0].(types.DateValue))) + int64(a[1].(types.TimeValue))), nil
		})),
		named("+", dtKernel(T, []types.T{T, IV}, timeIv(1))),
		named("-", dtKernel(T, []types.T{T, IV}, timeIv(-1))),
		named("-", dtKernel(IV, []types.T{T, T}, func(_ *Context, a []types.Value) (types.Value, error) {
			return types.IntervalValue{Micros: int64(a[0].(types.TimeValue)) - int64(a[1].(types.TimeValue))}, nil
		})),
	)
}

// tsIntervalKernel is timestamp[tz] ± interval over whole arrays: a tight
// loop when an interval has only a time part, the calendar path otherwise.
func tsIntervalKernel(sign int64, tz bool, swapped bool) kernel {
	return func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		ta, ia := args[0], args[1]
		if swapped {
			ta, ia = args[1], args[0]
		}
		ts := vals[int64](ta)
		iv := vals[arrow.MonthDayNanoInterval](ia)
		bm := andValidity(n, ta, ia)
		out := make([]int64, n)
		loc := ctx.location()
		for i := range out {
			if !isValid(bm, i) {
				continue
			}
			v := iv[i]
			us := ts[i]
			if v.Months == 0 && v.Days == 0 && !isInfTS(us) {
				d := sign * v.Nanoseconds // µs (types.IntervalToArrow)
				r := us + d
				if (d > 0 && r < us) || (d < 0 && r > us) || r < types.TimestampMin || r > types.TimestampMax {
					return nil, errTSRange
				}
				out[i] = r
				continue
			}
			x := types.IntervalFromArrow(v)
			if sign < 0 {
				var err error
				if x, err = negInterval(x); err != nil {
					return nil, err
				}
			}
			r, err := tsPlusInterval(us, x, tz, loc)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		t := types.TTimestamp
		if tz {
			t = types.TTimestampTZ
		}
		return makePrim(t.ArrowType(), out, bm), nil
	}
}

func init() {
	TS, TZ, IV := types.TTimestamp, types.TTimestampTZ, types.TInterval
	// Vectorized replacements for the row-at-a-time overloads above.
	fast := []*Func{
		{Name: "+", Args: []types.T{TS, IV}, Return: TS, Strict: true, Kernel: tsIntervalKernel(1, false, false)},
		{Name: "+", Args: []types.T{IV, TS}, Return: TS, Strict: true, Kernel: tsIntervalKernel(1, false, true)},
		{Name: "-", Args: []types.T{TS, IV}, Return: TS, Strict: true, Kernel: tsIntervalKernel(-1, false, false)},
		{Name: "+", Args: []types.T{TZ, IV}, Return: TZ, Strict: true, Kernel: tsIntervalKernel(1, true, false)},
		{Name: "+", Args: []types.T{IV, TZ}, Return: TZ, Strict: true, Kernel: tsIntervalKernel(1, true, true)},
		{Name: "-", Args: []types.T{TZ, IV}, Return: TZ, Strict: true, Kernel: tsIntervalKernel(-1, true, false)},
	}
	for _, f := range fast {
		f.nullSafe = true
		replaceOverload(f)
	}
}

// replaceOverload swaps in f for the registered overload with the same
// name and argument types (or adds it).
func replaceOverload(f *Func) {
	list := registry[f.Name]
	for i, g := range list {
		if len(g.Args) == len(f.Args) {
			same := true
			for k := range g.Args {
				if !g.Args[k].Equal(f.Args[k]) {
					same = false
				}
			}
			if same {
				list[i] = f
				return
			}
		}
	}
	registry[f.Name] = append(list, f)
}

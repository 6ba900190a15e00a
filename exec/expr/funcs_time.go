package expr

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Date/time functions: now() and friends, date_trunc, extract/date_part,
// date_bin, make_*, age, justify_*, isfinite, timezone (AT TIME ZONE).

var startTime = time.Now()

func (c *Context) now() time.Time {
	if c == nil || c.Now.IsZero() {
		return time.Now()
	}
	return c.Now
}

// parseZone resolves a time zone name as AT TIME ZONE does: an IANA name,
// an abbreviation such as UTC, or a POSIX-style numeric offset ('+05' is
// five hours west of Greenwich).
func parseZone(name string) (*time.Location, error) {
	n := strings.TrimSpace(name)
	switch strings.ToLower(n) {
	case "utc", "gmt", "z", "zulu", "universal":
		return time.UTC, nil
	}
	if loc, err := time.LoadLocation(n); err == nil {
		return loc, nil
	}
	s := n
	if strings.HasPrefix(strings.ToUpper(s), "UTC") || strings.HasPrefix(strings.ToUpper(s), "GMT") {
		s = s[3:]
	}
	if s != "" && (s[0] == '+' || s[0] == '-' || s[0] >= '0' && s[0] <= '9') {
		sign := 1
		if s[0] == '-' {
			sign = -1
		}
		s = strings.TrimLeft(s, "+-")
		parts := strings.Split(s, ":")
		h, err := strconv.Atoi(parts[0])
		if err == nil {
			m := 0
			if len(parts) > 1 {
				m, _ = strconv.Atoi(parts[1])
			}
			// POSIX: positive offsets are west of Greenwich.
			return time.FixedZone(name, -sign*(h*3600+m*60)), nil
		}
	}
	return nil, pgerr.New(pgerr.InvalidParameterValue, "time zone \"%s\" not recognized", name)
}

// truncWall truncates a wall-clock timestamp to unit.
func truncWall(unit string, us int64, typeName string) (int64, error) {
	if isInfTS(us) {
		return us, nil
	}
	t := wallTime(us)
	y, mo, d := t.Date()
	day := func(y int, m time.Month, d int) int64 {
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).UnixMicro()
	}
	switch strings.ToLower(unit) {
	case "microseconds", "microsecond", "us":
		return us, nil
	case "milliseconds", "millisecond", "ms":
		return floorDiv64(us, 1000) * 1000, nil
	case "second", "seconds", "s", "sec", "secs":
		return floorDiv64(us, usPerSec) * usPerSec, nil
	case "minute", "minutes", "m", "min", "mins":
		return floorDiv64(us, usPerMin) * usPerMin, nil
	case "hour", "hours", "h", "hr", "hrs":
		return floorDiv64(us, usPerHour) * usPerHour, nil
	case "day", "days", "d":
		return day(y, mo, d), nil
	case "week", "weeks", "w":
		wd := (int(t.Weekday()) + 6) % 7 // Monday = 0
		return day(y, mo, d-wd), nil
	case "month", "months", "mon", "mons":
		return day(y, mo, 1), nil
	case "quarter", "qtr":
		return day(y, time.Month((int(mo)-1)/3*3+1), 1), nil
	case "year", "years", "y", "yr", "yrs":
		return day(y, 1, 1), nil
	case "decade", "decades":
		if y <= 0 {
			return day(-((8-(y-1))/10)*10, 1, 1), nil
		}
		return day(y/10*10, 1, 1), nil
	case "century", "centuries":
		if y > 0 {
			return day((y+99)/100*100-99, 1, 1), nil
		}
		return day(-((99-(y-1))/100)*100+1, 1, 1), nil
	case "millennium", "millennia":
		if y > 0 {
			return day((y+999)/1000*1000-999, 1, 1), nil
		}
		return day(-((999-(y-1))/1000)*1000+1, 1, 1), nil
	}
	return 0, pgerr.New(pgerr.InvalidParameterValue, "unit \"%s\" not recognized for type %s", unit, typeName)
}

func truncInterval(unit string, v types.IntervalValue) (types.IntervalValue, error) {
	switch strings.ToLower(unit) {
	case "microseconds", "microsecond":
		return v, nil
	case "milliseconds", "millisecond":
		v.Micros = v.Micros / 1000 * 1000
	case "second", "seconds":
		v.Micros = v.Micros / usPerSec * usPerSec
	case "minute", "minutes":
		v.Micros = v.Micros / usPerMin * usPerMin
	case "hour", "hours":
		v.Micros = v.Micros / usPerHour * usPerHour
	case "day", "days":
		v.Micros = 0
	case "month", "months":
		v.Days, v.Micros = 0, 0
	case "quarter":
		v.Months, v.Days, v.Micros = v.Months/3*3, 0, 0
	case "year", "years":
		v.Months, v.Days, v.Micros = v.Months/12*12, 0, 0
	case "decade", "decades":
		v.Months, v.Days, v.Micros = v.Months/120*120, 0, 0
	case "century", "centuries":
		v.Months, v.Days, v.Micros = v.Months/1200*1200, 0, 0
	case "millennium", "millennia":
		v.Months, v.Days, v.Micros = v.Months/12000*12000, 0, 0
	default:
		return v, pgerr.New(pgerr.InvalidParameterValue, "unit \"%s\" not recognized for type interval", unit)
	}
	return v, nil
}

// ageOf is age(a, b) as PostgreSQL computes it: field-wise differences,
// made positive, then negative fields borrowed from the next larger one
// (days from the length of the earlier timestamp's month).
func ageOf(a, b int64) types.IntervalValue {
	ta, tb := wallTime(a), wallTime(b)
	y := int64(ta.Year() - tb.Year())
	m := int64(ta.Month() - tb.Month())
	d := int64(ta.Day() - tb.Day())
	t := (a - floorDiv64(a, usPerDay)*usPerDay) - (b - floorDiv64(b, usPerDay)*usPerDay)
	neg := a < b
	if neg {
		y, m, d, t = -y, -m, -d, -t
	}
	for t < 0 {
		t += usPerDay
		d--
	}
	for d < 0 {
		ref := tb
		if neg {
			ref = ta
		}
		d += int64(daysIn(ref.Year(), ref.Month()))
		m--
	}
	for m < 0 {
		m += 12
		y--
	}
	if neg {
		y, m, d, t = -y, -m, -d, -t
	}
	return types.IntervalValue{Months: int32(y*12 + m), Days: int32(d), Micros: t}
}

func makeDate(y, m, d int64) (types.Value, error) {
	if y == 0 {
		return nil, pgerr.New(pgerr.DatetimeFieldOverflow, "date field value out of range: %d-%02d-%02d", y, m, d)
	}
	yy := y
	if y < 0 {
		yy = y + 1
	}
	if m < 1 || m > 12 || d < 1 || d > int64(daysIn(int(yy), time.Month(m))) {
		return nil, pgerr.New(pgerr.DatetimeFieldOverflow, "date field value out of range: %d-%02d-%02d", y, m, d)
	}
	return types.DateValue(time.Date(int(yy), time.Month(m), int(d), 0, 0, 0, 0, time.UTC).Unix() / 86400), nil
}

func init() {
	TS, TZ, D, IV, TX, F8, I4, TM := types.TTimestamp, types.TTimestampTZ, types.TDate, types.TInterval, types.TText, types.TFloat8, types.TInt4, types.TTime
	nowTZ := func(ctx *Context) (types.Value, error) { return types.TimestampValue(ctx.now().UnixMicro()), nil }
	define(
		fn0("now", TZ, false, nowTZ),
		fn0("current_timestamp", TZ, false, nowTZ),
		fn0("transaction_timestamp", TZ, false, nowTZ),
		fn0("statement_timestamp", TZ, false, nowTZ),
		// proctime is processing time: the statement's now() in a batch
		// query; in a continuous query the stream Project stamps each chunk
		// with the runtime's clock (Context.Now). Volatile so that it is
		// never folded into a constant.
		fn0("proctime", TZ, true, nowTZ),
		fn0("clock_timestamp", TZ, true, func(*Context) (types.Value, error) { return types.TimestampValue(time.Now().UnixMicro()), nil }),
		fn0("current_date", D, false, func(ctx *Context) (types.Value, error) {
			return types.DateValue(tsToDate(instantToWall(ctx.now().UnixMicro(), ctx.location()))), nil
		}),
		fn0("localtimestamp", TS, false, func(ctx *Context) (types.Value, error) {
			return types.TimestampValue(instantToWall(ctx.now().UnixMicro(), ctx.location())), nil
		}),
		fn0("localtime", TM, false, func(ctx *Context) (types.Value, error) {
			w := instantToWall(ctx.now().UnixMicro(), ctx.location())
			return types.TimeValue(w - floorDiv64(w, usPerDay)*usPerDay), nil
		}),
		fn0("current_time", TM, false, func(ctx *Context) (types.Value, error) {
			w := instantToWall(ctx.now().UnixMicro(), ctx.location())
			return types.TimeValue(w - floorDiv64(w, usPerDay)*usPerDay), nil
		}),
		rowFn("date_trunc", TS, []types.T{TX, TS}, func(_ *Context, a []types.Value) (types.Value, error) {
			r, err := truncWall(a[0].(string), int64(a[1].(types.TimestampValue)), "timestamp without time zone")
			return types.TimestampValue(r), err
		}),
		rowFn("date_trunc", TZ, []types.T{TX, TZ}, func(ctx *Context, a []types.Value) (types.Value, error) {
			return truncTZ(a[0].(string), int64(a[1].(types.TimestampValue)), ctx.location())
		}),
		rowFn("date_trunc", TZ, []types.T{TX, TZ, TX}, func(ctx *Context, a []types.Value) (types.Value, error) {
			loc, err := parseZone(a[2].(string))
			if err != nil {
				return nil, err
			}
			return truncTZ(a[0].(string), int64(a[1].(types.TimestampValue)), loc)
		}),
		rowFn("date_trunc", IV, []types.T{TX, IV}, func(_ *Context, a []types.Value) (types.Value, error) {
			return truncInterval(a[0].(string), a[1].(types.IntervalValue))
		}),
		rowFn("date_bin", TS, []types.T{IV, TS, TS}, dateBin),
		rowFn("date_bin", TZ, []types.T{IV, TZ, TZ}, dateBin),
		rowFn("age", IV, []types.T{TS, TS}, func(_ *Context, a []types.Value) (types.Value, error) {
			return ageOf(int64(a[0].(types.TimestampValue)), int64(a[1].(types.TimestampValue))), nil
		}),
		rowFn("age", IV, []types.T{TZ, TZ}, func(ctx *Context, a []types.Value) (types.Value, error) {
			loc := ctx.location()
			return ageOf(instantToWall(int64(a[0].(types.TimestampValue)), loc), instantToWall(int64(a[1].(types.TimestampValue)), loc)), nil
		}),
		rowFn("age", IV, []types.T{TS}, func(ctx *Context, a []types.Value) (types.Value, error) {
			today := dateToTS(tsToDate(instantToWall(ctx.now().UnixMicro(), ctx.location())))
			return ageOf(today, int64(a[0].(types.TimestampValue))), nil
		}),
		rowFn("age", IV, []types.T{TZ}, func(ctx *Context, a []types.Value) (types.Value, error) {
			loc := ctx.location()
			today := dateToTS(tsToDate(instantToWall(ctx.now().UnixMicro(), loc)))
			return ageOf(today, instantToWall(int64(a[0].(types.TimestampValue)), loc)), nil
		}),
		rowFn("justify_days", IV, []types.T{IV}, func(_ *Context, a []types.Value) (types.Value, error) {
			return justifyDays(a[0].(types.IntervalValue))
		}),
		rowFn("justify_hours", IV, []types.T{IV}, func(_ *Context, a []types.Value) (types.Value, error) {
			return justifyHours(a[0].(types.IntervalValue))
		}),
		rowFn("justify_interval", IV, []types.T{IV}, func(_ *Context, a []types.Value) (types.Value, error) {
			return justifyInterval(a[0].(types.IntervalValue))
		}),
		rowFn("isfinite", types.TBool, []types.T{D}, func(_ *Context, a []types.Value) (types.Value, error) {
			d := a[0].(types.DateValue)
			return d != dateInfinity && d != dateNegInf, nil
		}),
		rowFn("isfinite", types.TBool, []types.T{TS}, func(_ *Context, a []types.Value) (types.Value, error) {
			return !isInfTS(int64(a[0].(types.TimestampValue))), nil
		}),
		rowFn("isfinite", types.TBool, []types.T{TZ}, func(_ *Context, a []types.Value) (types.Value, error) {
			return !isInfTS(int64(a[0].(types.TimestampValue))), nil
		}),
		rowFn("isfinite", types.TBool, []types.T{IV}, func(_ *Context, a []types.Value) (types.Value, error) { return true, nil }),
		rowFn("make_date", D, []types.T{I4, I4, I4}, func(_ *Context, a []types.Value) (types.Value, error) {
			return makeDate(a[0].(int64), a[1].(int64), a[2].(int64))
		}),
		rowFn("make_time", TM, []types.T{I4, I4, F8}, func(_ *Context, a []types.Value) (types.Value, error) {
			h, m, s := a[0].(int64), a[1].(int64), a[2].(float64)
			us, err := timeFields(h, m, s)
			if err != nil {
				return nil, err
			}
			return types.TimeValue(us), nil
		}),
		rowFn("make_timestamp", TS, []types.T{I4, I4, I4, I4, I4, F8}, func(_ *Context, a []types.Value) (types.Value, error) {
			return makeTimestamp(a)
		}),
		rowFn("make_timestamptz", TZ, []types.T{I4, I4, I4, I4, I4, F8}, func(ctx *Context, a []types.Value) (types.Value, error) {
			v, err := makeTimestamp(a)
			if err != nil {
				return nil, err
			}
			return types.TimestampValue(wallToInstant(int64(v.(types.TimestampValue)), ctx.location())), nil
		}),
		rowFn("make_timestamptz", TZ, []types.T{I4, I4, I4, I4, I4, F8, TX}, func(ctx *Context, a []types.Value) (types.Value, error) {
			loc, err := parseZone(a[6].(string))
			if err != nil {
				return nil, err
			}
			v, err := makeTimestamp(a[:6])
			if err != nil {
				return nil, err
			}
			return types.TimestampValue(wallToInstant(int64(v.(types.TimestampValue)), loc)), nil
		}),
		rowFn("timezone", TS, []types.T{TX, TZ}, func(_ *Context, a []types.Value) (types.Value, error) {
			loc, err := parseZone(a[0].(string))
			if err != nil {
				return nil, err
			}
			return types.TimestampValue(instantToWall(int64(a[1].(types.TimestampValue)), loc)), nil
		}),
		rowFn("timezone", TZ, []types.T{TX, TS}, func(_ *Context, a []types.Value) (types.Value, error) {
			loc, err := parseZone(a[0].(string))
			if err != nil {
				return nil, err
			}
			return types.TimestampValue(wallToInstant(int64(a[1].(types.TimestampValue)), loc)), nil
		}),
		rowFn("to_timestamp", TZ, []types.T{F8}, func(_ *Context, a []types.Value) (types.Value, error) {
			f := a[0].(float64)
			switch {
			case math.IsInf(f, 1):
				return types.TimestampValue(tsInfinity), nil
			case math.IsInf(f, -1):
				return types.TimestampValue(tsNegInfinity), nil
			case math.IsNaN(f) || math.Abs(f) > 9.2e12:
				return nil, pgerr.New(pgerr.DatetimeFieldOverflow, "timestamp out of range: \"%s\"", strconv.FormatFloat(f, 'g', -1, 64))
			}
			return types.TimestampValue(math.Round(f * 1e6)), nil
		}),
	)
	// make_interval(years, months, weeks, days, hours, mins, secs): every
	// argument has a default of zero.
	mi := []types.T{I4, I4, I4, I4, I4, I4, F8}
	for n := 0; n <= 7; n++ {
		define(rowFn("make_interval", IV, mi[:n], func(_ *Context, a []types.Value) (types.Value, error) {
			var x [6]int64
			var secs float64
			for i, v := range a {
				if i == 6 {
					secs = v.(float64)
				} else {
					x[i] = v.(int64)
				}
			}
			if math.IsInf(secs, 0) || math.IsNaN(secs) {
				return nil, intervalOutOfRange()
			}
			return types.IntervalValue{Months: int32(x[0]*12 + x[1]), Days: int32(x[2]*7 + x[3]),
				Micros: x[4]*usPerHour + x[5]*usPerMin + int64(math.RoundToEven(secs*1e6))}, nil
		}))
	}
	for _, t := range []types.T{TS, TZ, D, TM, IV} {
		t := t
		define(
			rowFn("date_part", F8, []types.T{TX, t}, func(ctx *Context, a []types.Value) (types.Value, error) {
				d, err := extractField(ctx, a[0].(string), a[1], t)
				if err != nil {
					return nil, err
				}
				if d == nil {
					return nil, nil
				}
				if d.Form == apd.Infinite {
					return math.Inf(map[bool]int{true: -1, false: 1}[d.Negative]), nil
				}
				f, _ := d.Float64()
				return f, nil
			}),
			rowFn("extract", types.TNumeric, []types.T{TX, t}, func(ctx *Context, a []types.Value) (types.Value, error) {
				d, err := extractField(ctx, a[0].(string), a[1], t)
				if d == nil || err != nil {
					return nil, err
				}
				return d, nil
			}),
		)
	}
}

func truncTZ(unit string, us int64, loc *time.Location) (types.Value, error) {
	w := instantToWall(us, loc)
	r, err := truncWall(unit, w, "timestamp with time zone")
	if err != nil {
		return nil, err
	}
	if r == w {
		return types.TimestampValue(us), nil
	}
	switch strings.ToLower(unit) {
	case "hour", "hours", "h", "hr", "hrs", "minute", "minutes", "m", "min", "mins",
		"second", "seconds", "s", "sec", "secs", "milliseconds", "millisecond", "ms":
		// hour and finer: the offset stays the value's own, as PostgreSQL
		// keeps it (01:30 EDT on a fall-back night truncates to 01:00 EDT)
		return types.TimestampValue(us - (w - r)), nil
	}
	return types.TimestampValue(wallToInstant(r, loc)), nil
}

func makeTimestamp(a []types.Value) (types.Value, error) {
	d, err := makeDate(a[0].(int64), a[1].(int64), a[2].(int64))
	if err != nil {
		return nil, err
	}
	us, err := timeFields(a[3].(int64), a[4].(int64), a[5].(float64))
	if err != nil {
		return nil, err
	}
	return types.TimestampValue(dateToTS(int32(d.(types.DateValue))) + us), nil
}

// timeFields is hours, minutes and seconds as microseconds, refused as
// PostgreSQL's float_time_overflows does: each field in range, seconds
// rounded to the microsecond first, and the total at most 24:00:00.
func timeFields(h, m int64, s float64) (int64, error) {
	sec := math.RoundToEven(s * 1e6)
	if h < 0 || h > 24 || m < 0 || m > 59 || math.IsNaN(s) || sec < 0 || sec > 60e6 ||
		(h*60+m)*60*1e6+int64(sec) > usPerDay {
		return 0, pgerr.New(pgerr.DatetimeFieldOverflow, "time field value out of range: %d:%02d:%s", h, m, strconv.FormatFloat(s, 'g', 6, 64))
	}
	return h*usPerHour + m*usPerMin + int64(sec), nil
}

func dateBin(_ *Context, a []types.Value) (types.Value, error) {
	stride := a[0].(types.IntervalValue)
	src, origin := int64(a[1].(types.TimestampValue)), int64(a[2].(types.TimestampValue))
	if stride.Months != 0 {
		return nil, pgerr.New(pgerr.FeatureNotSupported, "timestamps cannot be binned into intervals containing months or years")
	}
	ivRange := func() error { return pgerr.New(pgerr.DatetimeFieldOverflow, "interval out of range") }
	const lo, hi = math.MinInt64, math.MaxInt64
	days := int64(stride.Days) * usPerDay
	if intOverflows('*', int64(stride.Days), usPerDay, lo, hi) || intOverflows('+', days, stride.Micros, lo, hi) {
		return nil, ivRange()
	}
	s := days + stride.Micros
	if s <= 0 {
		return nil, pgerr.New(pgerr.InvalidParameterValue, "stride must be greater than zero")
	}
	if isInfTS(src) {
		return a[1], nil
	}
	if intOverflows('-', src, origin, lo, hi) {
		return nil, ivRange()
	}
	delta := floorDiv64(src-origin, s) * s
	if intOverflows('+', origin, delta, lo, hi) || origin+delta < types.TimestampMin || origin+delta > types.TimestampMax {
		return nil, errTSRange
	}
	r := origin + delta
	return types.TimestampValue(r), nil
}

// extractField computes EXTRACT(field FROM v) as numeric.
func extractField(ctx *Context, field string, v types.Value, t types.T) (*apd.Decimal, error) {
	f := strings.ToLower(field)
	if c, ok := unitAliases[f]; ok {
		f = c
	}
	unsupported := func() error {
		if !knownUnits[f] {
			return pgerr.New(pgerr.InvalidParameterValue, "unit \"%s\" not recognized for type %s", field, t)
		}
		return pgerr.New(pgerr.FeatureNotSupported, "unit \"%s\" not supported for type %s", field, t)
	}
	dec := func(us int64, scale int32) *apd.Decimal { return apd.New(us, -scale) }
	if t.Kind == types.Interval {
		iv := v.(types.IntervalValue)
		switch f {
		case "epoch":
			// a year counts 365.25 days, other months 30 days, as in PostgreSQL
			secs := apd.New(int64(iv.Months/12)*31557600+int64(iv.Months%12)*30*86400+int64(iv.Days)*86400, 0)
			_, _ = roundCtx.Add(secs, secs, dec(iv.Micros, 6))
			return secs, nil
		case "year", "years":
			return apd.New(int64(iv.Months/12), 0), nil
		case "month", "months", "mon":
			return apd.New(int64(iv.Months%12), 0), nil
		case "day", "days":
			return apd.New(int64(iv.Days), 0), nil
		case "hour", "hours":
			return apd.New(iv.Micros/usPerHour, 0), nil
		case "minute", "minutes":
			return apd.New(iv.Micros%usPerHour/usPerMin, 0), nil
		case "second", "seconds":
			return dec(iv.Micros%usPerMin, 6), nil
		case "millisecond", "milliseconds":
			return dec(iv.Micros%usPerMin, 3), nil
		case "microsecond", "microseconds":
			return apd.New(iv.Micros%usPerMin, 0), nil
		case "quarter":
			return apd.New(int64(iv.Months%12/3+1), 0), nil
		case "decade", "decades":
			return apd.New(int64(iv.Months/120), 0), nil
		case "century", "centuries":
			return apd.New(int64(iv.Months/1200), 0), nil
		case "millennium", "millennia":
			return apd.New(int64(iv.Months/12000), 0), nil
		}
		return nil, unsupported()
	}
	if inf, neg := isInfiniteDT(v); inf {
		return extractInfinite(f, neg, t, unsupported)
	}
	var us int64
	isDate := false
	switch x := v.(type) {
	case types.DateValue:
		us, isDate = dateToTS(int32(x)), true
	case types.TimeValue:
		us = int64(x)
		switch f {
		case "hour", "hours":
			return apd.New(us/usPerHour, 0), nil
		case "minute", "minutes":
			return apd.New(us%usPerHour/usPerMin, 0), nil
		case "second", "seconds":
			return dec(us%usPerMin, 6), nil
		case "millisecond", "milliseconds":
			return dec(us%usPerMin, 3), nil
		case "microsecond", "microseconds":
			return apd.New(us%usPerMin, 0), nil
		case "epoch":
			return dec(us, 6), nil
		}
		return nil, unsupported()
	case types.TimestampValue:
		us = int64(x)
	}
	if f == "epoch" {
		if isDate {
			return apd.New(floorDiv64(us, usPerDay)*86400, 0), nil
		}
		return dec(us, 6), nil
	}
	tzOff := int64(0)
	if t.Kind == types.TimestampTZ {
		w := instantToWall(us, ctx.location())
		tzOff = (w - us) / usPerSec
		us = w
	}
	tm := wallTime(us)
	tod := us - floorDiv64(us, usPerDay)*usPerDay
	y := int64(tm.Year())
	if isDate {
		switch f {
		case "hour", "hours", "minute", "minutes", "second", "seconds", "millisecond", "milliseconds", "microsecond", "microseconds", "timezone", "timezone_hour", "timezone_minute":
			return nil, unsupported()
		}
	}
	switch f {
	case "year", "years":
		if y <= 0 {
			y--
		}
		return apd.New(y, 0), nil
	case "month", "months", "mon":
		return apd.New(int64(tm.Month()), 0), nil
	case "day", "days":
		return apd.New(int64(tm.Day()), 0), nil
	case "hour", "hours":
		return apd.New(tod/usPerHour, 0), nil
	case "minute", "minutes":
		return apd.New(tod%usPerHour/usPerMin, 0), nil
	case "second", "seconds":
		return dec(tod%usPerMin, 6), nil
	case "millisecond", "milliseconds":
		return dec(tod%usPerMin, 3), nil
	case "microsecond", "microseconds":
		return apd.New(tod%usPerMin, 0), nil
	case "dow":
		return apd.New(int64(tm.Weekday()), 0), nil
	case "isodow":
		wd := int64(tm.Weekday())
		if wd == 0 {
			wd = 7
		}
		return apd.New(wd, 0), nil
	case "doy":
		return apd.New(int64(tm.YearDay()), 0), nil
	case "week":
		_, w := tm.ISOWeek()
		return apd.New(int64(w), 0), nil
	case "isoyear":
		iy, _ := tm.ISOWeek()
		if iy <= 0 {
			iy-- // BC years count from 1 BC, as "year" does
		}
		return apd.New(int64(iy), 0), nil
	case "quarter":
		return apd.New(int64((tm.Month()-1)/3+1), 0), nil
	case "decade", "decades":
		if y <= 0 {
			return apd.New(-((8 - (y - 1)) / 10), 0), nil
		}
		return apd.New(y/10, 0), nil
	case "century", "centuries":
		if y > 0 {
			return apd.New((y+99)/100, 0), nil
		}
		return apd.New(-((99 - (y - 1)) / 100), 0), nil
	case "millennium", "millennia":
		if y > 0 {
			return apd.New((y+999)/1000, 0), nil
		}
		return apd.New(-((999 - (y - 1)) / 1000), 0), nil
	case "julian":
		days := floorDiv64(us, usPerDay) + 2440588
		if isDate {
			return apd.New(days, 0), nil
		}
		r, err := numericOp('/', apd.New(tod, 0), apd.New(usPerDay, 0))
		if err != nil {
			return nil, err
		}
		return numericOp('+', apd.New(days, 0), r)
	case "timezone":
		if t.Kind == types.TimestampTZ {
			return apd.New(tzOff, 0), nil
		}
	case "timezone_hour":
		if t.Kind == types.TimestampTZ {
			return apd.New(tzOff/3600, 0), nil
		}
	case "timezone_minute":
		if t.Kind == types.TimestampTZ {
			return apd.New(tzOff%3600/60, 0), nil
		}
	}
	return nil, unsupported()
}

// unitAliases are PostgreSQL's other spellings of EXTRACT's units
// (deltatktbl), mapped to the names extractField knows.
var unitAliases = map[string]string{
	"y": "year", "yr": "year", "yrs": "year", "mons": "mon", "d": "day", "w": "week", "weeks": "week",
	"h": "hour", "hr": "hour", "hrs": "hour", "m": "minute", "min": "minute", "mins": "minute",
	"s": "second", "sec": "second", "secs": "second",
	"ms": "milliseconds", "msec": "milliseconds", "msecs": "milliseconds", "msecond": "milliseconds", "mseconds": "milliseconds", "millisecon": "milliseconds",
	"us": "microseconds", "usec": "microseconds", "usecs": "microseconds", "usecond": "microseconds", "useconds": "microseconds", "microsecon": "microseconds",
	"dec": "decade", "decs": "decade", "c": "century", "cent": "century", "mil": "millennium", "mils": "millennium",
	"qtr": "quarter", "timezone_h": "timezone_hour", "timezone_m": "timezone_minute", "j": "julian", "jd": "julian",
}

// knownUnits are the field names EXTRACT recognizes (some are unsupported
// for some types).
var knownUnits = map[string]bool{}

func init() {
	for _, u := range strings.Fields("epoch year years month months mon day days hour hours minute minutes second seconds millisecond milliseconds microsecond microseconds dow isodow doy week isoyear quarter decade decades century centuries millennium millennia julian timezone timezone_hour timezone_minute") {
		knownUnits[u] = true
	}
}

// isInfiniteDT says whether a date or timestamp is ±infinity.
func isInfiniteDT(v types.Value) (inf, neg bool) {
	switch x := v.(type) {
	case types.DateValue:
		return x == types.DateInfinity || x == types.DateMinusInfinity, x == types.DateMinusInfinity
	case types.TimestampValue:
		return x == types.TimestampInfinity || x == types.TimestampMinusInfinity, x == types.TimestampMinusInfinity
	}
	return false, false
}

// extractInfinite is EXTRACT from ±infinity as PostgreSQL 15 answers it:
// units that grow with time are ±Infinity, the others NULL (nil); units
// the type does not have are refused as for finite values.
func extractInfinite(f string, neg bool, t types.T, unsupported func() error) (*apd.Decimal, error) {
	switch f {
	case "year", "years", "decade", "decades", "century", "centuries", "millennium", "millennia", "julian", "isoyear", "epoch":
		return &apd.Decimal{Form: apd.Infinite, Negative: neg}, nil
	case "day", "days", "month", "months", "mon", "quarter", "week", "dow", "isodow", "doy":
		return nil, nil
	case "microsecond", "microseconds", "millisecond", "milliseconds", "second", "seconds", "minute", "minutes", "hour", "hours",
		"timezone", "timezone_hour", "timezone_minute":
		if t.Kind != types.Date {
			return nil, nil
		}
	}
	return nil, unsupported()
}

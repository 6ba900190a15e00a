package types

import (
	"math"

	"github.com/streamsql/streamsql/pgerr"
)

// Interval text input (interval_in), after PostgreSQL's ParseDateTime,
// DecodeInterval and DecodeISO8601Interval: the text is cut into typed
// fields, read right to left so that a unit word applies to the number
// before it, with PostgreSQL's overflow checks (an int32 years, months and
// days, an int64 of microseconds). When the fields do not make an interval,
// the text is tried as ISO 8601 ("P1Y2M", "P0001-02-03T04:05:06").
// Functions here are pure and safe for concurrent use.

// itm accumulates an interval being parsed, as PostgreSQL's pg_itm_in.
type itm struct {
	usec   int64
	days   int32
	months int32
	years  int32
}

// ivErr is a DecodeInterval result: PostgreSQL's DTERR_BAD_FORMAT and
// DTERR_FIELD_OVERFLOW.
type ivErr uint8

const (
	ivOK ivErr = iota
	ivBad
	ivOverflow
)

func addI32(a *int32, b int64) bool {
	c := int64(*a) + b
	if c < math.MinInt32 || c > math.MaxInt32 {
		return false
	}
	*a = int32(c)
	return true
}

func addI64(a *int64, b int64) bool {
	c := *a + b
	if (c > *a) != (b > 0) {
		return false
	}
	*a = c
	return true
}

func mulI64(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	c := a * b
	if c/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		return 0, false
	}
	return c, true
}

// adjustFractMicros is AdjustFractMicroseconds: |frac| < 1 of scale µs.
func (m *itm) adjustFractMicros(frac float64, scale int64) bool {
	if frac == 0 {
		return true
	}
	frac *= float64(scale)
	usec := int64(frac)
	frac -= float64(usec)
	usec += int64(math.RoundToEven(frac))
	return addI64(&m.usec, usec)
}

// adjustMicros is AdjustMicroseconds: val and fraction fval of scale µs.
func (m *itm) adjustMicros(val int64, fval float64, scale int64) bool {
	v, ok := mulI64(val, scale)
	if !ok || !addI64(&m.usec, v) {
		return false
	}
	return m.adjustFractMicros(fval, scale)
}

func (m *itm) adjustFractDays(frac float64, scale int64) bool {
	if frac == 0 {
		return true
	}
	frac *= float64(scale)
	extra := int64(frac)
	if !addI32(&m.days, extra) {
		return false
	}
	return m.adjustFractMicros(frac-float64(extra), usPerDay)
}

func (m *itm) adjustDays(val, scale int64) bool {
	if val < math.MinInt32 || val > math.MaxInt32 {
		return false
	}
	d := val * scale
	if d < math.MinInt32 || d > math.MaxInt32 {
		return false
	}
	return addI32(&m.days, d)
}

func (m *itm) adjustMonths(val int64) bool {
	if val < math.MinInt32 || val > math.MaxInt32 {
		return false
	}
	return addI32(&m.months, val)
}

func (m *itm) adjustYears(val, scale int64) bool {
	if val < math.MinInt32 || val > math.MaxInt32 {
		return false
	}
	y := val * scale
	if y < math.MinInt32 || y > math.MaxInt32 {
		return false
	}
	return addI32(&m.years, y)
}

func (m *itm) adjustFractYears(frac float64, scale int64) bool {
	if frac == 0 {
		return true
	}
	frac *= float64(scale * 12)
	if math.IsNaN(frac) || frac < math.MinInt32 || frac >= -float64(math.MinInt32) {
		return false
	}
	return addI32(&m.months, int64(math.RoundToEven(frac)))
}

func badInterval(s string) error {
	return pgerr.New(pgerr.InvalidDatetimeFormat, "invalid input syntax for type interval: \"%s\"", s)
}

func intervalOverflow(s string) error {
	return pgerr.New(codeIntervalFieldOverflow, "interval field value out of range: \"%s\"", s)
}

// parseInterval reads interval_in's syntax: "1 year 2 mons", "1 day 01:00",
// "-1 day +02:00:00", "@ 1 hour ago", "1.5 days", SQL "1-2" and "1 2:03:04",
// ISO 8601 "P1Y2M3DT4H5M6S" and "P0001-02-03T04:05:06", and a bare number
// counted in the lowest field of the typmod's range (seconds when there is
// none); then applies the typmod.
//
// With sqlStandard (IntervalStyle sql_standard), a leading '-' applies to
// every field when no other field has an explicit sign ('-1 2:03:04').
func parseInterval(s string, typmod int32, sqlStandard bool) (IntervalValue, error) {
	var m itm
	e := ivBad
	if fields, ok := splitIntervalFields(s); ok {
		m, e = decodeInterval(fields, intervalRange(typmod), sqlStandard)
	}
	if e == ivBad {
		m, e = decodeISO8601Interval(s)
	}
	switch e {
	case ivBad:
		return IntervalValue{}, badInterval(s)
	case ivOverflow:
		return IntervalValue{}, intervalOverflow(s)
	}
	months := int64(m.years)*12 + int64(m.months)
	if months < math.MinInt32 || months > math.MaxInt32 {
		return IntervalValue{}, pgerr.New(pgerr.DatetimeFieldOverflow, "interval out of range")
	}
	v := IntervalValue{Months: int32(months), Days: m.days, Micros: m.usec}
	return adjustInterval(v, typmod), nil
}

// AdjustInterval applies an interval typmod to a value, as a cast to
// interval with a range or precision does (AdjustIntervalForTypmod).
func AdjustInterval(v IntervalValue, typmod int32) IntervalValue { return adjustInterval(v, typmod) }

// adjustInterval applies an interval typmod: fields below the range are
// dropped, seconds rounded to the precision (AdjustIntervalForTypmod).
func adjustInterval(v IntervalValue, typmod int32) IntervalValue {
	if typmod < 0 {
		return v
	}
	rng := intervalRange(typmod)
	prec := intervalPrecision(typmod)
	trunc := func(unit int64) { v.Micros = v.Micros / unit * unit }
	switch rng {
	case intervalFullRange:
	case IntervalYear:
		v.Months = v.Months / 12 * 12
		v.Days, v.Micros = 0, 0
	case IntervalMonth, IntervalYear | IntervalMonth:
		v.Days, v.Micros = 0, 0
	case IntervalDay:
		v.Micros = 0
	case IntervalHour, IntervalDay | IntervalHour:
		trunc(usPerHour)
	case IntervalMinute, IntervalHour | IntervalMinute, IntervalDay | IntervalHour | IntervalMinute:
		trunc(usPerMin)
	}
	if prec != intervalFullPrecision && prec < 6 {
		v.Micros = roundMicros(v.Micros, int32(prec))
	}
	return v
}

// codeIntervalFieldOverflow is SQLSTATE interval_field_overflow.
const codeIntervalFieldOverflow pgerr.Code = "22015"

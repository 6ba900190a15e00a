package types

import (
	"math"
	"time"
)

// Date, time and timestamp representation helpers and text output.
//
// The infinite dates and timestamps are kept as the extreme values of their
// Go forms (DateInfinity etc.); they print as "infinity" / "-infinity" and
// round-trip through text and binary. Arithmetic on them is the caller's
// business.

// Infinite date and timestamp values.
const (
	DateInfinity           DateValue      = math.MaxInt32
	DateMinusInfinity      DateValue      = math.MinInt32
	TimestampInfinity      TimestampValue = math.MaxInt64
	TimestampMinusInfinity TimestampValue = math.MinInt64
)

const (
	usPerSec  = int64(1000000)
	usPerMin  = 60 * usPerSec
	usPerHour = 60 * usPerMin
	usPerDay  = 24 * usPerHour

	// pgEpochDays is 2000-01-01 (PostgreSQL's epoch) in days since 1970-01-01.
	pgEpochDays = 10957
	// pgEpochMicros is 2000-01-01 in microseconds since 1970-01-01.
	pgEpochMicros = pgEpochDays * usPerDay

	// Date range: 4714-11-24 BC .. 5874897-12-31 (as days since 1970).
	minDate = -2440588
	maxDate = 2145042905
	// Timestamp range: 4714-11-24 BC 00:00 .. 294276-12-31 23:59:59.999999.
	minTimestamp = -210866803200000000
	// PostgreSQL goes on to 294276 AD, but microseconds since 1970 in an
	// int64 end in 294247 AD; math.MaxInt64 itself is infinity.
	maxTimestamp     = math.MaxInt64 - 1
	maxTimestampDays = maxTimestamp / usPerDay
)

// DateInRange reports whether d, in days since 1970-01-01, is a date
// PostgreSQL holds: 4714-11-24 BC .. 5874897-12-31.
func DateInRange(d int64) bool { return d >= minDate && d <= maxDate }

// TimestampMin and TimestampMax are the first and last finite timestamps
// (microseconds since 1970): PostgreSQL's IS_VALID_TIMESTAMP range, the end
// cut to what an int64 since 1970 holds.
const (
	TimestampMin = minTimestamp
	TimestampMax = maxTimestamp - 1
)

var utc = time.UTC

// daysFromCivil returns days since 1970-01-01 of the proleptic Gregorian date
// y-m-d, with astronomical years (0 = 1 BC).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := y - era*400
	mp := m - 3
	if m <= 2 {
		mp = m + 9
	}
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y, m, d int64) {
	z += 719468
	era := z
	if era < 0 {
		era -= 146096
	}
	era /= 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	if mp < 10 {
		m = mp + 3
	} else {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return
}

func isLeap(y int64) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func daysInMonth(y, m int64) int64 {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

func floorDiv(a, b int64) (q, r int64) {
	q, r = a/b, a%b
	if r < 0 {
		q--
		r += b
	}
	return
}

// appendYMD appends YYYY-MM-DD with the year as printed by PostgreSQL
// (BC years as 1-y; the " BC" suffix is the caller's).
func appendYMD(dst []byte, y, m, d int64) []byte {
	if y <= 0 {
		y = 1 - y
	}
	dst = appendPadded(dst, y, 4)
	dst = append(dst, '-', byte('0'+m/10), byte('0'+m%10), '-', byte('0'+d/10), byte('0'+d%10))
	return dst
}

func appendDate(dst []byte, v DateValue) []byte {
	switch v {
	case DateInfinity:
		return append(dst, "infinity"...)
	case DateMinusInfinity:
		return append(dst, "-infinity"...)
	}
	y, m, d := civilFromDays(int64(v))
	dst = appendYMD(dst, y, m, d)
	if y <= 0 {
		dst = append(dst, " BC"...)
	}
	return dst
}

// appendHMS appends HH:MM:SS[.ffffff] for a time of day in microseconds
// (hours may exceed 23 for time '24:00:00').
func appendTime(dst []byte, us int64) []byte {
	h := us / usPerHour
	us -= h * usPerHour
	mi := us / usPerMin
	us -= mi * usPerMin
	s := us / usPerSec
	us -= s * usPerSec
	dst = appendPadded(dst, h, 2)
	dst = append(dst, ':', byte('0'+mi/10), byte('0'+mi%10), ':', byte('0'+s/10), byte('0'+s%10))
	return appendFraction(dst, us)
}

// zoneOffset returns loc's UTC offset in seconds at the instant v.
func zoneOffset(v TimestampValue, loc *time.Location) int64 {
	if loc == utc || loc == nil {
		return 0
	}
	sec, _ := floorDiv(int64(v), usPerSec)
	_, off := time.Unix(sec, 0).In(loc).Zone()
	return int64(off)
}

// appendTimestamp appends a timestamp; with loc non-nil it is a timestamptz
// shown in loc with its UTC offset.
func appendTimestamp(dst []byte, v TimestampValue, loc *time.Location) []byte {
	switch v {
	case TimestampInfinity:
		return append(dst, "infinity"...)
	case TimestampMinusInfinity:
		return append(dst, "-infinity"...)
	}
	local := int64(v)
	var off int64
	if loc != nil {
		off = zoneOffset(v, loc)
		local += off * usPerSec
	}
	days, tod := floorDiv(local, usPerDay)
	y, m, d := civilFromDays(days)
	dst = appendYMD(dst, y, m, d)
	dst = append(dst, ' ')
	dst = appendTime(dst, tod)
	if loc != nil {
		dst = appendOffset(dst, off)
	}
	if y <= 0 {
		dst = append(dst, " BC"...)
	}
	return dst
}

// appendOffset appends a UTC offset as PostgreSQL prints it: +HH, +HH:MM or
// +HH:MM:SS.
func appendOffset(dst []byte, off int64) []byte {
	if off < 0 {
		dst = append(dst, '-')
		off = -off
	} else {
		dst = append(dst, '+')
	}
	h, mi, s := off/3600, off/60%60, off%60
	dst = appendPadded(dst, h, 2)
	if mi != 0 || s != 0 {
		dst = append(dst, ':', byte('0'+mi/10), byte('0'+mi%10))
	}
	if s != 0 {
		dst = append(dst, ':', byte('0'+s/10), byte('0'+s%10))
	}
	return dst
}

// roundMicros rounds v (microseconds) to typmod fractional digits, half away
// from zero, as PostgreSQL's AdjustTimestampForTypmod does.
func roundMicros(v int64, typmod int32) int64 {
	if typmod < 0 || typmod >= 6 {
		return v
	}
	scale := int64(1)
	for i := int32(0); i < 6-typmod; i++ {
		scale *= 10
	}
	off := scale / 2
	if v >= 0 {
		return (v + off) / scale * scale
	}
	return -((-v + off) / scale * scale)
}

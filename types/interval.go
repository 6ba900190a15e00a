package types

import (
	"strconv"
)

// Interval typmod range bits (PostgreSQL's INTERVAL_MASK); the typmod is
// (range<<16)|precision, precision 0xFFFF meaning full precision.
const (
	IntervalMonth  = 1 << 1
	IntervalYear   = 1 << 2
	IntervalDay    = 1 << 3
	IntervalHour   = 1 << 10
	IntervalMinute = 1 << 11
	IntervalSecond = 1 << 12

	intervalFullRange     = 0x7FFF
	intervalFullPrecision = 0xFFFF
)

// IntervalTypmod builds an interval typmod from a range mask and a precision
// (use 0xFFFF for full precision).
func IntervalTypmod(rangeMask, precision int) int32 {
	return int32(rangeMask<<16 | precision)
}

// intervalTypmodString is intervaltypmodout: " day to second(3)", "(2)", "".
func intervalTypmodString(typmod int32) string {
	if typmod < 0 {
		return ""
	}
	names := map[int]string{
		IntervalYear: " year", IntervalMonth: " month", IntervalDay: " day", IntervalHour: " hour",
		IntervalMinute: " minute", IntervalSecond: " second", IntervalYear | IntervalMonth: " year to month",
		IntervalDay | IntervalHour: " day to hour", IntervalDay | IntervalHour | IntervalMinute: " day to minute",
		IntervalDay | IntervalHour | IntervalMinute | IntervalSecond: " day to second",
		IntervalHour | IntervalMinute:                                " hour to minute", IntervalHour | IntervalMinute | IntervalSecond: " hour to second",
		IntervalMinute | IntervalSecond: " minute to second",
	}
	s := names[intervalRange(typmod)]
	if p := intervalPrecision(typmod); p != intervalFullPrecision {
		s += "(" + strconv.Itoa(p) + ")"
	}
	return s
}

func intervalRange(typmod int32) int {
	if typmod < 0 {
		return intervalFullRange
	}
	return int(typmod>>16) & 0x7FFF
}

func intervalPrecision(typmod int32) int {
	if typmod < 0 {
		return intervalFullPrecision
	}
	return int(typmod & 0xFFFF)
}

// appendInterval appends interval_out's text in an IntervalStyle: postgres
// (the default: "1 year 2 mons 3 days 04:05:06.7", "-1 days +02:00:00"),
// sql_standard ("1-2 3 4:05:06.7"), iso_8601 ("P1Y2M3DT4H5M6.7S") or
// postgres_verbose ("@ 1 year 2 mons 3 days 4 hours 5 mins 6.7 secs").
func appendInterval(dst []byte, v IntervalValue, style string) []byte {
	switch style {
	case "sql_standard":
		return appendIntervalSQL(dst, v)
	case "iso_8601":
		return appendIntervalISO(dst, v)
	case "postgres_verbose":
		return appendIntervalVerbose(dst, v)
	}
	year := int64(v.Months / 12)
	mon := int64(v.Months % 12)
	day := int64(v.Days)
	t := v.Micros
	hour := t / usPerHour
	t -= hour * usPerHour
	min := t / usPerMin
	t -= min * usPerMin
	sec := t / usPerSec
	fsec := t - sec*usPerSec

	isZero, isBefore := true, false
	part := func(val int64, unit string) {
		if val == 0 {
			return
		}
		if !isZero {
			dst = append(dst, ' ')
		}
		if isBefore && val > 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, val, 10)
		dst = append(dst, ' ')
		dst = append(dst, unit...)
		if val != 1 {
			dst = append(dst, 's')
		}
		isBefore = val < 0
		isZero = false
	}
	part(year, "year")
	part(mon, "mon")
	part(day, "day")
	if isZero || hour != 0 || min != 0 || sec != 0 || fsec != 0 {
		minus := hour < 0 || min < 0 || sec < 0 || fsec < 0
		if !isZero {
			dst = append(dst, ' ')
		}
		if minus {
			dst = append(dst, '-')
		} else if isBefore {
			dst = append(dst, '+')
		}
		dst = appendPadded(dst, abs64(hour), 2)
		m := abs64(min)
		s := abs64(sec)
		dst = append(dst, ':', byte('0'+m/10), byte('0'+m%10), ':', byte('0'+s/10), byte('0'+s%10))
		dst = appendFraction(dst, abs64(fsec))
	}
	return dst
}

// intervalFields splits an interval as PostgreSQL's interval2itm does.
func intervalFields(v IntervalValue) (year, mon, day, hour, min, sec, fsec int64) {
	year, mon, day = int64(v.Months/12), int64(v.Months%12), int64(v.Days)
	t := v.Micros
	hour = t / usPerHour
	t -= hour * usPerHour
	min = t / usPerMin
	t -= min * usPerMin
	sec = t / usPerSec
	fsec = t - sec*usPerSec
	return
}

// appendSeconds is PostgreSQL's AppendSeconds: |sec| (zero-padded to two
// digits when pad) and the trimmed fraction of |fsec|.
func appendSeconds(dst []byte, sec, fsec int64, pad bool) []byte {
	if pad {
		dst = appendPadded(dst, abs64(sec), 2)
	} else {
		dst = strconv.AppendInt(dst, abs64(sec), 10)
	}
	return appendFraction(dst, abs64(fsec))
}

func appendIntervalSQL(dst []byte, v IntervalValue) []byte {
	year, mon, day, hour, min, sec, fsec := intervalFields(v)
	hasNeg := year < 0 || mon < 0 || day < 0 || hour < 0 || min < 0 || sec < 0 || fsec < 0
	hasPos := year > 0 || mon > 0 || day > 0 || hour > 0 || min > 0 || sec > 0 || fsec > 0
	hasYM := year != 0 || mon != 0
	hasDT := day != 0 || hour != 0 || min != 0 || sec != 0 || fsec != 0
	standard := !(hasNeg && hasPos) && !(hasYM && hasDT)
	if hasNeg && standard {
		dst = append(dst, '-')
		year, mon, day, hour, min, sec, fsec = -year, -mon, -day, -hour, -min, -sec, -fsec
	}
	sign := func(neg bool) byte {
		if neg {
			return '-'
		}
		return '+'
	}
	switch {
	case !hasNeg && !hasPos:
		return append(dst, '0')
	case !standard:
		dst = append(dst, sign(year < 0 || mon < 0))
		dst = strconv.AppendInt(dst, abs64(year), 10)
		dst = append(dst, '-')
		dst = strconv.AppendInt(dst, abs64(mon), 10)
		dst = append(dst, ' ', sign(day < 0))
		dst = strconv.AppendInt(dst, abs64(day), 10)
		dst = append(dst, ' ', sign(hour < 0 || min < 0 || sec < 0 || fsec < 0))
		dst = strconv.AppendInt(dst, abs64(hour), 10)
		dst = append(dst, ':')
		dst = appendPadded(dst, abs64(min), 2)
		dst = append(dst, ':')
		return appendSeconds(dst, sec, fsec, true)
	case hasYM:
		dst = strconv.AppendInt(dst, year, 10)
		dst = append(dst, '-')
		return strconv.AppendInt(dst, mon, 10)
	case day != 0:
		dst = strconv.AppendInt(dst, day, 10)
		dst = append(dst, ' ')
	}
	dst = strconv.AppendInt(dst, hour, 10)
	dst = append(dst, ':')
	dst = appendPadded(dst, min, 2)
	dst = append(dst, ':')
	return appendSeconds(dst, sec, fsec, true)
}

func appendIntervalISO(dst []byte, v IntervalValue) []byte {
	year, mon, day, hour, min, sec, fsec := intervalFields(v)
	if year == 0 && mon == 0 && day == 0 && hour == 0 && min == 0 && sec == 0 && fsec == 0 {
		return append(dst, "PT0S"...)
	}
	part := func(val int64, unit byte) {
		if val != 0 {
			dst = strconv.AppendInt(dst, val, 10)
			dst = append(dst, unit)
		}
	}
	dst = append(dst, 'P')
	part(year, 'Y')
	part(mon, 'M')
	part(day, 'D')
	if hour != 0 || min != 0 || sec != 0 || fsec != 0 {
		dst = append(dst, 'T')
	}
	part(hour, 'H')
	part(min, 'M')
	if sec != 0 || fsec != 0 {
		if sec < 0 || fsec < 0 {
			dst = append(dst, '-')
		}
		dst = appendSeconds(dst, sec, fsec, false)
		dst = append(dst, 'S')
	}
	return dst
}

func appendIntervalVerbose(dst []byte, v IntervalValue) []byte {
	year, mon, day, hour, min, sec, fsec := intervalFields(v)
	isZero, isBefore := true, false
	dst = append(dst, '@')
	part := func(val int64, unit string) {
		if val == 0 {
			return
		}
		if isZero {
			isBefore = val < 0
			val = abs64(val)
		} else if isBefore {
			val = -val
		}
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, val, 10)
		dst = append(dst, ' ')
		dst = append(dst, unit...)
		if val != 1 {
			dst = append(dst, 's')
		}
		isZero = false
	}
	part(year, "year")
	part(mon, "mon")
	part(day, "day")
	part(hour, "hour")
	part(min, "min")
	if sec != 0 || fsec != 0 {
		dst = append(dst, ' ')
		if sec < 0 || (sec == 0 && fsec < 0) {
			if isZero {
				isBefore = true
			} else if !isBefore {
				dst = append(dst, '-')
			}
		} else if isBefore {
			dst = append(dst, '-')
		}
		dst = appendSeconds(dst, sec, fsec, false)
		dst = append(dst, " sec"...)
		if abs64(sec) != 1 || fsec != 0 {
			dst = append(dst, 's')
		}
		isZero = false
	}
	if isZero {
		dst = append(dst, " 0"...)
	}
	if isBefore {
		dst = append(dst, " ago"...)
	}
	return dst
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

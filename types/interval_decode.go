package types

import (
	"math"
	"strconv"
	"strings"
)

// The field splitter and decoders of interval input, after PostgreSQL 15's
// ParseDateTime, DecodeInterval, DecodeTimeForInterval and
// DecodeISO8601Interval (see interval_parse.go). Pure functions.

type ivFieldType uint8

const (
	ivNumber  ivFieldType = iota // digits, maybe a fraction ("1", "1.5", ".5")
	ivDate                       // digits with '-', '/' or '.' ("1-2"), or a word so glued
	ivTime                       // digits with ':' ("1:02:03.5")
	ivSigned                     // '+' or '-' then a digit (DTK_TZ: "-1", "+02:00", "-1-2")
	ivString                     // a word, lower case
	ivSpecial                    // '+' or '-' then a word
)

type ivField struct {
	text string
	typ  ivFieldType
}

func isSpaceDT(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func isPunct(c byte) bool {
	return c > ' ' && c < 0x7f && !isDigit(c) && !isAlpha(c)
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// splitIntervalFields is ParseDateTime: other punctuation ('@', ',')
// separates fields and is dropped; a byte that is neither is bad format.
func splitIntervalFields(s string) ([]ivField, bool) {
	var out []ivField
	n := len(s)
	for i := 0; i < n; {
		c := s[i]
		var b []byte
		var typ ivFieldType
		switch {
		case isSpaceDT(c):
			i++
			continue
		case isDigit(c):
			j := i
			for j < n && isDigit(s[j]) {
				j++
			}
			typ = ivNumber
			switch {
			case j < n && s[j] == ':':
				typ = ivTime
				for j < n && (isDigit(s[j]) || s[j] == ':' || s[j] == '.') {
					j++
				}
			case j < n && (s[j] == '-' || s[j] == '/' || s[j] == '.'):
				delim := s[j]
				j++
				if j < n && isDigit(s[j]) {
					if delim != '.' {
						typ = ivDate
					}
					for j < n && isDigit(s[j]) {
						j++
					}
					if j < n && s[j] == delim {
						typ = ivDate
						for j < n && (isDigit(s[j]) || s[j] == delim) {
							j++
						}
					}
				} else {
					typ = ivDate
					for j < n && (isDigit(s[j]) || isAlpha(s[j]) || s[j] == delim) {
						j++
					}
				}
			}
			b = []byte(strings.ToLower(s[i:j]))
			i = j
		case c == '.':
			j := i + 1
			for j < n && isDigit(s[j]) {
				j++
			}
			b, typ = []byte(s[i:j]), ivNumber
			i = j
		case isAlpha(c):
			j := i
			for j < n && isAlpha(s[j]) {
				j++
			}
			typ = ivString
			word := strings.ToLower(s[i:j])
			if j < n && (s[j] == '-' || s[j] == '/' || s[j] == '.' ||
				((s[j] == '+' || isDigit(s[j])) && !isDateKeyword(word))) {
				typ = ivDate
				j++
				for j < n && (s[j] == '+' || s[j] == '-' || s[j] == '/' || s[j] == '_' || s[j] == '.' ||
					s[j] == ':' || isDigit(s[j]) || isAlpha(s[j])) {
					j++
				}
			}
			b = []byte(strings.ToLower(s[i:j]))
			i = j
		case c == '+' || c == '-':
			b = append(b, c)
			j := i + 1
			for j < n && isSpaceDT(s[j]) {
				j++
			}
			switch {
			case j < n && isDigit(s[j]):
				typ = ivSigned
				k := j + 1
				for k < n && (isDigit(s[k]) || s[k] == ':' || s[k] == '.' || s[k] == '-') {
					k++
				}
				b = append(b, s[j:k]...)
				j = k
			case j < n && isAlpha(s[j]):
				typ = ivSpecial
				k := j
				for k < n && isAlpha(s[k]) {
					k++
				}
				b = append(b, strings.ToLower(s[j:k])...)
				j = k
			default:
				return nil, false
			}
			i = j
		case isPunct(c):
			i++
			continue
		default:
			return nil, false
		}
		out = append(out, ivField{text: string(b), typ: typ})
	}
	return out, true
}

// interval units (DecodeUnits over deltatktbl, matched on the first ten
// letters as PostgreSQL's TOKMAXLEN)
const (
	uNone = iota
	uMicro
	uMilli
	uSecond
	uMinute
	uHour
	uDay
	uWeek
	uMonth
	uYear
	uDecade
	uCentury
	uMillennium
	uAgo // not a unit: "ago"
)

var intervalUnitWords = map[string]int{
	"microsecon": uMicro, "us": uMicro, "usec": uMicro, "usecond": uMicro, "useconds": uMicro, "usecs": uMicro,
	"millisecon": uMilli, "ms": uMilli, "msec": uMilli, "msecond": uMilli, "mseconds": uMilli, "msecs": uMilli,
	"s": uSecond, "sec": uSecond, "second": uSecond, "seconds": uSecond, "secs": uSecond,
	"m": uMinute, "min": uMinute, "mins": uMinute, "minute": uMinute, "minutes": uMinute,
	"h": uHour, "hour": uHour, "hours": uHour, "hr": uHour, "hrs": uHour,
	"d": uDay, "day": uDay, "days": uDay,
	"w": uWeek, "week": uWeek, "weeks": uWeek,
	"mon": uMonth, "mons": uMonth, "month": uMonth, "months": uMonth,
	"y": uYear, "year": uYear, "years": uYear, "yr": uYear, "yrs": uYear,
	"dec": uDecade, "decade": uDecade, "decades": uDecade, "decs": uDecade,
	"c": uCentury, "cent": uCentury, "centuries": uCentury, "century": uCentury,
	"mil": uMillennium, "millennia": uMillennium, "millennium": uMillennium, "mils": uMillennium,
	"ago": uAgo,
}

func intervalUnit(w string) (int, bool) {
	if len(w) > 10 {
		w = w[:10]
	}
	u, ok := intervalUnitWords[w]
	return u, ok
}

// field masks (DTK_M) for the check that no field is given twice
const (
	mYear = 1 << iota
	mMonth
	mDay
	mHour
	mMinute
	mSecond
	mMilli
	mMicro
	mWeek
	mDecade
	mCentury
	mMillennium

	mAllSecs = mSecond | mMilli | mMicro
	mTime    = mHour | mMinute | mAllSecs
)

// unitForRange is the unit of a unit-less rightmost number, from the
// typmod's range.
func unitForRange(rng int) int {
	switch rng {
	case IntervalYear:
		return uYear
	case IntervalMonth, IntervalYear | IntervalMonth:
		return uMonth
	case IntervalDay:
		return uDay
	case IntervalHour, IntervalDay | IntervalHour:
		return uHour
	case IntervalMinute, IntervalHour | IntervalMinute, IntervalDay | IntervalHour | IntervalMinute:
		return uMinute
	}
	return uSecond
}

// strtoi64 is C's strtoll on s: the value, the rest after the digits, and
// false on overflow; with no digits it returns 0 and s.
func strtoi64(s string) (int64, string, bool) {
	i := 0
	for i < len(s) && isSpaceDT(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	j := i
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	if j == i {
		return 0, s, true
	}
	digits := s[i:j]
	if neg {
		digits = "-" + digits
	}
	v, err := strconv.ParseInt(digits, 10, 64)
	return v, s[j:], err == nil
}

// strtoint is strtol into an int: false beyond int32.
func strtoint(s string) (int64, string, bool) {
	v, rest, ok := strtoi64(s)
	return v, rest, ok && v >= math.MinInt32 && v <= math.MaxInt32
}

// parseFraction is ParseFraction: s starts with '.'; "." alone is 0.
func parseFraction(s string) (float64, bool) {
	if s == "." {
		return 0, true
	}
	for i := 1; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat("0"+s, 64)
	return f, err == nil
}

// decodeInterval is DecodeInterval over fields from splitIntervalFields.
func decodeInterval(fields []ivField, rng int, sqlStandard bool) (itm, ivErr) {
	var m itm
	forceNegative := false
	if sqlStandard && len(fields) > 0 && fields[0].text[0] == '-' {
		forceNegative = true
		for _, f := range fields[1:] {
			if f.text[0] == '-' || f.text[0] == '+' {
				forceNegative = false
				break
			}
		}
	}
	isBefore := false
	fmask := 0
	typ := uNone // the unit of the next number to the left
	for i := len(fields) - 1; i >= 0; i-- {
		f := fields[i]
		tmask := 0
		switch f.typ {
		case ivTime:
			var e ivErr
			if tmask, e = m.decodeTime(f.text, rng); e != ivOK {
				return m, e
			}
			if forceNegative && m.usec > 0 {
				m.usec = -m.usec
			}
			typ = uDay
		case ivSigned, ivDate, ivNumber:
			if f.typ == ivSigned && strings.IndexByte(f.text[1:], ':') >= 0 {
				saved := m
				if mask, e := m.decodeTime(f.text[1:], rng); e == ivOK {
					if f.text[0] == '-' {
						if m.usec == math.MinInt64 {
							return m, ivOverflow
						}
						m.usec = -m.usec
					}
					if forceNegative && m.usec > 0 {
						m.usec = -m.usec
					}
					tmask, typ = mask, uDay
					break
				}
				m = saved
			}
			if typ == uNone {
				typ = unitForRange(rng)
			}
			val, rest, ok := strtoi64(f.text)
			if !ok {
				return m, ivOverflow
			}
			var fval float64
			switch {
			case rest != "" && rest[0] == '-':
				// SQL "years-months"
				val2, rest2, ok := strtoint(rest[1:])
				if !ok || val2 < 0 || val2 >= 12 {
					return m, ivOverflow
				}
				if rest2 != "" {
					return m, ivBad
				}
				typ = uMonth
				if f.text[0] == '-' {
					val2 = -val2
				}
				if val, ok = mulI64(val, 12); !ok {
					return m, ivOverflow
				}
				if !addI64(&val, val2) {
					return m, ivOverflow
				}
			case rest != "" && rest[0] == '.':
				if fval, ok = parseFraction(rest); !ok {
					return m, ivBad
				}
				if f.text[0] == '-' {
					fval = -fval
				}
			case rest != "":
				return m, ivBad
			}
			if forceNegative {
				if val > 0 {
					val = -val
				}
				if fval > 0 {
					fval = -fval
				}
			}
			ok = true
			switch typ {
			case uMicro:
				ok, tmask = m.adjustMicros(val, fval, 1), mMicro
			case uMilli:
				ok, tmask = m.adjustMicros(val, fval, 1000), mMilli
			case uSecond:
				ok, tmask = m.adjustMicros(val, fval, usPerSec), mSecond
				if fval != 0 {
					tmask = mAllSecs
				}
			case uMinute:
				ok, tmask = m.adjustMicros(val, fval, usPerMin), mMinute
			case uHour:
				ok, tmask = m.adjustMicros(val, fval, usPerHour), mHour
				typ = uDay // a number to the left of an hour is a day
			case uDay:
				ok, tmask = m.adjustDays(val, 1) && m.adjustFractMicros(fval, usPerDay), mDay
			case uWeek:
				ok, tmask = m.adjustDays(val, 7) && m.adjustFractDays(fval, 7), mWeek
			case uMonth:
				ok, tmask = m.adjustMonths(val) && m.adjustFractDays(fval, 30), mMonth
			case uYear:
				ok, tmask = m.adjustYears(val, 1) && m.adjustFractYears(fval, 1), mYear
			case uDecade:
				ok, tmask = m.adjustYears(val, 10) && m.adjustFractYears(fval, 10), mDecade
			case uCentury:
				ok, tmask = m.adjustYears(val, 100) && m.adjustFractYears(fval, 100), mCentury
			case uMillennium:
				ok, tmask = m.adjustYears(val, 1000) && m.adjustFractYears(fval, 1000), mMillennium
			default:
				return m, ivBad // a number before "ago"
			}
			if !ok {
				return m, ivOverflow
			}
		case ivString, ivSpecial:
			u, ok := intervalUnit(f.text)
			if !ok {
				return m, ivBad
			}
			if u == uAgo {
				isBefore = true
			}
			typ = u
		}
		if tmask&fmask != 0 {
			return m, ivBad
		}
		fmask |= tmask
	}
	if fmask == 0 {
		return m, ivBad
	}
	if isBefore {
		if m.usec == math.MinInt64 || m.days == math.MinInt32 || m.months == math.MinInt32 || m.years == math.MinInt32 {
			return m, ivOverflow
		}
		m.usec, m.days, m.months, m.years = -m.usec, -m.days, -m.months, -m.years
	}
	return m, ivOK
}

// decodeTime is DecodeTimeForInterval: "h:m", "h:m:s[.f]", and "m:s.f"
// (or "m:s" for MINUTE TO SECOND); it replaces the microseconds gathered so
// far, as PostgreSQL does.
func (m *itm) decodeTime(s string, rng int) (int, ivErr) {
	hour, rest, ok := strtoi64(s)
	if !ok {
		return 0, ivOverflow
	}
	if rest == "" || rest[0] != ':' {
		return 0, ivBad
	}
	min, rest, ok := strtoint(rest[1:])
	if !ok {
		return 0, ivOverflow
	}
	var sec, fsec int64
	switch {
	case rest == "":
		if rng == IntervalMinute|IntervalSecond {
			if hour > math.MaxInt32 || hour < math.MinInt32 {
				return 0, ivOverflow
			}
			hour, min, sec = 0, hour, min
		}
	case rest[0] == '.':
		f, ok := parseFraction(rest)
		if !ok {
			return 0, ivBad
		}
		fsec = int64(math.RoundToEven(f * 1e6))
		if hour > math.MaxInt32 || hour < math.MinInt32 {
			return 0, ivOverflow
		}
		hour, min, sec = 0, hour, min
	case rest[0] == ':':
		if sec, rest, ok = strtoint(rest[1:]); !ok {
			return 0, ivOverflow
		}
		if rest != "" && rest[0] == '.' {
			f, ok := parseFraction(rest)
			if !ok {
				return 0, ivBad
			}
			fsec = int64(math.RoundToEven(f * 1e6))
		} else if rest != "" {
			return 0, ivBad
		}
	default:
		return 0, ivBad
	}
	if hour < 0 || min < 0 || min > 59 || sec < 0 || sec > 60 || fsec < 0 || fsec > usPerSec {
		return 0, ivOverflow
	}
	m.usec = fsec
	if !m.adjustMicros(hour, 0, usPerHour) || !m.adjustMicros(min, 0, usPerMin) || !m.adjustMicros(sec, 0, usPerSec) {
		return 0, ivOverflow
	}
	return mTime, ivOK
}

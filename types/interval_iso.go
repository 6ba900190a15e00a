package types

import (
	"math"
	"strconv"
	"strings"
)

// ISO 8601 interval input, after PostgreSQL 15's DecodeISO8601Interval:
// "P1Y2M3W4DT5H6M7.5S" (fractions allowed on every field), the basic
// alternative form "P00010203T040506" and the extended one
// "P0001-02-03T04:05:06". Upper-case designators only, as PostgreSQL.

// parseISO8601Number is ParseISO8601Number: strtod's longest number at the
// start of s, split into an integer part and a fraction of the same sign;
// beyond ±1e15 (or NaN, infinity) it is a field overflow.
func parseISO8601Number(s string) (int64, float64, string, ivErr) {
	if s == "" || !(isDigit(s[0]) || s[0] == '-' || s[0] == '.') {
		return 0, 0, s, ivBad
	}
	n := strtodPrefix(s)
	if n == 0 {
		return 0, 0, s, ivBad
	}
	val, err := strconv.ParseFloat(s[:n], 64)
	if err != nil && !strings.Contains(err.Error(), "range") {
		return 0, 0, s, ivBad
	}
	if math.IsNaN(val) || val < -1e15 || val > 1e15 {
		return 0, 0, s, ivOverflow
	}
	ip := math.Trunc(val)
	return int64(ip), val - ip, s[n:], ivOK
}

// strtodPrefix is the length of the longest prefix of s that strtod reads:
// [-+]digits[.digits][e[-+]digits], or [-+]inf[inity] / nan.
func strtodPrefix(s string) int {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	low := strings.ToLower(s[i:])
	for _, w := range []string{"infinity", "inf", "nan"} {
		if strings.HasPrefix(low, w) {
			return i + len(w)
		}
	}
	digits := 0
	for i < len(s) && isDigit(s[i]) {
		i, digits = i+1, digits+1
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i, digits = i+1, digits+1
		}
	}
	if digits == 0 {
		return 0
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '-' || s[j] == '+') {
			j++
		}
		k := j
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		if k > j {
			i = k
		}
	}
	return i
}

// isoIntegerWidth is ISO8601IntegerWidth: the digits at the start of a
// field, after an optional '-'.
func isoIntegerWidth(s string) int {
	s = strings.TrimPrefix(s, "-")
	n := 0
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	return n
}

func decodeISO8601Interval(s string) (itm, ivErr) {
	var m itm
	if len(s) < 2 || s[0] != 'P' {
		return m, ivBad
	}
	str := s[1:]
	datePart, haveField := true, false
	for str != "" {
		if str[0] == 'T' {
			datePart, haveField = false, false
			str = str[1:]
			continue
		}
		fieldStart := str
		val, fval, rest, e := parseISO8601Number(str)
		if e != ivOK {
			return m, e
		}
		var unit byte
		if rest != "" {
			unit, rest = rest[0], rest[1:]
		}
		str = rest
		ok := true
		if datePart {
			switch unit {
			case 'Y':
				ok = m.adjustYears(val, 1) && m.adjustFractYears(fval, 1)
			case 'M':
				ok = m.adjustMonths(val) && m.adjustFractDays(fval, 30)
			case 'W':
				ok = m.adjustDays(val, 7) && m.adjustFractDays(fval, 7)
			case 'D':
				ok = m.adjustDays(val, 1) && m.adjustFractMicros(fval, usPerDay)
			case 'T', 0, '-':
				if unit != '-' && isoIntegerWidth(fieldStart) == 8 && !haveField {
					// basic alternative format: YYYYMMDD
					if !m.adjustYears(val/10000, 1) || !m.adjustMonths((val/100)%100) ||
						!m.adjustDays(val%100, 1) || !m.adjustFractMicros(fval, usPerDay) {
						return m, ivOverflow
					}
					if unit == 0 {
						return m, ivOK
					}
					datePart, haveField = false, false
					continue
				}
				// extended alternative format: YYYY-MM-DD
				if haveField {
					return m, ivBad
				}
				if !m.adjustYears(val, 1) || !m.adjustFractYears(fval, 1) {
					return m, ivOverflow
				}
				if unit == 0 {
					return m, ivOK
				}
				if unit == 'T' {
					datePart, haveField = false, false
					continue
				}
				if val, fval, str, e = parseISO8601Number(str); e != ivOK {
					return m, e
				}
				if !m.adjustMonths(val) || !m.adjustFractDays(fval, 30) {
					return m, ivOverflow
				}
				if str == "" {
					return m, ivOK
				}
				if str[0] == 'T' {
					datePart, haveField = false, false
					continue
				}
				if str[0] != '-' {
					return m, ivBad
				}
				if val, fval, str, e = parseISO8601Number(str[1:]); e != ivOK {
					return m, e
				}
				if !m.adjustDays(val, 1) || !m.adjustFractMicros(fval, usPerDay) {
					return m, ivOverflow
				}
				if str == "" {
					return m, ivOK
				}
				if str[0] == 'T' {
					datePart, haveField = false, false
					continue
				}
				return m, ivBad
			default:
				return m, ivBad
			}
		} else {
			switch unit {
			case 'H':
				ok = m.adjustMicros(val, fval, usPerHour)
			case 'M':
				ok = m.adjustMicros(val, fval, usPerMin)
			case 'S':
				ok = m.adjustMicros(val, fval, usPerSec)
			case 0, ':':
				if unit == 0 && isoIntegerWidth(fieldStart) == 6 && !haveField {
					// basic alternative format: HHMMSS
					if !m.adjustMicros(val/10000, 0, usPerHour) || !m.adjustMicros((val/100)%100, 0, usPerMin) ||
						!m.adjustMicros(val%100, 0, usPerSec) || !m.adjustFractMicros(fval, 1) {
						return m, ivOverflow
					}
					return m, ivOK
				}
				// extended alternative format: HH:MM:SS
				if haveField {
					return m, ivBad
				}
				if !m.adjustMicros(val, fval, usPerHour) {
					return m, ivOverflow
				}
				if unit == 0 {
					return m, ivOK
				}
				if val, fval, str, e = parseISO8601Number(str); e != ivOK {
					return m, e
				}
				if !m.adjustMicros(val, fval, usPerMin) {
					return m, ivOverflow
				}
				if str == "" {
					return m, ivOK
				}
				if str[0] != ':' {
					return m, ivBad
				}
				if val, fval, str, e = parseISO8601Number(str[1:]); e != ivOK {
					return m, e
				}
				if !m.adjustMicros(val, fval, usPerSec) {
					return m, ivOverflow
				}
				if str == "" {
					return m, ivOK
				}
				return m, ivBad
			default:
				return m, ivBad
			}
		}
		if !ok {
			return m, ivOverflow
		}
		haveField = true
	}
	return m, ivOK
}

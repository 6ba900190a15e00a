package types

import (
	"math"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/pgerr"
)

// Interval text input (interval_in), after PostgreSQL's DecodeInterval and
// DecodeISO8601Interval.

// itm accumulates an interval being parsed, as PostgreSQL's pg_itm_in.
type itm struct {
	usec        int64
	days        int64
	months      int64
	years       int64
	overflowErr bool
}

func (m *itm) addMicros(val int64, frac float64, scale int64) {
	hi, lo := mulOverflows(val, scale)
	if hi {
		m.overflowErr = true
		return
	}
	m.usec = m.addChecked(m.usec, lo)
	if frac != 0 {
		f := frac * float64(scale)
		u := int64(f)
		f -= float64(u)
		u += int64(math.RoundToEven(f))
		m.usec = m.addChecked(m.usec, u)
	}
}

// addChecked adds with int64 overflow detection (PostgreSQL reports it as
// an interval field overflow).
func (m *itm) addChecked(a, b int64) int64 {
	c := a + b
	if (c > a) != (b > 0) {
		m.overflowErr = true
	}
	return c
}

func mulOverflows(a, b int64) (bool, int64) {
	if a == 0 || b == 0 {
		return false, 0
	}
	c := a * b
	if c/b != a {
		return true, 0
	}
	return false, c
}

func (m *itm) addFracDays(frac float64, scale int64) {
	if frac == 0 {
		return
	}
	f := frac * float64(scale)
	d := int64(f)
	m.days += d
	f -= float64(d)
	m.addMicros(0, f, usPerDay)
}

var intervalUnits = map[string]string{
	"microsecond": "us", "microseconds": "us", "microsecon": "us", "us": "us", "usec": "us", "usecs": "us", "usecond": "us", "useconds": "us",
	"millisecond": "ms", "milliseconds": "ms", "millisecon": "ms", "ms": "ms", "msec": "ms", "msecs": "ms", "msecond": "ms", "mseconds": "ms",
	"second": "s", "seconds": "s", "sec": "s", "secs": "s", "s": "s",
	"minute": "m", "minutes": "m", "min": "m", "mins": "m", "m": "m",
	"hour": "h", "hours": "h", "hr": "h", "hrs": "h", "h": "h",
	"day": "d", "days": "d", "d": "d",
	"week": "w", "weeks": "w", "w": "w",
	"month": "mon", "months": "mon", "mon": "mon", "mons": "mon",
	"year": "y", "years": "y", "yr": "y", "yrs": "y", "y": "y",
	"decade": "dec", "decades": "dec", "dec": "dec", "decs": "dec",
	"century": "c", "centuries": "c", "cent": "c", "c": "c",
	"millennium": "mil", "millennia": "mil", "mil": "mil", "mils": "mil", "millenniums": "mil",
}

type ivTok struct {
	text string
	unit bool // a unit word
}

func badInterval(s string) error {
	return pgerr.New(pgerr.InvalidDatetimeFormat, "invalid input syntax for type interval: \"%s\"", s)
}

func intervalOverflow(s string) error {
	return pgerr.New(codeIntervalFieldOverflow, "interval field value out of range: \"%s\"", s)
}

// parseInterval reads interval_in's syntax: "1 year 2 mons", "1 day 01:00",
// "-1 day +02:00:00", "@ 1 hour ago", "1.5 days", SQL "1-2" and "1 2:03:04",
// ISO 8601 "P1Y2M3DT4H5M6S", and a bare number counted in the lowest field of
// the typmod's range (seconds when there is none); then applies the typmod.
//
// With sqlStandard (IntervalStyle sql_standard), a leading '-' applies to
// every field when no other field has an explicit sign ('-1 2:03:04').
func parseInterval(s string, typmod int32, sqlStandard bool) (IntervalValue, error) {
	rng := intervalRange(typmod)
	t := strings.TrimSpace(s)
	var m itm
	var err error
	if len(t) > 0 && (t[0] == 'P' || t[0] == 'p') {
		if m, err = parseISOInterval(t, s); err != nil {
			return IntervalValue{}, err
		}
	} else if m, err = parsePGInterval(t, s, rng, sqlStandard); err != nil {
		return IntervalValue{}, err
	}
	i32 := func(x int64) bool { return x >= math.MinInt32 && x <= math.MaxInt32 }
	if m.overflowErr || !i32(m.years) || !i32(m.months) || !i32(m.days) {
		return IntervalValue{}, intervalOverflow(s)
	}
	months := m.years*12 + m.months
	if !i32(months) {
		return IntervalValue{}, pgerr.New(pgerr.DatetimeFieldOverflow, "interval out of range")
	}
	v := IntervalValue{Months: int32(months), Days: int32(m.days), Micros: m.usec}
	return adjustInterval(v, typmod), nil
}

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

func parsePGInterval(t, orig string, rng int, sqlStandard bool) (itm, error) {
	var m itm
	// tokenize: split on whitespace; split a number glued to a unit ("5min").
	var toks []ivTok
	for _, f := range strings.Fields(strings.ToLower(t)) {
		for f != "" {
			if _, ok := intervalUnits[f]; ok || f == "@" || f == "ago" {
				toks = append(toks, ivTok{text: f, unit: f != "@"})
				break
			}
			if isAlpha(f[0]) {
				return m, badInterval(orig)
			}
			j := 0
			for j < len(f) && !isAlpha(f[j]) {
				j++
			}
			toks = append(toks, ivTok{text: f[:j]})
			f = f[j:]
		}
	}
	if len(toks) == 0 {
		return m, badInterval(orig)
	}
	ago := false
	// PostgreSQL reads fields right to left so a unit applies to the number
	// before it; a number with no unit takes its meaning from the typmod.
	unit := ""
	// nextDefault is the unit of a unit-less number after (to the left
	// of) an hour field or a time: days, as in "1 2" for DAY TO HOUR.
	nextDefault := ""
	seenUnits := map[string]bool{}
	parsed := false
	for i := len(toks) - 1; i >= 0; i-- {
		tk := toks[i].text
		if tk == "@" {
			if i != 0 {
				return m, badInterval(orig)
			}
			continue
		}
		if tk == "ago" {
			if i != len(toks)-1 || ago {
				return m, badInterval(orig)
			}
			ago = true
			continue
		}
		if toks[i].unit {
			if unit != "" {
				return m, badInterval(orig)
			}
			unit = intervalUnits[tk]
			continue
		}
		// a number, a time, or SQL-standard y-m
		if strings.IndexByte(tk, ':') >= 0 {
			if unit != "" || seenUnits["time"] {
				return m, badInterval(orig)
			}
			seenUnits["time"] = true
			if err := m.addTime(tk, orig, rng); err != nil {
				return m, err
			}
			nextDefault, parsed = "d", true
			continue
		}
		if k := strings.IndexByte(tk[1:], '-'); k >= 0 && unit == "" {
			// SQL-standard years-months
			k++
			neg := tk[0] == '-'
			ys, ms := tk[:k], tk[k+1:]
			if neg {
				ys = ys[1:]
			} else if ys[0] == '+' {
				ys = ys[1:]
			}
			y, ok1 := atoiDT(ys)
			mo, ok2 := atoiDT(ms)
			if !ok1 || !ok2 || mo > 11 {
				return m, badInterval(orig)
			}
			if neg {
				y, mo = -y, -mo
			}
			m.years += y
			m.months += mo
			parsed = true
			continue
		}
		ival, frac, ok := splitNumber(tk)
		if !ok {
			return m, badInterval(orig)
		}
		u := unit
		unit = ""
		if u == "" {
			if ago && i == len(toks)-2 {
				return m, badInterval(orig) // "1 ago"
			}
			// unit-less number: a day before an hour or a time field
			// (SQL-standard "1 2:03:04"), else the lowest field of the range
			u = nextDefault
			if u == "" {
				u = lowestUnit(rng)
			}
		}
		nextDefault = ""
		if u == "h" {
			nextDefault = "d"
		}
		parsed = true
		if seenUnits[u] {
			return m, badInterval(orig)
		}
		seenUnits[u] = true
		switch u {
		case "us":
			m.addMicros(ival, frac, 1)
		case "ms":
			m.addMicros(ival, frac, 1000)
		case "s":
			m.addMicros(ival, frac, usPerSec)
		case "m":
			m.addMicros(ival, frac, usPerMin)
		case "h":
			m.addMicros(ival, frac, usPerHour)
		case "d":
			m.days += ival
			m.addMicros(0, frac, usPerDay)
		case "w":
			if over, _ := mulOverflows(ival, 7); over {
				m.overflowErr = true
			}
			m.days = m.addChecked(m.days, ival*7)
			m.addFracDays(frac, 7)
		case "mon":
			m.months += ival
			m.addFracDays(frac, 30)
		case "y", "dec", "c", "mil":
			scale := map[string]int64{"y": 1, "dec": 10, "c": 100, "mil": 1000}[u]
			if _, p := mulOverflows(ival, scale); ival != 0 && p == 0 {
				m.overflowErr = true
			}
			m.years += ival * scale
			m.months += int64(math.RoundToEven(frac * float64(scale) * 12))
		}
	}
	if unit != "" || !parsed {
		return m, badInterval(orig)
	}
	if sqlStandard && toks[0].text[0] == '-' {
		more := false
		for _, tk := range toks[1:] {
			if tk.text[0] == '-' || tk.text[0] == '+' {
				more = true
			}
		}
		if !more {
			m.usec, m.days, m.months, m.years = -abs64(m.usec), -abs64(m.days), -abs64(m.months), -abs64(m.years)
		}
	}
	if ago {
		m.usec, m.days, m.months, m.years = -m.usec, -m.days, -m.months, -m.years
	}
	return m, nil
}

func lowestUnit(rng int) string {
	switch rng {
	case IntervalYear:
		return "y"
	case IntervalMonth, IntervalYear | IntervalMonth:
		return "mon"
	case IntervalDay:
		return "d"
	case IntervalHour, IntervalDay | IntervalHour:
		return "h"
	case IntervalMinute, IntervalHour | IntervalMinute, IntervalDay | IntervalHour | IntervalMinute:
		return "m"
	}
	return "s"
}

// splitNumber splits "[-+]123.45" into 123 and .45 (both signed); values with
// too many digits overflow as in PostgreSQL.
func splitNumber(s string) (int64, float64, bool) {
	neg := false
	body := s
	if body != "" && (body[0] == '-' || body[0] == '+') {
		neg = body[0] == '-'
		body = body[1:]
	}
	ip, fp := body, ""
	if k := strings.IndexByte(body, '.'); k >= 0 {
		ip, fp = body[:k], body[k:]
	}
	if ip == "" && (fp == "" || fp == ".") {
		return 0, 0, false
	}
	var v int64
	for i := 0; i < len(ip); i++ {
		if !isDigit(ip[i]) {
			return 0, 0, false
		}
		if v > (math.MaxInt64-9)/10 {
			// beyond int64: an overflow PostgreSQL reports as out of range
			return math.MaxInt64, 0, true
		}
		v = v*10 + int64(ip[i]-'0')
	}
	var f float64
	if fp != "" {
		for i := 1; i < len(fp); i++ {
			if !isDigit(fp[i]) {
				return 0, 0, false
			}
		}
		var err error
		if f, err = strconv.ParseFloat("0"+fp, 64); err != nil {
			return 0, 0, false
		}
	}
	if neg {
		v, f = -v, -f
	}
	return v, f, true
}

// addTime adds "[-+]h:m[:s[.f]]" (or "m:s.f" for MINUTE TO SECOND).
func (m *itm) addTime(tk, orig string, rng int) error {
	neg := false
	if tk[0] == '-' || tk[0] == '+' {
		neg = tk[0] == '-'
		tk = tk[1:]
	}
	parts := strings.Split(tk, ":")
	if len(parts) > 3 || len(parts) < 2 {
		return badInterval(orig)
	}
	frac := ""
	last := parts[len(parts)-1]
	if k := strings.IndexByte(last, '.'); k >= 0 {
		frac, last = last[k+1:], last[:k]
		parts[len(parts)-1] = last
	}
	var vals [3]int64
	for i, p := range parts {
		if p == "" || strings.IndexFunc(p, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
			return badInterval(orig)
		}
		v, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return intervalOverflow(orig)
		}
		vals[i] = v
	}
	var h, mi, sc int64
	if len(parts) == 2 {
		if frac != "" || rng == IntervalMinute|IntervalSecond {
			mi, sc = vals[0], vals[1] // m:s[.f]
		} else {
			h, mi = vals[0], vals[1]
		}
	} else {
		h, mi, sc = vals[0], vals[1], vals[2]
	}
	if mi > 59 || sc > 60 {
		return intervalOverflow(orig)
	}
	us := int64(0)
	if frac != "" {
		var e dtErr
		if us, e = fracMicros(frac); e != dtOK {
			return badInterval(orig)
		}
	}
	total := h*usPerHour + mi*usPerMin + sc*usPerSec + us
	if h > math.MaxInt64/usPerHour {
		return intervalOverflow(orig)
	}
	if neg {
		total = -total
	}
	m.usec += total
	return nil
}

// parseISOInterval reads ISO 8601 durations: P[nY][nM][nW][nD][T[nH][nM][nS]]
// with optional fractions, and the alternative form PYYYY-MM-DDTHH:MM:SS.
func parseISOInterval(t, orig string) (itm, error) {
	var m itm
	body := t[1:]
	if body == "" {
		return m, badInterval(orig)
	}
	// the alternative format has a number followed by '-' or ':'
	j := 0
	if j < len(body) && (body[j] == 'T' || body[j] == 't') {
		j++
	}
	k := j
	for k < len(body) && isDigit(body[k]) {
		k++
	}
	if k > j && k < len(body) && (body[k] == '-' || body[k] == ':') {
		return parseISOAlt(body, orig)
	}
	inTime := false
	for body != "" {
		if body[0] == 'T' || body[0] == 't' {
			if inTime {
				return m, badInterval(orig)
			}
			inTime = true
			body = body[1:]
			continue
		}
		j := 0
		for j < len(body) && (isDigit(body[j]) || body[j] == '.' || body[j] == '-' || body[j] == '+') {
			j++
		}
		if j == 0 || j == len(body) {
			return m, badInterval(orig)
		}
		ival, frac, ok := splitNumber(body[:j])
		if !ok {
			return m, badInterval(orig)
		}
		u := body[j] | 0x20
		body = body[j+1:]
		if !inTime {
			switch u {
			case 'y':
				m.years += ival
				m.months += int64(math.RoundToEven(frac * 12))
			case 'm':
				m.months += ival
				m.addFracDays(frac, 30)
			case 'w':
				m.days += ival * 7
				m.addFracDays(frac, 7)
			case 'd':
				m.days += ival
				m.addMicros(0, frac, usPerDay)
			default:
				return m, badInterval(orig)
			}
		} else {
			switch u {
			case 'h':
				m.addMicros(ival, frac, usPerHour)
			case 'm':
				m.addMicros(ival, frac, usPerMin)
			case 's':
				m.addMicros(ival, frac, usPerSec)
			default:
				return m, badInterval(orig)
			}
		}
	}
	return m, nil
}

func parseISOAlt(body, orig string) (itm, error) {
	var m itm
	datePart, timePart := body, ""
	if k := strings.IndexAny(body, "Tt"); k >= 0 {
		datePart, timePart = body[:k], body[k+1:]
	} else if strings.IndexByte(body, ':') > 0 {
		datePart, timePart = "", body
	}
	if datePart != "" {
		p := strings.Split(datePart, "-")
		if len(p) != 3 {
			return m, badInterval(orig)
		}
		var v [3]int64
		for i := range p {
			x, ok := atoiDT(p[i])
			if !ok {
				return m, badInterval(orig)
			}
			v[i] = x
		}
		m.years, m.months, m.days = v[0], v[1], v[2]
	}
	if timePart != "" {
		if err := m.addTime(timePart, orig, intervalFullRange); err != nil {
			return m, err
		}
	}
	return m, nil
}

// codeIntervalFieldOverflow is SQLSTATE interval_field_overflow.
const codeIntervalFieldOverflow pgerr.Code = "22015"

package types

import (
	"strings"
	"time"

	"github.com/streamsql/streamsql/pgerr"
)

// date, time, timestamp and timestamptz input on top of decodeDT.

func (f *dtFields) timeOfDay() int64 {
	return f.hour*usPerHour + f.min*usPerMin + f.sec*usPerSec + f.usec
}

func dtError(e dtErr, typ, s string) error {
	switch e {
	case dtOverflow:
		return pgerr.New(pgerr.DatetimeFieldOverflow, "date/time field value out of range: \"%s\"", s)
	case dtMDOverflow:
		return pgerr.New(pgerr.DatetimeFieldOverflow, "date/time field value out of range: \"%s\"", s).
			WithHint("Perhaps you need a different \"datestyle\" setting.")
	case dtZoneRange:
		return pgerr.New("22009", "time zone displacement out of range: \"%s\"", s)
	case dtBadZone:
		return pgerr.New(pgerr.InvalidParameterValue, "time zone \"%s\" not recognized", zoneWord(s))
	}
	return pgerr.New(pgerr.InvalidDatetimeFormat, "invalid input syntax for type %s: \"%s\"", typ, s)
}

func zoneWord(s string) string {
	toks, _ := tokenizeDT(s)
	for _, t := range toks {
		if t.kind == tokWord && (strings.IndexByte(t.text, '/') >= 0 || len(t.text) > 4) {
			return strings.ToLower(t.text)
		}
	}
	return s
}

// nowIn is the time 'now' reads, in loc: opts.Now (the transaction's
// start, as in PostgreSQL) when set, else the wall clock.
func nowIn(opts *FormatOptions, loc *time.Location) time.Time {
	if loc == nil {
		loc = utc
	}
	if opts != nil && !opts.Now.IsZero() {
		return opts.Now.In(loc)
	}
	return time.Now().In(loc)
}

// specialDays resolves today/tomorrow/yesterday/epoch to a day number.
func specialDays(w string, opts *FormatOptions, loc *time.Location) int64 {
	n := nowIn(opts, loc)
	today := daysFromCivil(int64(n.Year()), int64(n.Month()), int64(n.Day()))
	switch w {
	case "tomorrow":
		return today + 1
	case "yesterday":
		return today - 1
	case "epoch":
		return 0
	}
	return today
}

// fastISO parses exactly "YYYY-MM-DD[( |T)HH:MM:SS[.f{1,6}]]", the form
// PostgreSQL and streamsql print, without the general tokenizer.
func fastISO(s string) (days, tod int64, ok bool) {
	if len(s) < 10 || s[4] != '-' || s[7] != '-' {
		return 0, 0, false
	}
	d2 := func(i int) (int64, bool) {
		a, b := s[i]-'0', s[i+1]-'0'
		return int64(a)*10 + int64(b), a <= 9 && b <= 9
	}
	yh, ok1 := d2(0)
	yl, ok2 := d2(2)
	m, ok3 := d2(5)
	d, ok4 := d2(8)
	y := yh*100 + yl
	if !(ok1 && ok2 && ok3 && ok4) || y == 0 || m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m) {
		return 0, 0, false
	}
	days = daysFromCivil(y, m, d)
	if len(s) == 10 {
		return days, 0, true
	}
	if len(s) < 19 || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':' {
		return 0, 0, false
	}
	h, ok1 := d2(11)
	mi, ok2 := d2(14)
	sec, ok3 := d2(17)
	if !(ok1 && ok2 && ok3) || h > 23 || mi > 59 || sec > 59 {
		return 0, 0, false
	}
	var us int64
	if len(s) > 19 {
		if s[19] != '.' || len(s) == 20 || len(s) > 26 {
			return 0, 0, false
		}
		scale := int64(100000)
		for i := 20; i < len(s); i++ {
			c := s[i] - '0'
			if c > 9 {
				return 0, 0, false
			}
			us += int64(c) * scale
			scale /= 10
		}
	}
	return days, h*usPerHour + mi*usPerMin + sec*usPerSec + us, true
}

// fastISOZone is fastISO for a timestamp followed by a zone written as Z,
// +HH, +HH:MM or +HHMM (the JSON/RFC 3339 forms); off is seconds east.
func fastISOZone(s string) (days, tod, off int64, ok bool) {
	n := len(s)
	var prefix string
	switch {
	case n > 19 && (s[n-1] == 'Z' || s[n-1] == 'z'):
		prefix = s[:n-1]
	default:
		i := n - 3
		if n > 24 && s[n-3] == ':' {
			i = n - 6
		} else if n > 23 && isDigit(s[n-3]) {
			i = n - 5
		}
		if i < 19 || (s[i] != '+' && s[i] != '-') {
			return 0, 0, 0, false
		}
		o, good := parseOffset(s[i:])
		if !good || o > maxZoneOffset || o < -maxZoneOffset {
			return 0, 0, 0, false
		}
		prefix, off = s[:i], o
	}
	if len(prefix) < 19 {
		return 0, 0, 0, false
	}
	days, tod, ok = fastISO(prefix)
	return days, tod, off, ok
}

func parseDate(s string, opts *FormatOptions) (DateValue, error) {
	if days, _, ok := fastISO(s); ok && len(s) == 10 {
		return DateValue(days), nil
	}
	f, e := decodeDT(s, false, opts)
	if e != dtOK {
		return 0, dtError(e, "date", s)
	}
	switch f.special {
	case "infinity", "+infinity":
		return DateInfinity, nil
	case "-infinity":
		return DateMinusInfinity, nil
	case "now", "today", "tomorrow", "yesterday", "epoch":
		return DateValue(specialDays(f.special, opts, opts.Location)), nil
	case "allballs":
		return 0, dtError(dtBad, "date", s)
	}
	if !f.hasYear {
		return 0, dtError(dtBad, "date", s)
	}
	d := daysFromCivil(f.year, f.mon, f.day)
	if d < minDate || d > maxDate {
		return 0, pgerr.New(pgerr.DatetimeFieldOverflow, "date out of range: \"%s\"", s)
	}
	return DateValue(d), nil
}

func parseTime(s string, typmod int32, opts *FormatOptions) (TimeValue, error) {
	f, e := decodeDT(s, true, opts)
	if e != dtOK {
		return 0, dtError(e, "time", s)
	}
	switch f.special {
	case "allballs":
		if f.hasTime {
			return 0, dtError(dtBad, "time", s)
		}
		return 0, nil
	case "now":
		n := nowIn(opts, opts.Location)
		us := int64(n.Hour())*usPerHour + int64(n.Minute())*usPerMin + int64(n.Second())*usPerSec + int64(n.Nanosecond()/1000)
		return TimeValue(roundMicros(us, typmod)), nil
	case "":
	default:
		return 0, dtError(dtBad, "time", s)
	}
	if !f.hasTime || f.loc != nil {
		return 0, dtError(dtBad, "time", s)
	}
	us := roundMicros(f.timeOfDay(), typmod)
	if us > usPerDay {
		return 0, dtError(dtOverflow, "time", s)
	}
	return TimeValue(us), nil
}

func parseTimestamp(s string, tz bool, typmod int32, opts *FormatOptions) (TimestampValue, error) {
	if days, tod, ok := fastISO(s); ok {
		v := days*usPerDay + tod
		if tz {
			loc := opts.Location
			if loc == nil {
				loc = utc
			}
			v = localToUTC(v, loc)
		}
		return TimestampValue(roundTS(v, typmod)), nil
	}
	if days, tod, off, ok := fastISOZone(s); ok {
		v := days*usPerDay + tod
		if tz {
			v -= off * usPerSec
		}
		return TimestampValue(roundTS(v, typmod)), nil
	}
	typ := "timestamp"
	if tz {
		typ = "timestamp with time zone"
	}
	f, e := decodeDT(s, false, opts)
	if e != dtOK {
		return 0, dtError(e, typ, s)
	}
	loc := opts.Location
	if loc == nil {
		loc = utc
	}
	var days, tod int64
	switch f.special {
	case "infinity", "+infinity":
		return TimestampInfinity, nil
	case "-infinity":
		return TimestampMinusInfinity, nil
	case "now":
		n := nowIn(opts, utc)
		if tz {
			return TimestampValue(n.UnixMicro()), nil
		}
		n = n.In(loc)
		_, off := n.Zone()
		return TimestampValue(roundTS(n.UnixMicro()+int64(off)*usPerSec, typmod)), nil
	case "epoch":
		return 0, nil
	case "today", "tomorrow", "yesterday":
		days = specialDays(f.special, opts, loc)
		if f.hasTime {
			tod = f.timeOfDay()
		}
	case "allballs":
		return 0, dtError(dtBad, typ, s)
	default:
		if !f.hasYear {
			return 0, dtError(dtBad, typ, s)
		}
		days = daysFromCivil(f.year, f.mon, f.day)
		tod = f.timeOfDay()
	}
	if days < minDate-1 || days > maxTimestampDays {
		return 0, pgerr.New(pgerr.DatetimeFieldOverflow, "timestamp out of range: \"%s\"", s)
	}
	local := days*usPerDay + tod
	if local < 0 && days > 0 { // overflowed near the end of the range
		return 0, pgerr.New(pgerr.DatetimeFieldOverflow, "timestamp out of range: \"%s\"", s)
	}
	v := local
	if tz {
		switch {
		case f.tzSet:
			v = local - f.tzOff*usPerSec
		case f.loc != nil:
			v = localToUTC(local, f.loc)
		default:
			v = localToUTC(local, loc)
		}
	}
	v = roundTS(v, typmod)
	if v < minTimestamp || v > maxTimestamp {
		return 0, pgerr.New(pgerr.DatetimeFieldOverflow, "timestamp out of range: \"%s\"", s)
	}
	return TimestampValue(v), nil
}

// roundTS applies a timestamp typmod, rounding in PostgreSQL's epoch as
// PostgreSQL does.
func roundTS(v int64, typmod int32) int64 {
	if typmod < 0 || typmod >= 6 {
		return v
	}
	return roundMicros(v-pgEpochMicros, typmod) + pgEpochMicros
}

// LocalToUTC is localToUTC: the instant of wall-clock reading local (µs,
// as if UTC) in loc, chosen around a transition as PostgreSQL does.
func LocalToUTC(local int64, loc *time.Location) int64 { return localToUTC(local, loc) }

// localToUTC converts a wall-clock reading in loc (microseconds, as if UTC)
// to a UTC instant. Around a transition it chooses as PostgreSQL does: a
// time that falls in a gap (spring forward) takes the offset from before
// the transition, an ambiguous one (fall back) the offset from after.
func localToUTC(local int64, loc *time.Location) int64 {
	if loc == utc || loc == nil {
		return local
	}
	const day = 86400 * usPerSec
	if local > maxTimestamp-day || local < minTimestamp-day {
		return local - zoneOffset(TimestampValue(local), loc)*usPerSec
	}
	before := zoneOffset(TimestampValue(local-day), loc) * usPerSec
	after := zoneOffset(TimestampValue(local+day), loc) * usPerSec
	if before == after {
		return local - before
	}
	// a transition nearby: the "after" reading if it is valid (this includes
	// an ambiguous time), else the "before" one (valid, or a gap)
	if ua := local - after; zoneOffset(TimestampValue(ua), loc)*usPerSec == after {
		return ua
	}
	return local - before
}

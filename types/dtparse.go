package types

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Date/time text input, after PostgreSQL's ParseDateTime/DecodeDateTime: the
// text is split into fields (dates, times, numbers, words, zone offsets) that
// are then assigned to year, month, day, time and zone. The DateStyle field
// order is MDY for ambiguous all-numeric dates such as 01/02/2024.

type dtTokKind uint8

const (
	tokNum    dtTokKind = iota // digits, maybe with one '.' fraction
	tokDate                    // parts separated by '-', '/' or '.'
	tokTime                    // h:m[:s[.f]]
	tokTZ                      // +hh[:mm[:ss]] or -hhmm
	tokWord                    // letters (month, zone, special ...)
	tokJulian                  // J followed by a Julian day number
)

type dtTok struct {
	kind  dtTokKind
	text  string // as written
	parts []string
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func tokenizeDT(s string) ([]dtTok, bool) {
	var toks []dtTok
	n := len(s)
	for i := 0; i < n; {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',':
			i++
		case isDigit(c):
			j := i
			for j < n && isDigit(s[j]) {
				j++
			}
			if j < n && s[j] == ':' {
				for j < n && (isDigit(s[j]) || s[j] == ':' || s[j] == '.') {
					j++
				}
				toks = append(toks, dtTok{kind: tokTime, text: s[i:j]})
				i = j
				continue
			}
			if j < n && (s[j] == '-' || s[j] == '/' || s[j] == '.') && j+1 < n && (isDigit(s[j+1]) || isAlpha(s[j+1])) {
				sep := s[j]
				parts := []string{s[i:j]}
				k := j
				for k < n && s[k] == sep && k+1 < n && (isDigit(s[k+1]) || isAlpha(s[k+1])) {
					st := k + 1
					if len(parts) >= 2 && isDigit(parts[1][0]) && !isDigit(s[st]) {
						// "99-08-Jan": PostgreSQL's field ends at the
						// separator and the date is incomplete
						return nil, false
					}
					e := st
					if isDigit(s[st]) {
						for e < n && isDigit(s[e]) {
							e++
						}
					} else {
						for e < n && isAlpha(s[e]) {
							e++
						}
					}
					parts = append(parts, s[st:e])
					k = e
				}
				if sep == '.' && len(parts) == 2 && isDigit(parts[1][0]) {
					toks = append(toks, dtTok{kind: tokNum, text: s[i:k]})
				} else {
					toks = append(toks, dtTok{kind: tokDate, text: s[i:k], parts: parts})
				}
				i = k
				continue
			}
			toks = append(toks, dtTok{kind: tokNum, text: s[i:j]})
			i = j
		case isAlpha(c):
			// ISO 8601 'T' before a time ("2024-01-02T03:04", "T040506")
			if (c == 't' || c == 'T') && (i == 0 || !isAlpha(s[i-1])) && i+1 < n && isDigit(s[i+1]) {
				i++
				continue
			}
			// Julian day "J2451187"
			if (c == 'j' || c == 'J') && (i == 0 || !isAlpha(s[i-1])) && i+1 < n && isDigit(s[i+1]) {
				j := i + 1
				for j < n && isDigit(s[j]) {
					j++
				}
				toks = append(toks, dtTok{kind: tokJulian, text: s[i+1 : j]})
				i = j
				continue
			}
			j := i
			for j < n && isAlpha(s[j]) {
				j++
			}
			// a month name starting a date: "Jan-08-1999"
			if _, isMonth := monthNames[strings.ToLower(s[i:j])]; isMonth && j+1 < n &&
				(s[j] == '-' || s[j] == '/' || s[j] == '.') && isDigit(s[j+1]) {
				sep := s[j]
				parts := []string{s[i:j]}
				k := j
				for k < n && s[k] == sep && k+1 < n && isDigit(s[k+1]) {
					e := k + 1
					for e < n && isDigit(s[e]) {
						e++
					}
					parts = append(parts, s[k+1:e])
					k = e
				}
				toks = append(toks, dtTok{kind: tokDate, text: s[i:k], parts: parts})
				i = k
				continue
			}
			// a POSIX-style zone: "UTC+3", "EST5EDT"; not a date word
			// followed by digits ("97FEB10", as PostgreSQL's ParseDateTime)
			if j-i >= 3 && j < n && !isDateKeyword(strings.ToLower(s[i:j])) && (isDigit(s[j]) || ((s[j] == '+' || s[j] == '-') && j+1 < n && isDigit(s[j+1]))) {
				for j < n && (isAlpha(s[j]) || isDigit(s[j]) || s[j] == '+' || s[j] == '-' || s[j] == ':') {
					j++
				}
				toks = append(toks, dtTok{kind: tokWord, text: s[i:j]})
				i = j
				continue
			}
			if j < n && (s[j] == '/' || s[j] == '_') {
				for j < n && (isAlpha(s[j]) || isDigit(s[j]) || s[j] == '/' || s[j] == '_' || s[j] == '+' || s[j] == '-') {
					j++
				}
			}
			toks = append(toks, dtTok{kind: tokWord, text: s[i:j]})
			i = j
		case c == '+' || c == '-':
			j := i + 1
			if j < n && isDigit(s[j]) {
				for j < n && (isDigit(s[j]) || s[j] == ':' || s[j] == '.') {
					j++
				}
				toks = append(toks, dtTok{kind: tokTZ, text: s[i:j]})
			} else if j < n && isAlpha(s[j]) {
				for j < n && isAlpha(s[j]) {
					j++
				}
				toks = append(toks, dtTok{kind: tokWord, text: s[i:j]})
			} else {
				return nil, false
			}
			i = j
		default:
			return nil, false
		}
	}
	return toks, true
}

// isDateKeyword says whether w (lower case) is one of PostgreSQL's date
// keywords (datetktbl: months, days, AM/PM, BC/AD, specials), which end a
// word even when digits follow.
func isDateKeyword(w string) bool {
	_, month := monthNames[w]
	switch w {
	case "am", "pm", "ad", "bc", "on", "at":
		return true
	}
	return month || dayNames[w] || specials[w]
}

var monthNames = map[string]int64{
	"jan": 1, "january": 1, "feb": 2, "february": 2, "mar": 3, "march": 3,
	"apr": 4, "april": 4, "may": 5, "jun": 6, "june": 6, "jul": 7, "july": 7,
	"aug": 8, "august": 8, "sep": 9, "sept": 9, "september": 9, "oct": 10,
	"october": 10, "nov": 11, "november": 11, "dec": 12, "december": 12,
}

var dayNames = map[string]bool{
	"sun": true, "sunday": true, "mon": true, "monday": true, "tue": true, "tues": true,
	"tuesday": true, "wed": true, "wednesday": true, "thu": true, "thur": true,
	"thurs": true, "thursday": true, "fri": true, "friday": true, "sat": true, "saturday": true,
}

// zoneAbbrevs is a small set of PostgreSQL's default time zone abbreviations
// (seconds east of UTC).
var zoneAbbrevs = map[string]int64{
	"utc": 0, "ut": 0, "gmt": 0, "z": 0, "zulu": 0,
	"est": -5 * 3600, "edt": -4 * 3600, "cst": -6 * 3600, "cdt": -5 * 3600,
	"mst": -7 * 3600, "mdt": -6 * 3600, "pst": -8 * 3600, "pdt": -7 * 3600,
	"akst": -9 * 3600, "akdt": -8 * 3600, "hst": -10 * 3600,
	"wet": 0, "west": 3600, "bst": 3600, "cet": 3600, "cest": 2 * 3600,
	"met": 3600, "mest": 2 * 3600, "eet": 2 * 3600, "eest": 3 * 3600,
	"msk": 3 * 3600, "ist": 2 * 3600, "jst": 9 * 3600, "kst": 9 * 3600,
	"aest": 10 * 3600, "aedt": 11 * 3600, "acst": 34200, "awst": 8 * 3600,
	"nzst": 12 * 3600, "nzdt": 13 * 3600,
}

// dtFields are the decoded parts of a date/time string.
type dtFields struct {
	year, mon, day          int64
	hasYear, hasMon, hasDay bool
	year2                   bool  // year written with at most two digits
	textMonth               bool  // the month was a name
	doy                     int64 // a day of the year, read before the year is final
	hour, min, sec, usec    int64
	hasTime                 bool
	am, pm, bc              bool
	tzSet                   bool
	tzOff                   int64 // seconds east of UTC
	loc                     *time.Location
	special                 string
	order                   string // DateStyle field order: MDY, DMY or YMD
}

type dtErr uint8

const (
	dtOK dtErr = iota
	dtBad
	dtOverflow
	dtMDOverflow
	dtBadZone
	dtZoneRange // time zone displacement out of range
)

func (f *dtFields) setYMD(y, m, d string) dtErr {
	yv, ok1 := atoiDT(y)
	dv, ok3 := atoiDT(d)
	if !ok1 || !ok3 {
		return dtBad
	}
	if mv, ok := monthNames[strings.ToLower(m)]; ok {
		f.mon = mv
	} else if mv, ok := atoiDT(m); ok {
		f.mon = mv
	} else {
		return dtBad
	}
	f.year, f.day = yv, dv
	f.year2 = len(y) <= 2
	f.hasYear, f.hasMon, f.hasDay = true, true, true
	return dtOK
}

func atoiDT(s string) (int64, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	var v int64
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, false
		}
		v = v*10 + int64(s[i]-'0')
	}
	return v, true
}

// time parses h:m[:s[.f]] and m:s.f.
func (f *dtFields) time(s string) dtErr {
	if f.hasTime {
		return dtBad
	}
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return dtBad
	}
	h, ok := atoiDT(parts[0])
	if !ok {
		return dtBad
	}
	var mi, sec, us int64
	last := parts[len(parts)-1]
	frac := ""
	if k := strings.IndexByte(last, '.'); k >= 0 {
		frac = last[k+1:]
		last = last[:k]
	}
	lv, ok := atoiDT(last)
	if !ok {
		return dtBad
	}
	if len(parts) == 2 {
		mi = lv
		if frac != "" { // PostgreSQL reads "m:s.f" when the second field has a fraction
			h, mi, sec = 0, h, lv
		}
	} else {
		mi, ok = atoiDT(parts[1])
		if !ok {
			return dtBad
		}
		sec = lv
	}
	if frac != "" {
		var e dtErr
		us, e = fracMicros(frac)
		if e != dtOK {
			return e
		}
	}
	f.hour, f.min, f.sec, f.usec, f.hasTime = h, mi, sec, us, true
	return dtOK
}

// fracMicros turns the digits after a decimal point into microseconds,
// rounding at the seventh digit.
func fracMicros(frac string) (int64, dtErr) {
	for i := 0; i < len(frac); i++ {
		if !isDigit(frac[i]) {
			return 0, dtBad
		}
	}
	if frac == "" {
		return 0, dtOK
	}
	// as PostgreSQL: strtod of the fraction, times 1e6, rint
	f, err := strconv.ParseFloat("0."+frac, 64)
	if err != nil {
		return 0, dtBad
	}
	return int64(math.RoundToEven(f * 1e6)), dtOK
}

func parseOffset(s string) (int64, bool) {
	sign := int64(1)
	if s[0] == '-' {
		sign = -1
	}
	s = s[1:]
	var h, m, sec int64
	var ok bool
	if strings.IndexByte(s, ':') >= 0 {
		p := strings.Split(s, ":")
		if len(p) > 3 {
			return 0, false
		}
		if h, ok = atoiDT(p[0]); !ok {
			return 0, false
		}
		if m, ok = atoiDT(p[1]); !ok {
			return 0, false
		}
		if len(p) == 3 {
			if sec, ok = atoiDT(p[2]); !ok {
				return 0, false
			}
		}
	} else {
		switch len(s) {
		case 1, 2:
			h, ok = atoiDT(s)
		case 3, 4:
			h, _ = atoiDT(s[:len(s)-2])
			m, ok = atoiDT(s[len(s)-2:])
		case 5, 6:
			h, _ = atoiDT(s[:len(s)-4])
			m, _ = atoiDT(s[len(s)-4 : len(s)-2])
			sec, ok = atoiDT(s[len(s)-2:])
		}
		if !ok {
			return 0, false
		}
	}
	if m > 59 || sec > 59 {
		return 0, false
	}
	return sign * (h*3600 + m*60 + sec), true
}

// offsetRangeErr says whether a written offset that parseOffset refused
// has a minute or second field beyond 59 ("-0097"): PostgreSQL's
// "time zone displacement out of range".
func offsetRangeErr(s string) bool {
	d := strings.TrimLeft(s, "+-")
	if strings.Trim(d, "0123456789") != "" || len(d) < 3 || len(d) > 6 {
		return false
	}
	if m, ok := atoiDT(d[len(d)-2:]); ok && len(d) <= 4 && m > 59 {
		return true
	}
	if len(d) >= 5 {
		m, _ := atoiDT(d[len(d)-4 : len(d)-2])
		sec, _ := atoiDT(d[len(d)-2:])
		return m > 59 || sec > 59
	}
	return false
}

// maxZoneOffset is PostgreSQL's limit on a written UTC offset (15:59:59).
const maxZoneOffset = 15*3600 + 59*60 + 59

// posixZone reads a POSIX-style zone "UTC+3" or "FOO-5:30" (letters, then an
// offset west of Greenwich), returning seconds east.
func posixZone(w string) (int64, bool) {
	i := 0
	for i < len(w) && isAlpha(w[i]) {
		i++
	}
	if i < 3 || i == len(w) {
		return 0, false
	}
	rest := w[i:]
	if rest[0] != '+' && rest[0] != '-' {
		rest = "+" + rest
	}
	off, ok := parseOffset(rest)
	if !ok {
		return 0, false
	}
	return -off, true
}

var specials = map[string]bool{
	"epoch": true, "infinity": true, "+infinity": true, "-infinity": true, "now": true,
	"today": true, "tomorrow": true, "yesterday": true, "allballs": true,
}

// decodeDT splits and assigns the fields of s.
func decodeDT(s string, timeOnly bool, opts *FormatOptions) (*dtFields, dtErr) {
	toks, ok := tokenizeDT(s)
	if !ok || len(toks) == 0 {
		return nil, dtBad
	}
	f := &dtFields{order: "MDY"}
	if _, dmy := parseDateStyle(opts.DateStyle); dmy {
		f.order = "DMY"
	} else if strings.Contains(strings.ToUpper(opts.DateStyle), "YMD") {
		f.order = "YMD"
	}
	for _, t := range toks {
		switch t.kind {
		case tokDate:
			if e := f.date(t); e != dtOK {
				return nil, e
			}
		case tokTime:
			if e := f.time(t.text); e != dtOK {
				return nil, e
			}
		case tokTZ:
			if !f.hasTime && !(f.hasDay && f.hasMon) {
				return nil, dtBad
			}
			off, ok := parseOffset(t.text)
			if !ok && !f.tzSet && offsetRangeErr(t.text) {
				return nil, dtZoneRange
			}
			if !ok || f.tzSet {
				return nil, dtBad
			}
			if off > maxZoneOffset || off < -maxZoneOffset {
				return nil, dtZoneRange
			}
			f.tzSet, f.tzOff = true, off
		case tokJulian:
			jd, ok := atoiDT(t.text)
			if !ok || f.hasYear || f.hasMon || f.hasDay {
				return nil, dtBad
			}
			f.year, f.mon, f.day = civilFromDays(jd - 2440588)
			f.hasYear, f.hasMon, f.hasDay = true, true, true
		case tokNum:
			l := len(t.text)
			frac := strings.IndexByte(t.text, '.')
			switch {
			case frac < 0 && l == 8 && !f.hasYear && !f.hasMon && !f.hasDay && !timeOnly:
				f.setYMD(t.text[:4], t.text[4:6], t.text[6:])
			case frac < 0 && l == 6 && !f.hasYear && !f.hasMon && !f.hasDay && !timeOnly:
				f.setYMD(t.text[:2], t.text[2:4], t.text[4:]) // YYMMDD
			case frac == 4 && l == 8 && !f.hasYear && !f.hasMon && !f.hasDay && !timeOnly:
				// year and day of year: 1999.008
				if e := f.date(dtTok{kind: tokDate, parts: []string{t.text[:4], t.text[5:]}}); e != dtOK {
					return nil, e
				}
			case (l == 6 || (frac == 6 && l > 7)) && !f.hasTime && (f.hasDay || timeOnly):
				us := int64(0)
				if frac == 6 {
					var e dtErr
					if us, e = fracMicros(t.text[7:]); e != dtOK {
						return nil, e
					}
				}
				h, _ := atoiDT(t.text[:2])
				m, _ := atoiDT(t.text[2:4])
				sc, _ := atoiDT(t.text[4:6])
				f.hour, f.min, f.sec, f.usec, f.hasTime = h, m, sc, us, true
			case frac < 0:
				if e := f.number(t.text); e != dtOK {
					return nil, e
				}
			default:
				return nil, dtBad
			}
		case tokWord:
			w := strings.ToLower(t.text)
			if m, ok := monthNames[w]; ok {
				if e := f.textMon(m); e != dtOK {
					return nil, e
				}
				continue
			}
			if dayNames[w] {
				continue
			}
			switch w {
			case "am", "a.m.":
				f.am = true
				continue
			case "pm", "p.m.":
				f.pm = true
				continue
			case "bc":
				f.bc = true
				continue
			case "ad":
				continue
			}
			if specials[w] {
				if f.special != "" || len(toks) > 1 && w != "allballs" && w != "today" && w != "tomorrow" && w != "yesterday" {
					return nil, dtBad
				}
				f.special = w
				continue
			}
			if off, ok := zoneAbbrevs[w]; ok && !f.tzSet {
				f.tzSet, f.tzOff = true, off
				continue
			}
			if strings.IndexAny(t.text, "+-0123456789") > 0 && !f.tzSet && f.loc == nil {
				if loc, err := time.LoadLocation(t.text); err == nil {
					f.loc = loc // e.g. EST5EDT
					continue
				}
				if off, ok := posixZone(t.text); ok {
					f.tzSet, f.tzOff = true, off
					continue
				}
			}
			if strings.IndexByte(t.text, '/') >= 0 || len(t.text) > 4 {
				loc, err := time.LoadLocation(t.text)
				if err == nil && f.loc == nil && !f.tzSet {
					f.loc = loc
					continue
				}
				// PostgreSQL names the zone only for words shaped like
				// one (Area/City); other unknown words are bad syntax.
				if strings.IndexByte(t.text, '/') >= 0 {
					return nil, dtBadZone
				}
				return nil, dtBad
			}
			return nil, dtBad
		}
	}
	if f.special == "" && (f.hasYear || f.hasMon || f.hasDay) && !(f.hasYear && f.hasMon && f.hasDay) {
		return nil, dtBad
	}
	if f.hasYear {
		if f.bc {
			if f.year == 0 {
				return nil, dtOverflow
			}
			f.year = 1 - f.year
		} else if f.year2 {
			if f.year < 70 {
				f.year += 2000
			} else {
				f.year += 1900
			}
		} else if f.year == 0 {
			return nil, dtOverflow
		}
		if f.doy != 0 {
			f.year, f.mon, f.day = civilFromDays(daysFromCivil(f.year, 1, 1) + f.doy - 1)
		}
		if f.mon < 1 || f.mon > 12 || f.day < 1 || f.day > 31 {
			return nil, dtMDOverflow
		}
		if f.day > daysInMonth(f.year, f.mon) {
			return nil, dtOverflow
		}
	} else if f.bc {
		return nil, dtBad
	}
	if f.hasTime {
		if f.am || f.pm {
			if f.hour > 12 {
				return nil, dtOverflow
			}
			if f.hour == 12 {
				f.hour = 0
			}
			if f.pm {
				f.hour += 12
			}
		}
		if f.hour > 24 || f.min > 59 || f.sec > 60 ||
			(f.hour == 24 && (f.min != 0 || f.sec != 0 || f.usec != 0)) {
			return nil, dtOverflow
		}
	} else if f.am || f.pm {
		return nil, dtBad
	}
	return f, dtOK
}

package expr

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// to_char for timestamps and intervals, following PostgreSQL's formatting.c:
// a template is read left to right; at each position an optional FM/TM
// prefix, then the first keyword of dchKeywords (in PostgreSQL's order for
// that first character) that the template continues with, then an optional
// TH/th/SP suffix. Keywords are case-sensitive: numeric fields exist in
// upper and lower case (YYYY and yyyy, MM and mm, HH24 and hh24...), text
// fields in the spellings that choose their case (MONTH Month month, DY Dy
// dy, AM am...); any other character, and "double-quoted text", is copied.
// Outside quotes a backslash escapes only a double quote. The functions are
// pure and safe for concurrent use.

// dchKeyword is one template keyword; id names the field (upper-case
// spelling of its canonical form).
type dchKeyword struct{ name, id string }

// dchKeywords are in PostgreSQL's search order: for each first character,
// the first whose name prefixes the template wins.
var dchKeywords = func() []dchKeyword {
	upper := []string{
		"A.D.", "A.M.", "AD", "AM", "B.C.", "BC", "CC", "DAY", "DDD", "DD", "DY", "Day", "Dy", "D",
		"FF1", "FF2", "FF3", "FF4", "FF5", "FF6", "FX", "HH24", "HH12", "HH",
		"IDDD", "ID", "IW", "IYYY", "IYY", "IY", "I", "J", "MI", "MM", "MONTH", "MON", "MS", "Month", "Mon",
		"OF", "P.M.", "PM", "Q", "RM", "SSSSS", "SSSS", "SS", "TZH", "TZM", "TZ", "US", "WW", "W",
		"Y,YYY", "YYYY", "YYY", "YY", "Y",
	}
	// lower-case spellings: text fields keep their case in id (day, dy,
	// month, mon, am, ad, rm, tz...); numeric ones share the upper id.
	lowerText := map[string]bool{"a.d.": true, "a.m.": true, "ad": true, "am": true, "b.c.": true, "bc": true,
		"day": true, "dy": true, "month": true, "mon": true, "p.m.": true, "pm": true, "rm": true, "tz": true}
	lower := []string{
		"a.d.", "a.m.", "ad", "am", "b.c.", "bc", "cc", "day", "ddd", "dd", "dy", "d",
		"ff1", "ff2", "ff3", "ff4", "ff5", "ff6", "fx", "hh24", "hh12", "hh",
		"iddd", "id", "iw", "iyyy", "iyy", "iy", "i", "j", "mi", "mm", "month", "mon", "ms",
		"of", "p.m.", "pm", "q", "rm", "sssss", "ssss", "ss", "tzh", "tzm", "tz", "us", "ww", "w",
		"y,yyy", "yyyy", "yyy", "yy", "y",
	}
	var kw []dchKeyword
	for _, k := range upper {
		kw = append(kw, dchKeyword{k, k})
	}
	for _, k := range lower {
		id := strings.ToUpper(k)
		if lowerText[k] {
			id = k
		}
		kw = append(kw, dchKeyword{k, id})
	}
	for i := range kw {
		if kw[i].id == "SSSSS" {
			kw[i].id = "SSSS"
		}
	}
	return kw
}()

// dtParts is a broken-down timestamp or interval, as PostgreSQL's struct
// pg_tm: year is astronomical (0 is 1 BC) for timestamps; an interval's
// fields carry its sign (months/12 years, months%12 months, days, and the
// time split into hours, minutes, seconds and microseconds).
type dtParts struct {
	year, mon, mday      int64
	hour, min, sec, fsec int64
	yday, wday           int64
	interval             bool
	zone                 string // abbreviation; "" when the type has none
	hasZone              bool
	offset               int64 // seconds east of UTC
}

// toCharDT formats p with template f (compiled once per distinct
// template, see dchCompile).
func toCharDT(p dtParts, f string) (string, error) {
	nodes, err := dchCache.get(f, dchCompile)
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	for _, n := range nodes {
		if n.id == "" {
			sb.WriteString(n.lit)
			continue
		}
		out, numeric, err := dchField(p, n.id, n.fm)
		if err != nil {
			return "", err
		}
		if numeric && n.th != "" && out != "" {
			if out, err = appendOrdinal(out, n.th == "th"); err != nil {
				return "", err
			}
		}
		sb.WriteString(out)
	}
	return sb.String(), nil
}

// appendOrdinal adds st/nd/rd/th after the digits of s (PostgreSQL's
// str_numth): teens take th.
func appendOrdinal(s string, lower bool) (string, error) {
	last := s[len(s)-1]
	if last < '0' || last > '9' {
		return "", pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type numeric: \"%s\"", s)
	}
	if len(s) > 1 && s[len(s)-2] == '1' {
		last = '0'
	}
	suf := "TH"
	switch last {
	case '1':
		suf = "ST"
	case '2':
		suf = "ND"
	case '3':
		suf = "RD"
	}
	if lower {
		suf = strings.ToLower(suf)
	}
	return s + suf, nil
}

var (
	romanUpper = []string{"XII", "XI", "X", "IX", "VIII", "VII", "VI", "V", "IV", "III", "II", "I"}
	monthNames = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	dayNames   = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
)

// errIntervalFormat is PostgreSQL's refusal of calendar fields for intervals.
func errIntervalFormat() error {
	return pgerr.New(pgerr.InvalidDatetimeFormat, "invalid format specification for an interval value").
		WithHint("Intervals are not tied to specific calendar dates.")
}

// padInt prints v with at least w digits (w+1 for negatives, as "%0*d"
// with a width counting the sign); FM drops the padding.
func padInt(v int64, w int, fm bool) string {
	if v < 0 {
		w++
	}
	return padUnsigned(v, w, fm)
}

// padUnsigned is "%0*d" whose width counts the sign: zeros go between the
// sign and the digits.
func padUnsigned(v int64, w int, fm bool) string {
	s := strconv.FormatInt(v, 10)
	if fm || len(s) >= w {
		return s
	}
	zeros := strings.Repeat("0", w-len(s))
	if v < 0 {
		return "-" + zeros + s[1:]
	}
	return zeros + s
}

// padWord left-aligns s in 9 (or w) columns unless FM.
func padWord(s string, w int, fm bool) string {
	if fm || len(s) >= w {
		return s
	}
	return s + strings.Repeat(" ", w-len(s))
}

// dchField renders one keyword; numeric says whether TH applies.
func dchField(p dtParts, id string, fm bool) (string, bool, error) {
	adjYear := func(y int64) int64 {
		if !p.interval && y <= 0 {
			return -(y - 1)
		}
		return y
	}
	caseOf := func(s, id string) string {
		switch id {
		case strings.ToUpper(id):
			return strings.ToUpper(s)
		case strings.ToLower(id):
			return strings.ToLower(s)
		}
		return s
	}
	h12 := p.hour % 12
	if h12 == 0 {
		h12 = 12
	}
	pm := p.hour%24 >= 12
	bc := p.year <= 0
	pick := func(cond bool, a, b string) string {
		if cond {
			return a
		}
		return b
	}
	switch id {
	case "TZ", "tz", "TZH", "TZM", "OF", "A.D.", "B.C.", "a.d.", "b.c.", "AD", "BC", "ad", "bc":
		if p.interval {
			return "", false, errIntervalFormat()
		}
	}
	switch id {
	case "A.M.", "P.M.":
		return pick(pm, "P.M.", "A.M."), false, nil
	case "a.m.", "p.m.":
		return pick(pm, "p.m.", "a.m."), false, nil
	case "AM", "PM":
		return pick(pm, "PM", "AM"), false, nil
	case "am", "pm":
		return pick(pm, "pm", "am"), false, nil
	case "HH", "HH12":
		if p.hour < 0 { // an interval's: PostgreSQL pads to 3 whatever the 12-hour value
			return padUnsigned(h12, 3, fm), true, nil
		}
		return padInt(h12, 2, fm), true, nil
	case "HH24":
		return padInt(p.hour, 2, fm), true, nil
	case "MI":
		return padInt(p.min, 2, fm), true, nil
	case "SS":
		return padInt(p.sec, 2, fm), true, nil
	case "FF1", "FF2", "FF3", "FF4", "FF5", "FF6", "MS", "US":
		n := 3
		switch id {
		case "US":
			n = 6
		case "MS":
		default:
			n = int(id[2] - '0')
		}
		v := p.fsec
		for k := 6; k > n; k-- {
			v /= 10
		}
		return fmt.Sprintf("%0*d", n, v), true, nil
	case "SSSS":
		return strconv.FormatInt(p.hour*3600+p.min*60+p.sec, 10), true, nil
	case "TZ", "tz":
		if !p.hasZone {
			return "", false, nil
		}
		return pick(id == "tz", strings.ToLower(p.zone), strings.ToUpper(p.zone)), false, nil
	case "TZH":
		return fmt.Sprintf("%s%02d", pick(p.offset >= 0, "+", "-"), abs64(p.offset)/3600), false, nil
	case "TZM":
		return fmt.Sprintf("%02d", abs64(p.offset)%3600/60), false, nil
	case "OF":
		s := fmt.Sprintf("%s%0*d", pick(p.offset >= 0, "+", "-"), map[bool]int{true: 0, false: 2}[fm], abs64(p.offset)/3600)
		if m := abs64(p.offset) % 3600 / 60; m != 0 {
			s += fmt.Sprintf(":%02d", m)
		}
		return s, false, nil
	case "A.D.", "B.C.":
		return pick(bc, "B.C.", "A.D."), false, nil
	case "a.d.", "b.c.":
		return pick(bc, "b.c.", "a.d."), false, nil
	case "AD", "BC":
		return pick(bc, "BC", "AD"), false, nil
	case "ad", "bc":
		return pick(bc, "bc", "ad"), false, nil
	case "MONTH", "Month", "month", "MON", "Mon", "mon":
		if p.interval {
			return "", false, errIntervalFormat()
		}
		if p.mon == 0 {
			return "", false, nil
		}
		name := monthNames[p.mon-1]
		if len(id) == 3 {
			return caseOf(name[:3], id), false, nil
		}
		return padWord(caseOf(name, id), 9, fm), false, nil
	case "MM":
		return padInt(p.mon, 2, fm), true, nil
	case "DAY", "Day", "day", "DY", "Dy", "dy":
		if p.interval {
			return "", false, errIntervalFormat()
		}
		name := dayNames[p.wday]
		if len(id) == 2 {
			return caseOf(name[:3], id), false, nil
		}
		return padWord(caseOf(name, id), 9, fm), false, nil
	case "DDD":
		return padUnsigned(p.yday, 3, fm), true, nil
	case "IDDD":
		return padUnsigned(isoYearDay(p), 3, fm), true, nil
	case "DD":
		return padUnsigned(p.mday, 2, fm), true, nil
	case "D":
		if p.interval {
			return "", false, errIntervalFormat()
		}
		return strconv.FormatInt(p.wday+1, 10), true, nil
	case "ID":
		if p.interval {
			return "", false, errIntervalFormat()
		}
		return strconv.FormatInt(pick64(p.wday == 0, 7, p.wday), 10), true, nil
	case "WW":
		return padUnsigned((p.yday-1)/7+1, 2, fm), true, nil
	case "IW":
		_, w := isoWeek(p)
		return padUnsigned(w, 2, fm), true, nil
	case "Q":
		if p.mon == 0 {
			return "", false, nil
		}
		return strconv.FormatInt((p.mon-1)/3+1, 10), true, nil
	case "CC":
		var c int64
		switch {
		case p.interval:
			c = p.year / 100
		case p.year > 0:
			c = (p.year-1)/100 + 1
		default:
			c = p.year/100 - 1
		}
		if c <= 99 && c >= -99 {
			return padInt(c, 2, fm), true, nil
		}
		return strconv.FormatInt(c, 10), true, nil
	case "Y,YYY":
		y := adjYear(p.year)
		return fmt.Sprintf("%d,%03d", y/1000, y-y/1000*1000), true, nil
	case "YYYY", "IYYY", "YYY", "IYY", "YY", "IY", "Y", "I":
		y := p.year
		if id[0] == 'I' {
			y, _ = isoWeek(p)
		}
		y = adjYear(y)
		w := len(id)
		mod := map[int]int64{4: 0, 3: 1000, 2: 100, 1: 10}[w]
		if mod != 0 {
			y %= mod
		}
		return padInt(y, w, fm), true, nil
	case "RM", "rm":
		if p.mon == 0 && p.year == 0 {
			return "", false, nil
		}
		var k int64
		switch {
		case p.mon == 0:
			k = pick64(p.year >= 0, 0, 11)
		case p.mon < 0:
			k = -(p.mon + 1)
		default:
			k = 12 - p.mon
		}
		s := romanUpper[k]
		if id == "rm" {
			s = strings.ToLower(s)
		}
		return padWord(s, 4, fm), false, nil
	case "W":
		return strconv.FormatInt((p.mday-1)/7+1, 10), true, nil
	case "J":
		return strconv.FormatInt(julianDay(p.year, p.mon, p.mday), 10), true, nil
	case "FX":
		return "", false, nil
	}
	return "", false, pgerr.Internal("to_char keyword %s", id)
}

func pick64(c bool, a, b int64) int64 {
	if c {
		return a
	}
	return b
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// julianDay is PostgreSQL's date2j.
func julianDay(y, m, d int64) int64 {
	if m > 2 {
		m++
		y += 4800
	} else {
		m += 13
		y += 4799
	}
	century := y / 100
	j := y*365 - 32167
	j += y/4 - century + century/4
	j += 7834*m/256 + d
	return j
}

// isoWeek is the ISO year and week of p's date (PostgreSQL's date2isoyear
// and date2isoweek, also for intervals' meaningless dates).
func isoWeek(p dtParts) (int64, int64) {
	t := time.Date(int(p.year), time.Month(p.mon), int(p.mday), 0, 0, 0, 0, time.UTC)
	y, w := t.ISOWeek()
	return int64(y), int64(w)
}

// isoYearDay is the day within the ISO year (1..371).
func isoYearDay(p dtParts) int64 {
	_, w := isoWeek(p)
	t := time.Date(int(p.year), time.Month(p.mon), int(p.mday), 0, 0, 0, 0, time.UTC)
	wd := (int64(t.Weekday()) + 6) % 7
	return (w-1)*7 + wd + 1
}

// tsParts breaks a timestamp (wall clock, microseconds) down.
func tsParts(us int64) dtParts {
	t := wallTime(us)
	return dtParts{
		year: int64(t.Year()), mon: int64(t.Month()), mday: int64(t.Day()),
		hour: int64(t.Hour()), min: int64(t.Minute()), sec: int64(t.Second()),
		fsec: us - floorDiv64(us, usPerSec)*usPerSec,
		yday: int64(t.YearDay()), wday: int64(t.Weekday()),
	}
}

// intervalParts breaks an interval down as PostgreSQL's interval2itm; its
// day of year approximates the span in days.
func intervalParts(v types.IntervalValue) dtParts {
	us := v.Micros
	p := dtParts{
		year: int64(v.Months / 12), mon: int64(v.Months % 12), mday: int64(v.Days),
		hour: us / usPerHour, min: us / usPerMin % 60, sec: us / usPerSec % 60, fsec: us % usPerSec,
		interval: true,
	}
	p.yday = (p.year*12+p.mon)*30 + p.mday
	return p
}

func init() {
	TX := types.TText
	define(
		&Func{Name: "to_char", Args: []types.T{types.TTimestamp, TX}, Return: TX, Strict: true, Kernel: toCharTimestampKernel},
		rowFn("to_char", TX, []types.T{types.TTimestampTZ, TX}, func(ctx *Context, a []types.Value) (types.Value, error) {
			v := a[0].(types.TimestampValue)
			if v == types.TimestampInfinity || v == types.TimestampMinusInfinity {
				return nil, nil
			}
			us := int64(v)
			zone, off := time.UnixMicro(us).In(ctx.location()).Zone()
			p := tsParts(us + int64(off)*usPerSec)
			p.zone, p.hasZone, p.offset = zone, true, int64(off)
			return toCharDT(p, a[1].(string))
		}),
		rowFn("to_char", TX, []types.T{types.TInterval, TX}, func(_ *Context, a []types.Value) (types.Value, error) {
			return toCharDT(intervalParts(a[0].(types.IntervalValue)), a[1].(string))
		}),
	)
}

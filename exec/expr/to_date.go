package expr

import (
	"strings"
	"time"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// to_date(text, text) and to_timestamp(text, text): the input is read
// against the same keywords to_char writes (YYYY MM DD HH24 MI SS MS US
// AM/PM Mon Month ...). Separators in the pattern match any one
// non-alphanumeric character of the input, as PostgreSQL does by default.

type parsedDT struct {
	year, month, day, hour, min, sec int
	us                               int64
	pm, hasAMPM, bc                  bool
	doy                              int
}

func isDigitB(c byte) bool { return c >= '0' && c <= '9' }
func isAlnumB(c byte) bool {
	return isDigitB(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func parseByFormat(s, f, typ string) (*parsedDT, error) {
	p := &parsedDT{month: 1, day: 1}
	i := 0
	bad := func(kw string, w int) error {
		if w <= 0 {
			w = len(kw)
		}
		got := s[i:]
		if len(got) > w {
			got = got[:w]
		}
		return pgerr.New(pgerr.InvalidDatetimeFormat, "invalid value \"%s\" for \"%s\"", got, kw).
			WithDetail("Value must be an integer.")
	}
	num := func(kw string, w int) (int, error) {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		neg := false
		if i < len(s) && s[i] == '-' && kw == "YYYY" {
			neg = true
			i++
		}
		start := i
		for i < len(s) && isDigitB(s[i]) && (w <= 0 || i-start < w) {
			i++
		}
		if i == start {
			return 0, bad(kw, w)
		}
		v := 0
		for _, c := range s[start:i] {
			v = v*10 + int(c-'0')
		}
		if neg {
			v = -v
		}
		return v, nil
	}
	matchName := func(kw string, names []string, n int) (int, error) {
		for k, name := range names {
			cand := name
			if n > 0 {
				cand = name[:n]
			}
			if len(s)-i >= len(cand) && strings.EqualFold(s[i:i+len(cand)], cand) {
				i += len(cand)
				return k, nil
			}
		}
		return 0, pgerr.New(pgerr.InvalidDatetimeFormat, "invalid value \"%s\" for \"%s\"", firstWord(s[i:]), kw).
			WithDetail("The given value did not match any of the allowed values for this field.")
	}
	var months, days []string
	for m := time.January; m <= time.December; m++ {
		months = append(months, m.String())
	}
	for d := time.Sunday; d <= time.Saturday; d++ {
		days = append(days, d.String())
	}
	for j := 0; j < len(f); {
		if strings.HasPrefix(f[j:], "FM") || strings.HasPrefix(f[j:], "FX") || strings.HasPrefix(f[j:], "fm") {
			j += 2
			continue
		}
		if f[j] == '"' {
			k := j + 1
			for k < len(f) && f[k] != '"' {
				if i < len(s) {
					i++
				}
				k++
			}
			j = k + 1
			continue
		}
		kw := ""
		for _, k := range dchKeywords {
			if strings.HasPrefix(f[j:], k.name) {
				kw = k.name
				break
			}
		}
		if kw == "" {
			c := f[j]
			j++
			switch {
			case c == ' ':
				for i < len(s) && s[i] == ' ' {
					i++
				}
			case i < len(s) && !isAlnumB(s[i]):
				i++
			case i < len(s) && s[i] == c:
				i++
			}
			continue
		}
		j += len(kw)
		var err error
		switch strings.ToUpper(kw) {
		case "YYYY", "IYYY":
			w := 0 // greedy, unless another field follows without a separator
			if j < len(f) && isAlnumB(f[j]) {
				w = 4
			}
			p.year, err = num(kw, w)
		case "YYY", "IYY":
			p.year, err = num(kw, 3)
			p.year += 2000
		case "YY", "IY":
			p.year, err = num(kw, 2)
			if p.year < 70 {
				p.year += 2000
			} else {
				p.year += 1900
			}
		case "Y", "I":
			p.year, err = num(kw, 1)
			p.year += 2000
		case "MM":
			p.month, err = num(kw, 2)
		case "DD":
			p.day, err = num(kw, 2)
		case "DDD":
			p.doy, err = num(kw, 3)
		case "HH24":
			p.hour, err = num(kw, 2)
		case "HH", "HH12":
			p.hour, err = num(kw, 2)
			if err == nil && (p.hour < 1 || p.hour > 12) {
				return nil, pgerr.New(pgerr.InvalidDatetimeFormat, "hour \"%d\" is invalid for the 12-hour clock", p.hour).
					WithHint("Use the 24-hour clock, or give an hour between 1 and 12.")
			}
		case "MI":
			p.min, err = num(kw, 2)
		case "SS":
			p.sec, err = num(kw, 2)
		case "MS":
			var ms int
			start := i
			ms, err = num(kw, 3)
			for k := i - start; k < 3 && err == nil; k++ {
				ms *= 10
			}
			p.us += int64(ms) * 1000
		case "US":
			var us int
			start := i
			us, err = num(kw, 6)
			for k := i - start; k < 6 && err == nil; k++ {
				us *= 10
			}
			p.us += int64(us)
		case "AM", "PM", "A.M.", "P.M.":
			var k int
			k, err = matchName(kw, []string{strings.Replace(kw, "P", "A", 1), strings.Replace(kw, "A", "P", 1)}, 0)
			p.hasAMPM, p.pm = true, k == 1
		case "MONTH":
			var k int
			k, err = matchName(kw, months, 0)
			p.month = k + 1
		case "MON":
			var k int
			k, err = matchName(kw, months, 3)
			p.month = k + 1
		case "DAY":
			_, err = matchName(kw, days, 0)
		case "DY":
			_, err = matchName(kw, days, 3)
		case "BC", "AD", "B.C.", "A.D.":
			var k int
			k, err = matchName(kw, []string{"BC", "AD"}, 0)
			p.bc = k == 0
		case "TZ", "OF", "TZH", "TZM":
			for i < len(s) && (isAlnumB(s[i]) || s[i] == '+' || s[i] == '-' || s[i] == ':') {
				i++
			}
		default:
			_, err = num(kw, 0)
		}
		if err != nil {
			return nil, err
		}
	}
	if p.hasAMPM {
		if p.pm && p.hour < 12 {
			p.hour += 12
		} else if !p.pm && p.hour == 12 {
			p.hour = 0
		}
	}
	if p.bc {
		p.year = -p.year + 1
	}
	return p, nil
}

func firstWord(s string) string {
	if k := strings.IndexAny(s, " ,.-/:"); k >= 0 {
		return s[:k]
	}
	return s
}

// parsedTS validates the fields and returns the wall-clock timestamp.
func parsedTS(p *parsedDT, input string) (int64, error) {
	if p.doy > 0 {
		t := time.Date(p.year, 1, p.doy, 0, 0, 0, 0, time.UTC)
		p.month, p.day = int(t.Month()), t.Day()
	}
	if p.month < 1 || p.month > 12 || p.day < 1 || p.day > daysIn(p.year, time.Month(p.month)) ||
		p.hour > 24 || p.min > 59 || p.sec > 60 {
		return 0, pgerr.New(pgerr.DatetimeFieldOverflow, "date/time field value out of range: \"%s\"", input)
	}
	d := time.Date(p.year, time.Month(p.month), p.day, 0, 0, 0, 0, time.UTC).Unix() / 86400
	return d*usPerDay + int64(p.hour)*usPerHour + int64(p.min)*usPerMin + int64(p.sec)*usPerSec + p.us, nil
}

func init() {
	TX := types.TText
	define(
		rowFn("to_date", types.TDate, []types.T{TX, TX}, func(_ *Context, a []types.Value) (types.Value, error) {
			p, err := parseByFormat(a[0].(string), a[1].(string), "date")
			if err != nil {
				return nil, err
			}
			p.hour, p.min, p.sec, p.us = 0, 0, 0, 0
			us, err := parsedTS(p, a[0].(string))
			if err != nil {
				return nil, err
			}
			return types.DateValue(floorDiv64(us, usPerDay)), nil
		}),
		rowFn("to_timestamp", types.TTimestampTZ, []types.T{TX, TX}, func(ctx *Context, a []types.Value) (types.Value, error) {
			p, err := parseByFormat(a[0].(string), a[1].(string), "timestamp")
			if err != nil {
				return nil, err
			}
			us, err := parsedTS(p, a[0].(string))
			if err != nil {
				return nil, err
			}
			return types.TimestampValue(wallToInstant(us, ctx.location())), nil
		}),
	)
}

package expr

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// to_char for timestamps, intervals and numbers, following PostgreSQL's
// formatting.c patterns: the date/time keywords (YYYY MM DD HH24 HH12 MI SS
// MS US AM/PM Mon Month Dy Day DDD D ID IW WW Q CC J TZ OF...), the FM
// prefix and TH suffix, "quoted text", and the numeric patterns 9 0 . D , G
// S MI PL SG TH with FM.

// dtKeywords are matched longest first at each position.
var dtKeywords = []string{
	"A.M.", "a.m.", "P.M.", "p.m.", "B.C.", "b.c.", "A.D.", "a.d.",
	"HH24", "HH12", "IYYY", "YYYY", "Y,YYY", "MONTH", "Month", "month", "IDDD", "SSSS", "SSSSS",
	"FF1", "FF2", "FF3", "FF4", "FF5", "FF6",
	"IYY", "YYY", "MON", "Mon", "mon", "DAY", "Day", "day", "DDD", "TZH", "TZM",
	"HH", "MI", "SS", "MS", "US", "AM", "am", "PM", "pm", "BC", "bc", "AD", "ad",
	"IY", "YY", "MM", "DY", "Dy", "dy", "DD", "ID", "IW", "WW", "CC", "RM", "rm", "TZ", "tz", "OF",
	"I", "Y", "D", "W", "J", "Q",
}

// dtAnyCase are the keywords whose output does not depend on the case they
// are written in, which PostgreSQL matches in any case ('hh24:mi' is
// 'HH24:MI', 'HH:mm' is hour and month).
var dtAnyCase = map[string]bool{
	"HH24": true, "HH12": true, "IYYY": true, "YYYY": true, "Y,YYY": true, "IDDD": true, "SSSS": true, "SSSSS": true,
	"FF1": true, "FF2": true, "FF3": true, "FF4": true, "FF5": true, "FF6": true,
	"IYY": true, "YYY": true, "DDD": true, "HH": true, "MI": true, "SS": true, "MS": true, "US": true,
	"IY": true, "YY": true, "MM": true, "DD": true, "ID": true, "IW": true, "WW": true, "CC": true,
	"I": true, "Y": true, "D": true, "W": true, "J": true, "Q": true,
}

// dtKeywordAnyCase[i] is dtAnyCase[dtKeywords[i]].
var dtKeywordAnyCase = func() []bool {
	out := make([]bool, len(dtKeywords))
	for i, k := range dtKeywords {
		out[i] = dtAnyCase[k]
	}
	return out
}()

// dtParts is a broken-down timestamp or interval for formatting.
type dtParts struct {
	t        time.Time // wall clock (interval: zero date)
	year     int
	us       int64 // microseconds within the second
	hours    int64 // interval hours may exceed 24
	days     int64
	months   int64
	interval bool
	zone     string
	offset   int // seconds east of UTC
}

func toCharDT(p dtParts, f string) string {
	var sb strings.Builder
	for i := 0; i < len(f); {
		// literal text
		if f[i] == '"' {
			j := i + 1
			for j < len(f) && f[j] != '"' {
				if f[j] == '\\' && j+1 < len(f) {
					j++
				}
				sb.WriteByte(f[j])
				j++
			}
			i = j + 1
			continue
		}
		if f[i] == '\\' && i+1 < len(f) {
			sb.WriteByte(f[i+1])
			i += 2
			continue
		}
		fm := false
		if strings.HasPrefix(f[i:], "FM") || strings.HasPrefix(f[i:], "fm") {
			fm = true
			i += 2
		}
		if strings.HasPrefix(f[i:], "FX") || strings.HasPrefix(f[i:], "TM") {
			i += 2
			continue
		}
		kw := ""
		for j, k := range dtKeywords {
			if f[i] != k[0] && (!dtKeywordAnyCase[j] || f[i]|0x20 != k[0]|0x20) {
				continue
			}
			if strings.HasPrefix(f[i:], k) || dtKeywordAnyCase[j] && len(f)-i >= len(k) && strings.EqualFold(f[i:i+len(k)], k) {
				kw = k
				break
			}
		}
		if kw == "" {
			if fm {
				continue
			}
			r := f[i]
			sb.WriteByte(r)
			i++
			continue
		}
		i += len(kw)
		out, num := dtField(p, kw, fm)
		// ordinal suffix
		if strings.HasPrefix(f[i:], "TH") || strings.HasPrefix(f[i:], "th") {
			if num >= 0 {
				suf := ordinal(num)
				if f[i] == 'T' {
					suf = strings.ToUpper(suf)
				}
				out += suf
			}
			i += 2
		}
		sb.WriteString(out)
	}
	return sb.String()
}

func ordinal(n int64) string {
	if n%100 >= 11 && n%100 <= 13 {
		return "th"
	}
	switch n % 10 {
	case 1:
		return "st"
	case 2:
		return "nd"
	case 3:
		return "rd"
	}
	return "th"
}

var romanMonths = []string{"I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII"}

// dtField renders one keyword; num is its numeric value for TH (-1: none).
func dtField(p dtParts, kw string, fm bool) (string, int64) {
	t := p.t
	pad := func(v int64, w int) (string, int64) {
		s := strconv.FormatInt(abs64(v), 10)
		if !fm {
			for len(s) < w {
				s = "0" + s
			}
		}
		if v < 0 {
			s = "-" + s
		}
		return s, v
	}
	word := func(s string, w int) (string, int64) {
		if !fm && len(s) < w {
			s += strings.Repeat(" ", w-len(s))
		}
		return s, -1
	}
	hour := int64(t.Hour())
	if p.interval {
		hour = p.hours
	}
	year := int64(p.year)
	iy, iw := t.ISOWeek()
	switch kw {
	case "HH24":
		return pad(hour, 2)
	case "HH", "HH12":
		h := hour % 12
		if h == 0 {
			h = 12
		}
		return pad(h, 2)
	case "MI":
		return pad(int64(t.Minute()), 2)
	case "SS":
		return pad(int64(t.Second()), 2)
	case "SSSS", "SSSSS":
		return pad(hour*3600+int64(t.Minute())*60+int64(t.Second()), 0)
	case "MS":
		return pad(p.us/1000, 3)
	case "US":
		return pad(p.us, 6)
	case "FF1", "FF2", "FF3", "FF4", "FF5", "FF6":
		n := int(kw[2] - '0')
		v := p.us
		for k := 6; k > n; k-- {
			v /= 10
		}
		return pad(v, n)
	case "AM", "PM":
		if hour%24 >= 12 {
			return "PM", -1
		}
		return "AM", -1
	case "am", "pm":
		if hour%24 >= 12 {
			return "pm", -1
		}
		return "am", -1
	case "A.M.", "P.M.":
		if hour%24 >= 12 {
			return "P.M.", -1
		}
		return "A.M.", -1
	case "a.m.", "p.m.":
		if hour%24 >= 12 {
			return "p.m.", -1
		}
		return "a.m.", -1
	case "YYYY":
		return pad(year, 4)
	case "Y,YYY":
		s := strconv.FormatInt(year, 10)
		if len(s) > 3 {
			s = s[:len(s)-3] + "," + s[len(s)-3:]
		}
		return s, year
	case "YYY":
		return pad(year%1000, 3)
	case "YY":
		return pad(year%100, 2)
	case "Y":
		return pad(year%10, 1)
	case "IYYY":
		return pad(int64(iy), 4)
	case "IYY":
		return pad(int64(iy)%1000, 3)
	case "IY":
		return pad(int64(iy)%100, 2)
	case "I":
		return pad(int64(iy)%10, 1)
	case "BC", "AD":
		if year <= 0 {
			return "BC", -1
		}
		return "AD", -1
	case "bc", "ad":
		if year <= 0 {
			return "bc", -1
		}
		return "ad", -1
	case "B.C.", "A.D.":
		if year <= 0 {
			return "B.C.", -1
		}
		return "A.D.", -1
	case "b.c.", "a.d.":
		if year <= 0 {
			return "b.c.", -1
		}
		return "a.d.", -1
	case "MONTH":
		return word(strings.ToUpper(t.Month().String()), 9)
	case "Month":
		return word(t.Month().String(), 9)
	case "month":
		return word(strings.ToLower(t.Month().String()), 9)
	case "MON":
		return strings.ToUpper(t.Month().String()[:3]), -1
	case "Mon":
		return t.Month().String()[:3], -1
	case "mon":
		return strings.ToLower(t.Month().String()[:3]), -1
	case "MM":
		if p.interval {
			return pad(p.months%12, 2)
		}
		return pad(int64(t.Month()), 2)
	case "DAY":
		return word(strings.ToUpper(t.Weekday().String()), 9)
	case "Day":
		return word(t.Weekday().String(), 9)
	case "day":
		return word(strings.ToLower(t.Weekday().String()), 9)
	case "DY":
		return strings.ToUpper(t.Weekday().String()[:3]), -1
	case "Dy":
		return t.Weekday().String()[:3], -1
	case "dy":
		return strings.ToLower(t.Weekday().String()[:3]), -1
	case "DDD":
		return pad(int64(t.YearDay()), 3)
	case "IDDD":
		wd := (int64(t.Weekday()) + 6) % 7
		return pad(int64(iw-1)*7+wd+1, 3)
	case "DD":
		if p.interval {
			return pad(p.days, 2)
		}
		return pad(int64(t.Day()), 2)
	case "D":
		return pad(int64(t.Weekday())+1, 1)
	case "ID":
		wd := int64(t.Weekday())
		if wd == 0 {
			wd = 7
		}
		return pad(wd, 1)
	case "W":
		return pad(int64((t.Day()-1)/7+1), 1)
	case "WW":
		return pad(int64((t.YearDay()-1)/7+1), 2)
	case "IW":
		return pad(int64(iw), 2)
	case "CC":
		c := (year + 99) / 100
		if year <= 0 {
			c = -((99 - (year - 1)) / 100)
		}
		return pad(c, 2)
	case "J":
		return pad(t.Unix()/86400+2440588, 0)
	case "Q":
		return pad(int64((t.Month()-1)/3+1), 1)
	case "RM":
		return word(romanMonths[t.Month()-1], 4)
	case "rm":
		return word(strings.ToLower(romanMonths[t.Month()-1]), 4)
	case "TZ", "tz":
		z := p.zone
		if kw == "tz" {
			z = strings.ToLower(z)
		}
		return z, -1
	case "TZH":
		h := p.offset / 3600
		sign := "+"
		if p.offset < 0 {
			sign, h = "-", -h
		}
		return fmt.Sprintf("%s%02d", sign, h), -1
	case "TZM":
		return fmt.Sprintf("%02d", abs64(int64(p.offset))%3600/60), -1
	case "OF":
		off := p.offset
		sign := "+"
		if off < 0 {
			sign, off = "-", -off
		}
		s := fmt.Sprintf("%s%02d", sign, off/3600)
		if off%3600 != 0 {
			s += fmt.Sprintf(":%02d", off%3600/60)
		}
		return s, -1
	}
	return kw, -1
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// tsParts breaks a timestamp (wall clock) down for formatting.
func tsParts(us int64, zone string, offset int) dtParts {
	t := wallTime(us)
	y := t.Year()
	if y <= 0 {
		y-- // there is no year 0: 1 BC is year 0 in Go
	}
	return dtParts{t: t, year: y, us: us - floorDiv64(us, usPerSec)*usPerSec, zone: zone, offset: offset}
}

func intervalParts(v types.IntervalValue) dtParts {
	us := v.Micros
	secs := us / usPerSec
	t := time.Date(0, 1, 1, 0, int(secs/60%60), int(secs%60), 0, time.UTC)
	return dtParts{t: t, year: int(v.Months / 12), months: int64(v.Months), days: int64(v.Days),
		hours: us / usPerHour, us: us % usPerSec, interval: true}
}

// toCharNumber formats a number with a numeric pattern.
func toCharNumber(d *apd.Decimal, f string) (string, error) {
	fm := strings.Contains(strings.ToUpper(f), "FM")
	// digits before and after the decimal point in the pattern
	intPos, fracPos, seenPoint, firstZero := 0, 0, false, -1
	up := strings.ToUpper(f)
	for i := 0; i < len(f); i++ {
		switch c := up[i]; {
		case c == '9' || c == '0':
			if seenPoint {
				fracPos++
			} else {
				if c == '0' && firstZero < 0 {
					firstZero = intPos
				}
				intPos++
			}
		case c == '.' || c == 'D' && !strings.HasPrefix(up[i:], "DAY"):
			seenPoint = true
		}
	}
	if d.Form != apd.Finite {
		return strings.Repeat("#", intPos+fracPos+1), nil
	}
	r, err := numericRound(d, int64(fracPos), false)
	if err != nil {
		return "", err
	}
	neg := r.Negative && !r.IsZero()
	var a apd.Decimal
	a.Abs(r)
	txt := a.Text('f')
	ip, fp := txt, ""
	if k := strings.IndexByte(txt, '.'); k >= 0 {
		ip, fp = txt[:k], txt[k+1:]
	}
	if ip == "0" {
		ip = ""
	}
	for len(fp) < fracPos {
		fp += "0"
	}
	overflow := len(ip) > intPos
	// integer digits aligned to the pattern's positions
	digits := strings.Repeat(" ", max(intPos-len(ip), 0)) + ip
	explicitSign := strings.Contains(up, "S") || strings.Contains(up, "MI") || strings.Contains(up, "PL") || strings.Contains(up, "SG") || strings.Contains(up, "PR")
	var sb strings.Builder
	ii, fi := 0, 0
	started := false
	signDone := explicitSign
	putSign := func() {
		if signDone {
			return
		}
		signDone = true
		if neg && !overflow {
			sb.WriteByte('-')
		} else if !fm {
			sb.WriteByte(' ')
		}
	}
	for i := 0; i < len(f); i++ {
		c := up[i]
		switch {
		case strings.HasPrefix(up[i:], "FM"):
			i++
		case c == '9' || c == '0':
			if overflow {
				putSign()
				sb.WriteByte('#')
				if seenPoint && ii >= intPos {
					fi++
				} else {
					ii++
				}
				continue
			}
			if ii < intPos {
				ch := digits[ii]
				leading := ch == ' '
				if leading && (c == '0' || firstZero >= 0 && ii >= firstZero) {
					ch, leading = '0', false
				}
				if leading && ii == intPos-1 && fracPos == 0 && ip == "" {
					ch, leading = '0', false // the value 0 prints one digit
				}
				ii++
				if leading {
					if !fm {
						sb.WriteByte(' ')
					}
					continue
				}
				putSign()
				started = true
				sb.WriteByte(ch)
			} else {
				putSign()
				if fi < len(fp) {
					if fm && c == '9' && strings.Trim(fp[fi:], "0") == "" {
						fi++
						continue
					}
					sb.WriteByte(fp[fi])
				}
				fi++
			}
		case c == '.' || c == 'D' && !strings.HasPrefix(up[i:], "DAY"):
			putSign()
			if overflow {
				sb.WriteByte('.')
				continue
			}
			sb.WriteByte('.')
		case c == ',' || c == 'G':
			switch {
			case started:
				sb.WriteByte(',')
			case !fm:
				sb.WriteByte(' ')
			}
		case strings.HasPrefix(up[i:], "TH"):
			if !neg {
				x, _ := a.Int64()
				s := ordinal(x)
				if f[i] == 'T' {
					s = strings.ToUpper(s)
				}
				sb.WriteString(s)
			}
			i++
		case strings.HasPrefix(up[i:], "MI"):
			if neg {
				sb.WriteByte('-')
			} else if !fm {
				sb.WriteByte(' ')
			}
			i++
		case strings.HasPrefix(up[i:], "PL"):
			if !neg {
				sb.WriteByte('+')
			} else if !fm {
				sb.WriteByte(' ')
			}
			i++
		case strings.HasPrefix(up[i:], "SG"):
			if neg {
				sb.WriteByte('-')
			} else {
				sb.WriteByte('+')
			}
			i++
		case c == 'S':
			if neg {
				sb.WriteByte('-')
			} else {
				sb.WriteByte('+')
			}
		default:
			sb.WriteByte(f[i])
		}
	}
	return sb.String(), nil
}

func init() {
	TX := types.TText
	define(
		rowFn("to_char", TX, []types.T{types.TTimestamp, TX}, func(_ *Context, a []types.Value) (types.Value, error) {
			return toCharDT(tsParts(int64(a[0].(types.TimestampValue)), "", 0), a[1].(string)), nil
		}),
		rowFn("to_char", TX, []types.T{types.TTimestampTZ, TX}, func(ctx *Context, a []types.Value) (types.Value, error) {
			us := int64(a[0].(types.TimestampValue))
			t := time.UnixMicro(us).In(ctx.location())
			zone, off := t.Zone()
			return toCharDT(tsParts(us+int64(off)*usPerSec, zone, off), a[1].(string)), nil
		}),
		rowFn("to_char", TX, []types.T{types.TInterval, TX}, func(_ *Context, a []types.Value) (types.Value, error) {
			return toCharDT(intervalParts(a[0].(types.IntervalValue)), a[1].(string)), nil
		}),
		rowFn("to_char", TX, []types.T{types.TNumeric, TX}, func(_ *Context, a []types.Value) (types.Value, error) {
			return toCharNumber(a[0].(*apd.Decimal), a[1].(string))
		}),
	)
	for _, t := range []types.T{types.TInt4, types.TInt8, types.TFloat4, types.TFloat8} {
		t := t
		define(rowFn("to_char", TX, []types.T{t, TX}, func(_ *Context, a []types.Value) (types.Value, error) {
			var d *apd.Decimal
			switch x := a[0].(type) {
			case int64:
				d = apd.New(x, 0)
			case float64:
				var err error
				if d, err = floatToNumeric(x, t.Kind == types.Float4); err != nil {
					return nil, err
				}
			default:
				return nil, pgerr.Internal("to_char of %T", a[0])
			}
			return toCharNumber(d, a[1].(string))
		}))
	}
}

package types

import (
	"strings"
	"time"
)

// DateStyle output other than ISO: SQL (01/02/2024 03:04:05 UTC), German
// (02.01.2024 03:04:05 UTC) and Postgres (Tue Jan 02 03:04:05 2024 UTC),
// with the field order (MDY or DMY) the setting names.

type dateStyle uint8

const (
	styleISO dateStyle = iota
	styleSQL
	styleGerman
	stylePostgres
)

// parseDateStyle reads a DateStyle setting such as "ISO, MDY" or "SQL, DMY".
func parseDateStyle(s string) (style dateStyle, dmy bool) {
	u := strings.ToUpper(s)
	switch {
	case strings.Contains(u, "SQL"):
		style = styleSQL
	case strings.Contains(u, "GERMAN"):
		style = styleGerman
	case strings.Contains(u, "POSTGRES"):
		style = stylePostgres
	}
	dmy = strings.Contains(u, "DMY") || strings.Contains(u, "EURO") ||
		style == styleGerman && !strings.Contains(u, "MDY") && !strings.Contains(u, "YMD")
	return
}

var shortMonths = [...]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
var shortDays = [...]string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}

func append2(dst []byte, x int64) []byte {
	return append(dst, byte('0'+x/10), byte('0'+x%10))
}

func appendYear(dst []byte, y int64) []byte {
	if y <= 0 {
		y = 1 - y
	}
	return appendPadded(dst, y, 4)
}

// appendStyledDate appends a date's fields in a non-ISO style.
func appendStyledDate(dst []byte, y, m, d int64, style dateStyle, dmy bool) []byte {
	first, second := m, d
	if dmy {
		first, second = d, m
	}
	switch style {
	case styleSQL:
		dst = append(append2(append(append2(dst, first), '/'), second), '/')
	case styleGerman:
		dst = append(append2(append(append2(dst, d), '.'), m), '.')
	default: // Postgres
		dst = append(append2(append(append2(dst, first), '-'), second), '-')
	}
	return appendYear(dst, y)
}

func appendDateStyled(dst []byte, v DateValue, style dateStyle, dmy bool) []byte {
	if style == styleISO || v == DateInfinity || v == DateMinusInfinity {
		return appendDate(dst, v)
	}
	y, m, d := civilFromDays(int64(v))
	dst = appendStyledDate(dst, y, m, d, style, dmy)
	if y <= 0 {
		dst = append(dst, " BC"...)
	}
	return dst
}

// appendTimestampStyled appends a timestamp (loc non-nil: timestamptz) in a
// non-ISO style; the zone prints as its abbreviation, or as an offset when
// the zone has none.
func appendTimestampStyled(dst []byte, v TimestampValue, loc *time.Location, style dateStyle, dmy bool) []byte {
	if style == styleISO || v == TimestampInfinity || v == TimestampMinusInfinity {
		return appendTimestamp(dst, v, loc)
	}
	local := int64(v)
	var off int64
	abbrev := ""
	if loc != nil {
		sec, _ := floorDiv(int64(v), usPerSec)
		name, o := time.Unix(sec, 0).In(loc).Zone()
		off, abbrev = int64(o), name
		local += off * usPerSec
	}
	days, tod := floorDiv(local, usPerDay)
	y, m, d := civilFromDays(days)
	if style == stylePostgres {
		_, wd := floorDiv(days+4, 7) // 1970-01-01 was a Thursday
		dst = append(append(dst, shortDays[wd]...), ' ')
		if dmy {
			dst = append(append(append(append2(dst, d), ' '), shortMonths[m-1]...), ' ')
		} else {
			dst = append(append(append(append(dst, shortMonths[m-1]...), ' '), byte('0'+d/10), byte('0'+d%10)), ' ')
		}
		dst = appendTime(dst, tod)
		dst = appendYear(append(dst, ' '), y)
	} else {
		dst = appendStyledDate(dst, y, m, d, style, dmy)
		dst = appendTime(append(dst, ' '), tod)
	}
	if loc != nil {
		dst = append(dst, ' ')
		if abbrev != "" && abbrev[0] != '+' && abbrev[0] != '-' {
			dst = append(dst, abbrev...)
		} else {
			dst = appendOffset(dst, off)
		}
	}
	if y <= 0 {
		dst = append(dst, " BC"...)
	}
	return dst
}

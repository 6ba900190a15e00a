package types

import "strings"

// The date fields of date/time input, after PostgreSQL 15's DecodeDate and
// DecodeNumber: fields are assigned left to right by what is already known
// (year, month, day), a textual month making MON-DD-YYYY, DD-MON-YYYY and
// YYYY-MON-DD unambiguous, and the DateStyle order deciding the rest.
// Methods of dtFields, used by one parse.

// number is DecodeNumber for an all-digit field.
func (f *dtFields) number(s string) dtErr {
	val, ok := atoiDT(s)
	if !ok {
		if len(s) > 9 && strings.Trim(s, "0123456789") == "" {
			return dtOverflow
		}
		return dtBad
	}
	flen := len(s)
	// day of year: three digits after a year alone
	if flen == 3 && f.hasYear && !f.hasMon && !f.hasDay && val >= 1 && val <= 366 {
		f.doy, f.hasMon, f.hasDay = val, true, true
		return dtOK
	}
	setYear := func() {
		f.year, f.hasYear, f.year2 = val, true, flen <= 2
	}
	setDay := func() { f.day, f.hasDay = val, true }
	setMon := func() { f.mon, f.hasMon = val, true }
	switch {
	case !f.hasYear && !f.hasMon && !f.hasDay:
		switch {
		case flen >= 3 || f.order == "YMD":
			setYear()
		case f.order == "DMY":
			setDay()
		default:
			setMon()
		}
	case f.hasYear && !f.hasMon && !f.hasDay:
		setMon() // YY-MM-DD
	case !f.hasYear && f.hasMon && !f.hasDay:
		if f.textMonth && (flen >= 3 || f.order == "YMD") {
			setYear()
		} else {
			setDay()
		}
	case f.hasYear && f.hasMon && !f.hasDay:
		if f.textMonth && flen >= 3 && f.year2 {
			// DD-MON-YYYY even in YMD order: the first number was the day
			f.day, f.hasDay = f.year, true
			f.year, f.year2 = val, false
		} else {
			setDay()
		}
	case !f.hasYear && !f.hasMon && f.hasDay:
		setMon() // DD-MM-YY
	case !f.hasYear && f.hasMon && f.hasDay:
		setYear()
	default:
		return dtBad
	}
	return dtOK
}

// textMon is a month name among the fields: it replaces a numeric month
// read before it as the day ("08 Jan 99" in MDY order).
func (f *dtFields) textMon(m int64) dtErr {
	if f.hasMon {
		if f.textMonth || f.hasDay || f.mon < 1 || f.mon > 31 {
			return dtBad
		}
		f.day, f.hasDay = f.mon, true
	}
	f.mon, f.hasMon, f.textMonth = m, true, true
	return dtOK
}

// date is DecodeDate: one field holding a whole date ("1999-01-08",
// "Jan-08-1999", "99-Jan-08", "1999-008"); its month name is read first,
// then the numbers in order.
func (f *dtFields) date(t dtTok) dtErr {
	if f.hasYear || f.hasMon || f.hasDay {
		return dtBad
	}
	text := false
	for _, p := range t.parts {
		if p == "" {
			return dtBad
		}
		if isAlpha(p[0]) {
			m, ok := monthNames[strings.ToLower(p)]
			if !ok || text {
				return dtBad
			}
			f.mon, f.hasMon, text = m, true, true
		}
	}
	saved := f.textMonth
	f.textMonth = text
	for _, p := range t.parts {
		if isAlpha(p[0]) {
			continue
		}
		if e := f.number(p); e != dtOK {
			return e
		}
	}
	f.textMonth = saved || text
	if !(f.hasYear && f.hasMon && f.hasDay) {
		return dtBad
	}
	return dtOK
}

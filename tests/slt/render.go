package slt

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Value is one result value in PostgreSQL's text form; Null marks SQL NULL.
// Values are plain data, safe to copy and share.
type Value struct {
	Text string
	Null bool
}

// Rows is a query result: one slice of values a row.
type Rows [][]Value

// renderClassic renders v as the reference harness does for the column type
// letter typ: I as "%d", R as "%.3f", anything else as text with the empty
// string as "(empty)" and bytes outside printable ASCII as "@".
func renderClassic(v Value, typ byte) string {
	if v.Null {
		return "NULL"
	}
	switch typ {
	case 'I':
		if n, err := strconv.ParseInt(v.Text, 10, 64); err == nil {
			return strconv.FormatInt(n, 10)
		}
		f := number(v.Text)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return "0"
		}
		return strconv.FormatInt(int64(f), 10) // truncates as C's (int) does
	case 'R':
		return fmt.Sprintf("%.3f", number(v.Text))
	}
	return printable(v.Text)
}

// number reads text as the reference harness's sqlite driver would read a
// value as a number: booleans are 1/0 and non-numbers 0.
func number(s string) float64 {
	switch s {
	case "t", "true":
		return 1
	case "f", "false":
		return 0
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil && !math.IsInf(f, 0) {
		return 0
	}
	return f
}

// printable renders text: "(empty)" for "", "@" for each byte that is not
// printable ASCII.
func printable(s string) string {
	if s == "" {
		return "(empty)"
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] < 0x20 || b[j] > 0x7e {
					b[j] = '@'
				}
			}
			return string(b)
		}
	}
	return s
}

// renderRS renders v as sqllogictest-rs does: the text form, NULL, or
// "(empty)" for the empty string.
func renderRS(v Value) string {
	switch {
	case v.Null:
		return "NULL"
	case v.Text == "":
		return "(empty)"
	}
	return v.Text
}

// render renders every value of rows for the record's dialect and types.
// In the RS dialect a column whose type letter is '*' is not compared: its
// values render as "*" (streamsql's own extension, for values such as a
// subscription's epoch_time that change from run to run).
func render(d Dialect, types string, rows Rows) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = make([]string, len(r))
		for j, v := range r {
			if d == Classic {
				typ := byte('T')
				if j < len(types) {
					typ = types[j]
				}
				out[i][j] = renderClassic(v, typ)
			} else if j < len(types) && types[j] == '*' {
				out[i][j] = "*"
			} else {
				out[i][j] = renderRS(v)
			}
		}
	}
	return out
}

// sortRendered orders rendered rows for mode: rowsort compares rows column by
// column with byte order (strcmp), valuesort sorts all values on their own
// (returned as one-value rows).
func sortRendered(mode SortMode, rows [][]string) [][]string {
	switch mode {
	case RowSort:
		sort.SliceStable(rows, func(a, b int) bool {
			ra, rb := rows[a], rows[b]
			for k := 0; k < len(ra) && k < len(rb); k++ {
				if ra[k] != rb[k] {
					return ra[k] < rb[k]
				}
			}
			return len(ra) < len(rb)
		})
	case ValueSort:
		var vals []string
		for _, r := range rows {
			vals = append(vals, r...)
		}
		sort.Strings(vals)
		rows = rows[:0]
		for _, v := range vals {
			rows = append(rows, []string{v})
		}
	}
	return rows
}

// flatten lists the values of rows in order.
func flatten(rows [][]string) []string {
	var vals []string
	for _, r := range rows {
		vals = append(vals, r...)
	}
	return vals
}

// hashLine is the reference harness's "N values hashing to <md5>": the MD5 of
// every value followed by a newline.
func hashLine(vals []string) string {
	h := md5.New()
	for _, v := range vals {
		h.Write([]byte(v))
		h.Write([]byte{'\n'})
	}
	return fmt.Sprintf("%d values hashing to %s", len(vals), hex.EncodeToString(h.Sum(nil)))
}

var hashRE = regexp.MustCompile(`^\d+ values hashing to [0-9a-f]{32}$`)

// fold collapses runs of whitespace to one space and trims the ends.
func fold(s string) string { return strings.Join(strings.Fields(s), " ") }

// rowLines renders rows one line a row, values separated by a space.
func rowLines(rows [][]string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = strings.Join(r, " ")
	}
	return out
}

// compare checks sorted, rendered actual rows against a record's expected
// lines. It returns "" when they match, otherwise a short description.
func compare(d Dialect, mode SortMode, expected []string, actual [][]string) string {
	vals := flatten(actual)
	if len(expected) == 1 && hashRE.MatchString(expected[0]) {
		if got := hashLine(vals); got != expected[0] {
			return "got " + got
		}
		return ""
	}
	if d == Classic && equalLines(expected, vals) {
		return ""
	}
	// One row a line (always for RS; a fallback for classic scripts written
	// that way), compared after whitespace folding.
	exp := make([]string, len(expected))
	for i, e := range expected {
		exp[i] = fold(e)
	}
	act := rowLines(actual)
	for i := range act {
		act[i] = fold(act[i])
	}
	if mode == ValueSort {
		exp, act = strings.Fields(strings.Join(exp, " ")), strings.Fields(strings.Join(act, " "))
	}
	if mode != NoSort {
		sort.Strings(exp)
		sort.Strings(act)
	}
	if equalLines(exp, act) {
		return ""
	}
	return "results differ"
}

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

package streamprop

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// floatTol is the tolerance of float columns: absolute below 1, relative
// above. Running float sums differ from a fresh sum in the last bits only.
const floatTol = 1e-9

// diff describes how got differs from want as multisets of rows, "" when
// they are equal. Float columns (of either side) match within floatTol.
func diff(got, want *result) string {
	if !slices.Equal(got.cols, want.cols) {
		return fmt.Sprintf("columns %v, want %v", got.cols, want.cols)
	}
	float := make([]bool, len(got.cols))
	for i := range float {
		float[i] = got.float[i] || want.float[i]
	}
	// Cancel the rows that are equal as text, then pair the rest within the
	// tolerance.
	counts := map[string]int{}
	for _, r := range want.rows {
		counts[rowKey(r)]++
	}
	var extra [][]string
	for _, r := range got.rows {
		k := rowKey(r)
		if counts[k] > 0 {
			counts[k]--
			continue
		}
		extra = append(extra, r)
	}
	var missing [][]string
	for _, r := range want.rows {
		k := rowKey(r)
		if counts[k] > 0 {
			counts[k]--
			missing = append(missing, r)
		}
	}
	if len(extra) > 0 && len(missing) > 0 && slices.Contains(float, true) {
		var still [][]string
		used := make([]bool, len(missing))
	next:
		for _, r := range extra {
			for i, m := range missing {
				if !used[i] && rowsClose(r, m, float) {
					used[i] = true
					continue next
				}
			}
			still = append(still, r)
		}
		extra = still
		var left [][]string
		for i, m := range missing {
			if !used[i] {
				left = append(left, m)
			}
		}
		missing = left
	}
	if len(extra) == 0 && len(missing) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d rows, want %d; %d unexpected, %d missing", len(got.rows), len(want.rows), len(extra), len(missing))
	writeRows(&b, "unexpected", extra)
	writeRows(&b, "missing", missing)
	return b.String()
}

func writeRows(b *strings.Builder, what string, rows [][]string) {
	slices.SortFunc(rows, func(x, y []string) int { return strings.Compare(rowKey(x), rowKey(y)) })
	for i, r := range rows {
		if i == 10 {
			fmt.Fprintf(b, "\n  ... %d more %s", len(rows)-i, what)
			return
		}
		fmt.Fprintf(b, "\n  %s: %s", what, showRow(r))
	}
}

func rowKey(r []string) string { return strings.Join(r, "\x1f") }

func showRow(r []string) string {
	s := make([]string, len(r))
	for i, v := range r {
		if v == nullText {
			s[i] = "NULL"
		} else {
			s[i] = strconv.Quote(v)
		}
	}
	return "(" + strings.Join(s, ", ") + ")"
}

func rowsClose(x, y []string, float []bool) bool {
	for i := range x {
		if x[i] == y[i] {
			continue
		}
		if !float[i] || x[i] == nullText || y[i] == nullText {
			return false
		}
		a, err1 := strconv.ParseFloat(x[i], 64)
		b, err2 := strconv.ParseFloat(y[i], 64)
		if err1 != nil || err2 != nil || math.Abs(a-b) > floatTol*max(1, math.Abs(a), math.Abs(b)) {
			return false
		}
	}
	return true
}

func TestDiff(t *testing.T) {
	res := func(float bool, rows ...[]string) *result {
		return &result{cols: []string{"k", "f"}, float: []bool{false, float}, rows: rows}
	}
	r := func(k, f string) []string { return []string{k, f} }
	cases := []struct {
		got, want *result
		equal     bool
	}{
		{res(false), res(false), true},
		{res(false, r("1", "a"), r("2", "b")), res(false, r("2", "b"), r("1", "a")), true},
		{res(false, r("1", "a"), r("1", "a")), res(false, r("1", "a")), false}, // multiplicity counts
		{res(false, r("1", nullText)), res(false, r("1", "")), false},          // NULL is not ''
		{res(true, r("1", "0.30000000000000004")), res(true, r("1", "0.3")), true},
		{res(true, r("1", "0.30000000000000004")), res(false, r("1", "0.3")), true},
		{res(false, r("1", "0.30000000000000004")), res(false, r("1", "0.3")), false}, // numeric: exact
		{res(true, r("1", "0.31")), res(true, r("1", "0.3")), false},
		{res(true, r("1", "1e12")), res(true, r("1", "1.0000000000001e12")), true},
		{res(true, r("1", "0.3"), r("2", "0.3")), res(true, r("2", "0.3"), r("2", "0.3")), false},
		{res(true, r("1", nullText)), res(true, r("1", "0")), false},
	}
	for i, c := range cases {
		d := diff(c.got, c.want)
		if (d == "") != c.equal {
			t.Errorf("case %d: diff %q, want equal %v", i, d, c.equal)
		}
	}
	other := &result{cols: []string{"k", "g"}, float: []bool{false, false}}
	if d := diff(res(false), other); !strings.Contains(d, "columns") {
		t.Errorf("different columns: %q", d)
	}
}

package types

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/pgerr"
)

// TestCheckNumericRange checks PostgreSQL's limits: 131072 digits before
// the point, 16383 after.
func TestCheckNumericRange(t *testing.T) {
	for _, c := range []struct {
		s  string
		ok bool
	}{
		{"1e131071", true},
		{"9.999e131071", true},
		{"-9e131071", true},
		{"1" + strings.Repeat("0", 131071), true},
		{"1e131072", false},
		{"-1e131072", false},
		{"1" + strings.Repeat("0", 131072), false},
		{"1e-16383", true},
		{"1e-16384", false},
		{"0e-16384", false}, // the display scale alone is too large
		{"0e200000", true},
		{"NaN", true},
	} {
		d, _, err := apd.NewFromString(c.s)
		if err != nil {
			t.Fatalf("%.20s: %v", c.s, err)
		}
		err = CheckNumericRange(d)
		if c.ok != (err == nil) {
			t.Errorf("%.20s (%d chars): got %v", c.s, len(c.s), err)
		}
		var pe *pgerr.Error
		if err != nil && (!errors.As(err, &pe) || pe.Code != pgerr.NumericValueOutOfRange) {
			t.Errorf("%.20s: error %v is not 22003", c.s, err)
		}
	}
}

// TestMaxNumDigitsBounds checks that the bit-length bound is the digit
// count or one more.
func TestMaxNumDigitsBounds(t *testing.T) {
	for _, s := range []string{"0", "1", "9", "10", "99", "100", "18446744073709551615", "18446744073709551616", strings.Repeat("9", 1000), "1" + strings.Repeat("0", 1000), strings.Repeat("9", 131072)} {
		d, _, err := apd.NewFromString(s)
		if err != nil {
			t.Fatal(err)
		}
		n, m := d.NumDigits(), MaxNumDigits(d)
		if m < n || m > n+1 {
			t.Errorf("%.20s (%d digits): bound %d", s, n, m)
		}
	}
}

// TestValueAtLargeNumeric: a stored numeric of numeric's full width reads
// back as its value, never as nil (a nil for a non-NULL row was an internal
// error in to_char).
func TestValueAtLargeNumeric(t *testing.T) {
	b := array.NewStringBuilder(memory.DefaultAllocator)
	defer b.Release()
	big := "12345" + strings.Repeat("0", 131067)
	b.Append(big)
	b.Append("0." + strings.Repeat("0", 16382) + "1")
	a := b.NewArray()
	defer a.Release()
	for i, want := range []string{big, "1e-16383"} {
		v := ValueAt(a, i, TNumeric)
		d, ok := v.(*apd.Decimal)
		if !ok {
			t.Fatalf("row %d: %T", i, v)
		}
		w, _, _ := apd.NewFromString(want)
		if d.Cmp(w) != 0 {
			t.Errorf("row %d: got %.30s", i, d.Text('e'))
		}
	}
}

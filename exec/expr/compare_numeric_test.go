package expr

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/cockroachdb/apd/v3"
)

// TestComparePlainDecimals checks the text comparison of numerics against
// apd's, on edge cases and random decimals, and that it refuses every form
// that is not a plain decimal.
func TestComparePlainDecimals(t *testing.T) {
	vals := []string{"0", "-0", "0.0", "-0.00", "00", "1", "-1", "1.0", "1.00", "10", "9.99", "10.01",
		"-10.01", "0.5", "0.50", "0.05", "-0.5", "123456789012345678901234567890", "-123456789012345678901234567890.5",
		"0001.2000", "1.2"}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 400; i++ {
		s := ""
		if r.Intn(2) == 0 {
			s = "-"
		}
		s += fmt.Sprint(r.Intn(1000))
		if r.Intn(2) == 0 {
			s += "." + fmt.Sprint(r.Intn(1000))
		}
		vals = append(vals, s)
	}
	for _, a := range vals {
		for _, b := range vals {
			got, ok := comparePlainDecimals(a, b)
			if !ok {
				t.Fatalf("comparePlainDecimals(%q, %q) refused", a, b)
			}
			da, _, _ := apd.NewFromString(a)
			db, _, _ := apd.NewFromString(b)
			if want := compareNumeric(da, db); got != want {
				t.Fatalf("comparePlainDecimals(%q, %q) = %d, apd says %d", a, b, got, want)
			}
		}
	}
	for _, bad := range []string{"NaN", "Infinity", "-Infinity", "1e5", "1.", ".5", "-", "", "1.2.3", "+1"} {
		if _, ok := comparePlainDecimals(bad, "1"); ok {
			t.Errorf("comparePlainDecimals(%q) accepted", bad)
		}
		if _, ok := comparePlainDecimals("1", bad); ok {
			t.Errorf("comparePlainDecimals(1, %q) accepted", bad)
		}
	}
}

package exec

import (
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// PostgreSQL: select '2024-01-31 10:00'::timestamp + '1 month 1 day 1 hour' gives
// 2024-03-01 11:00:00 (Feb 29, then one day); minus '1 month' from
// 2024-03-31 gives 2024-02-29.
func TestAddInterval(t *testing.T) {
	ts := func(y, m, d, h int) int64 { return time.Date(y, time.Month(m), d, h, 0, 0, 0, time.UTC).UnixMicro() }
	iv := arrow.MonthDayNanoInterval{Months: 1, Days: 1, Nanoseconds: 3600e6} // µs (types.IntervalToArrow)
	if got, want := addInterval(ts(2024, 1, 31, 10), iv, 1), ts(2024, 3, 1, 11); got != want {
		t.Errorf("plus: got %v want %v", time.UnixMicro(got).UTC(), time.UnixMicro(want).UTC())
	}
	if got, want := addInterval(ts(2024, 3, 31, 0), arrow.MonthDayNanoInterval{Months: 1}, -1), ts(2024, 2, 29, 0); got != want {
		t.Errorf("minus: got %v want %v", time.UnixMicro(got).UTC(), time.UnixMicro(want).UTC())
	}
	if got, want := addInterval(ts(2024, 1, 15, 0), arrow.MonthDayNanoInterval{Months: 13}, -1), ts(2022, 12, 15, 0); got != want {
		t.Errorf("minus 13 months: got %v want %v", time.UnixMicro(got).UTC(), time.UnixMicro(want).UTC())
	}
}

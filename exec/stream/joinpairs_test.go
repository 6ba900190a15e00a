package stream

import (
	"math"
	"testing"

	"github.com/streamsql/streamsql/types"
)

// diffOutcome compares l - r with d exactly, also where l - r overflows
// int64.
func TestDiffOutcome(t *testing.T) {
	const below, equal, above = 1, 2, 4
	for _, c := range []struct {
		l, r, d int64
		want    uint8
	}{
		{5, 3, 2, equal}, {5, 3, 1, above}, {5, 3, 3, below},
		{-10, 0, -10, equal}, {0, 0, 0, equal}, {1, 2, 0, below},
		{math.MaxInt64, -1, 0, above},                             // overflows upwards
		{math.MinInt64, 1, 0, below},                              // overflows downwards
		{math.MaxInt64, math.MinInt64, math.MaxInt64 / 2, above},  // far above any d
		{math.MinInt64, math.MaxInt64, -math.MaxInt64 / 2, below}, // far below
		{math.MaxInt64, math.MaxInt64, 0, equal},
		{math.MaxInt64 - 5, math.MaxInt64, -5, equal},
	} {
		if got := diffOutcome(c.l, c.r, c.d); got != c.want {
			t.Errorf("diffOutcome(%d, %d, %d) = %d, want %d", c.l, c.r, c.d, got, c.want)
		}
	}
	for op, acc := range compareOutcomes {
		for _, o := range []uint8{below, equal, above} {
			var want bool
			switch op {
			case "<":
				want = o == below
			case "<=":
				want = o != above
			case "=":
				want = o == equal
			case ">=":
				want = o != below
			case ">":
				want = o == above
			case "<>":
				want = o != equal
			}
			if (acc&o != 0) != want {
				t.Errorf("%s accepts outcome %d: %v, want %v", op, o, acc&o != 0, want)
			}
		}
	}
}

// Comparisons over columns that are not int64 values of one type, or out
// of range, are refused when the join starts.
func TestPairComparesChecked(t *testing.T) {
	lc := []types.Column{{Name: "ts", Type: types.TTimestamp}, {Name: "n", Type: types.TInt8}, {Name: "i", Type: types.TInt4}}
	rc := []types.Column{{Name: "ts", Type: types.TTimestamp}, {Name: "tz", Type: types.TTimestampTZ}, {Name: "n", Type: types.TInt8}}
	if _, err := newPairCompares([]PairCompare{{0, 0, "<", 5}, {1, 2, "<>", 0}}, lc, rc); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []PairCompare{{0, 1, "<", 0}, {2, 2, "<", 0}, {1, 0, "<", 0}, {0, 3, "<", 0}, {-1, 0, "<", 0}, {0, 0, "!~", 0}} {
		if _, err := newPairCompares([]PairCompare{bad}, lc, rc); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

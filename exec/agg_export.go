package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/types"
)

// Aggregate results exported for the streaming aggregation (exec/stream),
// which keeps its own retractable states but must print exactly what the
// batch aggregates print.

// AvgNumericText is avg's numeric result over integers or numerics: the
// finite sum of n > 0 values divided by n, rounded half away from zero to
// PostgreSQL's division scale, as text. The sum's exponent is its display
// scale (1.50 has scale 2). A sum beyond numeric's range is an error.
func AvgNumericText(sum *apd.Decimal, n int64) (string, error) {
	// PostgreSQL makes the sum a numeric first: beyond its range, it overflows
	if err := types.CheckNumericRange(sum); err != nil {
		return "", err
	}
	if sum.Form == apd.Finite && sum.Exponent == 0 && sum.Coeff.IsInt64() {
		v := sum.Coeff.Int64()
		if sum.Negative {
			v = -v
		}
		if txt, ok := avgIntText(v, n); ok {
			return txt, nil
		}
	}
	q, err := numericDiv(sum, apd.New(n, 0))
	if err != nil {
		return "", err
	}
	return numericText(q), nil
}

// AvgInterval is avg(interval): the sum of n > 0 intervals divided by n as
// PostgreSQL's interval_div does.
func AvgInterval(sum arrow.MonthDayNanoInterval, n int64) arrow.MonthDayNanoInterval {
	return intervalDiv(sum, float64(n))
}

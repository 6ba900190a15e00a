package exec

import (
	"math"

	"github.com/cockroachdb/apd/v3"
)

// inRange returns, for a float or numeric RANGE key, the predicate "position
// q lies within row p's bound which (0 start, 1 end)", with PostgreSQL's
// in_range semantics for NaN and infinities (NaN sorts after every other
// value; a boundary infinitely before +Infinity or after -Infinity takes
// every row). Over the sorted partition the start predicate goes from false
// to true and the end predicate from true to false. It is nil for the other
// key types, which compare against "value ± offset" directly.
func (rk *rangeKey) inRange(p, which int, preceding, start bool) func(q int) bool {
	// PostgreSQL's flags: sub subtracts the offset, less asks val <= sum;
	// a descending sort flips both.
	sub, less := preceding, !start
	if rk.dir < 0 {
		sub, less = !sub, !less
	}
	switch {
	case rk.flts != nil:
		base, off := rk.flts[p], rk.offF[which]
		return func(q int) bool { return inRangeFloat(rk.flts[q], base, off, sub, less) }
	case rk.decs != nil:
		base, off := &rk.decs[p], rk.offD[which]
		var sum apd.Decimal
		if base.Form == apd.Finite && off.Form == apd.Finite {
			if sub {
				_, _ = apd.BaseContext.Sub(&sum, base, off)
			} else {
				_, _ = apd.BaseContext.Add(&sum, base, off)
			}
		}
		return func(q int) bool { return inRangeNumeric(&rk.decs[q], base, off, &sum, sub, less) }
	}
	return nil
}

// inRangeFloat is PostgreSQL's in_range_float8_float8 for a valid offset.
func inRangeFloat(val, base, off float64, sub, less bool) bool {
	switch {
	case math.IsNaN(val):
		return math.IsNaN(base) || !less
	case math.IsNaN(base):
		return less
	case math.IsInf(off, 0) && math.IsInf(base, 0) && (sub && base > 0 || !sub && base < 0):
		return true
	}
	sum := base + off
	if sub {
		sum = base - off
	}
	if less {
		return val <= sum
	}
	return val >= sum
}

// inRangeNumeric is PostgreSQL's in_range_numeric_numeric for a valid
// offset; sum is base ± off when both are finite.
func inRangeNumeric(val, base, off, sum *apd.Decimal, sub, less bool) bool {
	pinf := func(d *apd.Decimal) bool { return d.Form == apd.Infinite && !d.Negative }
	ninf := func(d *apd.Decimal) bool { return d.Form == apd.Infinite && d.Negative }
	switch {
	case val.Form == apd.NaN:
		return base.Form == apd.NaN || !less
	case base.Form == apd.NaN:
		return less
	case off.Form == apd.Infinite:
		switch {
		case sub && pinf(base), !sub && ninf(base):
			return true // base ± offset would be NaN
		case sub: // the sum is -Infinity
			return !less || ninf(val)
		default: // the sum is +Infinity
			return less || pinf(val)
		}
	case val.Form == apd.Infinite || base.Form == apd.Infinite:
		// A finite offset cannot change how val and base compare.
		switch {
		case pinf(val):
			return pinf(base) || !less
		case ninf(val):
			return ninf(base) || less
		case pinf(base):
			return less
		default:
			return !less
		}
	}
	if less {
		return val.Cmp(sum) <= 0
	}
	return val.Cmp(sum) >= 0
}

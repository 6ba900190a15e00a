package expr

import (
	"math"
	"time"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Date and time helpers shared by casts, operators and functions. A
// timestamp is microseconds since 1970-01-01 (wall clock for timestamp, UTC
// instant for timestamptz); ±infinity are the extreme int64 values, as in
// PostgreSQL.

const (
	usPerSec  = int64(1000000)
	usPerMin  = 60 * usPerSec
	usPerHour = 60 * usPerMin
	usPerDay  = 24 * usPerHour

	tsInfinity    = math.MaxInt64
	tsNegInfinity = math.MinInt64
	dateInfinity  = math.MaxInt32
	dateNegInf    = math.MinInt32
)

func floorDiv64(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func isInfTS(us int64) bool { return us == tsInfinity || us == tsNegInfinity }

// wallToInstant interprets a wall-clock timestamp in loc. A reading in a
// spring-forward gap takes the offset from before the transition, an
// ambiguous one (fall back) the offset from after, as PostgreSQL does
// (types.LocalToUTC; Go's time.Date leaves that choice open).
func wallToInstant(us int64, loc *time.Location) int64 {
	if isInfTS(us) {
		return us
	}
	return types.LocalToUTC(us, loc)
}

// instantToWall reads an instant on loc's clock.
func instantToWall(us int64, loc *time.Location) int64 {
	if isInfTS(us) {
		return us
	}
	_, off := time.UnixMicro(us).In(loc).Zone()
	return us + int64(off)*usPerSec
}

func dateToTS(d int32) int64 {
	switch d {
	case dateInfinity:
		return tsInfinity
	case dateNegInf:
		return tsNegInfinity
	}
	return int64(d) * usPerDay
}

func tsToDate(us int64) int32 {
	switch us {
	case tsInfinity:
		return dateInfinity
	case tsNegInfinity:
		return dateNegInf
	}
	return int32(floorDiv64(us, usPerDay))
}

// wallTime converts microseconds (wall clock, as if UTC) to a time.Time.
func wallTime(us int64) time.Time { return time.UnixMicro(us).UTC() }

// castDatetime converts among date, time, timestamp, timestamptz, interval.
func castDatetime(ctx *Context, v types.Value, from, to types.T) (types.Value, error) {
	loc := ctx.location()
	switch x := v.(type) {
	case types.DateValue:
		switch to.Kind {
		case types.Timestamp:
			return applyTypmod(types.TimestampValue(dateToTS(int32(x))), to, false)
		case types.TimestampTZ:
			return applyTypmod(types.TimestampValue(wallToInstant(dateToTS(int32(x)), loc)), to, false)
		}
	case types.TimestampValue:
		us := int64(x)
		if from.Kind == types.TimestampTZ {
			us = instantToWall(us, loc)
		}
		switch to.Kind {
		case types.Timestamp:
			return applyTypmod(types.TimestampValue(us), to, false)
		case types.TimestampTZ:
			return applyTypmod(types.TimestampValue(wallToInstant(us, loc)), to, false)
		case types.Date:
			return types.DateValue(tsToDate(us)), nil
		case types.Time:
			if isInfTS(us) {
				return nil, pgerr.New(pgerr.DatetimeFieldOverflow, "timestamp out of range")
			}
			return types.TimeValue(us - floorDiv64(us, usPerDay)*usPerDay), nil
		}
	case types.TimeValue:
		if to.Kind == types.Interval {
			return types.IntervalValue{Micros: int64(x)}, nil
		}
	case types.IntervalValue:
		if to.Kind == types.Time {
			t := x.Micros % usPerDay
			if t < 0 {
				t += usPerDay
			}
			return types.TimeValue(t), nil
		}
	}
	return nil, pgerr.New(pgerr.CannotCoerce, "cannot cast type %s to %s", from, to)
}

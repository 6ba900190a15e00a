package stream

import (
	"math"
	"math/bits"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// AggKind names a streaming aggregate function.
type AggKind uint8

// Streaming aggregates. Each one takes retractions exactly, except that
// sum/avg over float8 accumulate rounding like any running float sum.
const (
	AggCountStar AggKind = iota // count(*): int8
	AggCount                    // count(x): int8, non-NULL x
	AggSum                      // sum(x): int2/int4/int8 -> int8 (see AggSpec), float8 -> float8
	AggAvg                      // avg(x): float8 -> float8
	AggMin                      // min(x): int2/4/8, float4/8, text, varchar, date, timestamp(tz)
	AggMax                      // max(x): same as min
)

var aggNames = [...]string{"count", "count", "sum", "avg", "min", "max"}

// AggSpec is one aggregate of a HashAgg: its function and its argument
// (nil for count(*)). An AggSpec is immutable.
//
// sum over integers returns int8 for every integer argument, including int8
// itself (PostgreSQL returns numeric there): the running total is kept in 128
// bits, so retractions are exact, and an output that does not fit int8 fails
// with 22003 "bigint out of range".
type AggSpec struct {
	Kind AggKind
	Arg  expr.Expr
	// Distinct aggregates each distinct non-NULL argument value once
	// (count(DISTINCT x)); the state counts each value's rows.
	Distinct bool
	// Filter, if set, is the FILTER (WHERE ...) condition: only rows where
	// it is true are aggregated.
	Filter expr.Expr
}

// String renders the call for EXPLAIN.
func (s AggSpec) String() string {
	if s.Kind == AggCountStar || s.Arg == nil {
		return "count(*)"
	}
	return aggNames[s.Kind] + "(" + s.Arg.String() + ")"
}

// ResultType is the SQL type the aggregate produces, or a 0A000 error when
// the streaming engine does not support it over its argument's type.
func (s AggSpec) ResultType() (types.T, error) {
	if s.Kind == AggCountStar {
		return types.TInt8, nil
	}
	if s.Arg == nil {
		return types.T{}, pgerr.Internal("stream: %s without an argument", aggNames[s.Kind])
	}
	t := s.Arg.Type()
	switch s.Kind {
	case AggCount:
		return types.TInt8, nil
	case AggSum:
		switch t.Kind {
		case types.Int2, types.Int4, types.Int8:
			return types.TInt8, nil
		case types.Float8:
			return types.TFloat8, nil
		}
	case AggAvg:
		if t.Kind == types.Float8 {
			return types.TFloat8, nil
		}
	case AggMin, AggMax:
		switch t.Kind {
		case types.Int2, types.Int4, types.Int8, types.Float4, types.Float8,
			types.Date, types.Timestamp, types.TimestampTZ, types.Text:
			return t.WithTypmod(-1), nil
		case types.Varchar:
			return types.TText, nil
		}
	}
	return types.T{}, pgerr.Unsupported("%s(%s) is not supported in streaming queries", aggNames[s.Kind], t)
}

// aggState is one group's running state of one aggregate. add applies row i
// of the argument array (nil for count(*)) with sign +1 or -1.
type aggState interface {
	add(a arrow.Array, i int, sign int64) error
	result() (types.Value, error)
}

// newAggState makes an empty state for s, whose argument has type t.
func newAggState(s AggSpec, t types.T) aggState {
	switch s.Kind {
	case AggCountStar, AggCount:
		return &countState{}
	case AggSum:
		if t.Kind == types.Float8 {
			return &floatSumState{}
		}
		return &intSumState{}
	case AggAvg:
		return &floatSumState{avg: true}
	}
	return &minMaxState{t: t, max: s.Kind == AggMax, counts: map[any]int64{}}
}

// countState counts rows (count(*)) or non-NULL values.
type countState struct{ n int64 }

func (c *countState) add(a arrow.Array, i int, sign int64) error {
	if a == nil || a.IsValid(i) {
		c.n += sign
	}
	return nil
}

func (c *countState) result() (types.Value, error) { return c.n, nil }

// intSumState is a 128-bit two's complement running sum of integers.
type intSumState struct {
	hi int64
	lo uint64
	n  int64 // non-NULL values
}

func intAt(a arrow.Array, i int) int64 {
	switch x := a.(type) {
	case *array.Int16:
		return int64(x.Value(i))
	case *array.Int32:
		return int64(x.Value(i))
	}
	return a.(*array.Int64).Value(i)
}

func (s *intSumState) add(a arrow.Array, i int, sign int64) error {
	if a.IsNull(i) {
		return nil
	}
	v := intAt(a, i)
	vhi := uint64(v >> 63) // sign extension
	var c uint64
	if sign > 0 {
		s.lo, c = bits.Add64(s.lo, uint64(v), 0)
		s.hi = int64(uint64(s.hi) + vhi + c)
	} else {
		s.lo, c = bits.Sub64(s.lo, uint64(v), 0)
		s.hi = int64(uint64(s.hi) - vhi - c)
	}
	s.n += sign
	return nil
}

func (s *intSumState) result() (types.Value, error) {
	if s.n == 0 {
		return nil, nil
	}
	if (s.hi == 0 && s.lo <= math.MaxInt64) || (s.hi == -1 && s.lo > math.MaxInt64) {
		return int64(s.lo), nil
	}
	return nil, pgerr.New(pgerr.NumericValueOutOfRange, "bigint out of range")
}

// floatSumState keeps the finite part of a float8 sum apart from counts of
// infinities and NaNs, so that retracting an infinity or a NaN restores the
// finite sum; the finite sum restarts at exactly 0 when no value is left.
type floatSumState struct {
	sum                float64
	n, pinf, ninf, nan int64
	avg                bool
}

func (s *floatSumState) add(a arrow.Array, i int, sign int64) error {
	if a.IsNull(i) {
		return nil
	}
	v := a.(*array.Float64).Value(i)
	switch {
	case math.IsNaN(v):
		s.nan += sign
	case math.IsInf(v, 1):
		s.pinf += sign
	case math.IsInf(v, -1):
		s.ninf += sign
	default:
		s.sum += float64(sign) * v
	}
	s.n += sign
	if s.n == 0 {
		s.sum = 0
	}
	return nil
}

func (s *floatSumState) result() (types.Value, error) {
	var v float64
	switch {
	case s.n == 0:
		return nil, nil
	case s.nan > 0 || (s.pinf > 0 && s.ninf > 0):
		v = math.NaN()
	case s.pinf > 0:
		v = math.Inf(1)
	case s.ninf > 0:
		v = math.Inf(-1)
	default:
		v = s.sum
	}
	if s.avg {
		v /= float64(s.n)
	}
	return v, nil
}

// minMaxState is an ordered multiset of values (value -> multiplicity) with
// the current extreme cached; a retraction of the extreme's last copy marks
// the cache stale and result recomputes it by one pass over the distinct
// values. Floats are keyed by their normalized bits (-0 = 0, one NaN).
type minMaxState struct {
	t      types.T
	max    bool
	counts map[any]int64
	best   any
	stale  bool
}

func (s *minMaxState) key(a arrow.Array, i int) any {
	switch x := a.(type) {
	case *array.Float64:
		return floatBits(x.Value(i))
	case *array.Float32:
		return floatBits(float64(x.Value(i)))
	case *array.String:
		return strings.Clone(x.Value(i))
	case *array.Int16, *array.Int32, *array.Int64:
		return intAt(a, i)
	}
	return types.ValueAt(a, i, s.t) // date, timestamp: comparable Go values
}

func floatBits(f float64) uint64 {
	switch {
	case f == 0:
		return 0
	case math.IsNaN(f):
		return math.Float64bits(math.NaN())
	}
	return math.Float64bits(f)
}

// value turns a multiset key back into a types.Value.
func (s *minMaxState) value(k any) types.Value {
	if b, ok := k.(uint64); ok {
		return math.Float64frombits(b)
	}
	return k
}

// better reports whether key a beats key b.
func (s *minMaxState) better(a, b any) bool {
	c := types.Compare(s.value(a), s.value(b), s.t)
	if s.max {
		return c > 0
	}
	return c < 0
}

func (s *minMaxState) add(a arrow.Array, i int, sign int64) error {
	if a.IsNull(i) {
		return nil
	}
	k := s.key(a, i)
	n := s.counts[k] + sign
	switch {
	case n < 0:
		return pgerr.Internal("stream: min/max retracts a value it never saw")
	case n == 0:
		delete(s.counts, k)
		if !s.stale && s.best == k {
			s.stale = true
		}
	default:
		s.counts[k] = n
		if sign > 0 && !s.stale && (s.best == nil || s.better(k, s.best)) {
			s.best = k
		}
	}
	return nil
}

func (s *minMaxState) result() (types.Value, error) {
	if s.stale {
		s.best = nil
		for k := range s.counts {
			if s.best == nil || s.better(k, s.best) {
				s.best = k
			}
		}
		s.stale = false
	}
	if s.best == nil {
		return nil, nil
	}
	return s.value(s.best), nil
}

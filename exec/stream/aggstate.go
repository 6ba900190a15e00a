package stream

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// AggKind names a streaming aggregate function.
type AggKind uint8

// Streaming aggregates, with PostgreSQL's result types (those of the batch
// engine's ResolveAggregate). Every one takes retractions exactly, except
// that float sums and averages are running sums: a retraction subtracts, so
// rounding accumulates as in any running float sum (a group whose values
// are all retracted starts again from exactly 0).
const (
	AggCountStar      AggKind = iota // count(*): int8
	AggCount                         // count(x): int8, non-NULL x
	AggSum                           // sum(x): int2/int4 -> int8, int8/numeric -> numeric, float4, float8, interval -> the same
	AggAvg                           // avg(x): integers/numeric -> numeric, floats -> float8, interval -> interval
	AggMin                           // min(x): every orderable type -> that type (varchar -> text)
	AggMax                           // max(x): same as min
	AggBoolAnd                       // bool_and(x) (every): bool
	AggBoolOr                        // bool_or(x): bool
	AggStringAgg                     // string_agg(x, sep [ORDER BY ...]): text or bytea (aggcollect.go)
	AggArrayAgg                      // array_agg(x [ORDER BY ...]): x's array type (aggcollect.go)
	AggVarSamp                       // var_samp(x) (variance) over float4/float8: float8 (aggvar.go)
	AggVarPop                        // var_pop(x) over float4/float8: float8
	AggStddevSamp                    // stddev_samp(x) (stddev) over float4/float8: float8
	AggStddevPop                     // stddev_pop(x) over float4/float8: float8
	AggPercentileCont                // percentile_cont(f) WITHIN GROUP (ORDER BY x): float8, or float8[] for an array of fractions (aggordered.go)
	AggPercentileDisc                // percentile_disc(f) WITHIN GROUP (ORDER BY x): x's type, or its array
	AggMode                          // mode() WITHIN GROUP (ORDER BY x): x's type
	AggRegr                          // Name(y, x) over float8: corr, covar_*, regr_* (float8; regr_count int8) (aggregr.go)
	AggBitAnd                        // bit_and(x) over int2/int4/int8: the same type (aggbit.go)
	AggBitOr                         // bit_or(x)
	AggBitXor                        // bit_xor(x)
)

var aggNames = [...]string{"count", "count", "sum", "avg", "min", "max", "bool_and", "bool_or", "string_agg", "array_agg",
	"var_samp", "var_pop", "stddev_samp", "stddev_pop", "percentile_cont", "percentile_disc", "mode", "regr", "bit_and", "bit_or", "bit_xor"}

// AggSpec is one aggregate of a HashAgg: its function and its argument
// (nil for count(*)). An AggSpec is immutable.
type AggSpec struct {
	Kind AggKind
	Arg  expr.Expr
	// Distinct aggregates each distinct non-NULL argument value once
	// (count(DISTINCT x)); the state counts each (group, value)'s rows.
	Distinct bool
	// Filter, if set, is the FILTER (WHERE ...) condition: only rows where
	// it is true are aggregated.
	Filter expr.Expr
	// Sep is string_agg's delimiter (nil for other aggregates).
	Sep expr.Expr
	// OrderBy is the order within the call of string_agg and array_agg,
	// and the WITHIN GROUP order of the ordered-set aggregates (ignored,
	// and left nil, for the others, whose value does not depend on it).
	OrderBy []exec.SortKey
	// Fracs are percentile_cont's and percentile_disc's fractions (one, or
	// with ManyFracs the elements of an array, NaN for a NULL element).
	Fracs     []float64
	ManyFracs bool
	// Name is which of the AggRegr family (corr, covar_pop, regr_slope...),
	// and Arg2 its second argument (x in corr(y, x)).
	Name string
	Arg2 expr.Expr
}

// String renders the call for EXPLAIN.
func (s AggSpec) String() string {
	if s.Kind >= AggPercentileCont && s.Kind <= AggMode && s.Arg != nil {
		out := orderedString(s)
		if s.Filter != nil {
			out += " FILTER (WHERE " + s.Filter.String() + ")"
		}
		return out
	}
	out := "count(*)"
	if s.Kind == AggRegr && s.Arg != nil && s.Arg2 != nil {
		out = s.Name + "(" + s.Arg.String() + ", " + s.Arg2.String() + ")"
	} else if s.Kind != AggCountStar && s.Arg != nil {
		d := ""
		if s.Distinct {
			d = "DISTINCT "
		}
		out = aggNames[s.Kind] + "(" + d + s.Arg.String()
		if s.Sep != nil {
			out += ", " + s.Sep.String()
		}
		if len(s.OrderBy) > 0 {
			keys := make([]string, len(s.OrderBy))
			for i, k := range s.OrderBy {
				keys[i] = k.E.String()
				if k.Desc {
					keys[i] += " DESC"
				}
			}
			out += " ORDER BY " + strings.Join(keys, ", ")
		}
		out += ")"
	}
	if s.Filter != nil {
		out += " FILTER (WHERE " + s.Filter.String() + ")"
	}
	return out
}

// ResultType is the SQL type the aggregate produces (as in the batch
// engine), or a 0A000 error when the streaming engine does not support it
// over its argument's type.
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
		case types.Int2, types.Int4:
			return types.TInt8, nil
		case types.Int8, types.Numeric:
			return types.TNumeric, nil
		case types.Float4, types.Float8, types.Interval:
			return t.WithTypmod(-1), nil
		}
	case AggAvg:
		switch t.Kind {
		case types.Int2, types.Int4, types.Int8, types.Numeric:
			return types.TNumeric, nil
		case types.Float4, types.Float8:
			return types.TFloat8, nil
		case types.Interval:
			return t.WithTypmod(-1), nil
		}
	case AggMin, AggMax:
		switch t.Kind {
		case types.Varchar, types.Name, types.Char, types.Unknown:
			return types.TText, nil
		case types.Array:
			if t.Elem.Kind != types.Array {
				return types.ArrayOf(t.Elem.WithTypmod(-1)), nil
			}
		case types.JSON, types.JSONB, types.Void:
		default:
			return t.WithTypmod(-1), nil
		}
	case AggBoolAnd, AggBoolOr:
		if t.Kind == types.Bool {
			return types.TBool, nil
		}
	case AggStringAgg:
		if s.Sep == nil {
			return types.T{}, pgerr.Internal("stream: string_agg without a delimiter")
		}
		switch {
		case t.Kind == types.Bytea && s.Sep.Type().Kind == types.Bytea:
			return types.TBytea, nil
		case t.IsString() && s.Sep.Type().IsString():
			return types.TText, nil
		}
	case AggArrayAgg:
		if t.Kind != types.Array {
			return types.ArrayOf(t), nil
		}
	case AggVarSamp, AggVarPop, AggStddevSamp, AggStddevPop:
		if t.IsFloat() { // integers and numeric: the planner's count and sums
			return types.TFloat8, nil
		}
	case AggBitAnd, AggBitOr, AggBitXor:
		if t.IsInteger() {
			return t.WithTypmod(-1), nil
		}
	case AggRegr:
		if t.Kind == types.Float8 && s.Arg2 != nil && s.Arg2.Type().Kind == types.Float8 {
			if s.Name == "regr_count" {
				return types.TInt8, nil
			}
			return types.TFloat8, nil
		}
	case AggPercentileCont, AggPercentileDisc, AggMode:
		rt := t.WithTypmod(-1)
		if s.Kind == AggPercentileCont {
			rt = types.TFloat8
		}
		if t.Kind != types.Array && !(s.Kind == AggPercentileCont && !t.IsFloat()) {
			if s.ManyFracs {
				return types.ArrayOf(rt), nil
			}
			return rt, nil
		}
	}
	return types.T{}, pgerr.Unsupported("%s(%s) is not supported in streaming queries", aggNames[s.Kind], t)
}

// AggSpecFor maps an aggregate the batch binder resolved (exec.AggCall) to
// the streaming aggregate computing the same values and type, or a 0A000
// error naming what streaming does not support. ORDER BY inside the call is
// ignored: none of these aggregates depends on the order of its input.
func AggSpecFor(call exec.AggCall) (AggSpec, error) {
	if call.Fn == nil {
		return AggSpec{}, pgerr.Internal("stream: aggregate call without a function")
	}
	spec := AggSpec{Distinct: call.Distinct, Filter: call.Filter}
	switch call.Fn.Name {
	case "count":
		spec.Kind = AggCount
		if len(call.Args) == 0 {
			spec.Kind = AggCountStar
		}
	case "sum":
		spec.Kind = AggSum
	case "avg":
		spec.Kind = AggAvg
	case "min":
		spec.Kind = AggMin
	case "max":
		spec.Kind = AggMax
	case "bool_and", "every":
		spec.Kind = AggBoolAnd
	case "bool_or":
		spec.Kind = AggBoolOr
	case "string_agg", "array_agg":
		return collectSpecFor(call, spec)
	case "variance", "var_samp":
		spec.Kind = AggVarSamp
	case "var_pop":
		spec.Kind = AggVarPop
	case "stddev", "stddev_samp":
		spec.Kind = AggStddevSamp
	case "stddev_pop":
		spec.Kind = AggStddevPop
	case "percentile_cont", "percentile_disc", "mode":
		return orderedSpecFor(call, spec) // aggordered.go
	case "bit_and":
		spec.Kind = AggBitAnd
	case "bit_or":
		spec.Kind = AggBitOr
	case "bit_xor":
		spec.Kind = AggBitXor
	case "corr", "covar_pop", "covar_samp", "regr_avgx", "regr_avgy", "regr_count", "regr_intercept",
		"regr_r2", "regr_slope", "regr_sxx", "regr_sxy", "regr_syy":
		if call.Distinct {
			return AggSpec{}, pgerr.Unsupported("%s(DISTINCT ...) is not supported in streaming queries", call.Fn.Name)
		}
		if len(call.Args) != 2 {
			return AggSpec{}, pgerr.Internal("stream: %s with %d arguments", call.Fn.Name, len(call.Args))
		}
		spec.Kind, spec.Name, spec.Arg, spec.Arg2 = AggRegr, call.Fn.Name, call.Args[0], call.Args[1]
		return checkedSpec(spec, call)
	default:
		return AggSpec{}, pgerr.Unsupported("aggregate function %s is not supported in streaming queries", call.Fn.Name)
	}
	switch {
	case spec.Kind == AggCountStar:
		if spec.Distinct {
			return AggSpec{}, pgerr.Internal("stream: count(DISTINCT *)")
		}
	case len(call.Args) != 1:
		return AggSpec{}, pgerr.Unsupported("aggregate function %s with %d arguments is not supported in streaming queries", call.Fn.Name, len(call.Args))
	default:
		spec.Arg = call.Args[0]
	}
	return checkedSpec(spec, call)
}

// checkedSpec returns spec, the streaming form of call, when its result
// type is the batch engine's.
func checkedSpec(spec AggSpec, call exec.AggCall) (AggSpec, error) {
	rt, err := spec.ResultType()
	if err != nil {
		return AggSpec{}, err
	}
	if rt.Kind != call.Fn.Return.Kind {
		return AggSpec{}, pgerr.Internal("stream: %s returns %s, the batch engine %s", spec, rt, call.Fn.Return)
	}
	return spec, nil
}

// aggCol is one aggregate's running state for every group of a HashAgg,
// kept in slices indexed by group id, updated a chunk at a time. Owned by
// the HashAgg's goroutine.
type aggCol interface {
	// grow makes groups [0, n) exist; new groups are empty.
	grow(n int)
	// update folds rows into their groups: row i goes to group gids[i]
	// (nowhere when negative) with sign signs[i] (+1 for every row when
	// signs is nil). arg is the argument column (nil for count(*)).
	update(arg arrow.Array, gids []int32, signs []int64) error
	// results sets out[i] to group gs[i]'s current value.
	results(gs []int32, out []cell) error
	// reset empties group g (its id will be reused).
	reset(g int32)
	// appendState appends group g's state (self-delimiting) to dst, for a
	// checkpoint (encodings in aggsnap.go).
	appendState(dst []byte, g int32) []byte
	// loadState sets group g (already grown, empty) to a state appendState
	// wrote and returns the bytes after it.
	loadState(g int32, b []byte) ([]byte, error)
}

// newAggCol makes the state of aggregate s, whose argument has type t.
// With appendOnly, min and max keep only their running extreme, DISTINCT
// aggregates no row counts, and they fail on a retraction.
func newAggCol(s AggSpec, t types.T, appendOnly bool) (aggCol, error) {
	if _, err := s.ResultType(); err != nil {
		return nil, err
	}
	var c aggCol
	switch s.Kind {
	case AggCountStar:
		c = &countCol{star: true}
	case AggCount:
		c = &countCol{}
	case AggSum, AggAvg:
		avg := s.Kind == AggAvg
		switch t.Kind {
		case types.Int2, types.Int4, types.Int8:
			mode := sumToInt8
			switch {
			case avg:
				mode = avgToNumeric
			case t.Kind == types.Int8:
				mode = sumToNumeric
			}
			c = &intSumCol{mode: mode}
		case types.Numeric:
			c = &numericSumCol{avg: avg}
		case types.Float4, types.Float8:
			c = &floatSumCol{avg: avg, f32: !avg && t.Kind == types.Float4}
		case types.Interval:
			c = &intervalSumCol{avg: avg}
		}
	case AggMin, AggMax:
		c = newMinMax(t, s.Kind == AggMax, appendOnly)
	case AggBoolAnd, AggBoolOr:
		c = &boolCol{and: s.Kind == AggBoolAnd}
	case AggVarSamp, AggVarPop, AggStddevSamp, AggStddevPop:
		c = newFloatVarCol(aggNames[s.Kind], appendOnly)
	case AggPercentileCont, AggPercentileDisc, AggMode:
		return newOrderedSetCol(s, t) // every value, whatever the input
	case AggRegr:
		c = newRegrCol(s.Name, appendOnly)
	case AggBitAnd, AggBitOr, AggBitXor:
		c = newBitCol(map[AggKind]byte{AggBitAnd: '&', AggBitOr: '|', AggBitXor: '^'}[s.Kind], t, appendOnly)
	case AggStringAgg, AggArrayAgg:
		return newCollectCol(s, t), nil // DISTINCT when its value is built
	}
	if c == nil {
		return nil, pgerr.Internal("stream: no state for %s over %s", s, t)
	}
	if s.Distinct && s.Kind != AggCountStar {
		if appendOnly {
			c = newAppendOnlyDistinct(c, t)
		} else {
			c = newDistinctCol(c, t)
		}
	}
	return c, nil
}

// sgn is row i's sign.
func sgn(signs []int64, i int) int64 {
	if signs == nil {
		return 1
	}
	return signs[i]
}

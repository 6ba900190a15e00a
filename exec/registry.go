package exec

import (
	"strings"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// AggFunc is one resolved aggregate (count, sum, avg, min, max, bool_and,
// bool_or, every, string_agg, array_agg, stddev..., variance...). It is
// immutable and shared by every execution of the plans that use it.
type AggFunc struct {
	Name   string
	Args   []types.T // argument types after resolution (the planner casts to them)
	Return types.T
	// impl is operator-private.
	impl any
}

// WindowFunc is one resolved window function: a ranking/offset function
// (row_number, rank, dense_rank, percent_rank, cume_dist, ntile, lag, lead,
// first_value, last_value, nth_value) or an aggregate used OVER a window.
// It is immutable and shared.
type WindowFunc struct {
	Name   string
	Args   []types.T
	Return types.T
	Agg    *AggFunc // set when the window function is an aggregate
	impl   any
}

var aggNames = map[string]bool{
	"count": true, "sum": true, "avg": true, "min": true, "max": true,
	"bool_and": true, "bool_or": true, "every": true, "string_agg": true, "array_agg": true,
	"stddev": true, "stddev_samp": true, "stddev_pop": true,
	"corr": true, "covar_pop": true, "covar_samp": true, "regr_slope": true, "regr_intercept": true,
	"regr_r2": true, "regr_count": true, "regr_avgx": true, "regr_avgy": true, "regr_sxx": true,
	"regr_syy": true, "regr_sxy": true, "bit_and": true, "bit_or": true, "bit_xor": true,
	"percentile_cont": true, "percentile_disc": true, "mode": true,
	"json_agg": true, "jsonb_agg": true, "json_object_agg": true, "jsonb_object_agg": true,
	"variance": true, "var_samp": true, "var_pop": true,
}

// IsAggregate reports whether name is a known aggregate function.
func IsAggregate(name string) bool { return aggNames[strings.TrimPrefix(name, "pg_catalog.")] }

func noFunction(name string, args []types.T) *pgerr.Error {
	parts := make([]string, len(args))
	for i, t := range args {
		parts[i] = t.String()
	}
	return pgerr.New(pgerr.UndefinedFunction, "function %s(%s) does not exist", name, strings.Join(parts, ", ")).
		WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
}

// plain drops modifiers: aggregate results carry none.
func plain(t types.T) types.T {
	if t.Kind == types.Array {
		return types.ArrayOf(plain(*t.Elem))
	}
	t.Typmod = -1
	return t
}

// ResolveAggregate picks the aggregate overload for the argument types, as
// PostgreSQL does: sum(int4) is bigint, sum(int8) and avg(int) are numeric,
// count(*) is written with no arguments (star is true).
//
// Ordered-set aggregates (percentile_cont, percentile_disc, mode) take their
// direct arguments followed by the WITHIN GROUP value as args, and the
// AggCall's OrderBy holds the WITHIN GROUP sort key:
// percentile_cont(0.5) WITHIN GROUP (ORDER BY x) is Args [0.5, x], OrderBy [x].
func ResolveAggregate(name string, args []types.T, star bool) (*AggFunc, error) {
	name = strings.TrimPrefix(name, "pg_catalog.")
	f := &AggFunc{Name: name}
	mk := func(a []types.T, ret types.T, impl aggImpl) (*AggFunc, error) {
		f.Args, f.Return, f.impl = a, ret, impl
		return f, nil
	}
	if star {
		if name != "count" {
			return nil, pgerr.New(pgerr.WrongObjectType, "%s(*) specified, but %s is not an aggregate function", name, name)
		}
		return mk(nil, types.TInt8, func(*AggFunc, memory.Allocator) aggState { return &countAgg{star: true} })
	}
	if !aggNames[name] {
		return nil, noFunction(name, args)
	}
	if name == "string_agg" {
		if len(args) == 2 {
			switch {
			case isTextish(args[0]) && isTextish(args[1]):
				return mk([]types.T{types.TText, types.TText}, types.TText, func(*AggFunc, memory.Allocator) aggState { return &stringAgg{} })
			case (args[0].Kind == types.Bytea || args[0].Kind == types.Unknown) && (args[1].Kind == types.Bytea || args[1].Kind == types.Unknown) && args[0].Kind != args[1].Kind,
				args[0].Kind == types.Bytea && args[1].Kind == types.Bytea:
				// string_agg(bytea, bytea); an untyped literal takes the other's type
				return mk([]types.T{types.TBytea, types.TBytea}, types.TBytea, func(*AggFunc, memory.Allocator) aggState { return &binaryAgg{} })
			}
		}
		return nil, noFunction(name, args)
	}
	if name == "corr" || strings.HasPrefix(name, "covar_") || strings.HasPrefix(name, "regr_") {
		if len(args) != 2 || !args[0].IsNumeric() || !args[1].IsNumeric() {
			return nil, noFunction(name, args)
		}
		ret := types.TFloat8
		if name == "regr_count" {
			ret = types.TInt8
		}
		return mk([]types.T{types.TFloat8, types.TFloat8}, ret, func(*AggFunc, memory.Allocator) aggState { return &regrAgg{fn: name} })
	}
	switch name {
	case "percentile_cont", "percentile_disc":
		// percentile_x(fraction) WITHIN GROUP (ORDER BY x): Args are the
		// fraction then x.
		// An array of fractions gives the array of their percentiles.
		if len(args) != 2 || (name == "percentile_cont" && !args[1].IsNumeric()) {
			return nil, noFunction(name, args)
		}
		many := args[0].Kind == types.Array && args[0].Elem != nil && (args[0].Elem.IsNumeric() || args[0].Elem.Kind == types.Unknown)
		if !many && !args[0].IsNumeric() {
			return nil, noFunction(name, args)
		}
		x := plain(args[1])
		if name == "percentile_cont" {
			x = types.TFloat8
		}
		frac, ret := types.TFloat8, x
		if many {
			frac, ret = types.ArrayOf(types.TFloat8), types.ArrayOf(x)
		}
		return mk([]types.T{frac, x}, ret, func(*AggFunc, memory.Allocator) aggState { return &orderedSetAgg{fn: name, t: x, many: many} })
	case "mode":
		if len(args) != 1 {
			return nil, noFunction(name, args)
		}
		x := plain(args[0])
		return mk([]types.T{x}, x, func(*AggFunc, memory.Allocator) aggState { return &orderedSetAgg{fn: name, t: x} })
	case "json_agg", "jsonb_agg", "json_object_agg", "jsonb_object_agg":
		object := strings.Contains(name, "object")
		if (object && len(args) != 2) || (!object && len(args) != 1) {
			return nil, noFunction(name, args)
		}
		ret, jsonb := types.TJSON, strings.HasPrefix(name, "jsonb")
		if jsonb {
			ret = types.TJSONB
		}
		as := make([]types.T, len(args))
		for i, a := range args {
			as[i] = plain(a)
			if as[i].Kind == types.Unknown {
				as[i] = types.TText
			}
		}
		return mk(as, ret, func(*AggFunc, memory.Allocator) aggState { return &jsonAgg{object: object, jsonb: jsonb} })
	}
	if len(args) != 1 {
		return nil, noFunction(name, args)
	}
	t := plain(args[0])
	if t.Kind == types.Unknown {
		t = types.TText
	}
	one := []types.T{t}
	switch name {
	case "count":
		return mk(one, types.TInt8, func(*AggFunc, memory.Allocator) aggState { return &countAgg{} })
	case "sum":
		switch {
		case t.Kind == types.Int2 || t.Kind == types.Int4:
			return mk(one, types.TInt8, func(*AggFunc, memory.Allocator) aggState { return &intSum{} })
		case t.Kind == types.Int8:
			return mk(one, types.TNumeric, func(*AggFunc, memory.Allocator) aggState { return &intSum{numeric: true} })
		case t.Kind == types.Numeric:
			return mk(one, types.TNumeric, func(*AggFunc, memory.Allocator) aggState { return &numericAgg{fn: "sum"} })
		case t.IsFloat():
			return mk(one, t, func(*AggFunc, memory.Allocator) aggState { return &floatSum{f32: t.Kind == types.Float4} })
		case t.Kind == types.Interval:
			return mk(one, t, func(*AggFunc, memory.Allocator) aggState { return &intervalAgg{} })
		}
	case "avg":
		switch {
		case t.IsInteger():
			return mk(one, types.TNumeric, func(*AggFunc, memory.Allocator) aggState { return &intSum{avg: true} })
		case t.Kind == types.Numeric:
			return mk(one, types.TNumeric, func(*AggFunc, memory.Allocator) aggState { return &numericAgg{fn: "avg"} })
		case t.IsFloat():
			return mk(one, types.TFloat8, func(*AggFunc, memory.Allocator) aggState { return &floatStats{fn: "avg"} })
		case t.Kind == types.Interval:
			return mk(one, t, func(*AggFunc, memory.Allocator) aggState { return &intervalAgg{avg: true} })
		}
	case "stddev", "stddev_samp", "stddev_pop", "variance", "var_samp", "var_pop":
		switch {
		case t.IsInteger() || t.Kind == types.Numeric:
			return mk(one, types.TNumeric, func(*AggFunc, memory.Allocator) aggState { return &numericAgg{fn: name} })
		case t.IsFloat():
			return mk(one, types.TFloat8, func(*AggFunc, memory.Allocator) aggState { return &floatStats{fn: name} })
		}
	case "min", "max":
		switch {
		case t.IsNumeric(), t.IsString(), t.Kind == types.Date, t.Kind == types.Time, t.IsTimestamp(),
			t.Kind == types.Interval, t.Kind == types.Oid, t.Kind == types.Array, t.Kind == types.Enum:
		default:
			return nil, noFunction(name, args)
		}
		if t.Kind == types.Varchar || t.Kind == types.Name || t.Kind == types.Char {
			t = types.TText
			one = []types.T{t}
		}
		isMax := name == "max"
		return mk(one, t, func(*AggFunc, memory.Allocator) aggState { return newMinMax(t, isMax) })
	case "bit_and", "bit_or", "bit_xor":
		if t.IsInteger() {
			op := map[string]byte{"bit_and": '&', "bit_or": '|', "bit_xor": '^'}[name]
			return mk(one, t, func(*AggFunc, memory.Allocator) aggState { return &bitAgg{op: op} })
		}
	case "bool_and", "every", "bool_or":
		if t.Kind == types.Bool {
			and := name != "bool_or"
			return mk(one, types.TBool, func(*AggFunc, memory.Allocator) aggState { return &boolAgg{and: and} })
		}
	case "array_agg":
		if t.Kind == types.Array {
			return nil, pgerr.Unsupported("array_agg over arrays is not supported")
		}
		return mk(one, types.ArrayOf(t), func(*AggFunc, memory.Allocator) aggState { return &arrayAgg{} })
	}
	return nil, noFunction(name, args)
}

func isTextish(t types.T) bool { return t.IsString() }

// intArg reports whether a window function's integer argument (ntile's
// buckets, lag's offset, nth_value's n) may be of type t: an integer, or
// unknown (a NULL or a quoted literal, read as integer as PostgreSQL does).
func intArg(t types.T) bool { return t.IsInteger() || t.Kind == types.Unknown }

// ResolveWindow picks a window function (or an aggregate used as one).
func ResolveWindow(name string, args []types.T, star bool) (*WindowFunc, error) {
	name = strings.TrimPrefix(name, "pg_catalog.")
	w := &WindowFunc{Name: name, Args: args}
	switch name {
	case "row_number", "rank", "dense_rank", "percent_rank", "cume_dist":
		if len(args) != 0 || star {
			return nil, noFunction(name, args)
		}
		w.Return = types.TInt8
		if name == "percent_rank" || name == "cume_dist" {
			w.Return = types.TFloat8
		}
		return w, nil
	case "ntile":
		if len(args) != 1 || !intArg(args[0]) {
			return nil, noFunction(name, args)
		}
		w.Args, w.Return = []types.T{types.TInt4}, types.TInt4
		return w, nil
	case "lag", "lead":
		if len(args) < 1 || len(args) > 3 || (len(args) >= 2 && !intArg(args[1])) {
			return nil, noFunction(name, args)
		}
		t := plain(args[0])
		if len(args) == 3 {
			// lag(anycompatible, integer, anycompatible): value and
			// default share their common type.
			c, err := expr.CommonType([]types.T{args[0], args[2]}, name)
			if err != nil {
				return nil, noFunction(name, args)
			}
			t = plain(c)
		}
		w.Args = []types.T{t}
		if len(args) >= 2 {
			w.Args = append(w.Args, types.TInt4)
		}
		if len(args) == 3 {
			w.Args = append(w.Args, t)
		}
		w.Return = t
		return w, nil
	case "first_value", "last_value":
		if len(args) != 1 {
			return nil, noFunction(name, args)
		}
		w.Args, w.Return = []types.T{plain(args[0])}, plain(args[0])
		return w, nil
	case "nth_value":
		if len(args) != 2 || !intArg(args[1]) {
			return nil, noFunction(name, args)
		}
		w.Args, w.Return = []types.T{plain(args[0]), types.TInt4}, plain(args[0])
		return w, nil
	}
	if IsAggregate(name) {
		a, err := ResolveAggregate(name, args, star)
		if err != nil {
			return nil, err
		}
		w.Args, w.Return, w.Agg = a.Args, a.Return, a
		return w, nil
	}
	return nil, noFunction(name, args)
}

// NewSubPlan wraps a plan as an expr.SubPlan for scalar, EXISTS, IN/ANY/ALL
// and ARRAY subqueries. The plan's OuterRef expressions read ctx.Outer.
func NewSubPlan(n Node) expr.SubPlan { return &subPlan{n: n} }

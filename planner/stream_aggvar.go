package planner

import (
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// statAggs are the variance family. Over float4 and float8 they are
// streaming aggregates of their own (stream.AggVarSamp and the like);
// over integers and numeric lowerStat computes them exactly.
var statAggs = map[string]bool{
	"variance": true, "var_samp": true, "var_pop": true,
	"stddev": true, "stddev_samp": true, "stddev_pop": true,
}

// lowerStat lowers a variance-family call over integers or numeric to the
// count of its values, their sum and the sum of their squares, all exact
// and retractable (the squares of int2 and int4 as int8, of int8 and
// numeric as numeric), and finishes the value as PostgreSQL does
// (exec.NumericStatFunc). ok is false for other calls. DISTINCT is
// refused: the distinct squares are not the squares of the distinct
// values.
func lowerStat(call exec.AggCall) (specs []stream.AggSpec, final func([]expr.Expr) (expr.Expr, error), ok bool, err error) {
	name := call.Fn.Name
	if !statAggs[name] || len(call.Args) != 1 {
		return nil, nil, false, nil
	}
	x := call.Args[0]
	t := x.Type()
	if !t.IsInteger() && t.Kind != types.Numeric {
		return nil, nil, false, nil
	}
	if call.Distinct {
		return nil, nil, true, pgerr.Unsupported("%s(DISTINCT ...) over %s is not supported in streaming queries", name, t)
	}
	wide := types.TInt8
	if t.Kind == types.Int8 || t.Kind == types.Numeric {
		wide = types.TNumeric
	}
	xw, err := expr.NewCast(x, wide, true)
	if err != nil {
		return nil, nil, true, err
	}
	sq, err := expr.NewBinary("*", xw, xw)
	if err != nil {
		return nil, nil, true, err
	}
	specs = []stream.AggSpec{
		{Kind: stream.AggCount, Arg: x, Filter: call.Filter},
		{Kind: stream.AggSum, Arg: x, Filter: call.Filter},
		{Kind: stream.AggSum, Arg: sq, Filter: call.Filter},
	}
	fn := exec.NumericStatFunc(name)
	final = func(r []expr.Expr) (expr.Expr, error) {
		args := []expr.Expr{r[0], nil, nil}
		for i := 1; i < 3; i++ {
			c, err := expr.NewCast(r[i], types.TNumeric, true)
			if err != nil {
				return nil, err
			}
			args[i] = c
		}
		return &expr.Call{Fn: fn, Args: args}, nil
	}
	return specs, final, true, nil
}

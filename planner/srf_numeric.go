package planner

import (
	"github.com/cockroachdb/apd/v3"
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/membudget"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// numericSeries binds generate_series(numeric, numeric [, numeric]):
// start, start+step, ... while not past stop, each value exact (the
// scale of start or step, whichever is larger), refusing NaN and infinite
// bounds and a zero step as PostgreSQL does.
func (b *binder) numericSeries(fc *pg.FuncCall, args []expr.Expr) (*srfCall, error) {
	out := make([]expr.Expr, len(args))
	for i, a := range args {
		c, err := expr.Coerce(a, types.TNumeric, false)
		if err != nil {
			return nil, b.litErr(err, fc.Location, a)
		}
		out[i] = c
	}
	if len(out) == 2 {
		out = append(out, &expr.Const{V: apd.New(1, 0), T: types.TNumeric})
	}
	return &srfCall{name: "generate_series", args: out, t: types.TNumeric, expand: numericSeriesValues}, nil
}

// seriesCtx adds exactly: numeric values have at most 131072 digits
// before the point and 16383 after.
var seriesCtx = apd.BaseContext.WithPrecision(150000)

func numericSeriesValues(vs []types.Value) ([]types.Value, error) {
	if anyNull(vs) {
		return nil, nil
	}
	start, stop, step := vs[0].(*apd.Decimal), vs[1].(*apd.Decimal), vs[2].(*apd.Decimal)
	for _, c := range []struct {
		d    *apd.Decimal
		what string
	}{{start, "start value"}, {stop, "stop value"}, {step, "step size"}} {
		switch c.d.Form {
		case apd.NaN, apd.NaNSignaling:
			return nil, pgerr.New(pgerr.InvalidParameterValue, "%s cannot be NaN", c.what)
		case apd.Infinite:
			return nil, pgerr.New(pgerr.InvalidParameterValue, "%s cannot be infinity", c.what)
		}
	}
	if step.IsZero() {
		return nil, pgerr.New(pgerr.InvalidParameterValue, "step size cannot equal zero")
	}
	var out []types.Value
	cur := new(apd.Decimal).Set(start)
	for {
		cmp := cur.Cmp(stop)
		if step.Negative && cmp < 0 || !step.Negative && cmp > 0 {
			return out, nil
		}
		if len(out)%1024 == 0 {
			if err := membudget.AllocRequest(int64(1024 * (cur.NumDigits() + 32))); err != nil {
				return nil, err
			}
		}
		out = append(out, cur)
		next := new(apd.Decimal)
		if _, err := seriesCtx.Add(next, cur, step); err != nil {
			return nil, pgerr.New(pgerr.NumericValueOutOfRange, "value overflows numeric format")
		}
		cur = next
	}
}

package planner

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Set-returning functions: generate_series and unnest, in FROM or as a
// select-list item. Their arguments must not read columns (there is no
// LATERAL); they are evaluated when the plan is opened.

func isSRF(name string) bool { return name == "generate_series" || name == "unnest" }

// rangeFunction binds a function in FROM.
func (b *binder) rangeFunction(l *level, rf *pg.RangeFunction) (lnode, []*nsItem, error) {
	if rf.Lateral || rf.Ordinality || rf.IsRowsfrom || len(rf.Functions) != 1 || len(rf.Coldeflist) > 0 {
		return nil, nil, b.newErr(pgerr.FeatureNotSupported, -1, "this form of function in FROM is not supported")
	}
	items := rf.Functions[0].GetList().Items
	fc := items[0].GetFuncCall()
	if fc == nil {
		return nil, nil, b.newErr(pgerr.FeatureNotSupported, nodeLoc(items[0]), "only function calls are supported in FROM")
	}
	name := funcName(fc.Funcname)
	saved := l.clause
	l.clause = inFunc
	plan, err := b.srf(l, fc, name)
	l.clause = saved
	if err != nil {
		return nil, nil, err
	}
	alias := name
	if rf.Alias != nil {
		alias = rf.Alias.Aliasname
		// A function returning a scalar names its column after the alias.
		if len(rf.Alias.Colnames) == 0 {
			b.cols[plan.ids[0]].name = alias
		}
	}
	return b.aliased(plan, alias, rf.Alias)
}

// srf binds generate_series or unnest as a one-column lFunc.
func (b *binder) srf(l *level, fc *pg.FuncCall, name string) (*lFunc, error) {
	if !isSRF(name) {
		// Any other function in FROM yields its single value as one row.
		e, err := b.funcCall(l, fc)
		if err != nil {
			return nil, err
		}
		return b.constRows(name, e, fc.Location)
	}
	args, err := b.args(l, fc.Args)
	if err != nil {
		return nil, err
	}
	for _, a := range args {
		if len(refsOf(a)) > 0 {
			return nil, b.newErr(pgerr.FeatureNotSupported, fc.Location, "arguments of %s must not reference columns here", name)
		}
	}
	switch name {
	case "unnest":
		if len(args) != 1 {
			return nil, b.newErr(pgerr.UndefinedFunction, fc.Location, "function unnest(%s) does not exist", typeList(args))
		}
		a := args[0]
		if a.Type().Kind == types.Unknown {
			return nil, b.newErr(pgerr.IndeterminateDatatype, fc.Location, "could not determine polymorphic type because input has type unknown")
		}
		if a.Type().Kind != types.Array {
			return nil, b.newErr(pgerr.UndefinedFunction, fc.Location, "function unnest(%s) does not exist", typeList(args))
		}
		elem := *a.Type().Elem
		id := b.newCol(name, "", elem)
		return &lFunc{name: name, ids: []int{id}, args: args, produce: func(a []expr.Expr) func(*exec.Context) ([]arrow.RecordBatch, error) {
			return unnestFunc(a[0], elem)
		}}, nil
	}
	if len(args) < 2 || len(args) > 3 {
		return nil, b.newErr(pgerr.UndefinedFunction, fc.Location, "function generate_series(%s) does not exist", typeList(args))
	}
	t := args[0].Type()
	if t.Kind == types.Unknown {
		t = args[1].Type()
	}
	var step expr.Expr
	switch {
	case t.IsInteger() || t.Kind == types.Unknown:
		ct, err := expr.CommonType(argTypes(args), "generate_series")
		if err != nil || !(ct.IsInteger() || ct.Kind == types.Unknown) {
			return nil, b.newErr(pgerr.UndefinedFunction, fc.Location, "function generate_series(%s) does not exist", typeList(args))
		}
		t = types.TInt4
		if ct.Kind == types.Int8 {
			t = types.TInt8
		}
		for i := range args {
			if args[i], err = expr.Coerce(args[i], t, false); err != nil {
				return nil, b.errAt(err, fc.Location)
			}
		}
		step = &expr.Const{V: int64(1), T: t}
	case t.IsTimestamp():
		if len(args) != 3 {
			return nil, b.newErr(pgerr.UndefinedFunction, fc.Location, "function generate_series(%s) does not exist", typeList(args))
		}
		for i := 0; i < 2; i++ {
			if args[i], err = expr.Coerce(args[i], t, false); err != nil {
				return nil, b.errAt(err, fc.Location)
			}
		}
		if args[2], err = expr.Coerce(args[2], types.TInterval, false); err != nil {
			return nil, b.errAt(err, fc.Location)
		}
	default:
		return nil, b.newErr(pgerr.UndefinedFunction, fc.Location, "function generate_series(%s) does not exist", typeList(args))
	}
	if len(args) == 2 {
		args = append(args, step)
	}
	id := b.newCol(name, "", t)
	return &lFunc{name: name, ids: []int{id}, args: args, produce: func(a []expr.Expr) func(*exec.Context) ([]arrow.RecordBatch, error) {
		return seriesFunc(a[0], a[1], a[2], t)
	}}, nil
}

// constRows makes a one-row lFunc of a scalar function in FROM.
func (b *binder) constRows(name string, e expr.Expr, loc int32) (*lFunc, error) {
	if len(refsOf(e)) > 0 {
		return nil, b.newErr(pgerr.FeatureNotSupported, loc, "arguments of %s must not reference columns here", name)
	}
	t := e.Type()
	id := b.newCol(name, "", t)
	return &lFunc{name: name, ids: []int{id}, args: []expr.Expr{e}, produce: func(a []expr.Expr) func(*exec.Context) ([]arrow.RecordBatch, error) {
		return func(ctx *exec.Context) ([]arrow.RecordBatch, error) {
			v, err := evalConst(ctx, a[0])
			if err != nil {
				return nil, err
			}
			return oneColumn(ctx, t, []types.Value{v})
		}
	}}, nil
}

func hasOuter(e expr.Expr) bool {
	found := false
	walk(e, func(n expr.Expr) bool {
		if _, ok := n.(*expr.OuterRef); ok {
			found = true
		}
		return !found
	})
	return found
}

func typeList(args []expr.Expr) string {
	s := ""
	for i, a := range args {
		if i > 0 {
			s += ", "
		}
		s += a.Type().String()
	}
	return s
}

// evalConst evaluates a column-free expression once.
func evalConst(ctx *exec.Context, e expr.Expr) (types.Value, error) {
	var ec *expr.Context
	if ctx != nil {
		ec = ctx.Eval
	}
	if ec == nil {
		ec = &expr.Context{}
	}
	one := array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 1)
	defer one.Release()
	a, err := e.Eval(ec, one)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	return types.ValueAt(a, 0, e.Type()), nil
}

// oneColumn builds batches of one column from values.
func oneColumn(ctx *exec.Context, t types.T, vals []types.Value) ([]arrow.RecordBatch, error) {
	var ec *expr.Context
	if ctx != nil {
		ec = ctx.Eval
	}
	mem := ec.Allocator()
	schema := types.ArrowSchema([]types.Column{{Name: "v", Type: t}})
	size := ctx.Size()
	var out []arrow.RecordBatch
	for start := 0; start < len(vals); start += size {
		end := min(start+size, len(vals))
		bld := types.NewBuilder(mem, t)
		for _, v := range vals[start:end] {
			if err := types.AppendValue(bld, v, t); err != nil {
				bld.Release()
				return nil, err
			}
		}
		arr := bld.NewArray()
		bld.Release()
		out = append(out, array.NewRecordBatch(schema, []arrow.Array{arr}, int64(end-start)))
	}
	return out, nil
}

// maxSeries bounds generate_series so a typo cannot exhaust memory.
const maxSeries = 100_000_000

func seriesFunc(start, stop, step expr.Expr, t types.T) func(*exec.Context) ([]arrow.RecordBatch, error) {
	return func(ctx *exec.Context) ([]arrow.RecordBatch, error) {
		var vs [3]types.Value
		for i, e := range []expr.Expr{start, stop, step} {
			v, err := evalConst(ctx, e)
			if err != nil {
				return nil, err
			}
			if v == nil {
				return nil, nil // a NULL argument: no rows
			}
			vs[i] = v
		}
		var vals []types.Value
		if t.IsInteger() {
			a, z, s := vs[0].(int64), vs[1].(int64), vs[2].(int64)
			if s == 0 {
				return nil, pgerr.New(pgerr.InvalidParameterValue, "step size cannot equal zero")
			}
			for v := a; (s > 0 && v <= z) || (s < 0 && v >= z); v += s {
				if len(vals) >= maxSeries {
					return nil, pgerr.New(pgerr.ProgramLimitExceeded, "generate_series result is too large")
				}
				vals = append(vals, v)
				if (s > 0 && v > z-s) || (s < 0 && v < z-s) {
					break // the next step would pass the end (or overflow)
				}
			}
			return oneColumn(ctx, t, vals)
		}
		iv := vs[2].(types.IntervalValue)
		if iv.Months == 0 && iv.Days == 0 && iv.Micros == 0 {
			return nil, pgerr.New(pgerr.InvalidParameterValue, "step size cannot equal zero")
		}
		add, err := expr.NewBinary("+", &expr.ColRef{Idx: 0, T: t}, &expr.Const{V: iv, T: types.TInterval})
		if err != nil {
			return nil, err
		}
		stopV := vs[1].(types.TimestampValue)
		cur := vs[0].(types.TimestampValue)
		forward := iv.Months > 0 || iv.Days > 0 || iv.Micros > 0
		for (forward && cur <= stopV) || (!forward && cur >= stopV) {
			if len(vals) >= maxSeries {
				return nil, pgerr.New(pgerr.ProgramLimitExceeded, "generate_series result is too large")
			}
			vals = append(vals, cur)
			next, err := stepTimestamp(ctx, add, cur, t)
			if err != nil {
				return nil, err
			}
			cur = next
		}
		return oneColumn(ctx, t, vals)
	}
}

// stepTimestamp evaluates add (column 0 + interval) for one timestamp.
func stepTimestamp(ctx *exec.Context, add expr.Expr, cur types.TimestampValue, t types.T) (types.TimestampValue, error) {
	in, err := oneColumn(ctx, t, []types.Value{cur})
	if err != nil {
		return 0, err
	}
	defer in[0].Release()
	ec := ctx.Eval
	if ec == nil {
		ec = &expr.Context{}
	}
	a, err := add.Eval(ec, in[0])
	if err != nil {
		return 0, err
	}
	defer a.Release()
	v, _ := types.ValueAt(a, 0, t).(types.TimestampValue)
	return v, nil
}

func unnestFunc(arr expr.Expr, elem types.T) func(*exec.Context) ([]arrow.RecordBatch, error) {
	return func(ctx *exec.Context) ([]arrow.RecordBatch, error) {
		v, err := evalConst(ctx, arr)
		if err != nil || v == nil {
			return nil, err
		}
		vals, _ := v.([]types.Value)
		return oneColumn(ctx, elem, vals)
	}
}

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

// srfCall is a bound generate_series or unnest: its arguments and the
// function from their values to the rows it returns.
type srfCall struct {
	name   string
	args   []expr.Expr
	t      types.T
	expand func(args []types.Value) ([]types.Value, error)
}

// srf binds a function in FROM as a one-column lFunc.
func (b *binder) srf(l *level, fc *pg.FuncCall, name string) (*lFunc, error) {
	if !isSRF(name) {
		// Any other function in FROM yields its single value as one row.
		e, err := b.funcCall(l, fc)
		if err != nil {
			return nil, err
		}
		return b.constRows(name, e, fc.Location)
	}
	call, err := b.srfCall(l, fc, name)
	if err != nil {
		return nil, err
	}
	for _, a := range call.args {
		if len(refsOf(a)) > 0 {
			return nil, b.newErr(pgerr.FeatureNotSupported, fc.Location, "arguments of %s must not reference columns of the same FROM clause (LATERAL is not supported)", name)
		}
	}
	id := b.newCol(name, "", call.t)
	return &lFunc{name: name, ids: []int{id}, args: call.args, produce: func(a []expr.Expr) func(*exec.Context) ([]arrow.RecordBatch, error) {
		return func(ctx *exec.Context) ([]arrow.RecordBatch, error) {
			vals := make([]types.Value, len(a))
			for i, e := range a {
				v, err := evalConst(ctx, e)
				if err != nil {
					return nil, err
				}
				vals[i] = v
			}
			out, err := call.expand(vals)
			if err != nil {
				return nil, err
			}
			return oneColumn(ctx, call.t, out)
		}
	}}, nil
}

// srfCall binds the arguments of generate_series or unnest.
func (b *binder) srfCall(l *level, fc *pg.FuncCall, name string) (*srfCall, error) {
	args, err := b.args(l, fc.Args)
	if err != nil {
		return nil, err
	}
	if name == "unnest" {
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
		return &srfCall{name: name, args: args, t: *a.Type().Elem, expand: unnestValues}, nil
	}
	if len(args) < 2 || len(args) > 3 {
		return nil, b.newErr(pgerr.UndefinedFunction, fc.Location, "function generate_series(%s) does not exist", typeList(args))
	}
	t := args[0].Type()
	if t.Kind == types.Unknown {
		t = args[1].Type()
	}
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
		for i, a := range args {
			if args[i], err = expr.Coerce(a, t, false); err != nil {
				return nil, b.litErr(err, fc.Location, a)
			}
		}
		if len(args) == 2 {
			args = append(args, &expr.Const{V: int64(1), T: t})
		}
		return &srfCall{name: name, args: args, t: t, expand: intSeries}, nil
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
		add, err := expr.NewBinary("+", &expr.ColRef{Idx: 0, T: t}, &expr.ColRef{Idx: 1, T: types.TInterval})
		if err != nil {
			return nil, err
		}
		return &srfCall{name: name, args: args, t: t, expand: func(vs []types.Value) ([]types.Value, error) {
			return timestampSeries(vs, t, add)
		}}, nil
	}
	return nil, b.newErr(pgerr.UndefinedFunction, fc.Location, "function generate_series(%s) does not exist", typeList(args))
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

func anyNull(vs []types.Value) bool {
	for _, v := range vs {
		if v == nil {
			return true
		}
	}
	return false
}

// intSeries is generate_series(start, stop, step) over integers.
func intSeries(vs []types.Value) ([]types.Value, error) {
	if anyNull(vs) {
		return nil, nil
	}
	a, z, s := vs[0].(int64), vs[1].(int64), vs[2].(int64)
	if s == 0 {
		return nil, pgerr.New(pgerr.InvalidParameterValue, "step size cannot equal zero")
	}
	var vals []types.Value
	for v := a; (s > 0 && v <= z) || (s < 0 && v >= z); v += s {
		if len(vals) >= maxSeries {
			return nil, pgerr.New(pgerr.ProgramLimitExceeded, "generate_series result is too large")
		}
		vals = append(vals, v)
		if (s > 0 && v > z-s) || (s < 0 && v < z-s) {
			break // the next step would pass the end (or overflow)
		}
	}
	return vals, nil
}

// timestampSeries is generate_series(start, stop, step interval); add is
// column 0 + column 1 (timestamp + interval).
func timestampSeries(vs []types.Value, t types.T, add expr.Expr) ([]types.Value, error) {
	if anyNull(vs) {
		return nil, nil
	}
	iv := vs[2].(types.IntervalValue)
	if iv.Months == 0 && iv.Days == 0 && iv.Micros == 0 {
		return nil, pgerr.New(pgerr.InvalidParameterValue, "step size cannot equal zero")
	}
	stop := vs[1].(types.TimestampValue)
	cur := vs[0].(types.TimestampValue)
	forward := iv.Months > 0 || iv.Days > 0 || iv.Micros > 0
	schema := types.ArrowSchema([]types.Column{{Name: "t", Type: t}, {Name: "i", Type: types.TInterval}})
	var vals []types.Value
	for (forward && cur <= stop) || (!forward && cur >= stop) {
		if len(vals) >= maxSeries {
			return nil, pgerr.New(pgerr.ProgramLimitExceeded, "generate_series result is too large")
		}
		vals = append(vals, cur)
		next, err := evalRow(schema, add, []types.Value{cur, iv}, []types.T{t, types.TInterval})
		if err != nil {
			return nil, err
		}
		n, ok := next.(types.TimestampValue)
		if !ok {
			break
		}
		cur = n
	}
	return vals, nil
}

// evalRow evaluates e over one row of values.
func evalRow(schema *arrow.Schema, e expr.Expr, vals []types.Value, ts []types.T) (types.Value, error) {
	mem := (*expr.Context)(nil).Allocator()
	arrs := make([]arrow.Array, len(vals))
	for i, v := range vals {
		bld := types.NewBuilder(mem, ts[i])
		if err := types.AppendValue(bld, v, ts[i]); err != nil {
			bld.Release()
			return nil, err
		}
		arrs[i] = bld.NewArray()
		bld.Release()
	}
	rec := array.NewRecordBatch(schema, arrs, 1)
	defer rec.Release()
	a, err := e.Eval(&expr.Context{}, rec)
	if err != nil {
		return nil, err
	}
	defer a.Release()
	return types.ValueAt(a, 0, e.Type()), nil
}

// unnestValues is unnest(array).
func unnestValues(vs []types.Value) ([]types.Value, error) {
	if vs[0] == nil {
		return nil, nil
	}
	vals, _ := vs[0].([]types.Value)
	return vals, nil
}

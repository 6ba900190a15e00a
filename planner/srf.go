package planner

import (
	"strings"

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

func isSRF(name string) bool {
	switch name {
	case "generate_series", "unnest", "jsonb_array_elements", "jsonb_array_elements_text",
		"jsonb_object_keys", "jsonb_each", "jsonb_each_text",
		"json_array_elements", "json_array_elements_text", "json_object_keys", "json_each", "json_each_text",
		"_pg_expandarray", "information_schema._pg_expandarray", "pg_options_to_table", "generate_subscripts", "aclexplode",
		"pg_partition_ancestors", "regexp_matches", "regexp_split_to_table", "string_to_table":
		return true
	}
	return false
}

// rangeFunction binds a function in FROM.
func (b *binder) rangeFunction(l *level, rf *pg.RangeFunction) (lnode, []*nsItem, error) {
	// A function in FROM may read earlier FROM items with or without LATERAL
	// (PostgreSQL makes functions lateral anyway).
	if zipsFunctions(rf) {
		return b.rowsFrom(l, rf) // srf_rowsfrom.go
	}
	if rf.IsRowsfrom || len(rf.Functions) != 1 || len(rf.Coldeflist) > 0 {
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
	var plan lnode
	var ok bool
	var err error
	if !isSRF(name) { // built-in set-returning functions come first (pg_catalog)
		plan, ok, err = b.userSetFunction(l, fc, rf.Ordinality) // udf_set.go
	}
	if !ok && err == nil {
		plan, err = b.srf(l, fc, name, rf.Ordinality)
	}
	l.clause = saved
	if err != nil {
		return nil, nil, err
	}
	if ids := plan.outIDs(); len(ids) > 0 && b.cols[ids[0]].t.Kind == types.Record {
		// PostgreSQL needs AS t(a int, ...), which is not supported here
		return nil, nil, b.newErr(pgerr.SyntaxError, fc.Location, "a column definition list is required for functions returning \"record\"")
	}
	alias := name
	if rf.Alias != nil {
		alias = rf.Alias.Aliasname
		// A function returning a scalar names its column after the alias.
		ids := plan.outIDs()
		if len(rf.Alias.Colnames) == 0 && b.cols[ids[0]].name == name && (len(ids) == 1 || rf.Ordinality && len(ids) == 2) {
			b.cols[ids[0]].name = alias
		}
	}
	out, ns, err := b.aliased(plan, alias, rf.Alias)
	if err == nil && len(ns) == 1 && len(plan.outIDs()) == 1 {
		ns[0].scalar = true
	}
	return out, ns, err
}

// srfCall is a bound set-returning function: its arguments, its result
// columns, and the function from their values to the rows it returns.
type srfCall struct {
	name string
	args []expr.Expr
	t    types.T // the column type of a one-column function
	// expand returns the values of a one-column function.
	expand func(args []types.Value) ([]types.Value, error)
	// stream, when set, generates the values lazily (exec.SetFunc.Stream).
	stream func(args []types.Value) (func() (types.Value, bool, error), error)
	// streamCtx, when set, is stream with the statement's evaluation
	// context, used instead of expand and stream (exec.SetFunc.StreamCtx).
	streamCtx func(ec *expr.Context, args []types.Value) (func() (types.Value, bool, error), error)
	// cols and rows describe a function returning several columns (usable
	// in FROM only).
	cols []types.Column
	rows func(args []types.Value) ([][]types.Value, error)
}

// setFunc is c as a ProjectSet's function over args.
func (c *srfCall) setFunc(args []expr.Expr) exec.SetFunc {
	return exec.SetFunc{Name: c.name, Args: args, Expand: c.expand, Stream: c.stream, StreamCtx: c.streamCtx, Rows: c.rows, Width: len(c.cols)}
}

// rowsFunc produces a function's rows in FROM from its arguments' values,
// in the statement's evaluation context ec (nil: UTC and the defaults).
type rowsFunc func(ec *expr.Context, args []types.Value) ([][]types.Value, error)

// columns returns the result columns and a function producing rows.
func (c *srfCall) columns() ([]types.Column, rowsFunc) {
	cols := []types.Column{{Name: c.name, Type: c.t}}
	switch {
	case c.rows != nil:
		return c.cols, func(_ *expr.Context, args []types.Value) ([][]types.Value, error) { return c.rows(args) }
	case c.streamCtx != nil:
		return cols, func(ec *expr.Context, args []types.Value) ([][]types.Value, error) {
			gen, err := c.streamCtx(ec, args)
			if err != nil {
				return nil, err
			}
			var rows [][]types.Value
			for {
				v, ok, err := gen()
				if err != nil || !ok {
					return rows, err
				}
				if len(rows) >= maxSeries {
					return nil, pgerr.New(pgerr.ProgramLimitExceeded, "%s result is too large", c.name)
				}
				if len(rows)%4096 == 0 && ec != nil && ec.Ctx != nil && ec.Ctx.Err() != nil {
					return nil, pgerr.Canceled(ec.Ctx.Err()) // a long series stops at a cancel or statement_timeout
				}
				rows = append(rows, []types.Value{v})
			}
		}
	}
	return cols, func(_ *expr.Context, args []types.Value) ([][]types.Value, error) {
		vals, err := c.expand(args)
		rows := make([][]types.Value, len(vals))
		for i, v := range vals {
			rows[i] = []types.Value{v}
		}
		return rows, err
	}
}

// srf binds a function in FROM as an lFunc (with an ordinality column
// when asked).
func (b *binder) srf(l *level, fc *pg.FuncCall, name string, ordinality bool) (lnode, error) {
	if !isSRF(name) {
		// Any other function in FROM yields its single value as one row.
		e, err := b.funcCall(l, fc)
		if err != nil {
			return nil, err
		}
		f, err := b.constRows(name, e, fc.Location, ordinality)
		if err != nil {
			return nil, err
		}
		return f, nil
	}
	call, err := b.srfCall(l, fc, name)
	if err != nil {
		return nil, err
	}
	for _, a := range call.args {
		// In a continuous query a function of constants is planned as one
		// reading the items before it too (a ProjectSet over them): a
		// function scan alone is not a stream of changes.
		if len(refsOf(a)) > 0 || b.stream && call.rows == nil {
			// Reads earlier FROM items: joined by lateralJoin as a ProjectSet.
			f := &lLateralFunc{calls: []*srfCall{call}, ord: -1}
			if call.rows != nil {
				for _, c := range call.cols {
					f.ids = append(f.ids, b.newCol(c.Name, "", c.Type))
				}
			} else {
				f.ids = []int{b.newCol(name, "", call.t)}
			}
			if ordinality {
				f.ord = b.newCol("ordinality", "", types.TInt8)
			}
			f.fn = b.srfRows(call, name, ordinality, f.outIDs())
			return f, nil
		}
	}
	return b.srfRows(call, name, ordinality, nil), nil
}

// srfRows is the lFunc of a set-returning function call in FROM, its
// columns ids (new ones when nil).
func (b *binder) srfRows(call *srfCall, name string, ordinality bool, ids []int) *lFunc {
	cols, rows := call.columns()
	f := b.funcRowsIDs(name, call.args, cols, rows, ordinality, ids)
	f.srf, f.ordinality = call, ordinality
	if name == "generate_series" && call.t.IsInteger() {
		out := cols
		if ordinality {
			out = append(append([]types.Column(nil), cols...), types.Column{Name: "ordinality", Type: types.TInt8})
		}
		f.stream = func(a []expr.Expr) func(*exec.Context) (exec.Iterator, error) {
			return func(ctx *exec.Context) (exec.Iterator, error) { return intSeriesIter(ctx, out, a, ordinality) }
		}
	}
	return f
}

// intSeriesIter starts an integer generate_series in FROM: its values are
// made batch by batch, so a long series neither fills memory nor ignores
// cancellation.
func intSeriesIter(ctx *exec.Context, cols []types.Column, args []expr.Expr, ordinality bool) (exec.Iterator, error) {
	vals := []types.Value{nil, nil, int64(1)}
	for i, e := range args {
		v, err := evalConst(ctx, e)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	if anyNull(vals) {
		return exec.NewSliceIter(nil), nil
	}
	step := vals[2].(int64)
	if step == 0 {
		return nil, pgerr.New(pgerr.InvalidParameterValue, "step size cannot equal zero")
	}
	return exec.NewIntSeries(ctx, cols, vals[0].(int64), vals[1].(int64), step, ordinality), nil
}

// funcRows makes the lFunc of a function in FROM.
func (b *binder) funcRows(name string, args []expr.Expr, cols []types.Column, rows rowsFunc, ordinality bool) *lFunc {
	return b.funcRowsIDs(name, args, cols, rows, ordinality, nil)
}

// funcRowsIDs is funcRows with the columns' ids given (new ones when nil).
func (b *binder) funcRowsIDs(name string, args []expr.Expr, cols []types.Column, rows rowsFunc, ordinality bool, ids []int) *lFunc {
	if ordinality {
		cols = append(append([]types.Column(nil), cols...), types.Column{Name: "ordinality", Type: types.TInt8})
	}
	f := &lFunc{name: name, args: args, ids: ids}
	if ids == nil {
		for _, c := range cols {
			f.ids = append(f.ids, b.newCol(c.Name, "", c.Type))
		}
	}
	f.produce = func(a []expr.Expr) func(*exec.Context) ([]arrow.RecordBatch, error) {
		return func(ctx *exec.Context) ([]arrow.RecordBatch, error) {
			vals, err := evalConsts(ctx, a)
			if err != nil {
				return nil, err
			}
			var ec *expr.Context
			if ctx != nil {
				ec = ctx.Eval
			}
			out, err := rows(ec, vals)
			if err != nil {
				return nil, err
			}
			if ordinality {
				for i := range out {
					out[i] = append(out[i], int64(i+1))
				}
			}
			return rowBatches(ctx, cols, out)
		}
	}
	return f
}

// srfCall binds the arguments of generate_series or unnest.
func (b *binder) srfCall(l *level, fc *pg.FuncCall, name string) (*srfCall, error) {
	args, err := b.args(l, fc.Args)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(name, "jsonb_") || strings.HasPrefix(name, "json_") {
		return b.jsonSRF(fc, name, args)
	}
	if strings.HasSuffix(name, "_pg_expandarray") || name == "pg_options_to_table" || name == "generate_subscripts" || name == "aclexplode" || name == "pg_partition_ancestors" {
		return b.catalogSRF(fc, name, args)
	}
	if name == "regexp_matches" || name == "regexp_split_to_table" {
		return b.regexpSRF(fc, name, args)
	}
	if name == "string_to_table" {
		return b.stringToTable(fc, args)
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
		if err == nil && ct.Kind == types.Numeric {
			return b.numericSeries(fc, args)
		}
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
		return &srfCall{name: name, args: args, t: t, expand: intSeries, stream: intSeriesStream}, nil
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
		return &srfCall{name: name, args: args, t: t, streamCtx: func(ec *expr.Context, vs []types.Value) (func() (types.Value, bool, error), error) {
			return timestampSeries(ec, vs, t, add)
		}}, nil
	case t.Kind == types.Numeric:
		if ct, err := expr.CommonType(argTypes(args), "generate_series"); err == nil && ct.Kind == types.Numeric {
			return b.numericSeries(fc, args)
		}
	}
	return nil, b.newErr(pgerr.UndefinedFunction, fc.Location, "function generate_series(%s) does not exist", typeList(args))
}

// constRows makes a one-row lFunc of a scalar function in FROM.
func (b *binder) constRows(name string, e expr.Expr, loc int32, ordinality bool) (*lFunc, error) {
	if len(refsOf(e)) > 0 {
		return nil, b.newErr(pgerr.FeatureNotSupported, loc, "arguments of %s must not reference columns here", name)
	}
	cols := []types.Column{{Name: name, Type: e.Type()}}
	one := func(_ *expr.Context, vals []types.Value) ([][]types.Value, error) {
		return [][]types.Value{{vals[0]}}, nil
	}
	return b.funcRows(name, []expr.Expr{e}, cols, one, ordinality), nil
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

// evalConsts is evalConst of each of es.
func evalConsts(ctx *exec.Context, es []expr.Expr) ([]types.Value, error) {
	vals := make([]types.Value, len(es))
	for i, e := range es {
		v, err := evalConst(ctx, e)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	return vals, nil
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

// rowBatches builds batches from rows of values.
func rowBatches(ctx *exec.Context, cols []types.Column, rows [][]types.Value) ([]arrow.RecordBatch, error) {
	var ec *expr.Context
	if ctx != nil {
		ec = ctx.Eval
	}
	schema := types.ArrowSchema(cols)
	size := ctx.Size()
	var out []arrow.RecordBatch
	for start := 0; start < len(rows); start += size {
		end := min(start+size, len(rows))
		arrs := make([]arrow.Array, len(cols))
		for j, c := range cols {
			bld := types.NewBuilder(ec.Allocator(), c.Type)
			for _, row := range rows[start:end] {
				if err := types.AppendValue(bld, row[j], c.Type); err != nil {
					bld.Release()
					return nil, err
				}
			}
			arrs[j] = bld.NewArray()
			bld.Release()
		}
		out = append(out, array.NewRecordBatch(schema, arrs, int64(end-start)))
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

// intSeriesStream is intSeries generated one value at a time.
func intSeriesStream(vs []types.Value) (func() (types.Value, bool, error), error) {
	if anyNull(vs) {
		return func() (types.Value, bool, error) { return nil, false, nil }, nil
	}
	a, z, s := vs[0].(int64), vs[1].(int64), vs[2].(int64)
	if s == 0 {
		return nil, pgerr.New(pgerr.InvalidParameterValue, "step size cannot equal zero")
	}
	v, done := a, (s > 0 && a > z) || (s < 0 && a < z)
	return func() (types.Value, bool, error) {
		if done {
			return nil, false, nil
		}
		cur := v
		if (s > 0 && v > z-s) || (s < 0 && v < z-s) {
			done = true // the next step would pass the end (or overflow)
		} else {
			v += s
		}
		return cur, true, nil
	}, nil
}

// timestampSeries is generate_series(start, stop, step interval), one value
// at a time (its stop may be infinity); add is column 0 + column 1
// (timestamp + interval), evaluated in ec (a timestamptz steps days and
// months on the session's clock).
func timestampSeries(ec *expr.Context, vs []types.Value, t types.T, add expr.Expr) (func() (types.Value, bool, error), error) {
	if anyNull(vs) {
		return func() (types.Value, bool, error) { return nil, false, nil }, nil
	}
	iv := vs[2].(types.IntervalValue)
	if iv.Months == 0 && iv.Days == 0 && iv.Micros == 0 {
		return nil, pgerr.New(pgerr.InvalidParameterValue, "step size cannot equal zero")
	}
	stop := vs[1].(types.TimestampValue)
	cur := vs[0].(types.TimestampValue)
	forward := iv.Months > 0 || iv.Days > 0 || iv.Micros > 0
	schema := types.ArrowSchema([]types.Column{{Name: "t", Type: t}, {Name: "i", Type: types.TInterval}})
	done := false
	return func() (types.Value, bool, error) {
		if done || (forward && cur > stop) || (!forward && cur < stop) {
			return nil, false, nil
		}
		v := cur
		next, err := evalRow(ec, schema, add, []types.Value{cur, iv}, []types.T{t, types.TInterval})
		if err != nil {
			return nil, false, err
		}
		if n, ok := next.(types.TimestampValue); ok {
			cur = n
		} else {
			done = true
		}
		return v, true, nil
	}, nil
}

// evalRow evaluates e over one row of values, in ec (nil: UTC and the
// defaults).
func evalRow(ec *expr.Context, schema *arrow.Schema, e expr.Expr, vals []types.Value, ts []types.T) (types.Value, error) {
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
	if ec == nil {
		ec = &expr.Context{}
	}
	a, err := e.Eval(ec, rec)
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

// stringToTable binds string_to_table(text, delimiter [, null_string]):
// string_to_array's elements as rows (no rows for a NULL string).
func (b *binder) stringToTable(fc *pg.FuncCall, args []expr.Expr) (*srfCall, error) {
	if len(args) < 2 || len(args) > 3 {
		return nil, b.newErr(pgerr.UndefinedFunction, fc.Location, "function string_to_table(%s) does not exist", typeList(args))
	}
	out := make([]expr.Expr, len(args))
	for i, a := range args {
		c, err := expr.Coerce(a, types.TText, false)
		if err != nil {
			return nil, b.newErr(pgerr.UndefinedFunction, fc.Location, "function string_to_table(%s) does not exist", typeList(args))
		}
		out[i] = c
	}
	return &srfCall{name: "string_to_table", args: out, t: types.TText, expand: func(vs []types.Value) ([]types.Value, error) {
		if vs[0] == nil {
			return nil, nil
		}
		var null types.Value
		if len(vs) > 2 {
			null = vs[2]
		}
		return expr.StringToArray(vs[0].(string), vs[1], null), nil
	}}, nil
}

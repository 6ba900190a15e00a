package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// ROWS FROM (f(...), g(...)) and unnest(a, b, ...) in FROM: the set-
// returning functions run side by side, row k of the result holding row k
// of each (NULLs for a function that has fewer), their columns one after
// the other; unnest of several arrays is ROWS FROM of one unnest each, as
// PostgreSQL defines it. Built-in set-returning functions only. When their
// arguments read other FROM items (or in a continuous query), they join
// the items before them as one ProjectSet of the functions (lateral.go),
// whose lockstep with NULL padding is ROWS FROM's.

// zipsFunctions reports whether rf is such a FROM item.
func zipsFunctions(rf *pg.RangeFunction) bool {
	if rf.IsRowsfrom || len(rf.Functions) > 1 {
		return true
	}
	if len(rf.Functions) != 1 {
		return false
	}
	items := rf.Functions[0].GetList().Items
	fc := items[0].GetFuncCall()
	return fc != nil && funcName(fc.Funcname) == "unnest" && len(fc.Args) > 1
}

// rowsFrom binds a FROM item that zipsFunctions reports.
func (b *binder) rowsFrom(l *level, rf *pg.RangeFunction) (lnode, []*nsItem, error) {
	if len(rf.Coldeflist) > 0 {
		return nil, nil, b.newErr(pgerr.FeatureNotSupported, -1, "a column definition list is not supported in FROM")
	}
	var calls []*srfCall
	lateral := b.stream
	saved := l.clause
	l.clause = inFunc
	defer func() { l.clause = saved }()
	for _, f := range rf.Functions {
		items := f.GetList().Items
		fc := items[0].GetFuncCall()
		if fc == nil {
			return nil, nil, b.newErr(pgerr.FeatureNotSupported, nodeLoc(items[0]), "only function calls are supported in FROM")
		}
		if len(items) > 1 && items[1] != nil && len(items[1].GetList().GetItems()) > 0 {
			return nil, nil, b.newErr(pgerr.FeatureNotSupported, fc.Location, "a column definition list is not supported in ROWS FROM")
		}
		name := funcName(fc.Funcname)
		if !isSRF(name) {
			return nil, nil, b.newErr(pgerr.FeatureNotSupported, fc.Location, "ROWS FROM supports the built-in set-returning functions only, not %s", name)
		}
		parts := []*pg.FuncCall{fc}
		if name == "unnest" && len(fc.Args) > 1 {
			parts = parts[:0]
			for _, a := range fc.Args {
				parts = append(parts, &pg.FuncCall{Funcname: fc.Funcname, Args: []*pg.Node{a}, Location: fc.Location})
			}
		}
		for _, p := range parts {
			call, err := b.srfCall(l, p, name)
			if err != nil {
				return nil, nil, err
			}
			for _, a := range call.args {
				lateral = lateral || len(refsOf(a)) > 0
			}
			calls = append(calls, call)
		}
	}
	var cols []types.Column
	var args []expr.Expr
	type part struct {
		nargs int
		rows  rowsFunc
		width int
	}
	parts := make([]part, len(calls))
	for i, c := range calls {
		cs, rows := c.columns()
		cols = append(cols, cs...)
		args = append(args, c.args...)
		parts[i] = part{nargs: len(c.args), rows: rows, width: len(cs)}
	}
	zip := func(ec *expr.Context, vals []types.Value) ([][]types.Value, error) {
		each := make([][][]types.Value, len(parts))
		n := 0
		for i, p := range parts {
			r, err := p.rows(ec, vals[:p.nargs])
			if err != nil {
				return nil, err
			}
			vals = vals[p.nargs:]
			each[i] = r
			n = max(n, len(r))
		}
		out := make([][]types.Value, n)
		for k := range out {
			row := make([]types.Value, 0, len(cols))
			for i, p := range parts {
				if k < len(each[i]) {
					row = append(row, each[i][k]...)
				} else {
					row = append(row, make([]types.Value, p.width)...)
				}
			}
			out[k] = row
		}
		return out, nil
	}
	name := "rows_from"
	if len(rf.Functions) == 1 {
		name = calls[0].name
	}
	var plan lnode
	if lateral {
		f := &lLateralFunc{calls: calls, ord: -1}
		for _, c := range cols {
			f.ids = append(f.ids, b.newCol(c.Name, "", c.Type))
		}
		if rf.Ordinality {
			f.ord = b.newCol("ordinality", "", types.TInt8)
		}
		f.fn = b.funcRowsIDs(name, args, cols, zip, rf.Ordinality, f.outIDs())
		plan = f
	} else {
		plan = b.funcRows(name, args, cols, zip, rf.Ordinality)
	}
	alias := name
	if rf.Alias != nil {
		alias = rf.Alias.Aliasname
	}
	return b.aliased(plan, alias, rf.Alias)
}

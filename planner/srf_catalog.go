package planner

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Set-returning functions of the system catalog that client drivers call:
//
//   - information_schema._pg_expandarray(anyarray) -> (x, n): each element
//     with its 1-based position (pgjdbc's getPrimaryKeys and getIndexInfo);
//   - pg_options_to_table(text[]) -> (option_name, option_value): splits
//     "name=value" options (psql's \d of a foreign table, \det);
//   - generate_subscripts(anyarray, dim [, reverse]): the subscripts of a
//     dimension (SQLAlchemy's primary key reflection). Arrays here always
//     start at 1, also int2vector columns such as pg_index.indkey, which
//     start at 0 in PostgreSQL.
//
// There are no composite types. In FROM they return their columns; in a
// select list a field of one, (f(...)).n, is a one-column function. The
// whole record of _pg_expandarray in a select list is a bigint[] {x, n}
// whose type carries recordTypmod, so that a later (v).x or (v).n, also
// through a subquery column, reads its element; it prints as {x,n}, not as
// PostgreSQL's (x,n).

// recordTypmod marks the bigint[] standing for an _pg_expandarray record.
const recordTypmod = -7

// expandRecordType is the type of a whole _pg_expandarray record.
var expandRecordType = types.ArrayOf(types.TInt8).WithTypmod(recordTypmod)

// expandRecordFields are the fields of that record, in element order.
var expandRecordFields = []string{"x", "n"}

// catalogSRF binds the functions above; name is as funcName gives it.
func (b *binder) catalogSRF(fc *pg.FuncCall, name string, args []expr.Expr) (*srfCall, error) {
	short := name[strings.LastIndexByte(name, '.')+1:]
	if short == "generate_subscripts" {
		return b.subscriptsSRF(fc, args)
	}
	if short == "aclexplode" {
		return b.aclexplode(fc, args)
	}
	if short == "pg_partition_ancestors" { // no partitions: a table is its only ancestor (psql's \d "Referenced by")
		if len(args) != 1 {
			return nil, b.noFunc(fc, short, args)
		}
		a, err := expr.Coerce(args[0], types.TRegClass, false)
		if err != nil {
			return nil, b.noFunc(fc, short, args)
		}
		return &srfCall{name: short, args: []expr.Expr{a}, t: types.TRegClass,
			expand: func(vs []types.Value) ([]types.Value, error) {
				if vs[0] == nil {
					return nil, nil
				}
				return []types.Value{vs[0]}, nil
			}}, nil
	}
	if short == "pg_options_to_table" {
		if len(args) != 1 {
			return nil, b.noFunc(fc, short, args)
		}
		a, err := expr.Coerce(args[0], types.ArrayOf(types.TText), false)
		if err != nil {
			return nil, b.noFunc(fc, short, args)
		}
		return &srfCall{name: short, args: []expr.Expr{a},
			cols: []types.Column{{Name: "option_name", Type: types.TText}, {Name: "option_value", Type: types.TText}},
			rows: optionRows}, nil
	}
	if len(args) != 1 || args[0].Type().Kind != types.Array || !args[0].Type().Elem.IsInteger() && args[0].Type().Elem.Kind != types.Oid {
		return nil, b.noFunc(fc, name, args)
	}
	elem := *args[0].Type().Elem
	return &srfCall{name: short, args: args,
		cols: []types.Column{{Name: "x", Type: elem}, {Name: "n", Type: types.TInt4}},
		rows: func(vs []types.Value) ([][]types.Value, error) {
			elems, _ := vs[0].([]types.Value)
			out := make([][]types.Value, len(elems))
			for i, e := range elems {
				out[i] = []types.Value{e, int64(i + 1)}
			}
			return out, nil
		}}, nil
}

// aclexplode(aclitem[]) -> (grantor, grantee, privilege_type,
// is_grantable) over an ACL in its text form (pg_class.relacl), which the
// catalog parses (catalog.ExplodeACL).
func (b *binder) aclexplode(fc *pg.FuncCall, args []expr.Expr) (*srfCall, error) {
	if len(args) != 1 {
		return nil, b.noFunc(fc, "aclexplode", args)
	}
	a, err := expr.Coerce(args[0], types.ArrayOf(types.TText), false)
	if err != nil {
		return nil, b.noFunc(fc, "aclexplode", args)
	}
	type exploder interface {
		ExplodeACL(acl []types.Value, user string) ([][]types.Value, error)
	}
	var ex exploder
	if b.env != nil {
		ex, _ = b.env.Catalog.(exploder)
	}
	user := ""
	if b.env != nil && b.env.Eval != nil && b.env.Eval.Session != nil {
		user = b.env.Eval.Session.User()
	}
	return &srfCall{name: "aclexplode", args: []expr.Expr{a},
		cols: []types.Column{{Name: "grantor", Type: types.TOid}, {Name: "grantee", Type: types.TOid},
			{Name: "privilege_type", Type: types.TText}, {Name: "is_grantable", Type: types.TBool}},
		rows: func(vs []types.Value) ([][]types.Value, error) {
			elems, _ := vs[0].([]types.Value)
			if ex == nil || len(elems) == 0 {
				return nil, nil
			}
			return ex.ExplodeACL(elems, user)
		}}, nil
}

func (b *binder) noFunc(fc *pg.FuncCall, name string, args []expr.Expr) error {
	return b.newErr(pgerr.UndefinedFunction, fc.Location, "function %s(%s) does not exist", name, typeList(args)).(*pgerr.Error).
		WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
}

// optionRows splits each "name=value" element (a missing "=" gives a NULL
// value, as PostgreSQL's does).
func optionRows(vs []types.Value) ([][]types.Value, error) {
	elems, _ := vs[0].([]types.Value)
	out := make([][]types.Value, 0, len(elems))
	for _, e := range elems {
		s, ok := e.(string)
		if !ok {
			continue
		}
		name, value, found := strings.Cut(s, "=")
		var v types.Value
		if found {
			v = value
		}
		out = append(out, []types.Value{name, v})
	}
	return out, nil
}

// fieldSRF makes a one-column function of column field of a record
// function call, for (f(...)).field in a select list.
func fieldSRF(call *srfCall, field string) (*srfCall, bool) {
	for k, c := range call.cols {
		if c.Name != field {
			continue
		}
		rows := call.rows
		return &srfCall{name: call.name, args: call.args, t: c.Type, expand: func(vs []types.Value) ([]types.Value, error) {
			rs, err := rows(vs)
			out := make([]types.Value, len(rs))
			for i, r := range rs {
				out[i] = r[k]
			}
			return out, err
		}}, true
	}
	return nil, false
}

// recordSRF makes the one-column function returning an _pg_expandarray
// record whole, as expandRecordType; false for other functions.
func recordSRF(call *srfCall) (*srfCall, bool) {
	if call.name != "_pg_expandarray" {
		return nil, false
	}
	rows := call.rows
	return &srfCall{name: call.name, args: call.args, t: expandRecordType, expand: func(vs []types.Value) ([]types.Value, error) {
		rs, err := rows(vs)
		out := make([]types.Value, len(rs))
		for i, r := range rs {
			out[i] = []types.Value{asInt64(r[0]), r[1]}
		}
		return out, err
	}}, true
}

// recordField reads field of a whole _pg_expandarray record e; false when
// e is not one.
func recordField(e expr.Expr, field string) (expr.Expr, bool, error) {
	t := e.Type()
	if t.Kind != types.Array || t.Typmod != recordTypmod {
		return nil, false, nil
	}
	for k, f := range expandRecordFields {
		if f == field {
			s, err := expr.NewSubscript(e, &expr.Const{V: int64(k + 1), T: types.TInt4})
			return s, true, err
		}
	}
	return nil, true, pgerr.New(pgerr.UndefinedColumn, "could not identify column \"%s\" in record data type", field)
}

// asInt64 widens an integer or oid value (nil stays NULL).
func asInt64(v types.Value) types.Value {
	switch x := v.(type) {
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case int64:
		return x
	case uint32:
		return int64(x)
	}
	return nil
}

// srfField binds (f(...)).field in a select list, f a set-returning
// function with several columns, as a one-column function; false when ind
// is not of that form.
func (b *binder) srfField(l *level, ind *pg.A_Indirection) (expr.Expr, bool, error) {
	fc := ind.Arg.GetFuncCall()
	if fc == nil || len(ind.Indirection) != 1 || ind.Indirection[0].GetString_() == nil || fc.Over != nil {
		return nil, false, nil
	}
	name := funcName(fc.Funcname)
	if !isSRF(name) || l.clause != inSelect || l.inAgg || l.inWinArg {
		return nil, false, nil
	}
	call, err := b.srfCall(l, fc, name)
	if err != nil || call.rows == nil {
		return nil, err != nil, err
	}
	field := ind.Indirection[0].GetString_().Sval
	one, ok := fieldSRF(call, field)
	if !ok {
		return nil, true, b.newErr(pgerr.UndefinedColumn, fc.Location, "could not identify column \"%s\" in record data type", field)
	}
	id := b.newCol(field, "", one.t)
	l.srfs = append(l.srfs, srfItem{id: id, call: one})
	return b.colRef(id), true, nil
}

// subscriptsSRF binds generate_subscripts(array, dim [, reverse]).
func (b *binder) subscriptsSRF(fc *pg.FuncCall, args []expr.Expr) (*srfCall, error) {
	if len(args) < 2 || len(args) > 3 || args[0].Type().Kind != types.Array {
		return nil, b.noFunc(fc, "generate_subscripts", args)
	}
	want := []types.T{args[0].Type(), types.TInt4, types.TBool}
	for i := 1; i < len(args); i++ {
		a, err := expr.Coerce(args[i], want[i], false)
		if err != nil {
			return nil, b.noFunc(fc, "generate_subscripts", args)
		}
		args[i] = a
	}
	return &srfCall{name: "generate_subscripts", args: args, t: types.TInt4, expand: func(vs []types.Value) ([]types.Value, error) {
		dim, _ := vs[1].(int64)
		elems, _ := vs[0].([]types.Value)
		for d := int64(1); d < dim && len(elems) > 0; d++ { // a deeper dimension: the first element's length
			elems, _ = elems[0].([]types.Value)
		}
		if vs[0] == nil || dim < 1 || len(elems) == 0 {
			return nil, nil
		}
		reverse := len(vs) > 2 && vs[2] == true
		out := make([]types.Value, len(elems))
		for i := range elems {
			n := int64(i + 1)
			if reverse {
				n = int64(len(elems) - i)
			}
			out[i] = n
		}
		return out, nil
	}}, nil
}

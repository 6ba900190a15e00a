package catalog

import (
	"slices"
	"strconv"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// The pg_catalog functions that psql, JDBC and other clients call. They are
// registered into the expression registry by this package's init, so any
// binary that links the catalog has them. They reach the catalog through
// expr.Context.Catalog, which must be the *Catalog (the engine sets it);
// without one they answer as for an empty catalog.

func init() {
	oid, i4, i8, text, name, boolean := types.TOid, types.TInt4, types.TInt8, types.TText, types.TName, types.TBool
	regclass := types.TRegClass
	reg := func(n string, ret types.T, args []types.T, strict bool, fn func(ctx *expr.Context, a []types.Value) (types.Value, error)) {
		expr.Register(&expr.Func{Name: n, Args: args, Return: ret, Strict: strict, Kernel: expr.RowKernel(ret, args, fn)})
	}
	constant := func(v types.Value) func(*expr.Context, []types.Value) (types.Value, error) {
		return func(*expr.Context, []types.Value) (types.Value, error) { return v, nil }
	}
	ts := func(t ...types.T) []types.T { return t }

	reg("format_type", text, ts(oid, i4), false, formatTypeFn)
	reg("pg_table_is_visible", boolean, ts(oid), true, func(ctx *expr.Context, a []types.Value) (types.Value, error) {
		c := catalogOf(ctx)
		return c != nil && c.TableIsVisible(oidArg(a[0]), searchPathOf(ctx)), nil
	})
	reg("pg_type_is_visible", boolean, ts(oid), true, func(ctx *expr.Context, a []types.Value) (types.Value, error) {
		return typeIsVisible(ctx, oidArg(a[0])), nil
	})
	reg("pg_function_is_visible", boolean, ts(oid), true, func(ctx *expr.Context, a []types.Value) (types.Value, error) {
		if f := userFunctionOf(ctx, a[0]); f != nil {
			return userFunctionVisible(catalogOf(ctx), f, searchPathOf(ctx)), nil
		}
		return true, nil
	})
	getExpr := func(ctx *expr.Context, a []types.Value) (types.Value, error) { return a[0], nil } // adbin is the text itself
	reg("pg_get_expr", text, ts(text, oid), true, getExpr)
	reg("pg_get_expr", text, ts(text, oid, boolean), true, getExpr)
	reg("pg_get_userbyid", name, ts(oid), true, func(ctx *expr.Context, a []types.Value) (types.Value, error) {
		o := oidArg(a[0])
		if c := catalogOf(ctx); c != nil {
			if name, ok := c.roleName(o, sessionUser(ctx)); ok {
				return name, nil
			}
		} else if o == SuperuserOID {
			return sessionUser(ctx), nil
		}
		return userNameOf(o), nil
	})
	objDesc := func(ctx *expr.Context, a []types.Value) (types.Value, error) {
		return describe(ctx, oidArg(a[0]), 0), nil
	}
	reg("obj_description", text, ts(oid), true, objDesc)
	reg("obj_description", text, ts(oid, name), true, objDesc)
	reg("col_description", text, ts(oid, i4), true, func(ctx *expr.Context, a []types.Value) (types.Value, error) {
		return describe(ctx, oidArg(a[0]), int32(a[1].(int64))), nil
	})
	reg("shobj_description", text, ts(oid, name), true, constant(nil))
	viewDef := func(ctx *expr.Context, a []types.Value) (types.Value, error) {
		if c := catalogOf(ctx); c != nil {
			if q, ok := c.ViewDefinition(oidArg(a[0])); ok {
				return q, nil
			}
		}
		return nil, nil
	}
	reg("pg_get_viewdef", text, ts(oid), true, viewDef)
	reg("pg_get_viewdef", text, ts(oid, boolean), true, viewDef)
	// pg_get_viewdef(text): the name is read as regclass input is.
	viewDefByName := func(ctx *expr.Context, a []types.Value) (types.Value, error) {
		c := catalogOf(ctx)
		if c == nil {
			return nil, nil
		}
		o, err := c.RelationOID(a[0].(string), searchPathOf(ctx))
		if err != nil {
			return nil, err
		}
		return viewDef(ctx, []types.Value{int64(o)})
	}
	reg("pg_get_viewdef", text, ts(text), true, viewDefByName)
	reg("pg_get_viewdef", text, ts(text, boolean), true, viewDefByName)
	conDef := func(ctx *expr.Context, a []types.Value) (types.Value, error) {
		if r, k := indexOwner(ctx, oidArg(a[0])); r != nil {
			return constraintDef(r, k), nil
		}
		if c := catalogOf(ctx); c != nil { // CHECK and FOREIGN KEY (constraints_sys.go)
			pretty := len(a) > 1 && a[1] == true
			if def, ok := c.snap().constraintDefByOID(oidArg(a[0]), pretty, searchPathOf(ctx)); ok {
				return def, nil
			}
		}
		return nil, nil
	}
	reg("pg_get_constraintdef", text, ts(oid), true, conDef)
	reg("pg_get_constraintdef", text, ts(oid, boolean), true, conDef)
	reg("pg_get_indexdef", text, ts(oid), true, func(ctx *expr.Context, a []types.Value) (types.Value, error) {
		if r, k := indexOwner(ctx, oidArg(a[0])); r != nil {
			return indexDef(r, k, qualified(r)), nil
		}
		return nil, nil
	})
	reg("pg_get_indexdef", text, ts(oid, i4, boolean), true, func(ctx *expr.Context, a []types.Value) (types.Value, error) {
		r, k := indexOwner(ctx, oidArg(a[0]))
		if r == nil {
			return nil, nil
		}
		col := int(a[1].(int64))
		if col == 0 {
			table := qualified(r)
			if a[2].(bool) { // pretty: qualified only when not visible
				table = catalogOf(ctx).snap().displayName(r.OID, searchPathOf(ctx))
			}
			return indexDef(r, k, table), nil
		}
		if col > len(k.cols) || col < 0 {
			return "", nil
		}
		return QuoteIdent(r.Columns[k.cols[col-1]].Name), nil
	})
	reg("pg_get_partkeydef", text, ts(oid), true, constant(nil))
	reg("pg_get_statisticsobjdef_columns", text, ts(oid), true, constant(nil))
	// Objects streamsql does not have: triggers, rules,
	// partitions, tablespaces outside the data directory.
	reg("pg_get_triggerdef", text, ts(oid), true, constant(nil))
	reg("pg_get_triggerdef", text, ts(oid, boolean), true, constant(nil))
	reg("pg_get_ruledef", text, ts(oid), true, constant(nil))
	reg("pg_get_ruledef", text, ts(oid, boolean), true, constant(nil))
	reg("pg_get_functiondef", text, ts(oid), true, func(ctx *expr.Context, a []types.Value) (types.Value, error) {
		if f := userFunctionOf(ctx, a[0]); f != nil {
			return userFunctionDef(ctx, f), nil
		}
		return nil, nil
	})
	// prosqlbody is NULL: a SQL-standard body is kept in its AS form.
	reg("pg_get_function_sqlbody", text, ts(oid), true, constant(nil))
	reg("pg_get_partition_constraintdef", text, ts(oid), true, constant(nil))
	reg("pg_tablespace_location", text, ts(oid), true, constant(""))
	reg("pg_get_function_result", text, ts(oid), true, func(ctx *expr.Context, a []types.Value) (types.Value, error) {
		if p := procByOID(oidArg(a[0])); p != nil {
			return formatType(ctx, p.ret, -1, false), nil
		}
		if f := userFunctionOf(ctx, a[0]); f != nil {
			return userFunctionResult(ctx, f), nil
		}
		return nil, nil
	})
	reg("pg_get_function_arguments", text, ts(oid), true, functionArguments(true))
	reg("pg_get_function_identity_arguments", text, ts(oid), true, functionArguments(false))
	reg("pg_encoding_to_char", name, ts(i4), true, func(ctx *expr.Context, a []types.Value) (types.Value, error) {
		switch a[0].(int64) {
		case 0:
			return "SQL_ASCII", nil
		case 6:
			return "UTF8", nil
		}
		return "", nil
	})
	for _, n := range []string{"pg_relation_size", "pg_table_size", "pg_total_relation_size", "pg_indexes_size"} {
		n := n
		reg(n, i8, ts(regclass), true, func(ctx *expr.Context, a []types.Value) (types.Value, error) {
			return relationSize(ctx, oidArg(a[0]), n), nil
		})
	}
	dbSize := func(ctx *expr.Context, a []types.Value) (types.Value, error) {
		c := catalogOf(ctx)
		if c == nil {
			return int64(0), nil
		}
		var total int64
		for _, r := range c.Relations() {
			if n, ok := relationSize(ctx, r.OID, "pg_total_relation_size").(int64); ok {
				total += n
			}
		}
		return total, nil
	}
	reg("pg_database_size", i8, ts(name), true, dbSize)
	reg("pg_database_size", i8, ts(oid), true, dbSize)
	reg("pg_size_pretty", text, ts(i8), true, func(ctx *expr.Context, a []types.Value) (types.Value, error) {
		return sizePretty(a[0].(int64)), nil
	})
	reg("to_regclass", regclass, ts(text), true, func(ctx *expr.Context, a []types.Value) (types.Value, error) {
		if c := catalogOf(ctx); c != nil {
			if o, err := c.RelationOID(a[0].(string), searchPathOf(ctx)); err == nil {
				return int64(o), nil
			}
		}
		return nil, nil
	})
	reg("pg_relation_is_publishable", boolean, ts(regclass), true, func(ctx *expr.Context, a []types.Value) (types.Value, error) {
		c := catalogOf(ctx)
		if c == nil {
			return false, nil
		}
		r := c.Relation(oidArg(a[0]))
		return r != nil && r.Kind == KindTable, nil
	})
	// Privileges on objects that keep none (has_table_privilege,
	// has_sequence_privilege: acl_funcs.go;
	// pg_has_role: roles).
	for _, n := range []string{"has_schema_privilege", "has_database_privilege", "has_column_privilege",
		"has_function_privilege"} {
		reg(n, boolean, ts(text, text), true, constant(true))
		reg(n, boolean, ts(oid, text), true, constant(true))
		reg(n, boolean, ts(name, text, text), true, constant(true))
		reg(n, boolean, ts(name, oid, text), true, constant(true))
		reg(n, boolean, ts(oid, oid, text), true, constant(true))
	}
	reg("txid_current", i8, nil, false, constant(int64(0)))
	reg("pg_is_in_recovery", boolean, nil, false, constant(false))
}

// catalogOf returns the *Catalog behind ctx, or nil.
// userFunctionOf returns the user SQL function of OID v, or nil.
func userFunctionOf(ctx *expr.Context, v types.Value) *Function {
	if c := catalogOf(ctx); c != nil {
		return c.Function(oidArg(v))
	}
	return nil
}

func catalogOf(ctx *expr.Context) *Catalog {
	if ctx == nil {
		return nil
	}
	c, _ := ctx.Catalog.(*Catalog)
	return c
}

func searchPathOf(ctx *expr.Context) []string {
	if ctx == nil || ctx.Session == nil {
		return defaultSearchPath
	}
	return ctx.Session.SearchPath()
}

func sessionUser(ctx *expr.Context) string {
	if ctx == nil || ctx.Session == nil || ctx.Session.User() == "" {
		return SuperuserName
	}
	return ctx.Session.User()
}

// oidArg reads an oid-like argument (int64 in Go form).
func oidArg(v types.Value) uint32 {
	switch x := v.(type) {
	case int64:
		return uint32(x)
	case uint32:
		return x
	}
	return 0
}

func describe(ctx *expr.Context, oid uint32, sub int32) types.Value {
	if c := catalogOf(ctx); c != nil {
		if d, ok := c.ObjectDescription(oid, sub); ok {
			return d
		}
	}
	return nil
}

// indexOwner finds the table whose key index (and constraint) has oid, and
// the index.
func indexOwner(ctx *expr.Context, oid uint32) (*Relation, keyIndex) {
	if c := catalogOf(ctx); c != nil {
		if r := c.snap().indexes[oid]; r != nil {
			k, _ := r.keyIndex(oid)
			return r, k
		}
	}
	return nil, keyIndex{}
}

func typeIsVisible(ctx *expr.Context, oid uint32) bool {
	if _, ok := types.FromOID(oid); ok {
		return true // built-in types live in pg_catalog, always searched
	}
	c := catalogOf(ctx)
	if c == nil {
		return false
	}
	s := c.snap()
	for _, r := range s.byOID {
		if r.RowTypeOID == oid {
			return s.visible(r.OID, searchPathOf(ctx))
		}
	}
	if vis, ok := s.userTypeVisible(oid, searchPathOf(ctx)); ok { // usertype.go
		return vis
	}
	return false
}

func formatTypeFn(ctx *expr.Context, a []types.Value) (types.Value, error) {
	if a[0] == nil {
		return nil, nil
	}
	if a[1] == nil {
		return formatType(ctx, oidArg(a[0]), -1, false), nil
	}
	return formatType(ctx, oidArg(a[0]), int32(a[1].(int64)), true), nil
}

// formatType implements format_type(oid, typmod); typmodGiven is false for
// a NULL typmod.
func formatType(ctx *expr.Context, oid uint32, typmod int32, typmodGiven bool) string {
	return formatTypeOf(catalogOf(ctx), searchPathOf(ctx), oid, typmod, typmodGiven)
}

// formatTypeOf is formatType with an explicit catalog (nil: built-in types only).
func formatTypeOf(c *Catalog, searchPath []string, oid uint32, typmod int32, typmodGiven bool) string {
	t, ok := types.FromOID(oid)
	if !ok {
		if c != nil {
			s := c.snap()
			for _, r := range s.byOID {
				if r.RowTypeOID == oid {
					return s.displayName(r.OID, searchPath)
				}
			}
			if d := s.domains[oid]; d != nil { // domain.go
				if slices.Contains(searchPath, d.Schema) {
					return d.Name
				}
				return d.Schema + "." + d.Name
			}
			if n, ok := s.userTypeName(oid, searchPath); ok { // usertype.go
				return n
			}
		}
		return "???"
	}
	base := t
	if t.Kind == types.Array {
		base = *t.Elem
	}
	var out string
	switch {
	case base.Kind == types.Bpchar && typmod < 0 && typmodGiven:
		out = "bpchar"
	case base.Kind == types.Bpchar && typmod < 0:
		out = "character"
	case base.Kind == types.Interval || typmod < 0:
		out = base.WithTypmod(-1).String()
	default:
		out = base.WithTypmod(typmod).String()
	}
	if t.Kind == types.Array {
		out += "[]"
	}
	return out
}

// relationSize estimates a relation's size in bytes from its row count and
// column widths (streamsql's storage does not use PostgreSQL's pages).
func relationSize(ctx *expr.Context, oid uint32, fn string) types.Value {
	c := catalogOf(ctx)
	if c == nil {
		return nil
	}
	if owner := c.snap().indexes[oid]; owner != nil { // a primary key index
		return indexSize(c, owner)
	}
	r := c.Relation(oid)
	if r == nil {
		return nil
	}
	t := c.Table(oid)
	if t == nil {
		return int64(0)
	}
	switch fn {
	case "pg_indexes_size":
		return indexSize(c, r)
	case "pg_total_relation_size":
		return t.RowCount()*rowWidth(r.Columns, nil) + indexSize(c, r)
	}
	return t.RowCount() * rowWidth(r.Columns, nil)
}

// rowWidth estimates a stored row's bytes: a header and each column's
// width (32 for variable-length ones); keys, when not nil, picks columns.
func rowWidth(cols []Column, keys []int) int64 {
	width := int64(24) // a row header, as PostgreSQL's tuples have
	add := func(col Column) {
		if l := col.Type.Len(); l > 0 {
			width += int64(l)
		} else {
			width += 32
		}
	}
	if keys == nil {
		for _, col := range cols {
			add(col)
		}
	}
	for _, k := range keys {
		add(cols[k])
	}
	return width
}

// indexSize estimates the primary key index of r (0 without one).
func indexSize(c *Catalog, r *Relation) int64 {
	t := c.Table(r.OID)
	if r.PKIndexOID == 0 || t == nil {
		return 0
	}
	return t.RowCount() * rowWidth(r.Columns, r.PrimaryKey)
}

// sizePretty renders a byte count as pg_size_pretty does: bytes below 10 kB,
// then kB, MB, GB, TB and PB, each rounded half away from zero.
func sizePretty(size int64) string {
	const limit = 10 * 1024
	const limit2 = limit*2 - 1
	abs := func(x int64) int64 {
		if x < 0 {
			return -x
		}
		return x
	}
	half := func(x int64) int64 {
		if x < 0 {
			return (x - 1) / 2
		}
		return (x + 1) / 2
	}
	if abs(size) < limit {
		return strconv.FormatInt(size, 10) + " bytes"
	}
	size >>= 9 // keep one bit for rounding
	for _, unit := range []string{"kB", "MB", "GB", "TB"} {
		if abs(size) < limit2 {
			return strconv.FormatInt(half(size), 10) + " " + unit
		}
		size >>= 10
	}
	return strconv.FormatInt(half(size), 10) + " PB"
}

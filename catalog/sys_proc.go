package catalog

import (
	"slices"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// User SQL functions in pg_proc and in the pg_get_function* functions, so
// psql's \df and \sf, and drivers' metadata calls, list them beside the
// built-ins. The rows are derived from the snapshot's functions on every
// read (no state of their own).

// sqlLang is pg_language's OID of LANGUAGE sql.
const sqlLang uint32 = 14

// userProcRows adds a pg_proc row per user function of s, by OID.
func userProcRows(s *snapshot, b *rowBuilder) error {
	fns := make([]*Function, 0, len(s.funcs))
	for _, f := range s.funcs {
		fns = append(fns, f)
	}
	slices.SortFunc(fns, func(a, b *Function) int { return int(a.OID) - int(b.OID) })
	for _, f := range fns {
		args := make([]uint32, len(f.Args))
		names := make([]string, 0, len(f.Args)+len(f.Out))
		named := false
		for i, a := range f.Args {
			args[i] = a.Type.OID()
			names = append(names, a.Name)
			named = named || a.Name != ""
		}
		r := row{
			"oid": f.OID, "proname": f.Name, "pronamespace": s.schemaOID(f.Schema), "proowner": f.OwnerOID(),
			"prolang": f.langOID(), "procost": f.CostValue(), "prorows": f.RowsValue(), "provariadic": uint32(0),
			"prosupport": uint32(0), "prokind": "f", "prosecdef": false, "proleakproof": f.Leakproof,
			"proisstrict": f.Strict, "proretset": f.SetOf, "provolatile": string(rune(f.Volatility)), "proparallel": f.ParallelCode(),
			"pronargs": len(f.Args), "pronargdefaults": f.NDefaults(), "prorettype": f.ResultOID(), "proargtypes": args,
			"prosrc": f.Body,
		}
		if d := funcDefaults(f); d != "" {
			r["proargdefaults"] = d
		}
		if len(f.Out) > 0 && f.RowOf == 0 {
			all := slices.Clone(args)
			modes := make([]string, 0, len(f.Args)+len(f.Out))
			for range f.Args {
				modes = append(modes, "i")
			}
			for _, o := range f.Out {
				all = append(all, o.Type.OID())
				modes = append(modes, "t")
				names = append(names, o.Name)
			}
			r["proallargtypes"], r["proargmodes"] = all, modes
			named = true
		}
		if named {
			r["proargnames"] = names
		}
		if err := b.add(r); err != nil {
			return err
		}
	}
	return nil
}

// ResultOID is pg_proc.prorettype: the declared result type, or the row
// type of the table of RETURNS SETOF t.
func (f *Function) ResultOID() uint32 {
	if f.RowOf != 0 {
		return f.RowOf
	}
	return f.Return.OID()
}

// OwnerOID is the function's owner, the superuser for functions created
// before owners were kept (as Relation.OwnerOID).
func (f *Function) OwnerOID() uint32 {
	if f.Owner == 0 {
		return SuperuserOID
	}
	return f.Owner
}

// userFunctionResult renders a user function's result as
// pg_get_function_result does: "integer", "SETOF text", "TABLE(n bigint)".
func userFunctionResult(ctx *expr.Context, f *Function) string {
	if f.RowOf != 0 {
		return "SETOF " + formatType(ctx, f.RowOf, -1, false)
	}
	if len(f.Out) > 0 {
		return "TABLE(" + userFunctionParams(ctx, f.Out, false) + ")"
	}
	t := formatType(ctx, f.Return.OID(), -1, false)
	if f.SetOf {
		return "SETOF " + t
	}
	return t
}

// userFunctionParams renders parameters as pg_get_function_arguments does:
// "d integer, text, n integer DEFAULT 1" (pg_get_function_identity_arguments
// without the defaults: withDefaults false).
func userFunctionParams(ctx *expr.Context, ps []FuncArg, withDefaults bool) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = formatType(ctx, p.Type.OID(), -1, false)
		if p.Name != "" {
			out[i] = QuoteIdent(p.Name) + " " + out[i]
		}
		if withDefaults && p.Default != "" {
			out[i] += " DEFAULT " + shownFuncDefault(p)
		}
	}
	return strings.Join(out, ", ")
}

// shownFuncDefault is a parameter's DEFAULT as PostgreSQL prints it where
// it can tell (a literal with its cast, as a column default's), else as
// written.
func shownFuncDefault(p FuncArg) string {
	return shownDefault(Column{Type: p.Type, Default: p.Default})
}

// funcDefaults is pg_proc.proargdefaults: the defaults' texts in
// parentheses, "" when f has none. (PostgreSQL stores a node tree there,
// which clients read only through pg_get_function_arguments.)
func funcDefaults(f *Function) string {
	var ds []string
	for _, a := range f.Args {
		if a.Default != "" {
			ds = append(ds, shownFuncDefault(a))
		}
	}
	if len(ds) == 0 {
		return ""
	}
	return "(" + strings.Join(ds, " ") + ")"
}

// userFunctionDef renders a user function as pg_get_functiondef does
// (psql's \sf): CREATE OR REPLACE FUNCTION, RETURNS, LANGUAGE, the
// attributes that are not the defaults (volatility, PARALLEL, STRICT,
// LEAKPROOF, COST, ROWS), the body.
func userFunctionDef(ctx *expr.Context, f *Function) string {
	var sb strings.Builder
	sb.WriteString("CREATE OR REPLACE FUNCTION " + QuoteIdent(f.Schema) + "." + QuoteIdent(f.Name) +
		"(" + userFunctionParams(ctx, f.Args, true) + ")\n RETURNS " + userFunctionResult(ctx, f) + "\n LANGUAGE " + f.LanguageName() + "\n")
	var attrs []string
	switch f.Volatility {
	case 'i':
		attrs = append(attrs, "IMMUTABLE")
	case 's':
		attrs = append(attrs, "STABLE")
	}
	switch f.Parallel {
	case 's':
		attrs = append(attrs, "PARALLEL SAFE")
	case 'r':
		attrs = append(attrs, "PARALLEL RESTRICTED")
	}
	if f.Strict {
		attrs = append(attrs, "STRICT")
	}
	if f.Leakproof {
		attrs = append(attrs, "LEAKPROOF")
	}
	if c := f.CostValue(); c != 100 {
		attrs = append(attrs, "COST "+strconv.FormatFloat(float64(c), 'g', -1, 32))
	}
	if r := f.RowsValue(); f.SetOf && r != 1000 {
		attrs = append(attrs, "ROWS "+strconv.FormatFloat(float64(r), 'g', -1, 32))
	}
	if len(attrs) > 0 {
		sb.WriteString(" " + strings.Join(attrs, " ") + "\n")
	}
	sb.WriteString("AS $function$" + f.Body + "$function$\n")
	return sb.String()
}

// userFunctionVisible reports whether f is found by its bare name on the
// search path: its schema is on the path and no schema before it has a
// function of that name (pg_function_is_visible).
func userFunctionVisible(c *Catalog, f *Function, searchPath []string) bool {
	for _, g := range c.Functions("", f.Name, searchPath) {
		if g.OID == f.OID {
			return true
		}
	}
	return false
}

// builtinFunctionParams renders a built-in function's parameter types as
// pg_get_function_arguments does ("integer, text").
func builtinFunctionParams(ctx *expr.Context, p *pgProc) string {
	args := make([]string, len(p.args))
	for i, t := range p.args {
		args[i] = formatType(ctx, t, -1, false)
	}
	return strings.Join(args, ", ")
}

// functionArguments is pg_get_function_arguments (withDefaults) or
// pg_get_function_identity_arguments: a function's parameters by its OID,
// NULL for an unknown OID.
func functionArguments(withDefaults bool) func(ctx *expr.Context, a []types.Value) (types.Value, error) {
	return func(ctx *expr.Context, a []types.Value) (types.Value, error) {
		if p := procByOID(oidArg(a[0])); p != nil {
			return builtinFunctionParams(ctx, p), nil
		}
		if f := userFunctionOf(ctx, a[0]); f != nil {
			return userFunctionParams(ctx, f.Args, withDefaults), nil
		}
		return nil, nil
	}
}

// LanguageName is the function's language as CREATE FUNCTION names it.
func (f *Function) LanguageName() string {
	if f.Language == "" {
		return "sql"
	}
	return f.Language
}

// langOID is pg_proc.prolang.
func (f *Function) langOID() uint32 {
	if f.Language == "plpgsql" {
		return plpgsqlLangOID
	}
	return sqlLang
}

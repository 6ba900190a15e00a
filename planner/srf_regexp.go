package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// regexpSRF binds the set-returning regexp functions: regexp_matches (a
// text[] of the capture groups per match; every match with the g flag)
// and regexp_split_to_table (the pieces between matches). Both take
// (text, pattern [, flags]) and return no rows for a NULL argument.
func (b *binder) regexpSRF(fc *pg.FuncCall, name string, args []expr.Expr) (*srfCall, error) {
	if len(args) < 2 || len(args) > 3 {
		return nil, b.newErr(pgerr.UndefinedFunction, fc.Location, "function %s(%s) does not exist", name, typeList(args)).(*pgerr.Error).
			WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
	}
	out := make([]expr.Expr, len(args))
	for i, a := range args {
		c, err := expr.Coerce(a, types.TText, false)
		if err != nil || !c.Type().IsString() {
			return nil, b.newErr(pgerr.UndefinedFunction, fc.Location, "function %s(%s) does not exist", name, typeList(args)).(*pgerr.Error).
				WithHint("No function matches the given name and argument types. You might need to add explicit type casts.")
		}
		out[i] = c
	}
	strs := func(vs []types.Value) (s, pat, flags string, null bool) {
		for _, v := range vs {
			if v == nil {
				return "", "", "", true
			}
		}
		if len(vs) > 2 {
			flags = vs[2].(string)
		}
		return vs[0].(string), vs[1].(string), flags, false
	}
	c := &srfCall{name: name, args: out}
	if name == "regexp_matches" {
		c.t = types.ArrayOf(types.TText)
		c.expand = func(vs []types.Value) ([]types.Value, error) {
			s, pat, flags, null := strs(vs)
			if null {
				return nil, nil
			}
			return expr.RegexpMatches(s, pat, flags)
		}
		return c, nil
	}
	c.t = types.TText
	c.expand = func(vs []types.Value) ([]types.Value, error) {
		s, pat, flags, null := strs(vs)
		if null {
			return nil, nil
		}
		parts, err := expr.RegexpSplit(name, s, pat, flags)
		out := make([]types.Value, len(parts))
		for i, p := range parts {
			out[i] = p
		}
		return out, err
	}
	return c, nil
}

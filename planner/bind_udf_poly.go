package planner

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Polymorphic SQL functions. A SQL function's parameters and result may
// be declared with PostgreSQL's polymorphic pseudo-types: anyelement,
// anyarray and anynonarray, which a call resolves to one type T taken
// from its arguments as they are (every argument of the family must agree:
// anyelement's type is T, anyarray's T[], anynonarray's a T that is not an
// array), and anycompatible and anycompatiblearray, which resolve to the
// common type of their arguments (as CASE and UNION choose it), to which
// the arguments are then cast. A result of a polymorphic type takes the
// resolved type. The function is then inlined as any other (bind_udf.go),
// its body bound with the resolved types, so each call site may have its
// own. As in PostgreSQL, CREATE FUNCTION checks such a body only for
// syntax: its types are known at a call.

// polyTypes are the polymorphic pseudo-types by name.
var polyTypes = map[string]types.Kind{
	"anyelement": types.AnyElement, "anyarray": types.AnyArray, "anynonarray": types.AnyNonArray,
	"anycompatible": types.AnyCompatible, "anycompatiblearray": types.AnyCompatibleArray,
}

// BindSignatureType is BindType for a type in a function's signature,
// where the polymorphic pseudo-types are allowed too.
func BindSignatureType(tn *pg.TypeName) (types.T, error) {
	if t, ok := polyTypeName(tn); ok {
		return t, nil
	}
	return BindType(tn)
}

// polyTypeName recognises a polymorphic pseudo-type's name (optionally
// pg_catalog-qualified, without modifiers or array bounds).
func polyTypeName(tn *pg.TypeName) (types.T, bool) {
	if tn == nil || tn.Setof || tn.PctType || len(tn.Typmods) > 0 || len(tn.ArrayBounds) > 0 {
		return types.T{}, false
	}
	names := strs(tn.Names)
	if len(names) == 2 && names[0] != "pg_catalog" || len(names) > 2 || len(names) == 0 {
		return types.T{}, false
	}
	k, ok := polyTypes[strings.ToLower(names[len(names)-1])]
	if !ok {
		return types.T{}, false
	}
	return types.T{Kind: k, Typmod: -1}, true
}

// compatibleFamily reports the anycompatible family (else anyelement's).
func compatibleFamily(k types.Kind) bool {
	return k == types.AnyCompatible || k == types.AnyCompatibleArray
}

// checkPolyResult refuses, at CREATE FUNCTION, a polymorphic result that
// no argument can resolve (PostgreSQL's 42P13), and polymorphic set-
// returning functions, which are not supported.
func checkPolyResult(fn *catalog.Function) error {
	poly := false
	var family [2]bool // anyelement's, anycompatible's
	for _, a := range fn.Args {
		if a.Type.Polymorphic() {
			poly = true
			if compatibleFamily(a.Type.Kind) {
				family[1] = true
			} else {
				family[0] = true
			}
		}
	}
	for _, o := range fn.Out {
		if o.Type.Polymorphic() {
			return pgerr.Unsupported("polymorphic set-returning SQL functions are not supported")
		}
	}
	if fn.SetOf && poly {
		return pgerr.Unsupported("polymorphic set-returning SQL functions are not supported")
	}
	r := fn.Return
	if !r.Polymorphic() {
		return nil
	}
	if compatibleFamily(r.Kind) && !family[1] {
		return pgerr.New(codeInvalidFunctionDefinition, "cannot determine result data type").
			WithDetail("A result of type %s requires at least one input of type anycompatible, anycompatiblearray, anycompatiblenonarray, anycompatiblerange, or anycompatiblemultirange.", r)
	}
	if !compatibleFamily(r.Kind) && !family[0] {
		return pgerr.New(codeInvalidFunctionDefinition, "cannot determine result data type").
			WithDetail("A result of type %s requires at least one input of type anyelement, anyarray, anynonarray, anyenum, anyrange, or anymultirange.", r)
	}
	return nil
}

// polymorphic reports whether fn has a polymorphic parameter.
func polymorphic(fn *catalog.Function) bool {
	for _, a := range fn.Args {
		if a.Type.Polymorphic() {
			return true
		}
	}
	return false
}

// resolvePoly returns fn with its polymorphic types resolved by a call
// with args: ok is false when the arguments do not fit (another overload,
// or none: the function does not exist), err set when they fit but leave
// a type undetermined (PostgreSQL's 42804).
func resolvePoly(fn *catalog.Function, args []expr.Expr) (*catalog.Function, bool, error) {
	var elem *types.T // anyelement's type
	var compat []types.T
	sawUnknown := false
	for i, a := range fn.Args {
		at := args[i].Type()
		switch a.Type.Kind {
		case types.AnyElement, types.AnyNonArray, types.AnyArray:
			if at.Kind == types.Unknown {
				sawUnknown = true
				continue
			}
			t := at.WithTypmod(-1)
			if a.Type.Kind == types.AnyArray {
				if at.Kind != types.Array {
					return nil, false, nil
				}
				t = at.Elem.WithTypmod(-1)
			}
			if elem != nil && !elem.SameKind(t) {
				return nil, false, nil
			}
			elem = &t
		case types.AnyCompatible:
			compat = append(compat, at)
		case types.AnyCompatibleArray:
			if at.Kind == types.Unknown {
				continue
			}
			if at.Kind != types.Array {
				return nil, false, nil
			}
			compat = append(compat, *at.Elem)
		}
	}
	out := *fn
	out.Args = append([]catalog.FuncArg(nil), fn.Args...)
	if elem == nil && (sawUnknown || fn.Return.Polymorphic() && !compatibleFamily(fn.Return.Kind)) {
		return nil, true, pgerr.New(pgerr.DatatypeMismatch, "could not determine polymorphic type because input has type unknown")
	}
	var common types.T
	if len(compat) > 0 {
		var err error
		if common, err = expr.CommonType(compat, fn.Name); err != nil {
			return nil, false, nil
		}
		common = common.WithTypmod(-1)
	} else if fn.Return.Polymorphic() && compatibleFamily(fn.Return.Kind) {
		common = types.TText // every anycompatible argument an unknown literal, or none
	}
	resolve := func(t types.T) (types.T, bool) {
		switch t.Kind {
		case types.AnyElement:
			return *elem, true
		case types.AnyNonArray:
			return *elem, elem.Kind != types.Array
		case types.AnyArray:
			return types.ArrayOf(*elem), elem.Kind != types.Array
		case types.AnyCompatible:
			if common.Kind == types.Unknown {
				common = types.TText
			}
			return common, true
		case types.AnyCompatibleArray:
			if common.Kind == types.Unknown {
				common = types.TText
			}
			return types.ArrayOf(common), common.Kind != types.Array
		}
		return t, true
	}
	for i, a := range out.Args {
		t, ok := resolve(a.Type)
		if !ok {
			return nil, false, nil
		}
		out.Args[i].Type = t
	}
	var ok bool
	if out.Return, ok = resolve(fn.Return); !ok {
		return nil, true, pgerr.New(pgerr.UndefinedObject, "could not find array type for data type %s", *elem)
	}
	return &out, true, nil
}

package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// User-defined types (catalog/usertype.go) in binding: enums and composite
// types are ordinary types once resolved (an Enum T, a named Record T), so
// the binder only has to find them by name. Type names resolve to
// built-in types first, then to user types on the search path, then to
// domains. A view whose query names a user type records it in its deps,
// so that DROP TYPE refuses while the view exists.

// userTypeCatalog is the part of the catalog that keeps user types.
type userTypeCatalog interface {
	LookupUserType(schema, name string, searchPath []string) *catalog.UserType
}

// lookupUserType resolves a type name (possibly an array of it) to a
// user type.
func (b *binder) lookupUserType(tn *pg.TypeName) (types.T, bool) {
	if b.env == nil {
		return types.T{}, false
	}
	u := LookupUserType(b.env, tn)
	if u == nil {
		return types.T{}, false
	}
	if b.deps != nil {
		b.deps[u.OID] = true
	}
	t := u.T
	if len(tn.ArrayBounds) > 0 {
		t = types.ArrayOf(t)
	}
	return t, true
}

// LookupUserType returns the enum or composite type a type name names (an
// array of it too), or nil.
func LookupUserType(env *Env, tn *pg.TypeName) *catalog.UserType {
	if env == nil || tn == nil || len(tn.Typmods) > 0 || tn.Setof {
		return nil
	}
	uc, ok := env.Catalog.(userTypeCatalog)
	if !ok {
		return nil
	}
	names := strs(tn.Names)
	switch len(names) {
	case 1:
		return uc.LookupUserType("", names[0], env.SearchPath)
	case 2:
		return uc.LookupUserType(names[0], names[1], nil)
	}
	return nil
}

// bindAnyType resolves a type name to a built-in type or a user type.
func (b *binder) bindAnyType(tn *pg.TypeName) (types.T, error) {
	t, err := BindType(tn)
	if err == nil {
		return t, nil
	}
	if ut, ok := b.lookupUserType(tn); ok {
		return ut, nil
	}
	return t, err
}

// CompositeTypeDef binds CREATE TYPE name AS (field type, ...): the
// fields' names and types (built-in or user types; no domains, no
// constraints, no collations).
func CompositeTypeDef(env *Env, stmt *pg.CompositeTypeStmt) (names []string, ts []types.T, err error) {
	defer recoverTo(&err)
	b := newBinder(env)
	for _, n := range stmt.Coldeflist {
		cd := n.GetColumnDef()
		if cd == nil {
			return nil, nil, pgerr.Unsupported("this element of a composite type definition is not supported")
		}
		if len(cd.Constraints) > 0 || cd.CollClause != nil {
			return nil, nil, pgerr.Unsupported("constraints and COLLATE on the fields of a composite type are not supported")
		}
		t, err := b.bindAnyType(cd.TypeName)
		if err != nil {
			if b.lookupDomain(cd.TypeName) != nil {
				return nil, nil, pgerr.Unsupported("a field of a domain type in a composite type is not supported (field %s)", cd.Colname)
			}
			return nil, nil, b.errAt(err, cd.TypeName.Location)
		}
		names = append(names, cd.Colname)
		ts = append(ts, t)
	}
	return names, ts, nil
}

// recordStar expands (x).* in a select list into x's fields, as
// PostgreSQL does for a value of a composite type or a record of known
// shape; ok is false when ind is not such a star.
func (b *binder) recordStar(l *level, ind *pg.A_Indirection) ([]target, bool, error) {
	if ind == nil || len(ind.Indirection) == 0 || ind.Indirection[len(ind.Indirection)-1].GetAStar() == nil {
		return nil, false, nil
	}
	arg := ind.Arg
	if len(ind.Indirection) > 1 {
		arg = &pg.Node{Node: &pg.Node_AIndirection{AIndirection: &pg.A_Indirection{Arg: ind.Arg, Indirection: ind.Indirection[:len(ind.Indirection)-1]}}}
	}
	e, err := b.expr(l, arg)
	if err != nil {
		return nil, true, err
	}
	t := e.Type()
	if t.Kind != types.Record || t.Rec == nil {
		return nil, true, b.newErr(pgerr.DatatypeMismatch, nodeLoc(ind.Arg), "type %s is not composite", t)
	}
	out := make([]target, len(t.Rec.Names))
	for i, name := range t.Rec.Names {
		f, err := expr.NewFieldSelect(e, name)
		if err != nil {
			return nil, true, b.errAt(err, nodeLoc(ind.Arg))
		}
		out[i] = target{name: name, e: f, loc: nodeLoc(ind.Arg)}
	}
	return out, true, nil
}

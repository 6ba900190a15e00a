package engine

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/types"
)

// CREATE TYPE ... AS ENUM / AS (...), ALTER TYPE ... ADD VALUE / RENAME
// VALUE and DROP TYPE of them: the catalog keeps the types
// (catalog/usertype.go), the planner resolves their names
// (planner/usertype.go).

// userTypeCatalog is the part of the catalog that keeps user types.
type userTypeCatalog interface {
	CreateEnumType(schema, name string, labels []string, owner uint32) (*catalog.UserType, error)
	CreateCompositeType(schema, name string, names []string, ts []types.T, owner uint32) (*catalog.UserType, error)
	LookupUserType(schema, name string, searchPath []string) *catalog.UserType
	DropUserType(schema, name string, searchPath []string, missingOK, cascade bool) (*pgerr.Error, error)
	AddEnumValue(oid uint32, label, neighbor string, before, ifNotExists bool) (*pgerr.Error, error)
	RenameEnumValue(oid uint32, old, new string) error
}

func (s *Session) userTypeCatalog() (userTypeCatalog, error) {
	uc, ok := s.eng.cat.(userTypeCatalog)
	if !ok {
		return nil, pgerr.Unsupported("user-defined types are not supported by this catalog")
	}
	return uc, nil
}

// typeTarget splits a type's qualified name; a type is created in the
// first schema of the search path that is neither temporary nor
// pg_catalog unless named.
func (s *Session) typeTarget(names []string, creating bool) (schema, name string) {
	name = names[len(names)-1]
	if len(names) == 2 {
		return names[0], name
	}
	if creating {
		schema = "public"
		for _, sc := range s.set.searchPath() {
			if !strings.HasPrefix(sc, "pg_temp") && sc != "pg_catalog" {
				return sc, name
			}
		}
	}
	return schema, name
}

func nodeStrings(ns []*pg.Node) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.GetString_().GetSval()
	}
	return out
}

// execCreateEnum runs CREATE TYPE name AS ENUM ('a', ...).
func (s *Session) execCreateEnum(n *pg.CreateEnumStmt) (*Result, error) {
	uc, err := s.userTypeCatalog()
	if err != nil {
		return nil, err
	}
	schema, name := s.typeTarget(nodeStrings(n.TypeName), true)
	if _, err := uc.CreateEnumType(schema, name, nodeStrings(n.Vals), s.sessionOwner()); err != nil {
		return nil, err
	}
	return &Result{Tag: "CREATE TYPE"}, nil
}

// execCreateComposite runs CREATE TYPE name AS (field type, ...).
func (s *Session) execCreateComposite(env *planner.Env, n *pg.CompositeTypeStmt) (*Result, error) {
	uc, err := s.userTypeCatalog()
	if err != nil {
		return nil, err
	}
	names, ts, err := planner.CompositeTypeDef(env, n)
	if err != nil {
		return nil, err
	}
	rv := n.Typevar
	qn := []string{rv.Relname}
	if rv.Schemaname != "" {
		qn = []string{rv.Schemaname, rv.Relname}
	}
	schema, name := s.typeTarget(qn, true)
	if _, err := uc.CreateCompositeType(schema, name, names, ts, s.sessionOwner()); err != nil {
		return nil, err
	}
	return &Result{Tag: "CREATE TYPE"}, nil
}

// lookupOwnedType finds a user type by name for ALTER and DROP, owners only.
func (s *Session) lookupOwnedType(uc userTypeCatalog, names []string) (*catalog.UserType, error) {
	schema, name := s.typeTarget(names, false)
	u := uc.LookupUserType(schema, name, s.set.searchPath())
	if u == nil {
		return nil, pgerr.New(pgerr.UndefinedObject, "type \"%s\" does not exist", name)
	}
	if err := s.checkDomainOwner(&catalog.Domain{Name: u.Name, Owner: u.Owner}); err != nil { // domain.go
		return nil, err
	}
	return u, nil
}

// execAlterEnum runs ALTER TYPE name ADD VALUE [IF NOT EXISTS] 'x'
// [BEFORE|AFTER 'y'] and ALTER TYPE name RENAME VALUE 'x' TO 'y'.
func (s *Session) execAlterEnum(n *pg.AlterEnumStmt) (*Result, error) {
	uc, err := s.userTypeCatalog()
	if err != nil {
		return nil, err
	}
	u, err := s.lookupOwnedType(uc, nodeStrings(n.TypeName))
	if err != nil {
		return nil, err
	}
	if !u.Enum {
		return nil, pgerr.New(pgerr.WrongObjectType, "%s is not an enum", u.Name)
	}
	res := &Result{Tag: "ALTER TYPE"}
	if n.OldVal != "" {
		return res, uc.RenameEnumValue(u.OID, n.OldVal, n.NewVal)
	}
	skipped, err := uc.AddEnumValue(u.OID, n.NewVal, n.NewValNeighbor, !n.NewValIsAfter, n.SkipIfNewValExists)
	if err != nil {
		return nil, err
	}
	if skipped != nil {
		res.Notices = append(res.Notices, skipped)
	}
	return res, nil
}

// execDropType runs DROP TYPE: of enums and composite types here, of
// domains in execDropDomain (a statement naming both is refused).
func (s *Session) execDropType(d *pg.DropStmt) (*Result, error) {
	uc, err := s.userTypeCatalog()
	if err != nil {
		return s.execDropDomain(d, "DROP TYPE")
	}
	var users []*catalog.UserType
	var missing []string
	others := 0
	for _, o := range d.Objects {
		tn := o.GetTypeName()
		if tn == nil || len(tn.ArrayBounds) > 0 {
			return nil, pgerr.Unsupported("DROP TYPE of this object is not supported")
		}
		names := nodeStrings(tn.Names)
		schema, name := s.typeTarget(names, false)
		if uc.LookupUserType(schema, name, s.set.searchPath()) != nil {
			u, err := s.lookupOwnedType(uc, names)
			if err != nil {
				return nil, err
			}
			users = append(users, u)
			continue
		}
		if dc, err := s.domainCatalog(); err == nil && dc.LookupDomain(schema, name, s.set.searchPath()) != nil {
			others++
			continue
		}
		if _, err := planner.BindType(tn); err == nil {
			others++ // a built-in type
			continue
		}
		missing = append(missing, name)
	}
	if len(users) == 0 {
		return s.execDropDomain(d, "DROP TYPE")
	}
	if others > 0 {
		return nil, pgerr.Unsupported("DROP TYPE of an enum or composite type together with a domain or built-in type is not supported")
	}
	res := &Result{Tag: "DROP TYPE"}
	if len(missing) > 0 && !d.MissingOk {
		return nil, pgerr.New(pgerr.UndefinedObject, "type \"%s\" does not exist", missing[0])
	}
	for _, m := range missing {
		res.Notices = append(res.Notices, noticeOf("type \""+m+"\" does not exist, skipping"))
	}
	for _, u := range users {
		note, err := uc.DropUserType(u.Schema, u.Name, nil, false, d.Behavior == pg.DropBehavior_DROP_CASCADE)
		if err != nil {
			return nil, err
		}
		if note != nil {
			res.Notices = append(res.Notices, note)
		}
	}
	return res, nil
}

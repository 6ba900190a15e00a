package engine

import (
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/planner"
)

// CREATE DOMAIN and DROP DOMAIN (DROP TYPE of a domain): the planner binds
// the definition (planner.DomainDef), the catalog keeps it
// (catalog/domain.go), and the planner adds its checks where values
// become the domain's (planner/domain.go).

// domainCatalog is the part of the catalog that keeps domains.
type domainCatalog interface {
	CreateDomain(d catalog.Domain) (*catalog.Domain, error)
	LookupDomain(schema, name string, searchPath []string) *catalog.Domain
	DropDomain(schema, name string, searchPath []string, missingOK, cascade bool) (*pgerr.Error, error)
	AlterDomain(oid uint32, change func(d *catalog.Domain, usedBy string) error) (*catalog.Domain, error)
}

func (s *Session) domainCatalog() (domainCatalog, error) {
	dc, ok := s.eng.cat.(domainCatalog)
	if !ok {
		return nil, pgerr.Unsupported("domains are not supported by this catalog")
	}
	return dc, nil
}

// execCreateDomain runs CREATE DOMAIN; the domain is created in the first
// schema of the search path (not a temporary one) unless named, and owned
// by the current role.
func (s *Session) execCreateDomain(env *planner.Env, n *pg.CreateDomainStmt) (*Result, error) {
	dc, err := s.domainCatalog()
	if err != nil {
		return nil, err
	}
	d, err := planner.DomainDef(env, n)
	if err != nil {
		return nil, err
	}
	if d.Schema == "" {
		d.Schema = "public"
		for _, sc := range s.set.searchPath() {
			if !strings.HasPrefix(sc, "pg_temp") && sc != "pg_catalog" {
				d.Schema = sc
				break
			}
		}
	}
	d.Owner = s.sessionOwner()
	if _, err := dc.CreateDomain(*d); err != nil {
		return nil, err
	}
	return &Result{Tag: "CREATE DOMAIN"}, nil
}

// execDropDomain runs DROP DOMAIN and DROP TYPE (tag says which) of
// domains, owners only. A domain in use is not dropped (2BP01); CASCADE
// with dependents is refused.
func (s *Session) execDropDomain(d *pg.DropStmt, tag string) (*Result, error) {
	dc, err := s.domainCatalog()
	if err != nil {
		return nil, err
	}
	type target struct{ schema, name string }
	var targets []target
	for _, o := range d.Objects {
		tn := o.GetTypeName()
		if tn == nil || len(tn.ArrayBounds) > 0 {
			return nil, pgerr.Unsupported("%s of this object is not supported", tag)
		}
		var names []string
		for _, x := range tn.Names {
			names = append(names, x.GetString_().GetSval())
		}
		t := target{name: names[len(names)-1]}
		if len(names) == 2 {
			t.schema = names[0]
		}
		if dom := dc.LookupDomain(t.schema, t.name, s.set.searchPath()); dom != nil {
			if err := s.checkDomainOwner(dom); err != nil {
				return nil, err
			}
		} else if bt, err := planner.BindType(tn); err == nil && !d.MissingOk {
			if tag == "DROP DOMAIN" {
				return nil, pgerr.New(pgerr.WrongObjectType, "\"pg_catalog.%s\" is not a domain", bt.TypName())
			}
			return nil, pgerr.Unsupported("DROP TYPE of a built-in type is not supported")
		}
		targets = append(targets, t)
	}
	res := &Result{Tag: tag}
	for _, t := range targets {
		skipped, err := dc.DropDomain(t.schema, t.name, s.set.searchPath(), d.MissingOk, d.Behavior == pg.DropBehavior_DROP_CASCADE)
		if err != nil {
			return nil, err
		}
		if skipped != nil {
			res.Notices = append(res.Notices, skipped)
		}
	}
	return res, nil
}

// execAlterDomain runs ALTER DOMAIN d SET DEFAULT expr / DROP DEFAULT /
// DROP NOT NULL / DROP CONSTRAINT [IF EXISTS] c, and SET NOT NULL / ADD
// CHECK (...) while no column of the domain holds values to check (else
// refused by name; ADD ... NOT VALID, which checks new values only, is
// allowed then too). Owners only.
func (s *Session) execAlterDomain(env *planner.Env, n *pg.AlterDomainStmt) (*Result, error) {
	dc, err := s.domainCatalog()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, x := range n.TypeName {
		names = append(names, x.GetString_().GetSval())
	}
	schema, name := "", names[len(names)-1]
	if len(names) == 2 {
		schema = names[0]
	}
	d := dc.LookupDomain(schema, name, s.set.searchPath())
	if d == nil {
		return nil, pgerr.New(pgerr.UndefinedObject, "type \"%s\" does not exist", name)
	}
	if err := s.checkDomainOwner(d); err != nil {
		return nil, err
	}
	res := &Result{Tag: "ALTER DOMAIN"}
	var change func(x *catalog.Domain, usedBy string) error
	switch n.Subtype {
	case "T": // SET DEFAULT / DROP DEFAULT
		text, _, err := planner.AlterDomainDef(env, d, n.Def)
		if err != nil {
			return nil, err
		}
		change = func(x *catalog.Domain, _ string) error { x.Default = text; return nil }
	case "N": // DROP NOT NULL
		change = func(x *catalog.Domain, _ string) error { x.NotNull = false; return nil }
	case "O": // SET NOT NULL
		change = func(x *catalog.Domain, usedBy string) error {
			if usedBy != "" && !x.NotNull {
				return pgerr.Unsupported("ALTER DOMAIN ... SET NOT NULL on a domain in use is not supported (%s)", usedBy)
			}
			x.NotNull = true
			return nil
		}
	case "C": // ADD CONSTRAINT
		_, chk, err := planner.AlterDomainDef(env, d, n.Def)
		if err != nil {
			return nil, err
		}
		notValid := n.Def.GetConstraint().GetSkipValidation()
		change = func(x *catalog.Domain, usedBy string) error {
			if usedBy != "" && !notValid {
				return pgerr.Unsupported("ALTER DOMAIN ... ADD CONSTRAINT on a domain in use is not supported without NOT VALID (%s)", usedBy)
			}
			for _, c := range x.Checks {
				if c.Name == chk.Name {
					return pgerr.New(pgerr.DuplicateObject, "constraint \"%s\" for domain \"%s\" already exists", c.Name, x.Name)
				}
			}
			x.Checks = append(x.Checks, *chk)
			return nil
		}
	case "X": // DROP CONSTRAINT
		if n.Behavior == pg.DropBehavior_DROP_CASCADE {
			return nil, pgerr.Unsupported("ALTER DOMAIN ... DROP CONSTRAINT ... CASCADE is not supported")
		}
		change = func(x *catalog.Domain, _ string) error {
			for i, c := range x.Checks {
				if c.Name == n.Name {
					x.Checks = append(x.Checks[:i], x.Checks[i+1:]...)
					return nil
				}
			}
			if n.MissingOk {
				res.Notices = append(res.Notices, noticeOf(fmt.Sprintf("constraint \"%s\" of domain \"%s\" does not exist, skipping", n.Name, x.Name)))
				return nil
			}
			return pgerr.New(pgerr.UndefinedObject, "constraint \"%s\" of domain \"%s\" does not exist", n.Name, x.Name)
		}
	default:
		return nil, pgerr.Unsupported("this ALTER DOMAIN form is not supported")
	}
	if _, err := dc.AlterDomain(d.OID, change); err != nil {
		return nil, err
	}
	return res, nil
}

// refuseDomainColumns refuses domain-typed columns where rows arrive from
// a connector, which does not apply domain checks.
func refuseDomainColumns(rel *catalog.Relation, what string) error {
	for _, c := range rel.Columns {
		if c.Domain != 0 {
			return pgerr.Unsupported("columns of a domain type are not supported in %s (column \"%s\")", what, c.Name)
		}
	}
	return nil
}

// checkDomainOwner refuses DDL on a domain by a role that does not own it.
func (s *Session) checkDomainOwner(d *catalog.Domain) error {
	if s.actsAs(d.Owner) {
		return nil
	}
	return pgerr.New(pgerr.InsufficientPrivilege, "must be owner of type %s", d.Name)
}

// actsAs reports whether the session's role may act as role: it is a
// superuser, role itself or a member of it (an object's owner rights).
func (s *Session) actsAs(role uint32) bool {
	me := s.currentRole()
	if me.Superuser || me.OID == role {
		return true
	}
	rc, ok := s.eng.cat.(roleCatalog)
	return ok && me.OID != noRoleOID && rc.IsMemberOf(me.OID, role)
}

package engine

import (
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
	me := s.currentRole()
	if me.Superuser || me.OID == d.Owner {
		return nil
	}
	if rc, ok := s.eng.cat.(roleCatalog); ok && me.OID != noRoleOID && rc.IsMemberOf(me.OID, d.Owner) {
		return nil
	}
	return pgerr.New(pgerr.InsufficientPrivilege, "must be owner of type %s", d.Name)
}

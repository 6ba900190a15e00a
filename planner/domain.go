package planner

import (
	"fmt"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Domains (catalog/domain.go) in binding. A domain is its base type
// everywhere a value is read; where a value becomes the domain's, the
// binder wraps it in expr.DomainCheck: a cast to the domain (typeCast)
// and a write to a column of it (assign: INSERT, UPDATE, ON CONFLICT DO
// UPDATE, defaults; COPY FROM through DomainChecks). Type names resolve
// to built-in types first, then to domains on the search path, as
// pg_catalog comes first in PostgreSQL's.

// domainCatalog is the part of the catalog that keeps domains.
type domainCatalog interface {
	LookupDomain(schema, name string, searchPath []string) *catalog.Domain
	Domain(oid uint32) *catalog.Domain
}

// lookupDomain returns the domain a type name names, or nil (a built-in
// type, an array of a domain, modifiers, or no such domain).
func (b *binder) lookupDomain(tn *pg.TypeName) *catalog.Domain {
	if b.env == nil || tn == nil || len(tn.ArrayBounds) > 0 || len(tn.Typmods) > 0 || tn.Setof {
		return nil
	}
	dc, ok := b.env.Catalog.(domainCatalog)
	if !ok {
		return nil
	}
	names := strs(tn.Names)
	switch len(names) {
	case 1:
		return dc.LookupDomain("", names[0], b.env.SearchPath)
	case 2:
		return dc.LookupDomain(names[0], names[1], nil)
	}
	return nil
}

// columnType resolves a column definition's type: a built-in type, or a
// domain (its base type and OID).
func (b *binder) columnType(tn *pg.TypeName) (types.T, uint32, error) {
	t, err := BindType(tn)
	if err == nil {
		return t, 0, nil
	}
	if d := b.lookupDomain(tn); d != nil {
		return d.Base, d.OID, nil
	}
	if ut, ok := b.lookupUserType(tn); ok { // usertype.go
		return ut, 0, nil
	}
	return t, 0, err
}

// domainOf returns the domain of OID oid.
func (b *binder) domainOf(oid uint32) (*catalog.Domain, error) {
	if dc, ok := b.env.Catalog.(domainCatalog); ok {
		if d := dc.Domain(oid); d != nil {
			return d, nil
		}
	}
	return nil, pgerr.New(pgerr.UndefinedObject, "cache lookup failed for type %d", oid)
}

// domainCheck makes e (already of d's base type) a value of d. A view
// using it depends on d (DROP DOMAIN refuses).
func (b *binder) domainCheck(e expr.Expr, d *catalog.Domain) (expr.Expr, error) {
	checks, err := bindDomainChecks(b.env, d)
	if err != nil {
		return nil, err
	}
	b.deps[d.OID] = true
	out := &expr.DomainCheck{E: e, Domain: d.Name, NotNull: d.NotNull}
	for _, c := range d.Checks {
		out.CheckNames = append(out.CheckNames, c.Name)
	}
	out.Checks = checks
	return out, nil
}

// bindDomainChecks binds d's CHECK expressions over a batch whose column 0
// is VALUE.
func bindDomainChecks(env *Env, d *catalog.Domain) ([]expr.Expr, error) {
	out := make([]expr.Expr, 0, len(d.Checks))
	for _, c := range d.Checks {
		n := mustParseExpr(c.Expr)
		b := newBinder(&Env{Catalog: env.Catalog, SearchPath: env.SearchPath, Eval: env.Eval})
		e, id, err := b.bindCheck(n, d.Base)
		if err != nil {
			return nil, fmt.Errorf("domain %s: constraint %s: %w", d.Name, c.Name, err)
		}
		pe, err := (&physical{b: b}).expr(e, []int{id})
		if err != nil {
			return nil, err
		}
		out = append(out, pe)
	}
	return out, nil
}

// bindCheck binds a domain CHECK expression with VALUE a column of type
// base, returning it and VALUE's column id. It must be boolean and read
// no tables (no subqueries).
func (b *binder) bindCheck(n *pg.Node, base types.T) (expr.Expr, int, error) {
	id := b.newCol("value", "", base)
	l := &level{clause: inCheck, ns: []*nsItem{{cols: []nsCol{{name: "value", id: id}}, colsVisible: true}}}
	e, err := b.expr(l, n)
	if err != nil {
		return nil, 0, err
	}
	if hasSubquery(e) {
		return nil, 0, b.newErr(pgerr.FeatureNotSupported, nodeLoc(n), "cannot use subquery in check constraint")
	}
	e, err = b.boolArg(e, "CHECK", nodeLoc(n))
	return e, id, err
}

// DomainDef binds CREATE DOMAIN: the base type, NOT NULL / NULL, DEFAULT
// and CHECK constraints (named domain_check, domain_check1, ... when
// unnamed, as PostgreSQL names them). The result has no OID yet.
func DomainDef(env *Env, stmt *pg.CreateDomainStmt) (d *catalog.Domain, err error) {
	defer recoverTo(&err)
	b := newBinder(env)
	names := strs(stmt.Domainname)
	d = &catalog.Domain{Name: names[len(names)-1]}
	if len(names) == 2 {
		d.Schema = names[0]
	} else if len(names) > 2 {
		return nil, pgerr.New(pgerr.SyntaxError, "improper qualified name (too many dotted names): %s", joinDots(names))
	}
	if stmt.CollClause != nil {
		return nil, pgerr.Unsupported("COLLATE in CREATE DOMAIN is not supported")
	}
	if d.Base, err = b.bindAnyType(stmt.TypeName); err != nil { // an enum or composite type too (usertype.go)
		if b.lookupDomain(stmt.TypeName) != nil {
			return nil, b.newErr(pgerr.FeatureNotSupported, stmt.TypeName.Location, "a domain over a domain is not supported")
		}
		return nil, b.errAt(err, stmt.TypeName.Location)
	}
	var sawNull, sawNotNull bool
	used := map[string]bool{}
	for _, cn := range stmt.Constraints {
		c := cn.GetConstraint()
		if c == nil {
			return nil, pgerr.Unsupported("this CREATE DOMAIN constraint is not supported")
		}
		switch c.Contype {
		case pg.ConstrType_CONSTR_NOTNULL, pg.ConstrType_CONSTR_NULL:
			if c.Contype == pg.ConstrType_CONSTR_NOTNULL {
				sawNotNull = true
			} else {
				sawNull = true
			}
			if sawNull && sawNotNull {
				return nil, b.newErr(pgerr.SyntaxError, c.Location, "conflicting NULL/NOT NULL constraints")
			}
			d.NotNull = sawNotNull
		case pg.ConstrType_CONSTR_DEFAULT:
			if d.Default != "" {
				return nil, b.newErr(pgerr.SyntaxError, c.Location, "multiple default expressions")
			}
			if d.Default, err = b.columnDefault(c.RawExpr, catalog.Column{Name: d.Name, Type: d.Base}); err != nil {
				return nil, err
			}
		case pg.ConstrType_CONSTR_CHECK:
			if c.SkipValidation {
				return nil, pgerr.Unsupported("NOT VALID in CREATE DOMAIN is not supported")
			}
			chk, err := b.domainCheckDef(d, c, used)
			if err != nil {
				return nil, err
			}
			d.Checks = append(d.Checks, chk)
		case pg.ConstrType_CONSTR_UNIQUE:
			return nil, b.newErr(pgerr.SyntaxError, c.Location, "unique constraints not possible for domains")
		case pg.ConstrType_CONSTR_PRIMARY:
			return nil, b.newErr(pgerr.SyntaxError, c.Location, "primary key constraints not possible for domains")
		case pg.ConstrType_CONSTR_EXCLUSION:
			return nil, b.newErr(pgerr.SyntaxError, c.Location, "exclusion constraints not possible for domains")
		case pg.ConstrType_CONSTR_FOREIGN:
			return nil, b.newErr(pgerr.SyntaxError, c.Location, "foreign key constraints not possible for domains")
		default:
			return nil, pgerr.Unsupported("this CREATE DOMAIN constraint is not supported")
		}
	}
	return d, nil
}

// domainCheckDef binds a CHECK constraint of d; used holds the names
// taken (the new one is added).
func (b *binder) domainCheckDef(d *catalog.Domain, c *pg.Constraint, used map[string]bool) (catalog.DomainCheck, error) {
	if c.IsNoInherit {
		return catalog.DomainCheck{}, b.newErr(pgerr.InvalidObjectDefinition, c.Location, "check constraints for domains cannot be marked NO INHERIT")
	}
	if _, _, err := b.bindCheck(c.RawExpr, d.Base); err != nil {
		return catalog.DomainCheck{}, err
	}
	text, err := deparseExpr(c.RawExpr)
	if err != nil {
		return catalog.DomainCheck{}, err
	}
	name := c.Conname
	if name == "" {
		name = d.Name + "_check"
		for i := 1; used[name]; i++ {
			name = fmt.Sprintf("%s_check%d", d.Name, i)
		}
	} else if used[name] {
		return catalog.DomainCheck{}, pgerr.New(pgerr.DuplicateObject, "constraint \"%s\" for domain \"%s\" already exists", name, d.Name)
	}
	used[name] = true
	return catalog.DomainCheck{Name: name, Expr: text}, nil
}

// AlterDomainDef binds what ALTER DOMAIN adds to d: a DEFAULT (text; ""
// with DROP DEFAULT) or a CHECK constraint.
func AlterDomainDef(env *Env, d *catalog.Domain, def *pg.Node) (defText string, chk *catalog.DomainCheck, err error) {
	defer recoverTo(&err)
	b := newBinder(env)
	if def == nil {
		return "", nil, nil
	}
	c := def.GetConstraint()
	if c == nil { // SET DEFAULT expr
		text, err := b.columnDefault(def, catalog.Column{Name: d.Name, Type: d.Base})
		return text, nil, err
	}
	if c.Contype != pg.ConstrType_CONSTR_CHECK {
		return "", nil, pgerr.Unsupported("ALTER DOMAIN ... ADD of this constraint type is not supported")
	}
	used := map[string]bool{}
	for _, x := range d.Checks {
		used[x.Name] = true
	}
	out, err := b.domainCheckDef(d, c, used)
	return "", &out, err
}

// refuseDomainType turns err, tn's failed resolution as a built-in type,
// into a refusal naming the domain when tn names one (where domains are
// not supported: SQL function signatures).
func refuseDomainType(env *Env, tn *pg.TypeName, err error) error {
	if d := newBinder(env).lookupDomain(tn); d != nil {
		return pgerr.Unsupported("domain %s as a function's parameter or result type is not supported", d.Name)
	}
	if u := LookupUserType(env, tn); u != nil { // usertype.go
		return pgerr.Unsupported("type %s as a function's parameter or result type is not supported", u.Name)
	}
	if rel := rowTypeRelation(env, tn); rel != nil { // bind_udf.go
		return pgerr.Unsupported("the row type of %s as a function's parameter or result type is not supported (RETURNS SETOF %s is)", rel.Name, rel.Name)
	}
	return err
}

// DomainChecks returns, for each column of rel, the check of its domain
// over a batch whose column 0 is the column's value (nil for columns of
// no domain, and nil when no column has one): what COPY FROM applies to
// the rows it loads.
func DomainChecks(env *Env, rel *catalog.Relation) (out []expr.Expr, err error) {
	defer recoverTo(&err)
	b := newBinder(env)
	for i, c := range rel.Columns {
		if c.Domain == 0 {
			continue
		}
		d, err := b.domainOf(c.Domain)
		if err != nil {
			return nil, err
		}
		e, err := b.domainCheck(&expr.ColRef{Idx: 0, T: c.Type, Name: c.Name}, d)
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = make([]expr.Expr, len(rel.Columns))
		}
		out[i] = e
	}
	return out, nil
}

func joinDots(names []string) string {
	s := ""
	for i, n := range names {
		if i > 0 {
			s += "."
		}
		s += n
	}
	return s
}

package engine

import (
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/planner"
)

// Object privileges (catalog/acl.go holds the rules): GRANT and REVOKE of
// table privileges, ALTER ... OWNER TO, and the checks statements make.
// A superuser session (and a trust-mode session whose user is not a
// stored role, which acts as the bootstrap superuser) makes no checks.
// Relations are checked when a statement is planned; a plan cached by a
// prepared statement is planned again after any GRANT, REVOKE or owner
// change, since each publishes a new catalog version.

// privCatalog is the part of *catalog.Catalog that privileges use.
type privCatalog interface {
	HasPrivilege(role uint32, rel *catalog.Relation, priv catalog.Privilege) bool
	HasAnyPrivilege(role uint32, rel *catalog.Relation, priv catalog.Privilege) bool
	IsOwner(role uint32, rel *catalog.Relation) bool
	Grant(spec catalog.GrantSpec) ([]*pgerr.Error, error)
	SetOwner(oid, owner uint32) (*catalog.Relation, error)
	CheckOwnerChange(actor uint32, rel *catalog.Relation, newOwner uint32, newOwnerName string) error
}

// checker is the privilege check of one statement: nil when the session
// is a superuser or the catalog keeps no privileges (nothing is checked).
type checker struct {
	pc   privCatalog
	role uint32
}

// privChecker returns the session's checker (nil: no checks).
func (s *Session) privChecker() *checker {
	pc, ok := s.eng.cat.(privCatalog)
	if !ok {
		return nil
	}
	r := s.currentRole()
	if r.Superuser {
		return nil
	}
	return &checker{pc: pc, role: r.OID}
}

// sessionOwner is the owner a relation the session creates gets.
func (s *Session) sessionOwner() uint32 {
	if r := s.currentRole(); r.OID != 0 {
		return r.OID
	}
	return catalog.SuperuserOID
}

// access is planner.Env.Access.
func (c *checker) access(role uint32, rel *catalog.Relation, priv catalog.Privilege) error {
	if c.pc.HasPrivilege(role, rel, priv) {
		return nil
	}
	return catalog.PermissionDenied(rel)
}

// withAccess makes env check privileges as the session's role.
func (s *Session) withAccess(env *planner.Env) *planner.Env {
	if c := s.privChecker(); c != nil {
		env.Access, env.Role = c.access, c.role
	}
	return env
}

// checkPriv checks that the session holds priv on rel.
func (s *Session) checkPriv(rel *catalog.Relation, priv catalog.Privilege) error {
	if c := s.privChecker(); c != nil {
		return c.access(c.role, rel, priv)
	}
	return nil
}

// checkOwner checks that the session may run DDL on rel: 42501 `must be
// owner of table t` unless it owns it or is a superuser.
func (s *Session) checkOwner(rel *catalog.Relation) error {
	if c := s.privChecker(); c != nil && !c.pc.IsOwner(c.role, rel) {
		return catalog.MustBeOwner(rel)
	}
	return nil
}

// checkRelationOwner is checkOwner saying `must be owner of relation t`,
// as PostgreSQL does for a column's comment.
func (s *Session) checkRelationOwner(rel *catalog.Relation) error {
	if err := s.checkOwner(rel); err != nil {
		return pgerr.New(pgerr.InsufficientPrivilege, "must be owner of relation %s", rel.Name)
	}
	return nil
}

// checkOwnerByName resolves a relation a DDL statement names and checks
// ownership; a missing relation or one of another kind is left to the
// statement to report.
func (s *Session) checkOwnerByName(schema, name string, kinds ...catalog.RelKind) error {
	if s.privChecker() == nil {
		return nil
	}
	rel, err := s.eng.cat.Resolve(schema, name, s.set.searchPath())
	if err != nil || rel == nil {
		return nil
	}
	for _, k := range kinds {
		if rel.Kind == k {
			return s.checkOwner(rel)
		}
	}
	return nil
}

// checkSchemaOwner guards DROP SCHEMA. Schemas keep no owner here, so a
// non-superuser may drop one only if it owns every relation in it (with
// CASCADE it would drop them all): otherwise 42501 `must be owner of
// schema s`, PostgreSQL's message.
func (s *Session) checkSchemaOwner(schema string) error {
	c := s.privChecker()
	if c == nil {
		return nil
	}
	for _, r := range s.eng.cat.Relations() {
		if r.Schema == schema && r.Kind != catalog.KindSystem && !c.pc.IsOwner(c.role, r) {
			return pgerr.New(pgerr.InsufficientPrivilege, "must be owner of schema %s", schema)
		}
	}
	if schema == "public" || schema == "pg_catalog" || schema == "information_schema" {
		return pgerr.New(pgerr.InsufficientPrivilege, "must be owner of schema %s", schema)
	}
	return nil
}

// grantee resolves a GRANT's role specification to a role OID.
func (s *Session) grantee(rs *pg.RoleSpec) (uint32, error) {
	if rs.GetRoletype() == pg.RoleSpecType_ROLESPEC_PUBLIC {
		return catalog.PublicRoleOID, nil
	}
	name, err := s.roleSpecName(rs)
	if err != nil {
		return 0, err
	}
	rc, err := s.roles()
	if err != nil {
		return 0, err
	}
	r, ok := rc.LookupRole(name, s.user)
	if !ok {
		return 0, pgerr.New(pgerr.UndefinedObject, "role \"%s\" does not exist", name)
	}
	return r.OID, nil
}

// execGrant runs GRANT and REVOKE of privileges on tables, views,
// materialized views, sources and sequences; other objects are refused by
// name.
func (s *Session) execGrant(n *pg.GrantStmt) (*Result, error) {
	verb, tag := "GRANT", "GRANT"
	if !n.IsGrant {
		verb, tag = "REVOKE", "REVOKE"
	}
	if n.Targtype == pg.GrantTargetType_ACL_TARGET_DEFAULTS {
		return nil, pgerr.Unsupported("ALTER DEFAULT PRIVILEGES is not supported")
	}
	if n.Objtype != pg.ObjectType_OBJECT_TABLE && n.Objtype != pg.ObjectType_OBJECT_SEQUENCE {
		what := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(n.Objtype.String(), "OBJECT_"), "_", " "))
		return nil, pgerr.Unsupported("%s on %s objects is not supported: only privileges on tables, views, materialized views, sources and sequences exist", verb, what)
	}
	if n.Grantor != nil {
		return nil, pgerr.Unsupported("%s ... GRANTED BY is not supported", verb)
	}
	if !n.IsGrant && n.Behavior == pg.DropBehavior_DROP_CASCADE {
		return nil, pgerr.Unsupported("REVOKE ... CASCADE is not supported: privileges granted on by the grantee are not revoked with it")
	}
	// What the object type allows (PostgreSQL checks it before looking at
	// the objects): ON TABLE also takes USAGE, for the sequences it may name.
	seq := n.Objtype == pg.ObjectType_OBJECT_SEQUENCE
	valid, word := catalog.PrivAllTable|catalog.PrivUsage, "relation"
	if seq {
		valid, word = catalog.PrivAllSequence, "sequence"
	}
	spec := catalog.GrantSpec{Revoke: !n.IsGrant, GrantOption: n.GrantOption, Sequence: seq}
	if len(n.Privileges) == 0 {
		spec.All = true
	}
	for _, p := range n.Privileges {
		ap := p.GetAccessPriv()
		if ap == nil {
			continue
		}
		if len(ap.Cols) > 0 {
			return nil, pgerr.Unsupported("column privileges (%s (column, ...)) are not supported", strings.ToUpper(ap.PrivName))
		}
		if ap.PrivName == "" { // ALL (column list)
			spec.All = true
			continue
		}
		bit, ok := catalog.ParsePrivilege(ap.PrivName)
		if !ok || bit&valid == 0 {
			return nil, pgerr.New(pgerr.Code("0LP01"), "invalid privilege type %s for %s", strings.ToUpper(ap.PrivName), word)
		}
		spec.Privs |= bit
	}
	for _, g := range n.Grantees {
		oid, err := s.grantee(g.GetRoleSpec())
		if err != nil {
			return nil, err
		}
		spec.Grantees = append(spec.Grantees, oid)
	}
	rels, err := s.grantTargets(n)
	if err != nil {
		return nil, err
	}
	pc, ok := s.eng.cat.(privCatalog)
	if !ok {
		return nil, pgerr.Unsupported("%s is not supported by this catalog", verb)
	}
	spec.Actor = s.sessionOwner()
	for _, rel := range rels {
		spec.OIDs = append(spec.OIDs, rel.OID)
	}
	warnings, err := pc.Grant(spec)
	if err != nil {
		return nil, err
	}
	res := &Result{Tag: tag, Notices: warnings}
	return res, nil
}

// grantTargets resolves the relations a GRANT names, all before any is
// changed.
func (s *Session) grantTargets(n *pg.GrantStmt) ([]*catalog.Relation, error) {
	var rels []*catalog.Relation
	if n.Targtype == pg.GrantTargetType_ACL_TARGET_ALL_IN_SCHEMA {
		for _, o := range n.Objects {
			schema := o.GetString_().GetSval()
			found := false
			if sl, ok := s.eng.cat.(interface{ Schemas() []*catalog.Schema }); ok {
				for _, sc := range sl.Schemas() {
					found = found || sc.Name == schema
				}
			}
			if !found {
				return nil, pgerr.New(pgerr.UndefinedSchema, "schema \"%s\" does not exist", schema)
			}
			for _, r := range s.eng.cat.Relations() {
				// ALL TABLES are the tables, views, materialized views and
				// sources; ALL SEQUENCES the sequences.
				if r.Schema == schema && r.Kind != catalog.KindSystem && (r.Kind == catalog.KindSequence) == (n.Objtype == pg.ObjectType_OBJECT_SEQUENCE) {
					rels = append(rels, r)
				}
			}
		}
		return rels, nil
	}
	for _, o := range n.Objects {
		rv := o.GetRangeVar()
		if rv == nil {
			return nil, fmt.Errorf("engine: GRANT object %T", o.Node)
		}
		rel, err := s.eng.cat.Resolve(rv.Schemaname, rv.Relname, s.set.searchPath())
		if err != nil {
			return nil, err
		}
		rels = append(rels, rel)
	}
	return rels, nil
}

// checkLinkedSequence refuses to give a sequence that a table's column
// owns (serial, identity, OWNED BY) another owner than the table's: it
// follows its table (0A000, PostgreSQL's message).
func (s *Session) checkLinkedSequence(rel *catalog.Relation, owner uint32) error {
	if rel.Kind != catalog.KindSequence || rel.Seq == nil || rel.Seq.OwnedBy == 0 || rel.OwnerOID() == owner {
		return nil
	}
	t := s.eng.cat.Relation(rel.Seq.OwnedBy)
	if t == nil {
		return nil
	}
	return pgerr.New(pgerr.FeatureNotSupported, "cannot change owner of sequence \"%s\"", rel.Name).
		WithDetail("Sequence \"%s\" is linked to table \"%s\".", rel.Name, t.Name)
}

// isOwnerChange reports whether an ALTER statement only changes owners.
func isOwnerChange(n *pg.AlterTableStmt) bool {
	for _, c := range n.Cmds {
		if c.GetAlterTableCmd().GetSubtype() != pg.AlterTableType_AT_ChangeOwner {
			return false
		}
	}
	return len(n.Cmds) > 0
}

// execAlterOwner runs ALTER TABLE / VIEW / MATERIALIZED VIEW ... OWNER TO.
func (s *Session) execAlterOwner(n *pg.AlterTableStmt) (*Result, error) {
	tag, kinds := "ALTER TABLE", []catalog.RelKind{catalog.KindTable, catalog.KindView, catalog.KindMatView, catalog.KindSource, catalog.KindSequence}
	switch n.Objtype {
	case pg.ObjectType_OBJECT_VIEW:
		tag, kinds = "ALTER VIEW", []catalog.RelKind{catalog.KindView}
	case pg.ObjectType_OBJECT_MATVIEW:
		tag, kinds = "ALTER MATERIALIZED VIEW", []catalog.RelKind{catalog.KindMatView}
	case pg.ObjectType_OBJECT_FOREIGN_TABLE: // sources show as foreign tables
		tag, kinds = "ALTER FOREIGN TABLE", []catalog.RelKind{catalog.KindSource}
	case pg.ObjectType_OBJECT_SEQUENCE:
		tag, kinds = "ALTER SEQUENCE", []catalog.RelKind{catalog.KindSequence}
	case pg.ObjectType_OBJECT_TABLE:
	default:
		return nil, pgerr.Unsupported("ALTER %s is not supported", strings.TrimPrefix(n.Objtype.String(), "OBJECT_"))
	}
	rv := n.Relation
	rel, err := s.eng.cat.Resolve(rv.Schemaname, rv.Relname, s.set.searchPath())
	if err != nil {
		if n.MissingOk && pgerr.CodeOf(err) == pgerr.UndefinedTable {
			return &Result{Tag: tag, Notices: []*pgerr.Error{noticeOf(fmt.Sprintf("relation \"%s\" does not exist, skipping", rv.Relname))}}, nil
		}
		return nil, err
	}
	okKind := false
	for _, k := range kinds {
		okKind = okKind || rel.Kind == k
	}
	if !okKind {
		word := strings.ToLower(strings.TrimPrefix(tag, "ALTER "))
		if word == "foreign table" {
			word = "source"
		}
		return nil, pgerr.New(pgerr.WrongObjectType, "\"%s\" is not a %s", rel.Name, word)
	}
	pc, ok := s.eng.cat.(privCatalog)
	if !ok {
		return nil, pgerr.Unsupported("OWNER TO is not supported by this catalog")
	}
	for _, c := range n.Cmds {
		rs := c.GetAlterTableCmd().GetNewowner()
		if rs.GetRoletype() == pg.RoleSpecType_ROLESPEC_PUBLIC {
			return nil, pgerr.New(pgerr.UndefinedObject, "role \"public\" does not exist")
		}
		owner, err := s.grantee(rs)
		if err != nil {
			return nil, err
		}
		name, _ := s.roleSpecName(rs)
		if err := pc.CheckOwnerChange(s.sessionOwner(), rel, owner, name); err != nil {
			return nil, err
		}
		if err := s.checkLinkedSequence(rel, owner); err != nil {
			return nil, err
		}
		if rel, err = pc.SetOwner(rel.OID, owner); err != nil {
			return nil, err
		}
	}
	return &Result{Tag: tag}, nil
}

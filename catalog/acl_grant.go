package catalog

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/pgerr"
)

// GrantSpec is one GRANT or REVOKE of relation privileges.
type GrantSpec struct {
	OIDs     []uint32  // the relations
	Actor    uint32    // the role running the statement
	Privs    Privilege // what is granted or revoked
	All      bool      // ALL [PRIVILEGES] (each relation's kind's): no "not all privileges" warning
	Grantees []uint32  // role OIDs; PublicRoleOID for PUBLIC
	Revoke   bool
	// Sequence is ON SEQUENCE (or ALL SEQUENCES IN SCHEMA): every relation
	// must be a sequence. ON TABLE may name sequences too, which keep only
	// USAGE, SELECT and UPDATE of what it grants (with a warning).
	Sequence bool
	// GrantOption is WITH GRANT OPTION on a GRANT and GRANT OPTION FOR
	// on a REVOKE (which then takes away only the option).
	GrantOption bool
}

// Grant applies spec to every relation of spec.OIDs in one catalog write
// (all or none), as PostgreSQL's ExecGrant_Relation does: the owner (and a
// superuser, who acts as the owner) grants as the owner; another role
// grants, as itself, what it holds WITH GRANT OPTION, with the warning `no
// privileges were granted for "t"` (or `not all privileges ...`) for the
// rest, and 42501 if it holds no privilege at all. Revoking only takes
// away what the grantor gave. Dependent grants are not revoked in cascade.
func (c *Catalog) Grant(spec GrantSpec) (warnings []*pgerr.Error, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.snap().clone()
	changed := false
	for _, oid := range spec.OIDs {
		old := s.byOID[oid]
		if old == nil {
			return nil, fmt.Errorf("catalog: grant on unknown relation %d", oid)
		}
		if old.Kind == KindSystem {
			if !c.isSuperuser(spec.Actor) { // PUBLIC's SELECT, without grant option
				warnings = append(warnings, warningOf("no privileges were granted for \"%s\"", old.Name))
				continue
			}
			return nil, pgerr.Unsupported("GRANT and REVOKE on system catalog \"%s\" are not supported", old.Name)
		}
		privs, warn, err := grantedPrivileges(old, spec)
		if err != nil {
			return nil, err
		}
		if warn != nil {
			warnings = append(warnings, warn)
		}
		if err := c.MayGrant(spec.Actor, old); err != nil {
			return nil, err
		}
		grantor := spec.Actor
		if c.IsOwner(spec.Actor, old) {
			grantor = old.OwnerOID()
		}
		allowed := privs & c.grantOptions(spec.Actor, old)
		verb, can := "granted", "were"
		if spec.Revoke {
			verb, can = "revoked", "could be"
		}
		switch {
		case allowed == 0:
			warnings = append(warnings, warningOf("no privileges %s %s for \"%s\"", can, verb, old.Name))
		case !spec.All && allowed != privs:
			warnings = append(warnings, warningOf("not all privileges %s %s for \"%s\"", can, verb, old.Name))
		}
		r := *old
		r.ACL = editACL(old.EffectiveACL(), grantor, allowed, spec)
		s.add(&r)
		changed = true
	}
	if !changed {
		return warnings, nil
	}
	return warnings, c.commit(s)
}

// grantedPrivileges is what spec grants on rel, as PostgreSQL's
// ExecGrant_Relation adjusts it: ALL is the kind's privileges; a sequence
// named ON TABLE keeps its three (warning 0LP01 when others were named);
// privileges a table does not have are 0LP01, and a relation that is not a
// sequence ON SEQUENCE is 42809.
func grantedPrivileges(rel *Relation, spec GrantSpec) (Privilege, *pgerr.Error, error) {
	privs := spec.Privs
	if spec.All {
		privs = AllPrivileges(rel.Kind)
	}
	if rel.Kind != KindSequence {
		if spec.Sequence {
			return 0, nil, pgerr.New(pgerr.WrongObjectType, "\"%s\" is not a sequence", rel.Name)
		}
		if bad := privs &^ PrivAllTable; bad != 0 {
			return 0, nil, pgerr.New(pgerr.Code("0LP01"), "invalid privilege type %s for table", PrivilegeName(bad&-bad))
		}
		return privs, nil, nil
	}
	if bad := privs &^ PrivAllSequence; bad != 0 {
		if spec.Sequence {
			return 0, nil, pgerr.New(pgerr.Code("0LP01"), "invalid privilege type %s for sequence", PrivilegeName(bad&-bad))
		}
		w := warningOf("sequence \"%s\" only supports USAGE, SELECT, and UPDATE privileges", rel.Name)
		w.Code = pgerr.Code("0LP01")
		return privs & PrivAllSequence, w, nil
	}
	return privs, nil, nil
}

// MayGrant is the check GRANT and REVOKE make before anything else: a
// role that neither owns rel nor holds any privilege on it gets 42501
// `permission denied for table t` (one holding some gets a warning).
func (c *Catalog) MayGrant(actor uint32, rel *Relation) error {
	if rel.Kind != KindSystem && !c.IsOwner(actor, rel) && c.heldPrivileges(actor, rel) == 0 {
		return PermissionDenied(rel)
	}
	return nil
}

// editACL returns a new ACL: acl with spec's privileges (restricted to
// allowed) granted to or revoked from each grantee by grantor.
func editACL(acl []ACLItem, grantor uint32, allowed Privilege, spec GrantSpec) []ACLItem {
	out := append(make([]ACLItem, 0, len(acl)+len(spec.Grantees)), acl...)
	for _, g := range spec.Grantees {
		i := -1
		for j, it := range out {
			if it.Grantee == g && it.Grantor == grantor {
				i = j
				break
			}
		}
		if spec.Revoke {
			if i < 0 {
				continue
			}
			out[i].GrantOpts &^= allowed
			if !spec.GrantOption {
				out[i].Privs &^= allowed
			}
			if out[i].Privs == 0 {
				out = append(out[:i], out[i+1:]...)
			}
			continue
		}
		if allowed == 0 {
			continue
		}
		if i < 0 {
			out = append(out, ACLItem{Grantee: g, Grantor: grantor})
			i = len(out) - 1
		}
		out[i].Privs |= allowed
		if spec.GrantOption {
			out[i].GrantOpts |= allowed
		}
	}
	return out
}

// SetOwner makes newOwner the owner of the relation oid (ALTER ... OWNER
// TO) and of the sequences its columns own (serial, identity, OWNED BY),
// as PostgreSQL does. As PostgreSQL's aclnewowner, the old owner's ACL
// entries (as grantee and as grantor) become the new owner's, merged. The
// caller checks who may do it (CheckOwnerChange).
func (c *Catalog) SetOwner(oid, newOwner uint32) (*Relation, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.snap().clone()
	old := s.byOID[oid]
	if old == nil {
		return nil, fmt.Errorf("catalog: owner change of unknown relation %d", oid)
	}
	if old.Kind == KindSystem {
		return nil, pgerr.New(pgerr.InsufficientPrivilege, "permission denied: \"%s\" is a system catalog", old.Name)
	}
	owned := s.ownedSequences([]*Relation{old})
	r := withOwner(old, newOwner)
	s.add(r)
	for _, q := range owned {
		s.add(withOwner(q, newOwner))
	}
	if err := c.commit(s); err != nil {
		return nil, err
	}
	return r, nil
}

// withOwner is a copy of old owned by newOwner, its ACL changed as
// aclnewowner does.
func withOwner(old *Relation, newOwner uint32) *Relation {
	r := *old
	r.Owner = newOwner
	if old.ACL != nil {
		prev := old.OwnerOID()
		r.ACL = []ACLItem{}
		for _, it := range old.ACL {
			if it.Grantee == prev {
				it.Grantee = newOwner
			}
			if it.Grantor == prev {
				it.Grantor = newOwner
			}
			merged := false
			for j := range r.ACL {
				if r.ACL[j].Grantee == it.Grantee && r.ACL[j].Grantor == it.Grantor {
					r.ACL[j].Privs |= it.Privs
					r.ACL[j].GrantOpts |= it.GrantOpts
					merged = true
				}
			}
			if !merged {
				r.ACL = append(r.ACL, it)
			}
		}
	}
	return &r
}

// CheckOwnerChange applies PostgreSQL's rule for ALTER ... OWNER TO: a
// superuser may give any relation to anyone; otherwise the actor must own
// it and be (a member of) the new owner.
func (c *Catalog) CheckOwnerChange(actor uint32, rel *Relation, newOwner uint32, newOwnerName string) error {
	if c.isSuperuser(actor) {
		return nil
	}
	if !c.IsOwner(actor, rel) {
		return MustBeOwner(rel)
	}
	if !c.roleIn(actor, newOwner) {
		return pgerr.New(pgerr.InsufficientPrivilege, "must be member of role \"%s\"", newOwnerName)
	}
	return nil
}

// OwnedBy lists the relations role owns or holds privileges on (what keeps
// DROP ROLE from dropping it): PostgreSQL's 2BP01 DETAIL lines.
func (c *Catalog) OwnedBy(role uint32) []string {
	var out []string
	for _, r := range c.snap().sortedRelations() {
		if r.Kind == KindSystem {
			continue
		}
		if r.OwnerOID() == role {
			out = append(out, fmt.Sprintf("owner of %s %s", kindWord(r.Kind), r.Name))
			continue
		}
		for _, it := range r.ACL {
			if it.Grantee == role || it.Grantor == role {
				out = append(out, fmt.Sprintf("privileges for %s %s", kindWord(r.Kind), r.Name))
				break
			}
		}
	}
	return out
}

// checkRoleUnused refuses to drop a role that owns relations or holds
// privileges: 2BP01 as PostgreSQL, listing them in the DETAIL.
func (c *Catalog) checkRoleUnused(r *Role) error {
	deps := c.OwnedBy(r.OID)
	if len(deps) == 0 {
		return nil
	}
	return pgerr.New(pgerr.DependentObjectsStillExist, "role \"%s\" cannot be dropped because some objects depend on it", r.Name).
		WithDetail("%s", strings.Join(deps, "\n"))
}

func warningOf(format string, args ...any) *pgerr.Error {
	e := pgerr.New(pgerr.Code("01007"), format, args...)
	e.Severity = pgerr.SevWarning
	return e
}

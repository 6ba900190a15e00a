package catalog

import (
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/pgerr"
)

// Object privileges, as PostgreSQL keeps them: every relation has an owner
// (Relation.Owner, a role OID) and an access control list (Relation.ACL,
// PostgreSQL's aclitem[]). A nil ACL is the default one (acldefault): the
// owner holds every privilege and nobody else holds any; the first GRANT
// or REVOKE materializes it, as PostgreSQL does (pg_class.relacl is NULL
// until then). Relations are immutable once published, so an ACL is read
// without locks; GRANT, REVOKE and OWNER TO publish a new relation under
// Catalog.mu (SetACL, SetOwner).

// Privilege is a set of relation privileges (bits of an aclitem).
type Privilege uint16

// The privileges, in the order of their letters in an aclitem's text form
// ("arwdDxtXU"): tables hold the first seven, sequences USAGE, SELECT and
// UPDATE. EXECUTE (functions) keeps its bit so that the letters stay
// PostgreSQL's; nothing holds it.
const (
	PrivInsert Privilege = 1 << iota
	PrivSelect
	PrivUpdate
	PrivDelete
	PrivTruncate
	PrivReferences
	PrivTrigger
	privExecute
	PrivUsage

	// PrivAllTable is ALL [PRIVILEGES] ON TABLE.
	PrivAllTable = PrivInsert | PrivSelect | PrivUpdate | PrivDelete | PrivTruncate | PrivReferences | PrivTrigger
	// PrivAllSequence is ALL [PRIVILEGES] ON SEQUENCE.
	PrivAllSequence = PrivUsage | PrivSelect | PrivUpdate
)

// privLetters are the aclitem letters of the bits above, in bit order.
const privLetters = "arwdDxtXU"

// privNames are the SQL names of the bits above, in bit order.
var privNames = [...]string{"INSERT", "SELECT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER", "EXECUTE", "USAGE"}

// AllPrivileges is what ALL [PRIVILEGES] means for a relation of kind k
// (what its owner holds by default).
func AllPrivileges(k RelKind) Privilege {
	if k == KindSequence {
		return PrivAllSequence
	}
	return PrivAllTable
}

// PrivilegeName is the SQL name of a single privilege bit ("USAGE").
func PrivilegeName(p Privilege) string {
	for i, n := range privNames {
		if p == 1<<i {
			return n
		}
	}
	return "UNKNOWN"
}

// ParsePrivilege maps a privilege name of GRANT or has_table_privilege
// (case-insensitive, "SELECT") to its bit; ok false for others.
func ParsePrivilege(name string) (Privilege, bool) {
	n := strings.ToUpper(strings.TrimSpace(name))
	for i, pn := range privNames {
		if n == pn {
			return 1 << i, true
		}
	}
	return 0, false
}

// PublicRoleOID is the grantee OID of PUBLIC in an ACLItem (as in PostgreSQL).
const PublicRoleOID uint32 = 0

// ACLItem is one aclitem: Grantee (PublicRoleOID for PUBLIC) holds Privs,
// of which GrantOpts may be granted on, given by Grantor.
type ACLItem struct {
	Grantee   uint32    `json:"grantee"`
	Grantor   uint32    `json:"grantor"`
	Privs     Privilege `json:"privs"`
	GrantOpts Privilege `json:"grant_opts,omitempty"`
}

// DefaultACL is acldefault('r' or 's', owner) for a relation of kind k:
// the owner holds every privilege of its kind.
func DefaultACL(k RelKind, owner uint32) []ACLItem {
	return []ACLItem{{Grantee: owner, Grantor: owner, Privs: AllPrivileges(k)}}
}

// EffectiveACL is r's ACL, the default one when none was set.
func (r *Relation) EffectiveACL() []ACLItem {
	if r.ACL == nil {
		return DefaultACL(r.Kind, r.OwnerOID())
	}
	return r.ACL
}

// OwnerOID is r's owner; relations of old catalogs (no owner stored) and
// system relations belong to the bootstrap superuser.
func (r *Relation) OwnerOID() uint32 {
	if r.Owner == 0 {
		return SuperuserOID
	}
	return r.Owner
}

// isSuperuser reports whether the role with that OID is a superuser.
func (c *Catalog) isSuperuser(role uint32) bool {
	if role == SuperuserOID {
		return c.bootstrapRole("").Superuser
	}
	r := c.roleSet().byOID[role]
	return r != nil && r.Superuser
}

// roleIn reports whether role has the rights of target: the same role, or
// a member of it directly or through roles that inherit (IsMemberOf), so
// owners and ACL entries of a group apply to its members.
func (c *Catalog) roleIn(role, target uint32) bool {
	return role == target || c.IsMemberOf(role, target)
}

// IsOwner reports whether role may act as rel's owner (DROP, ALTER,
// GRANT): a superuser, the owner, or a member of the owner.
func (c *Catalog) IsOwner(role uint32, rel *Relation) bool {
	return c.isSuperuser(role) || c.roleIn(role, rel.OwnerOID())
}

// HasPrivilege reports whether role holds every privilege of priv on rel:
// superusers always do; system relations are readable by everyone; then
// the ACL (the owner's default one when none is set), whose entries for
// role, for a role it is a member of, or for PUBLIC count.
func (c *Catalog) HasPrivilege(role uint32, rel *Relation, priv Privilege) bool {
	if c.isSuperuser(role) {
		return true
	}
	if rel.Kind == KindSystem {
		return priv&^PrivSelect == 0
	}
	return c.heldPrivileges(role, rel)&priv == priv
}

// HasAnyPrivilege reports whether role holds at least one privilege of
// priv on rel (the sequence functions' rule: nextval needs USAGE or
// UPDATE).
func (c *Catalog) HasAnyPrivilege(role uint32, rel *Relation, priv Privilege) bool {
	for bit := Privilege(1); bit != 0 && bit <= priv; bit <<= 1 {
		if priv&bit != 0 && c.HasPrivilege(role, rel, bit) {
			return true
		}
	}
	return false
}

// heldPrivileges is what role holds on rel through the ACL.
func (c *Catalog) heldPrivileges(role uint32, rel *Relation) Privilege {
	var held Privilege
	for _, it := range rel.EffectiveACL() {
		if it.Grantee == PublicRoleOID || c.roleIn(role, it.Grantee) {
			held |= it.Privs
		}
	}
	return held
}

// grantOptions is what role may grant on rel: everything for its owner
// (and superusers, who grant as the owner), else its grant options.
func (c *Catalog) grantOptions(role uint32, rel *Relation) Privilege {
	if c.IsOwner(role, rel) {
		return AllPrivileges(rel.Kind)
	}
	var opts Privilege
	for _, it := range rel.EffectiveACL() {
		if it.Grantee == PublicRoleOID || c.roleIn(role, it.Grantee) {
			opts |= it.GrantOpts
		}
	}
	return opts
}

// PermissionDenied is PostgreSQL's 42501 for a relation a role may not use:
// `permission denied for table t` (view, materialized view, source).
func PermissionDenied(rel *Relation) *pgerr.Error {
	return pgerr.New(pgerr.InsufficientPrivilege, "permission denied for %s %s", kindWord(rel.Kind), rel.Name)
}

// MustBeOwner is PostgreSQL's 42501 for DDL by a role that does not own
// rel: `must be owner of table t`.
func MustBeOwner(rel *Relation) *pgerr.Error {
	return pgerr.New(pgerr.InsufficientPrivilege, "must be owner of %s %s", kindWord(rel.Kind), rel.Name)
}

// ACLText is the text form of an aclitem[] as PostgreSQL prints it
// ({alice=arwdDxt/alice,=r/alice}); user names the bootstrap superuser.
func (c *Catalog) ACLText(acl []ACLItem, user string) []string {
	out := make([]string, len(acl))
	for i, it := range acl {
		out[i] = c.ACLItemText(it, user)
	}
	return out
}

// ACLItemText is one aclitem's text form ("bob=r*w/alice").
func (c *Catalog) ACLItemText(it ACLItem, user string) string {
	var sb strings.Builder
	if it.Grantee != PublicRoleOID {
		sb.WriteString(c.aclRoleName(it.Grantee, user))
	}
	sb.WriteByte('=')
	for i := 0; i < len(privLetters); i++ {
		bit := Privilege(1) << i
		if it.Privs&bit != 0 {
			sb.WriteByte(privLetters[i])
			if it.GrantOpts&bit != 0 {
				sb.WriteByte('*')
			}
		}
	}
	sb.WriteByte('/')
	sb.WriteString(c.aclRoleName(it.Grantor, user))
	return sb.String()
}

// aclRoleName names a role in an aclitem: quoted as putid() does when it
// holds other than letters, digits and underscores; a dropped role is its
// OID.
func (c *Catalog) aclRoleName(oid uint32, user string) string {
	name, ok := c.roleName(oid, user)
	if !ok {
		return strconv.FormatUint(uint64(oid), 10)
	}
	plain := name != ""
	for _, r := range name {
		if !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= 0x80) {
			plain = false
		}
	}
	if plain {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

package catalog

import (
	"strings"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Role membership (pg_auth_members) and PostgreSQL's predefined roles.
// Memberships are stored with the roles in rolesFile and published in the
// same immutable *roleSet, so readers need no lock and GRANT / REVOKE
// serialize with the other role changes on Catalog.mu.
//
// Only what the server enforces is claimed: membership in
// pg_read_server_files lets a role create file sources (engine); the other
// predefined roles exist so that they can be granted and listed, and grant
// nothing yet.

// Membership is one pg_auth_members row: Member is a member of Role.
type Membership struct {
	Role    uint32 `json:"role"`
	Member  uint32 `json:"member"`
	Grantor uint32 `json:"grantor"`
	Admin   bool   `json:"admin,omitempty"`
}

// Predefined role OIDs (PostgreSQL 15's).
const (
	ReadServerFilesOID   uint32 = 4569
	WriteServerFilesOID  uint32 = 4570
	ExecServerProgramOID uint32 = 4571
)

// predefinedRoles are PostgreSQL's built-in group roles, in OID order.
var predefinedRoles = func() []*Role {
	names := []struct {
		oid  uint32
		name string
	}{
		{3373, "pg_monitor"}, {3374, "pg_read_all_settings"}, {3375, "pg_read_all_stats"},
		{3377, "pg_stat_scan_tables"}, {4200, "pg_signal_backend"}, {4544, "pg_checkpoint"},
		{ReadServerFilesOID, "pg_read_server_files"}, {WriteServerFilesOID, "pg_write_server_files"},
		{ExecServerProgramOID, "pg_execute_server_program"}, {DatabaseOwnerOID, "pg_database_owner"},
		{6181, "pg_read_all_data"}, {6182, "pg_write_all_data"},
	}
	out := make([]*Role, len(names))
	for i, n := range names {
		out[i] = &Role{OID: n.oid, Name: n.name, Inherit: true, ConnLimit: -1}
	}
	return out
}()

// predefinedRole returns the predefined role named name, or nil.
func predefinedRole(name string) *Role {
	for _, r := range predefinedRoles {
		if r.Name == name {
			return r
		}
	}
	return nil
}

// isPredefinedOID reports whether oid is a predefined role's.
func isPredefinedOID(oid uint32) bool {
	for _, r := range predefinedRoles {
		if r.OID == oid {
			return true
		}
	}
	return false
}

// directGroups lists the roles member is a direct member of.
func (s *roleSet) directGroups(member uint32) []Membership {
	var out []Membership
	for _, m := range s.members {
		if m.Member == member {
			out = append(out, m)
		}
	}
	return out
}

// reaches reports whether group is member or reachable from it through
// memberships; with inherit, only through roles that inherit (each role
// on the path, member included, must have INHERIT): PostgreSQL's
// has_privs_of_role without the superuser rule. Without inherit it is
// is_member_of_role.
func (c *Catalog) reaches(member, group uint32, inherit bool) bool {
	return c.roleSet().reaches(member, group, inherit)
}

// reaches is Catalog.reaches on one version of the roles.
func (set *roleSet) reaches(member, group uint32, inherit bool) bool {
	seen := map[uint32]bool{member: true}
	todo := []uint32{member}
	for len(todo) > 0 {
		r := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if r == group {
			return true
		}
		if inherit && !set.inherits(r) {
			continue
		}
		for _, m := range set.directGroups(r) {
			if !seen[m.Role] {
				seen[m.Role] = true
				todo = append(todo, m.Role)
			}
		}
	}
	return false
}

func (set *roleSet) inherits(oid uint32) bool {
	if r := set.byOID[oid]; r != nil {
		return r.Inherit
	}
	return true // the virtual superuser and predefined roles inherit
}

// IsMemberOf reports whether the role member has the privileges of the role
// group: it is group, or a member of it directly or through roles that
// inherit (PostgreSQL's has_privs_of_role, without the superuser rule:
// callers that let superusers do anything check that first). It is the
// check for privileges granted through roles (pg_read_server_files, and
// object privileges later). Safe for concurrent use.
func (c *Catalog) IsMemberOf(member, group uint32) bool {
	return c.reaches(member, group, true)
}

// IsMemberOfRole is PostgreSQL's is_member_of_role: member is group or a
// member of it through any memberships, INHERIT or not (what SET ROLE
// allows). Safe for concurrent use.
func (c *Catalog) IsMemberOfRole(member, group uint32) bool {
	return c.reaches(member, group, false)
}

// HasPrivsOfRole is IsMemberOf for role names as the session of user sees
// them, true for superusers; unknown names are false.
func (c *Catalog) HasPrivsOfRole(member, group, user string) bool {
	m, ok := c.LookupRole(member, user)
	if !ok {
		return false
	}
	if m.Superuser {
		return true
	}
	g, ok := c.LookupRole(group, user)
	return ok && c.IsMemberOf(m.OID, g.OID)
}

// hasAdmin reports whether member may grant group: a membership of member
// (or of a role member belongs to) in group with the admin option.
func (c *Catalog) hasAdmin(member, group uint32) bool {
	set := c.roleSet()
	for _, m := range set.members {
		if m.Role == group && m.Admin && set.reaches(member, m.Member, false) {
			return true
		}
	}
	return false
}

// GrantRole makes member a member of group (GRANT group TO member [WITH
// ADMIN OPTION]) for the session of user, who must be a superuser, have
// CREATEROLE (for groups that are neither superusers nor predefined), or
// hold group's admin option. A membership that exists is a notice (or gains
// the admin option).
func (c *Catalog) GrantRole(group, member string, admin bool, user string) (*pgerr.Error, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g, m, me, err := c.membershipRoles(group, member, user)
	if err != nil {
		return nil, err
	}
	if err := c.mayGrant(me, g); err != nil {
		return nil, err
	}
	if g.OID == m.OID || c.reaches(g.OID, m.OID, false) {
		return nil, pgerr.New(pgerr.Code("0LP01"), "role \"%s\" is a member of role \"%s\"", g.Name, m.Name)
	}
	set := c.roleSet().clone()
	for i, x := range set.members {
		if x.Role == g.OID && x.Member == m.OID {
			if !admin || x.Admin {
				return notice(pgerr.Code("00000"), "role \"%s\" is already a member of role \"%s\"", m.Name, g.Name), nil
			}
			set.members[i].Admin = true
			return nil, c.commitRoles(set)
		}
	}
	set.members = append(set.members, Membership{Role: g.OID, Member: m.OID, Grantor: me.OID, Admin: admin})
	return nil, c.commitRoles(set)
}

// RevokeRole ends member's membership in group (REVOKE group FROM member),
// or only its admin option; the same roles may as may GrantRole. No such
// membership is a warning.
func (c *Catalog) RevokeRole(group, member string, adminOnly bool, user string) (*pgerr.Error, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g, m, me, err := c.membershipRoles(group, member, user)
	if err != nil {
		return nil, err
	}
	if err := c.mayGrant(me, g); err != nil {
		return nil, err
	}
	set := c.roleSet().clone()
	for i, x := range set.members {
		if x.Role != g.OID || x.Member != m.OID {
			continue
		}
		if adminOnly {
			set.members[i].Admin = false
		} else {
			set.members = append(set.members[:i:i], set.members[i+1:]...)
		}
		return nil, c.commitRoles(set)
	}
	w := notice(pgerr.Code("01000"), "role \"%s\" is not a member of role \"%s\"", m.Name, g.Name)
	w.Severity = pgerr.SevWarning
	return w, nil
}

func (c *Catalog) membershipRoles(group, member, user string) (g, m, me *Role, err error) {
	g, ok := c.LookupRole(group, user)
	if !ok {
		return nil, nil, nil, pgerr.New(pgerr.UndefinedObject, "role \"%s\" does not exist", group)
	}
	m, ok = c.LookupRole(member, user)
	if !ok {
		return nil, nil, nil, pgerr.New(pgerr.UndefinedObject, "role \"%s\" does not exist", member)
	}
	me, ok = c.LookupRole(user, user)
	if !ok { // trust mode's unknown users act as superusers
		me = &Role{Name: user, Superuser: true}
	}
	return g, m, me, nil
}

// mayGrant checks that me may grant or revoke membership in g.
func (c *Catalog) mayGrant(me, g *Role) error {
	switch {
	case me.Superuser:
		return nil
	case g.Superuser:
		return pgerr.New(pgerr.InsufficientPrivilege, "must be superuser to alter superusers")
	case me.CreateRole && !isPredefinedOID(g.OID):
		return nil
	case c.hasAdmin(me.OID, g.OID):
		return nil
	}
	return pgerr.New(pgerr.InsufficientPrivilege, "must have admin option on role \"%s\"", g.Name)
}

// dropMemberships removes the memberships of and in oid from set.
func (s *roleSet) dropMemberships(oid uint32) {
	kept := s.members[:0:0]
	for _, m := range s.members {
		if m.Role != oid && m.Member != oid {
			kept = append(kept, m)
		}
	}
	s.members = kept
}

func init() {
	registerRows("pg_catalog.pg_auth_members", pgAuthMembersRows)
	text, name, oid, boolean := types.TText, types.TName, types.TOid, types.TBool
	reg := func(args []types.T, fn func(ctx *expr.Context, a []types.Value) (member, group string, priv string)) {
		expr.Register(&expr.Func{Name: "pg_has_role", Args: args, Return: boolean, Strict: true,
			Kernel: expr.RowKernel(boolean, args, func(ctx *expr.Context, a []types.Value) (types.Value, error) {
				member, group, priv := fn(ctx, a)
				return pgHasRole(ctx, member, group, priv)
			})})
	}
	str := func(v types.Value) string { s, _ := v.(string); return s }
	byOID := func(ctx *expr.Context, v types.Value) string {
		c := catalogOf(ctx)
		if c == nil {
			return ""
		}
		n, _ := c.roleName(oidArg(v), sessionUser(ctx))
		if n == "" {
			if r := predefinedByOID(oidArg(v)); r != nil {
				n = r.Name
			}
		}
		return n
	}
	reg([]types.T{text, text}, func(ctx *expr.Context, a []types.Value) (string, string, string) {
		return sessionUser(ctx), str(a[0]), str(a[1])
	})
	reg([]types.T{oid, text}, func(ctx *expr.Context, a []types.Value) (string, string, string) {
		return sessionUser(ctx), byOID(ctx, a[0]), str(a[1])
	})
	reg([]types.T{name, text, text}, func(ctx *expr.Context, a []types.Value) (string, string, string) {
		return str(a[0]), str(a[1]), str(a[2])
	})
	reg([]types.T{name, oid, text}, func(ctx *expr.Context, a []types.Value) (string, string, string) {
		return str(a[0]), byOID(ctx, a[1]), str(a[2])
	})
	reg([]types.T{oid, oid, text}, func(ctx *expr.Context, a []types.Value) (string, string, string) {
		return byOID(ctx, a[0]), byOID(ctx, a[1]), str(a[2])
	})
}

func predefinedByOID(oid uint32) *Role {
	for _, r := range predefinedRoles {
		if r.OID == oid {
			return r
		}
	}
	return nil
}

// pgHasRole is pg_has_role(member, group, 'MEMBER' | 'USAGE' [WITH GRANT
// OPTION / WITH ADMIN OPTION], ...): USAGE is having group's privileges
// (through inheriting roles), MEMBER membership by any path; superusers
// have both.
func pgHasRole(ctx *expr.Context, member, group, priv string) (types.Value, error) {
	c := catalogOf(ctx)
	if c == nil {
		return true, nil
	}
	user := sessionUser(ctx)
	m, ok := c.LookupRole(member, user)
	if !ok {
		return nil, pgerr.New(pgerr.UndefinedObject, "role \"%s\" does not exist", member)
	}
	g, ok := c.LookupRole(group, user)
	if !ok {
		return nil, pgerr.New(pgerr.UndefinedObject, "role \"%s\" does not exist", group)
	}
	var usage, membership, admin bool
	for _, orig := range strings.Split(priv, ",") {
		p := strings.ToUpper(strings.Join(strings.Fields(orig), " "))
		switch p {
		case "USAGE":
			usage = true
		case "MEMBER":
			membership = true
		case "USAGE WITH GRANT OPTION", "USAGE WITH ADMIN OPTION", "MEMBER WITH GRANT OPTION", "MEMBER WITH ADMIN OPTION":
			admin = true
		default:
			return nil, pgerr.New(pgerr.InvalidParameterValue, "unrecognized privilege type: \"%s\"", strings.TrimSpace(orig))
		}
	}
	if m.Superuser {
		return true, nil
	}
	switch {
	case usage && c.IsMemberOf(m.OID, g.OID),
		membership && c.reaches(m.OID, g.OID, false),
		admin && c.hasAdmin(m.OID, g.OID):
		return true, nil
	}
	return false, nil
}

func pgAuthMembersRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	for _, m := range c.roleSet().members {
		if err := b.add(row{"roleid": m.Role, "member": m.Member, "grantor": m.Grantor, "admin_option": m.Admin}); err != nil {
			return err
		}
	}
	return nil
}

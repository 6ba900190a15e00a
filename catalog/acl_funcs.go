package catalog

import (
	"strings"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// has_table_privilege, has_any_column_privilege and has_sequence_privilege
// in all their forms (user by name or OID or the current user; relation by
// name or OID), as PostgreSQL answers them from the ACL (acl.go). Column
// privileges do not exist, so a column privilege is the table's.

// The privileges each function accepts by name.
var privFuncValid = map[string]Privilege{
	"has_table_privilege":      PrivAllTable,
	"has_any_column_privilege": PrivSelect | PrivInsert | PrivUpdate | PrivReferences,
	"has_sequence_privilege":   PrivAllSequence,
}

func init() {
	oid, text, name, boolean := types.TOid, types.TText, types.TName, types.TBool
	ts := func(t ...types.T) []types.T { return t }
	for _, fn := range []string{"has_table_privilege", "has_any_column_privilege", "has_sequence_privilege"} {
		fn := fn
		reg := func(args []types.T, userArg bool) {
			expr.Register(&expr.Func{Name: fn, Args: args, Return: boolean, Strict: true,
				Kernel: expr.RowKernel(boolean, args, func(ctx *expr.Context, a []types.Value) (types.Value, error) {
					var user types.Value
					if userArg {
						user, a = a[0], a[1:]
					}
					return hasTablePrivilege(ctx, fn, user, a[0], a[1].(string))
				})})
		}
		reg(ts(text, text), false)
		reg(ts(oid, text), false)
		reg(ts(name, text, text), true)
		reg(ts(name, oid, text), true)
		reg(ts(oid, text, text), true)
		reg(ts(oid, oid, text), true)
	}
}

// hasTablePrivilege answers fn(user, table, privs) (has_table_privilege
// and the others above): true when the role holds any of the
// comma-separated privileges (each may say WITH GRANT OPTION); NULL for a
// relation OID that does not exist; has_sequence_privilege of a relation
// that is not a sequence is 42809.
func hasTablePrivilege(ctx *expr.Context, fn string, user, table types.Value, privs string) (types.Value, error) {
	c := catalogOf(ctx)
	if c == nil {
		return true, nil
	}
	me := sessionUser(ctx)
	var role uint32
	switch u := user.(type) {
	case nil:
		r, ok := c.LookupRole(me, me)
		if !ok {
			return true, nil // trust mode: an unknown user acts as the superuser
		}
		role = r.OID
	case string:
		r, ok := c.LookupRole(u, me)
		if !ok {
			return nil, pgerr.New(pgerr.UndefinedObject, "role \"%s\" does not exist", u)
		}
		role = r.OID
	default:
		role = oidArg(u)
	}
	var rel *Relation
	if t, ok := table.(string); ok {
		o, err := c.RelationOID(t, searchPathOf(ctx))
		if err != nil {
			return nil, err
		}
		rel = c.Relation(o)
	} else {
		rel = c.Relation(oidArg(table))
	}
	if rel == nil {
		return nil, nil
	}
	if fn == "has_sequence_privilege" && rel.Kind != KindSequence {
		return nil, pgerr.New(pgerr.WrongObjectType, "\"%s\" is not a sequence", rel.Name)
	}
	for _, p := range strings.Split(privs, ",") {
		p = strings.TrimSpace(p)
		withGrant := false
		if u := strings.ToUpper(p); strings.HasSuffix(u, " WITH GRANT OPTION") {
			p, withGrant = strings.TrimSpace(p[:len(p)-len(" WITH GRANT OPTION")]), true
		}
		bit, ok := ParsePrivilege(p)
		if !ok || bit&privFuncValid[fn] == 0 {
			return nil, pgerr.New(pgerr.InvalidParameterValue, "unrecognized privilege type: \"%s\"", p)
		}
		if withGrant {
			if c.isSuperuser(role) || c.grantOptions(role, rel)&bit != 0 {
				return true, nil
			}
			continue
		}
		if c.HasPrivilege(role, rel, bit) {
			return true, nil
		}
	}
	return false, nil
}

func init() {
	registerRows("information_schema.table_privileges", isTablePrivilegesRows)
	textArr := types.ArrayOf(types.TText)
	args := []types.T{types.TChar, types.TOid}
	expr.Register(&expr.Func{Name: "acldefault", Args: args, Return: textArr, Strict: true,
		Kernel: expr.RowKernel(textArr, args, func(ctx *expr.Context, a []types.Value) (types.Value, error) {
			c := catalogOf(ctx)
			if c == nil {
				return nil, nil
			}
			return c.aclDefault(a[0].(string), oidArg(a[1]), sessionUser(ctx))
		})})
}

// aclDefaultLetters are acldefault's privileges per object type: the
// owner's, then PUBLIC's (PostgreSQL 15's acldefault).
var aclDefaultLetters = map[string][2]string{
	"c": {"", ""}, "r": {"arwdDxt", ""}, "s": {"rwU", ""}, "d": {"CTc", "Tc"}, "f": {"X", "X"},
	"l": {"U", "U"}, "L": {"rw", ""}, "n": {"UC", ""}, "p": {"sA", ""}, "t": {"C", ""},
	"F": {"U", ""}, "S": {"U", ""}, "T": {"U", "U"},
}

// aclDefault is acldefault(objtype, owner) in text form.
func (c *Catalog) aclDefault(objtype string, owner uint32, user string) (types.Value, error) {
	l, ok := aclDefaultLetters[objtype]
	if !ok {
		return nil, pgerr.New(pgerr.Code("XX000"), "unrecognized object type abbreviation: %s", objtype)
	}
	name := c.aclRoleName(owner, user)
	var out []types.Value
	if l[1] != "" {
		out = append(out, "="+l[1]+"/"+name)
	}
	if l[0] != "" {
		out = append(out, name+"="+l[0]+"/"+name)
	}
	if out == nil {
		out = []types.Value{}
	}
	return out, nil
}

// isTablePrivilegesRows lists, as PostgreSQL's view does, one row per
// privilege of each ACL entry of the user's tables, views and sources
// (materialized views are not in it) that the session's role granted, was
// granted, or that PUBLIC was granted; a superuser sees all. System
// catalogs are left out.
func isTablePrivilegesRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	me, ok := c.LookupRole(userName(ctx), userName(ctx))
	all := !ok || c.isSuperuser(me.OID)
	for _, r := range s.sortedRelations() {
		if r.Kind != KindTable && r.Kind != KindView && r.Kind != KindSource {
			continue
		}
		for _, it := range r.EffectiveACL() {
			if !all && it.Grantee != PublicRoleOID && !c.roleIn(me.OID, it.Grantee) && !c.roleIn(me.OID, it.Grantor) {
				continue
			}
			grantee := "PUBLIC"
			if it.Grantee != PublicRoleOID {
				grantee, _ = c.roleName(it.Grantee, userName(ctx))
			}
			grantor, _ := c.roleName(it.Grantor, userName(ctx))
			for i, name := range privNames {
				bit := Privilege(1) << i
				if it.Privs&bit == 0 {
					continue
				}
				grantable := "NO"
				if it.GrantOpts&bit != 0 || (it.Grantee != PublicRoleOID && c.roleIn(it.Grantee, r.OwnerOID())) {
					grantable = "YES"
				}
				hier := "NO"
				if bit == PrivSelect {
					hier = "YES"
				}
				err := b.add(row{"grantor": grantor, "grantee": grantee, "table_catalog": dbName(ctx), "table_schema": r.Schema,
					"table_name": r.Name, "privilege_type": name, "is_grantable": grantable, "with_hierarchy": hier})
				if err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// ExplodeACL is aclexplode(acl) over an ACL in its text form (relacl): one
// row (grantor oid, grantee oid, privilege_type, is_grantable) per
// privilege of each item, in PostgreSQL's order; grantee 0 is PUBLIC.
// Role names are resolved as the session of user sees them.
func (c *Catalog) ExplodeACL(acl []types.Value, user string) ([][]types.Value, error) {
	var out [][]types.Value
	for _, v := range acl {
		text, ok := v.(string)
		if !ok {
			continue
		}
		it, err := c.parseACLItem(text, user)
		if err != nil {
			return nil, err
		}
		for i, name := range privNames {
			bit := Privilege(1) << i
			if it.Privs&bit != 0 {
				out = append(out, []types.Value{int64(it.Grantor), int64(it.Grantee), name, it.GrantOpts&bit != 0})
			}
		}
	}
	return out, nil
}

// parseACLItem reads one aclitem's text form ("bob=r*w/alice", "=r/alice").
func (c *Catalog) parseACLItem(text, user string) (ACLItem, error) {
	bad := pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type aclitem: \"%s\"", text)
	grantee, rest, err := cutRoleName(text)
	if err != nil || !strings.HasPrefix(rest, "=") {
		return ACLItem{}, bad
	}
	privs, grantor, found := strings.Cut(rest[1:], "/")
	if !found {
		return ACLItem{}, bad
	}
	grantorName, tail, err := cutRoleName(grantor)
	if err != nil || tail != "" || grantorName == "" {
		return ACLItem{}, bad
	}
	it := ACLItem{}
	for i := 0; i < len(privs); i++ {
		k := strings.IndexByte(privLetters, privs[i])
		if k < 0 {
			return ACLItem{}, pgerr.New(pgerr.InvalidTextRepresentation, "invalid mode character: must be one of \"%s\"", privLetters)
		}
		it.Privs |= 1 << k
		if i+1 < len(privs) && privs[i+1] == '*' {
			it.GrantOpts |= 1 << k
			i++
		}
	}
	oidOf := func(name string) (uint32, error) {
		if r, ok := c.LookupRole(name, user); ok {
			return r.OID, nil
		}
		return 0, pgerr.New(pgerr.UndefinedObject, "role \"%s\" does not exist", name)
	}
	if grantee != "" {
		if it.Grantee, err = oidOf(grantee); err != nil {
			return ACLItem{}, err
		}
	}
	if it.Grantor, err = oidOf(grantorName); err != nil {
		return ACLItem{}, err
	}
	return it, nil
}

// cutRoleName reads a role name, plain or double-quoted, from the start
// of s and returns it with the rest.
func cutRoleName(s string) (name, rest string, err error) {
	if !strings.HasPrefix(s, `"`) {
		i := strings.IndexAny(s, "=/")
		if i < 0 {
			return s, "", nil
		}
		return s[:i], s[i:], nil
	}
	var sb strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] == '"' {
			if i+1 < len(s) && s[i+1] == '"' {
				sb.WriteByte('"')
				i++
				continue
			}
			return sb.String(), s[i+1:], nil
		}
		sb.WriteByte(s[i])
	}
	return "", "", pgerr.New(pgerr.InvalidTextRepresentation, "unterminated name")
}

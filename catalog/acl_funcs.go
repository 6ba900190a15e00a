package catalog

import (
	"strings"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// has_table_privilege and has_any_column_privilege in all their forms
// (user by name or OID or the current user; table by name or OID), as
// PostgreSQL answers them from the ACL (acl.go). Column privileges do not
// exist, so a column privilege is the table's.

func init() {
	oid, text, name, boolean := types.TOid, types.TText, types.TName, types.TBool
	ts := func(t ...types.T) []types.T { return t }
	for _, fn := range []string{"has_table_privilege", "has_any_column_privilege"} {
		anyColumn := fn == "has_any_column_privilege"
		reg := func(args []types.T, userArg bool) {
			expr.Register(&expr.Func{Name: fn, Args: args, Return: boolean, Strict: true,
				Kernel: expr.RowKernel(boolean, args, func(ctx *expr.Context, a []types.Value) (types.Value, error) {
					var user types.Value
					if userArg {
						user, a = a[0], a[1:]
					}
					return hasTablePrivilege(ctx, user, a[0], a[1].(string), anyColumn)
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

// hasTablePrivilege answers has_table_privilege(user, table, privs): true
// when the role holds any of the comma-separated privileges (each may say
// WITH GRANT OPTION); NULL for a table OID that does not exist.
func hasTablePrivilege(ctx *expr.Context, user, table types.Value, privs string, anyColumn bool) (types.Value, error) {
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
	for _, p := range strings.Split(privs, ",") {
		p = strings.TrimSpace(p)
		withGrant := false
		if u := strings.ToUpper(p); strings.HasSuffix(u, " WITH GRANT OPTION") {
			p, withGrant = strings.TrimSpace(p[:len(p)-len(" WITH GRANT OPTION")]), true
		}
		bit, ok := ParsePrivilege(p)
		if !ok || (anyColumn && bit&(PrivSelect|PrivInsert|PrivUpdate|PrivReferences) == 0) {
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

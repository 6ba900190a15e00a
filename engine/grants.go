package engine

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/pgerr"
)

// GRANT role TO role [WITH ADMIN OPTION] and REVOKE [ADMIN OPTION FOR]
// role FROM role: role membership, stored by the catalog
// (catalog/members.go), which also decides who may grant. GRANT of
// privileges on tables and other objects is not supported (every role
// that logs in may read and write every relation: docs/security.md).

func (s *Session) execGrantRole(n *pg.GrantRoleStmt) (*Result, error) {
	rc, err := s.roles()
	if err != nil {
		return nil, err
	}
	admin := false
	for _, o := range n.Opt {
		d := o.GetDefElem()
		if d == nil {
			continue
		}
		if d.Defname != "admin" {
			return nil, pgerr.Unsupported("GRANT role option %q is not supported", d.Defname)
		}
		b := d.Arg.GetBoolean()
		switch {
		case n.IsGrant && (b == nil || b.Boolval):
			admin = true
		case n.IsGrant:
			admin = false
		case b != nil && !b.Boolval: // REVOKE ADMIN OPTION FOR
			admin = true
		default:
			return nil, pgerr.Unsupported("REVOKE role option %q is not supported", d.Defname)
		}
	}
	if n.Grantor != nil {
		return nil, pgerr.Unsupported("GRANTED BY is not supported")
	}
	if !n.IsGrant && n.Behavior == pg.DropBehavior_DROP_CASCADE {
		return nil, pgerr.Unsupported("REVOKE ... CASCADE of roles is not supported")
	}
	tag := "GRANT ROLE"
	if !n.IsGrant {
		tag = "REVOKE ROLE"
	}
	res := &Result{Tag: tag}
	for _, g := range n.GrantedRoles {
		ap := g.GetAccessPriv()
		if ap == nil || len(ap.Cols) > 0 {
			return nil, pgerr.New(pgerr.Code("0LP01"), "column names cannot be included in GRANT/REVOKE ROLE")
		}
		for _, m := range n.GranteeRoles {
			member, err := s.roleSpecName(m.GetRoleSpec())
			if err != nil {
				return nil, err
			}
			var note *pgerr.Error
			if n.IsGrant {
				note, err = rc.GrantRole(ap.PrivName, member, admin, s.user)
			} else {
				note, err = rc.RevokeRole(ap.PrivName, member, admin, s.user)
			}
			if err != nil {
				return nil, err
			}
			if note != nil {
				res.Notices = append(res.Notices, note)
			}
		}
	}
	return res, nil
}

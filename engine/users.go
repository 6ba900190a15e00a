package engine

import (
	"fmt"
	"strings"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// CREATE / ALTER / DROP ROLE (and USER, GROUP): roles live in the catalog
// (catalog/users.go). Privileges follow PostgreSQL's attribute rules:
// superusers do anything; CREATEROLE roles create, alter and drop
// non-superusers; everyone may change their own password. Role membership
// (GRANT role TO role) is in grants.go; privileges on relations (owners,
// GRANT, REVOKE) are in grant.go (docs/security.md).

// roleCatalog is the part of *catalog.Catalog that manages roles.
type roleCatalog interface {
	LookupRole(name, user string) (*catalog.Role, bool)
	CreateRole(r catalog.Role, user string) (*catalog.Role, error)
	AlterRole(name, user string, change func(r *catalog.Role) error) (*catalog.Role, error)
	DropRole(name, user string, ifExists bool) (*pgerr.Error, error)
	GrantRole(group, member string, admin bool, user string) (*pgerr.Error, error)
	RevokeRole(group, member string, adminOnly bool, user string) (*pgerr.Error, error)
	IsMemberOf(member, group uint32) bool
	IsMemberOfRole(member, group uint32) bool
}

func (s *Session) roles() (roleCatalog, error) {
	rc, ok := s.eng.cat.(roleCatalog)
	if !ok {
		return nil, pgerr.Unsupported("roles are not supported by this catalog")
	}
	return rc, nil
}

// sessionRole is the session user's role; a user unknown to the catalog
// (trust authentication) acts as a superuser.
func (e *Engine) sessionRole(user string) *catalog.Role {
	if rc, ok := e.cat.(roleCatalog); ok {
		if r, ok := rc.LookupRole(user, user); ok {
			return r
		}
	}
	return &catalog.Role{Name: user, Superuser: true, CreateRole: true, CanLogin: true}
}

// checkLogin refuses roles that may not log in (28000, as PostgreSQL says
// after authentication) and, for roles that are not superusers, one more
// session than their CONNECTION LIMIT (53300); open is the number of
// sessions the user has already. It reports whether user is a superuser.
func (e *Engine) checkLogin(user string, open int) (superuser bool, err error) {
	r := e.sessionRole(user)
	if !r.CanLogin {
		return false, pgerr.New(pgerr.InvalidAuthorizationSpec, "role \"%s\" is not permitted to log in", user)
	}
	if !r.Superuser && r.ConnLimit >= 0 && open >= int(r.ConnLimit) {
		return false, pgerr.New(pgerr.TooManyConnections, "too many connections for role \"%s\"", user)
	}
	return r.Superuser, nil
}

// userSessions counts the open sessions of user; e.mu is held.
func (e *Engine) userSessions(user string) int {
	n := 0
	for s := range e.sessions {
		if s.login == user {
			n++
		}
	}
	return n
}

// roleOptions are the options of CREATE or ALTER ROLE, applied to a role.
type roleOptions struct {
	setPassword bool
	password    *string // nil: PASSWORD NULL
	validUntil  *string
	flags       map[string]bool
	connLimit   *int32
}

func (s *Session) parseRoleOptions(opts []*pg.Node) (*roleOptions, []*pgerr.Error, error) {
	ro := &roleOptions{flags: map[string]bool{}}
	var notices []*pgerr.Error
	for _, n := range opts {
		d := n.GetDefElem()
		if d == nil {
			continue
		}
		switch d.Defname {
		case "password":
			ro.setPassword = true
			if str := d.Arg.GetString_(); str != nil {
				v := str.Sval
				ro.password = &v
			}
		case "validUntil":
			if str := d.Arg.GetString_(); str != nil {
				v := str.Sval
				ro.validUntil = &v
			}
		case "superuser", "createdb", "createrole", "inherit", "canlogin", "isreplication", "bypassrls":
			b := d.Arg.GetBoolean()
			if b == nil {
				return nil, nil, pgerr.New(pgerr.SyntaxError, "option %q needs a boolean", d.Defname)
			}
			ro.flags[d.Defname] = b.Boolval
		case "connectionlimit":
			i := d.Arg.GetInteger()
			if i == nil || i.Ival < -1 {
				return nil, nil, pgerr.New(pgerr.InvalidParameterValue, "invalid connection limit: %d", i.GetIval())
			}
			v := i.Ival
			ro.connLimit = &v
		case "sysid":
			notices = append(notices, noticeOf("SYSID can no longer be specified"))
		case "addroleto", "rolemembers", "adminmembers":
			return nil, nil, pgerr.Unsupported("role membership (IN ROLE, ROLE, ADMIN) is not supported")
		default:
			return nil, nil, pgerr.Unsupported("role option %q is not supported", d.Defname)
		}
	}
	return ro, notices, nil
}

func noticeOf(msg string) *pgerr.Error {
	n := pgerr.New(pgerr.Code("00000"), "%s", msg)
	n.Severity = pgerr.SevNotice
	return n
}

// apply sets the options on r; notices collects what PostgreSQL says.
func (s *Session) applyRoleOptions(r *catalog.Role, ro *roleOptions, notices *[]*pgerr.Error) error {
	for name, v := range ro.flags {
		switch name {
		case "superuser":
			r.Superuser = v
		case "createdb":
			r.CreateDB = v
		case "createrole":
			r.CreateRole = v
		case "inherit":
			r.Inherit = v
		case "canlogin":
			r.CanLogin = v
		case "isreplication":
			r.Replication = v
		case "bypassrls":
			r.BypassRLS = v
		}
	}
	if ro.connLimit != nil {
		r.ConnLimit = *ro.connLimit
	}
	if ro.validUntil != nil {
		fo := s.Format()
		v, err := types.ParseText(*ro.validUntil, types.TTimestampTZ, &fo)
		if err != nil {
			return err
		}
		ts := v.(types.TimestampValue)
		r.ValidUntil = &ts
	}
	if ro.setPassword {
		switch {
		case ro.password == nil:
			r.Password = ""
		case *ro.password == "":
			r.Password = ""
			*notices = append(*notices, noticeOf("empty string is not a valid password, clearing password"))
		default:
			method, _ := s.set.get("password_encryption")
			v, err := catalog.EncryptPassword(r.Name, *ro.password, method)
			if err != nil {
				return err
			}
			r.Password = v
		}
	}
	return nil
}

// mayManage checks that the session may create, alter or drop a role that
// is (or becomes) superuser as given.
func (s *Session) mayManage(me *catalog.Role, super bool, verb string) error {
	if me.Superuser {
		return nil
	}
	if super {
		return pgerr.New(pgerr.InsufficientPrivilege, "must be superuser to %s superusers", verb)
	}
	if !me.CreateRole {
		return pgerr.New(pgerr.InsufficientPrivilege, "permission denied to %s role", verb)
	}
	return nil
}

func (s *Session) execCreateRole(n *pg.CreateRoleStmt) (*Result, error) {
	rc, err := s.roles()
	if err != nil {
		return nil, err
	}
	ro, notices, err := s.parseRoleOptions(n.Options)
	if err != nil {
		return nil, err
	}
	r := catalog.Role{Name: n.Role, Inherit: true, ConnLimit: -1, CanLogin: n.StmtType == pg.RoleStmtType_ROLESTMT_USER}
	if err := s.applyRoleOptions(&r, ro, &notices); err != nil {
		return nil, err
	}
	me := s.currentRole()
	if err := s.mayManage(me, r.Superuser || r.Replication || r.BypassRLS, "create"); err != nil {
		return nil, err
	}
	if _, err := rc.CreateRole(r, s.user); err != nil {
		return nil, err
	}
	return &Result{Tag: "CREATE ROLE", Notices: notices}, nil
}

// roleSpecName resolves a RoleSpec (a name, CURRENT_USER, SESSION_USER...).
func (s *Session) roleSpecName(rs *pg.RoleSpec) (string, error) {
	switch rs.GetRoletype() {
	case pg.RoleSpecType_ROLESPEC_CSTRING:
		return rs.Rolename, nil
	case pg.RoleSpecType_ROLESPEC_CURRENT_USER, pg.RoleSpecType_ROLESPEC_CURRENT_ROLE:
		return s.user, nil
	case pg.RoleSpecType_ROLESPEC_SESSION_USER:
		return s.auth.session, nil
	}
	return "", pgerr.Unsupported("ALTER ROLE ALL / PUBLIC is not supported")
}

func (s *Session) execAlterRole(n *pg.AlterRoleStmt) (*Result, error) {
	rc, err := s.roles()
	if err != nil {
		return nil, err
	}
	name, err := s.roleSpecName(n.Role)
	if err != nil {
		return nil, err
	}
	ro, notices, err := s.parseRoleOptions(n.Options)
	if err != nil {
		return nil, err
	}
	me := s.currentRole()
	_, err = rc.AlterRole(name, s.user, func(r *catalog.Role) error {
		onlyOwnPassword := name == s.user && len(ro.flags) == 0 && ro.connLimit == nil && ro.validUntil == nil
		if !onlyOwnPassword {
			if err := s.mayManage(me, r.Superuser || ro.flags["superuser"] || ro.flags["isreplication"] || ro.flags["bypassrls"], "alter"); err != nil {
				return err
			}
		}
		return s.applyRoleOptions(r, ro, &notices)
	})
	if err != nil {
		return nil, err
	}
	return &Result{Tag: "ALTER ROLE", Notices: notices}, nil
}

func (s *Session) execRenameRole(n *pg.RenameStmt) (*Result, error) {
	rc, err := s.roles()
	if err != nil {
		return nil, err
	}
	switch n.Subname {
	case s.auth.session:
		return nil, pgerr.Unsupported("session user cannot be renamed")
	case s.user:
		return nil, pgerr.Unsupported("current user cannot be renamed")
	}
	me := s.currentRole()
	var notices []*pgerr.Error
	_, err = rc.AlterRole(n.Subname, s.user, func(r *catalog.Role) error {
		if err := s.mayManage(me, r.Superuser, "rename"); err != nil {
			return err
		}
		r.Name = n.Newname
		if catalog.IsMD5Password(r.Password) { // the user name is salted into it
			r.Password = ""
			notices = append(notices, noticeOf("MD5 password cleared because of role rename"))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &Result{Tag: "ALTER ROLE", Notices: notices}, nil
}

func (s *Session) execDropRole(n *pg.DropRoleStmt) (*Result, error) {
	rc, err := s.roles()
	if err != nil {
		return nil, err
	}
	me := s.currentRole()
	res := &Result{Tag: "DROP ROLE"}
	for _, node := range n.Roles {
		name, err := s.roleSpecName(node.GetRoleSpec())
		if err != nil {
			return nil, err
		}
		if r, ok := rc.LookupRole(name, s.user); ok {
			if err := s.mayManage(me, r.Superuser, "drop"); err != nil {
				return nil, err
			}
			if name == s.auth.session && name != s.user {
				return nil, pgerr.New(pgerr.Code("55006"), "session user cannot be dropped")
			}
		}
		skipped, err := rc.DropRole(name, s.user, n.MissingOk)
		if err != nil {
			return nil, err
		}
		if skipped != nil {
			res.Notices = append(res.Notices, skipped)
		}
	}
	return res, nil
}

// execRoleStmt runs a role statement; ok is false for other statements.
func (s *Session) execRoleStmt(stmt *pg.Node) (res *Result, ok bool, err error) {
	switch n := stmt.Node.(type) {
	case *pg.Node_CreateRoleStmt:
		res, err = s.execCreateRole(n.CreateRoleStmt)
	case *pg.Node_AlterRoleStmt:
		res, err = s.execAlterRole(n.AlterRoleStmt)
	case *pg.Node_DropRoleStmt:
		res, err = s.execDropRole(n.DropRoleStmt)
	case *pg.Node_RenameStmt:
		if n.RenameStmt.RenameType != pg.ObjectType_OBJECT_ROLE {
			return nil, false, nil
		}
		res, err = s.execRenameRole(n.RenameStmt)
	case *pg.Node_AlterRoleSetStmt:
		err = pgerr.Unsupported("ALTER ROLE ... SET is not supported")
	case *pg.Node_GrantRoleStmt:
		res, err = s.execGrantRole(n.GrantRoleStmt)
	default:
		return nil, false, nil
	}
	return res, true, err
}

// checkPasswordEncryption validates password_encryption.
func checkPasswordEncryption(v string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "md5":
		return "md5", nil
	case "scram-sha-256":
		return "scram-sha-256", nil
	}
	return "", pgerr.New(pgerr.InvalidParameterValue, "invalid value for parameter \"password_encryption\": \"%s\"", v).
		WithHint("Available values: md5, scram-sha-256.")
}

// authCatalog is the part of *catalog.Catalog that logins use.
type authCatalog interface {
	LoginPassword(user string, now time.Time) (string, bool)
	EnsureSuperuser(name, password string) error
	PasswordRoles() int
}

// LoginPassword returns the stored password of a role for password
// authentication (wire.Options.Passwords): a SCRAM-SHA-256 verifier or an
// MD5 hash; ok false when no such role is stored; "" when it has no
// password or it has expired. Safe for concurrent use.
func (e *Engine) LoginPassword(user string) (stored string, ok bool) {
	if ac, isAuth := e.cat.(authCatalog); isAuth {
		return ac.LoginPassword(user, time.Now())
	}
	return "", false
}

// EnsureSuperuser creates the initial superuser name, or makes an existing
// role one; a non-empty password replaces its password. For server start.
func (e *Engine) EnsureSuperuser(name, password string) error {
	ac, ok := e.cat.(authCatalog)
	if !ok {
		return fmt.Errorf("engine: the catalog has no roles")
	}
	return ac.EnsureSuperuser(name, password)
}

// PasswordRoles counts the roles that can log in with a password.
func (e *Engine) PasswordRoles() int {
	if ac, ok := e.cat.(authCatalog); ok {
		return ac.PasswordRoles()
	}
	return 0
}

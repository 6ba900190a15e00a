package engine

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgerr"
)

// SET ROLE, SET SESSION AUTHORIZATION and their RESETs, as PostgreSQL 15
// has them. A session has three users:
//
//   - login: who authenticated; never changes. Only a superuser login may
//     SET SESSION AUTHORIZATION to another role.
//   - auth.session: session_user, changed by SET SESSION AUTHORIZATION
//     (which also ends any SET ROLE).
//   - auth.role: SET ROLE's role ("" for NONE); a superuser session user
//     may take any role, others only roles they are members of (with or
//     without INHERIT).
//
// s.user is the current user (auth.role, else auth.session): every
// privilege check, owner of new objects, current_user and the catalog's
// view of "the session's user" follow it. A plan records the user it was
// planned as and is planned again when that changed (replanIfStale), so a
// prepared statement is re-checked under the new role.
//
// The changes are transactional as in PostgreSQL: undone by ROLLBACK and
// ROLLBACK TO SAVEPOINT; SET LOCAL lasts until the end of the transaction
// block (outside one it warns and does nothing). Owned by the session's
// goroutine, like the rest of Session.

// authState is who the session acts as.
type authState struct {
	session string // session_user
	role    string // SET ROLE's role; "" for NONE
}

// current is current_user.
func (a authState) current() string {
	if a.role != "" {
		return a.role
	}
	return a.session
}

// authTx is what the open transaction block changed of authState: start
// is the state at its first change, set the last session-level SET (nil:
// none), local whether a SET LOCAL ran.
type authTx struct {
	start authState
	set   *authState
	local bool
}

// currentRole is the current user's role. The login user unknown to the
// catalog (trust authentication) is the virtual superuser; a role dropped
// since it was set has no privileges.
func (s *Session) currentRole() *catalog.Role {
	if s.user == s.login {
		return s.eng.sessionRole(s.user)
	}
	if rc, ok := s.eng.cat.(roleCatalog); ok {
		if r, ok := rc.LookupRole(s.user, s.login); ok {
			return r
		}
	}
	return &catalog.Role{Name: s.user, OID: noRoleOID}
}

// noRoleOID is the OID of a role that no longer exists: it owns nothing
// and is granted nothing.
const noRoleOID = ^uint32(0)

// isAuthSetting reports the parameters execSetAuth handles.
func isAuthSetting(name string) bool {
	switch strings.ToLower(name) {
	case "role", "session_authorization":
		return true
	}
	return false
}

// execSetAuth runs SET/RESET ROLE and SET/RESET SESSION AUTHORIZATION.
func (s *Session) execSetAuth(v *pg.VariableSetStmt, res *Result) (*Result, error) {
	name := strings.ToLower(v.Name)
	next := s.auth
	switch v.Kind {
	case pg.VariableSetKind_VAR_SET_VALUE:
		val, err := setValue(v.Args)
		if err != nil {
			return nil, err
		}
		if name == "role" {
			if val == "none" { // NONE, or 'none', as PostgreSQL's check_role

				next.role = ""
			} else {
				if err := s.maySetRole(val); err != nil {
					return nil, err
				}
				next.role = val
			}
		} else {
			if err := s.maySetSessionAuthorization(val); err != nil {
				return nil, err
			}
			next = authState{session: val}
		}
	case pg.VariableSetKind_VAR_SET_DEFAULT, pg.VariableSetKind_VAR_RESET:
		if v.Kind == pg.VariableSetKind_VAR_RESET {
			res.Tag = "RESET"
		}
		if name == "role" {
			next.role = ""
		} else {
			next = authState{session: s.login}
		}
	default:
		return nil, pgerr.Unsupported("SET %s is not supported", v.Name)
	}
	if v.IsLocal && s.tx == 'I' {
		w := pgerr.New(pgerr.Code("25P01"), "SET LOCAL can only be used in transaction blocks")
		w.Severity = pgerr.SevWarning
		res.Notices = append(res.Notices, w)
		return res, nil
	}
	s.changeAuth(next, v.IsLocal)
	res.ParamStatus = map[string]string{"session_authorization": s.auth.session, "is_superuser": s.superuserSetting()}
	return res, nil
}

// maySetRole checks SET ROLE name: the role exists, and the session user
// is a superuser or a member of it.
func (s *Session) maySetRole(name string) error {
	target, err := s.lookupRoleFor(name)
	if err != nil {
		return err
	}
	sess := s.roleNamed(s.auth.session)
	if sess.Superuser || sess.OID == target.OID {
		return nil
	}
	if rc, ok := s.eng.cat.(roleCatalog); ok && sess.OID != noRoleOID && rc.IsMemberOfRole(sess.OID, target.OID) {
		return nil
	}
	return pgerr.New(pgerr.InsufficientPrivilege, "permission denied to set role \"%s\"", name)
}

// maySetSessionAuthorization checks SET SESSION AUTHORIZATION name: the
// role exists, and the login user is a superuser or name is the login.
func (s *Session) maySetSessionAuthorization(name string) error {
	if _, err := s.lookupRoleFor(name); err != nil {
		return err
	}
	if name == s.login || s.roleNamed(s.login).Superuser {
		return nil
	}
	return pgerr.New(pgerr.InsufficientPrivilege, "permission denied to set session authorization")
}

// lookupRoleFor finds a role a session may switch to (as the login sees
// the roles: the trust-mode virtual superuser is the login's name).
func (s *Session) lookupRoleFor(name string) (*catalog.Role, error) {
	if name == s.login {
		return s.eng.sessionRole(name), nil
	}
	if rc, ok := s.eng.cat.(roleCatalog); ok {
		if r, ok := rc.LookupRole(name, s.login); ok {
			return r, nil
		}
	}
	return nil, pgerr.New(pgerr.InvalidParameterValue, "role \"%s\" does not exist", name)
}

// roleNamed is the role of name, the login's virtual superuser included;
// unknown names have no privileges.
func (s *Session) roleNamed(name string) *catalog.Role {
	if r, err := s.lookupRoleFor(name); err == nil {
		return r
	}
	return &catalog.Role{Name: name, OID: noRoleOID}
}

// superuserSetting is is_superuser: whether the current user is one.
func (s *Session) superuserSetting() string {
	if s.currentRole().Superuser {
		return "on"
	}
	return "off"
}

// changeAuth makes next the session's users, recording what a transaction
// block's end or a ROLLBACK TO must restore.
func (s *Session) changeAuth(next authState, local bool) {
	if s.tx != 'I' {
		if s.authTx == nil {
			s.authTx = &authTx{start: s.auth}
		}
		if local {
			s.authTx.local = true
		} else {
			n := next
			s.authTx.set = &n
		}
	}
	s.setAuth(next)
}

// setAuth switches the users and the settings that show them.
func (s *Session) setAuth(a authState) {
	s.auth = a
	s.user = a.current()
	s.set.vals["session_authorization"] = a.session
	s.set.vals["is_superuser"] = s.superuserSetting()
}

// authAtTxEnd restores what COMMIT or ROLLBACK leaves of the block's
// changes: a commit keeps the last session-level SET (SET LOCAL ends), a
// rollback restores the state before the block.
func (s *Session) authAtTxEnd(commit bool) {
	t := s.authTx
	s.authTx = nil
	switch {
	case t == nil:
	case !commit:
		s.setAuth(t.start)
	case t.set != nil:
		s.setAuth(*t.set)
	case t.local:
		s.setAuth(t.start)
	}
}

// roleSetting is SHOW role: the SET ROLE role, or "none".
func (s *Session) roleSetting() string {
	if s.auth.role == "" {
		return "none"
	}
	return s.auth.role
}

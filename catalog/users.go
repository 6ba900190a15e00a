package catalog

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Roles (users and groups, pg_authid). They live in rolesFile beside the
// catalog file, readable by the owner only since it holds password
// verifiers, and are published like relations: an immutable *roleSet that
// readers load without locking; changes serialize on Catalog.mu.
//
// The bootstrap superuser has OID 10. Until a role with OID 10 is stored
// (by EnsureSuperuser, or by an ALTER ROLE of that role), it is virtual and
// takes the name of whoever looks at it: in trust mode any user name
// connects as that superuser, as the embedded quick start expects.

// Role is one pg_authid row. A *Role is immutable once published.
type Role struct {
	OID         uint32 `json:"oid"`
	Name        string `json:"name"`
	Superuser   bool   `json:"superuser,omitempty"`
	Inherit     bool   `json:"inherit"`
	CreateRole  bool   `json:"createrole,omitempty"`
	CreateDB    bool   `json:"createdb,omitempty"`
	CanLogin    bool   `json:"canlogin,omitempty"`
	Replication bool   `json:"replication,omitempty"`
	BypassRLS   bool   `json:"bypassrls,omitempty"`
	ConnLimit   int32  `json:"connlimit"`
	// Password is rolpassword: a SCRAM-SHA-256 verifier
	// ("SCRAM-SHA-256$4096:salt$StoredKey:ServerKey"), an MD5 hash
	// ("md5" + 32 hex digits) or "" for none.
	Password string `json:"password,omitempty"`
	// ValidUntil is rolvaliduntil; nil means no limit.
	ValidUntil *types.TimestampValue `json:"valid_until,omitempty"`
}

// roleSet is one immutable version of the stored roles.
type roleSet struct {
	byName  map[string]*Role
	byOID   map[uint32]*Role
	members []Membership // pg_auth_members (members.go); never modified in place once published
}

const rolesFile = "roles.json"

type fileRoles struct {
	Version int     `json:"version"`
	Roles   []*Role `json:"roles"`
	// Members are the role memberships (GRANT role TO role).
	Members []Membership `json:"members,omitempty"`
}

// loadRoles reads rolesFile (none: no stored roles) into c.roles.
func (c *Catalog) loadRoles() error {
	set := &roleSet{byName: map[string]*Role{}, byOID: map[uint32]*Role{}}
	path := filepath.Join(c.dir, rolesFile)
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("catalog: %w", err)
	}
	if err == nil {
		var f fileRoles
		if err := json.Unmarshal(data, &f); err != nil || f.Version != 1 {
			return fmt.Errorf("catalog: %s is corrupt or of an unknown version: %v", path, err)
		}
		for _, r := range f.Roles {
			set.byName[r.Name] = r
			set.byOID[r.OID] = r
		}
		set.members = f.Members
	}
	c.roles.Store(set)
	return nil
}

// commitRoles persists set and publishes it; the caller holds c.mu.
func (c *Catalog) commitRoles(set *roleSet) error {
	f := fileRoles{Version: 1, Roles: set.sorted(), Members: set.members}
	data, err := json.MarshalIndent(&f, "", " ")
	if err != nil {
		return fmt.Errorf("catalog: encode roles: %w", err)
	}
	if err := writeFileAtomicMode(filepath.Join(c.dir, rolesFile), data, 0o600); err != nil {
		return err
	}
	c.roles.Store(set)
	c.cur.Store(c.snap().clone()) // a new generation: plans re-check privileges (acl.go)
	return nil
}

func (s *roleSet) clone() *roleSet {
	n := &roleSet{byName: make(map[string]*Role, len(s.byName)+1), byOID: make(map[uint32]*Role, len(s.byOID)+1),
		members: append([]Membership(nil), s.members...)}
	for k, v := range s.byName {
		n.byName[k] = v
	}
	for k, v := range s.byOID {
		n.byOID[k] = v
	}
	return n
}

func (s *roleSet) put(r *Role) {
	if old := s.byOID[r.OID]; old != nil {
		delete(s.byName, old.Name)
	}
	s.byName[r.Name] = r
	s.byOID[r.OID] = r
}

func (s *roleSet) sorted() []*Role {
	out := make([]*Role, 0, len(s.byOID))
	for _, r := range s.byOID {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].OID < out[j].OID })
	return out
}

func (c *Catalog) roleSet() *roleSet {
	if s := c.roles.Load(); s != nil {
		return s
	}
	return &roleSet{}
}

// bootstrapRole is the OID 10 superuser as user sees it: the stored one,
// or a virtual one named user (when user is not a stored role) or
// SuperuserName.
func (c *Catalog) bootstrapRole(user string) *Role {
	set := c.roleSet()
	if r := set.byOID[SuperuserOID]; r != nil {
		return r
	}
	name := user
	if name == "" || set.byName[name] != nil {
		name = SuperuserName
	}
	return &Role{OID: SuperuserOID, Name: name, Superuser: true, Inherit: true, CreateRole: true, CreateDB: true,
		CanLogin: true, Replication: true, BypassRLS: true, ConnLimit: -1}
}

// LookupRole returns the role named name as the session of user sees it
// (the virtual bootstrap superuser and the predefined roles included).
func (c *Catalog) LookupRole(name, user string) (*Role, bool) {
	if r := c.roleSet().byName[name]; r != nil {
		return r, true
	}
	if b := c.bootstrapRole(user); b.Name == name {
		return b, true
	}
	if r := predefinedRole(name); r != nil {
		return r, true
	}
	return nil, false
}

// StoredRole returns a stored role by name (the virtual superuser is not
// one): what password authentication checks against.
func (c *Catalog) StoredRole(name string) (*Role, bool) {
	r := c.roleSet().byName[name]
	return r, r != nil
}

// roleName names a role OID for pg_get_userbyid as user sees it.
func (c *Catalog) roleName(oid uint32, user string) (string, bool) {
	if oid == SuperuserOID {
		return c.bootstrapRole(user).Name, true
	}
	if r := c.roleSet().byOID[oid]; r != nil {
		return r.Name, true
	}
	if r := predefinedByOID(oid); r != nil {
		return r.Name, true
	}
	return "", false
}

// checkRoleName refuses the names PostgreSQL reserves.
func checkRoleName(name string) error {
	switch {
	case name == "public" || name == "none":
		return pgerr.New(pgerr.Code("42939"), "role name \"%s\" is reserved", name)
	case strings.HasPrefix(name, "pg_"):
		return pgerr.New(pgerr.Code("42939"), "role name \"%s\" is reserved", name).
			WithDetail("Role names starting with \"pg_\" are reserved.")
	case name == "":
		return pgerr.New(pgerr.Code("42602"), "zero-length delimited identifier")
	}
	return nil
}

// CreateRole stores a new role (r.OID is assigned; r is not modified). user
// is the creating session's user, whose virtual superuser name is taken.
func (c *Catalog) CreateRole(r Role, user string) (*Role, error) {
	if err := checkRoleName(r.Name); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.LookupRole(r.Name, user); ok {
		return nil, pgerr.New(pgerr.DuplicateObject, "role \"%s\" already exists", r.Name)
	}
	snap := c.snap().clone()
	r.OID = snap.allocOID()
	if err := c.commit(snap); err != nil {
		return nil, err
	}
	set := c.roleSet().clone()
	set.put(&r)
	if err := c.commitRoles(set); err != nil {
		return nil, err
	}
	return &r, nil
}

// AlterRole applies change to a copy of the role named name (as user sees
// it; altering the virtual superuser stores it) and stores the result.
// change may return an error to refuse.
func (c *Catalog) AlterRole(name, user string, change func(r *Role) error) (*Role, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old, ok := c.LookupRole(name, user)
	if !ok {
		return nil, pgerr.New(pgerr.UndefinedObject, "role \"%s\" does not exist", name)
	}
	if isPredefinedOID(old.OID) {
		return nil, pgerr.New(pgerr.Code("42939"), "role name \"%s\" is reserved", name).
			WithDetail("Cannot alter reserved roles.")
	}
	r := *old
	if err := change(&r); err != nil {
		return nil, err
	}
	if r.Name != old.Name {
		if err := checkRoleName(r.Name); err != nil {
			return nil, err
		}
		if _, taken := c.LookupRole(r.Name, user); taken {
			return nil, pgerr.New(pgerr.DuplicateObject, "role \"%s\" already exists", r.Name)
		}
	}
	set := c.roleSet().clone()
	set.put(&r)
	if err := c.commitRoles(set); err != nil {
		return nil, err
	}
	return &r, nil
}

// DropRole removes a stored role. The bootstrap superuser and the session's
// own user cannot be dropped.
func (c *Catalog) DropRole(name, user string, ifExists bool) (skipped *pgerr.Error, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.LookupRole(name, user)
	switch {
	case !ok && ifExists:
		return notice(pgerr.Code("00000"), "role \"%s\" does not exist, skipping", name), nil
	case !ok:
		return nil, pgerr.New(pgerr.UndefinedObject, "role \"%s\" does not exist", name)
	case name == user:
		return nil, pgerr.New(pgerr.Code("55006"), "current user cannot be dropped")
	case r.OID == SuperuserOID:
		return nil, pgerr.New(pgerr.Code("55006"), "cannot drop role %s because it is required by the database system", name)
	case isPredefinedOID(r.OID):
		return nil, pgerr.New(pgerr.Code("2BP01"), "cannot drop role %s because it is required by the database system", name)
	}
	if err := c.checkRoleUnused(r); err != nil { // acl_grant.go
		return nil, err
	}
	set := c.roleSet().clone()
	delete(set.byName, r.Name)
	delete(set.byOID, r.OID)
	set.dropMemberships(r.OID)
	return nil, c.commitRoles(set)
}

// EnsureSuperuser makes name a superuser that can log in, creating it
// (with OID 10 while that is free) if needed; a non-empty password
// replaces its password (stored as a SCRAM-SHA-256 verifier). Called at
// server start for the initial user.
func (c *Catalog) EnsureSuperuser(name, password string) error {
	if err := checkRoleName(name); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	set := c.roleSet().clone()
	r := Role{Name: name, Inherit: true, ConnLimit: -1}
	if old := set.byName[name]; old != nil {
		r = *old
	} else if set.byOID[SuperuserOID] == nil {
		r.OID = SuperuserOID
	} else {
		snap := c.snap().clone()
		r.OID = snap.allocOID()
		if err := c.commit(snap); err != nil {
			return err
		}
	}
	r.Superuser, r.CanLogin, r.CreateRole, r.CreateDB, r.Replication, r.BypassRLS = true, true, true, true, true, true
	if password != "" && !PasswordMatches(r.Password, name, password) {
		v, err := SCRAMVerifier(password)
		if err != nil {
			return err
		}
		r.Password = v
	}
	if old := set.byName[name]; old != nil && *old == r {
		return nil // nothing changed: leave the file alone
	}
	set.put(&r)
	return c.commitRoles(set)
}

// scramIterations is PostgreSQL's scram_iterations default.
const scramIterations = 4096

// SCRAMVerifier builds PostgreSQL's stored form of a SCRAM-SHA-256 password:
// "SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>", base64.
func SCRAMVerifier(password string) (string, error) {
	var salt [16]byte
	if _, err := rand.Read(salt[:]); err != nil {
		return "", fmt.Errorf("catalog: salt: %w", err)
	}
	salted, err := pbkdf2.Key(sha256.New, password, salt[:], scramIterations, sha256.Size)
	if err != nil {
		return "", fmt.Errorf("catalog: scram: %w", err)
	}
	mac := func(key []byte, msg string) []byte {
		h := hmac.New(sha256.New, key)
		h.Write([]byte(msg))
		return h.Sum(nil)
	}
	stored := sha256.Sum256(mac(salted, "Client Key"))
	b64 := base64.StdEncoding.EncodeToString
	return "SCRAM-SHA-256$" + strconv.Itoa(scramIterations) + ":" + b64(salt[:]) + "$" +
		b64(stored[:]) + ":" + b64(mac(salted, "Server Key")), nil
}

// PasswordMatches reports whether stored (a SCRAM-SHA-256 verifier or an
// MD5 hash of user's password) was made from password.
func PasswordMatches(stored, user, password string) bool {
	if IsMD5Password(stored) {
		return hmac.Equal([]byte(stored), []byte(MD5Password(user, password)))
	}
	if !IsSCRAMVerifier(stored) {
		return false
	}
	rest := strings.TrimPrefix(stored, "SCRAM-SHA-256$")
	iterSalt, keys, _ := strings.Cut(rest, "$")
	iter, salt64, _ := strings.Cut(iterSalt, ":")
	storedKey, _, _ := strings.Cut(keys, ":")
	n, _ := strconv.Atoi(iter)
	salt, _ := base64.StdEncoding.DecodeString(salt64)
	salted, err := pbkdf2.Key(sha256.New, password, salt, n, sha256.Size)
	if err != nil {
		return false
	}
	h := hmac.New(sha256.New, salted)
	h.Write([]byte("Client Key"))
	sum := sha256.Sum256(h.Sum(nil))
	return base64.StdEncoding.EncodeToString(sum[:]) == storedKey
}

// MD5Password is PostgreSQL's md5 stored form: "md5" + md5(password + user).
func MD5Password(user, password string) string {
	sum := md5.Sum([]byte(password + user))
	return "md5" + hex.EncodeToString(sum[:])
}

// IsMD5Password reports whether s is already an MD5 hash (as PostgreSQL's
// get_password_type decides).
func IsMD5Password(s string) bool {
	if len(s) != 35 || !strings.HasPrefix(s, "md5") {
		return false
	}
	_, err := hex.DecodeString(s[3:])
	return err == nil
}

// IsSCRAMVerifier reports whether s is already a SCRAM-SHA-256 verifier.
func IsSCRAMVerifier(s string) bool {
	rest, ok := strings.CutPrefix(s, "SCRAM-SHA-256$")
	if !ok {
		return false
	}
	iterSalt, keys, ok := strings.Cut(rest, "$")
	iter, salt, ok1 := strings.Cut(iterSalt, ":")
	stored, server, ok2 := strings.Cut(keys, ":")
	if !ok || !ok1 || !ok2 {
		return false
	}
	if n, err := strconv.Atoi(iter); err != nil || n <= 0 {
		return false
	}
	for _, part := range []string{salt, stored, server} {
		if _, err := base64.StdEncoding.DecodeString(part); err != nil {
			return false
		}
	}
	return true
}

// EncryptPassword returns the stored form of a password given in CREATE or
// ALTER ROLE: a verifier or MD5 hash is kept as is; anything else is hashed
// by method ("scram-sha-256" or "md5", the password_encryption setting).
func EncryptPassword(user, password, method string) (string, error) {
	if IsSCRAMVerifier(password) || IsMD5Password(password) {
		return password, nil
	}
	if strings.EqualFold(method, "md5") {
		return MD5Password(user, password), nil
	}
	return SCRAMVerifier(password)
}

func init() {
	registerRows("pg_catalog.pg_roles", pgRolesRows)
	registerRows("pg_catalog.pg_authid", pgAuthidRows)
	registerRows("pg_catalog.pg_user", pgUserRows)
	registerRows("pg_catalog.pg_shadow", pgShadowRows)
	pgCatalogDefs = append(pgCatalogDefs, sysDef{12005, "pg_catalog", "pg_shadow", []Column{
		{Name: "usename", Type: tName},
		{Name: "usesysid", Type: tOid},
		{Name: "usecreatedb", Type: tBool},
		{Name: "usesuper", Type: tBool},
		{Name: "userepl", Type: tBool},
		{Name: "usebypassrls", Type: tBool},
		{Name: "passwd", Type: tText},
		{Name: "valuntil", Type: types.TTimestampTZ},
		{Name: "useconfig", Type: tTextArr},
	}})
}

// rolesFor lists the roles a session of user sees in pg_authid order: the
// bootstrap superuser, the predefined roles, then the stored roles by OID.
func (c *Catalog) rolesFor(user string) []*Role {
	out := append([]*Role{c.bootstrapRole(user)}, predefinedRoles...)
	for _, r := range c.roleSet().sorted() {
		if r.OID != SuperuserOID {
			out = append(out, r)
		}
	}
	return out
}

// canSeePasswords: pg_authid and pg_shadow show verifiers to superusers only.
func (c *Catalog) canSeePasswords(user string) bool {
	r, ok := c.LookupRole(user, user)
	return !ok || r.Superuser // trust mode's unknown users are superusers
}

func validUntil(r *Role) any {
	if r.ValidUntil == nil {
		return nil
	}
	return *r.ValidUntil
}

func pgRolesRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	for _, r := range c.rolesFor(ctx.User) {
		err := b.add(row{
			"rolname": r.Name, "rolsuper": r.Superuser, "rolinherit": r.Inherit, "rolcreaterole": r.CreateRole,
			"rolcreatedb": r.CreateDB, "rolcanlogin": r.CanLogin, "rolreplication": r.Replication,
			"rolconnlimit": r.ConnLimit, "rolpassword": "********", "rolvaliduntil": validUntil(r),
			"rolbypassrls": r.BypassRLS, "oid": r.OID,
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func pgAuthidRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	see := c.canSeePasswords(ctx.User)
	for _, r := range c.rolesFor(ctx.User) {
		pw := any(nil)
		if see {
			pw = nullIfEmpty(r.Password)
		}
		err := b.add(row{
			"oid": r.OID, "rolname": r.Name, "rolsuper": r.Superuser, "rolinherit": r.Inherit,
			"rolcreaterole": r.CreateRole, "rolcreatedb": r.CreateDB, "rolcanlogin": r.CanLogin,
			"rolreplication": r.Replication, "rolbypassrls": r.BypassRLS, "rolconnlimit": r.ConnLimit,
			"rolpassword": pw, "rolvaliduntil": validUntil(r),
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// userRows fills pg_user (masked passwords) or pg_shadow (verifiers, for
// superusers): the roles that can log in.
func userRows(c *Catalog, ctx RowsContext, b *rowBuilder, shadow bool) error {
	see := shadow && c.canSeePasswords(ctx.User)
	for _, r := range c.rolesFor(ctx.User) {
		if !r.CanLogin {
			continue
		}
		pw := any("********")
		if shadow {
			pw = nil
			if see {
				pw = nullIfEmpty(r.Password)
			}
		}
		err := b.add(row{
			"usename": r.Name, "usesysid": r.OID, "usecreatedb": r.CreateDB, "usesuper": r.Superuser,
			"userepl": r.Replication, "usebypassrls": r.BypassRLS, "passwd": pw, "valuntil": validUntil(r),
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func pgUserRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	return userRows(c, ctx, b, false)
}

func pgShadowRows(c *Catalog, s *snapshot, ctx RowsContext, b *rowBuilder) error {
	return userRows(c, ctx, b, true)
}

// LoginPassword returns the stored password user must prove at login
// (wire.Options.Passwords): ok is false when user is not a stored role; the
// password is "" when the role has none or its VALID UNTIL has passed.
func (c *Catalog) LoginPassword(user string, now time.Time) (string, bool) {
	r, ok := c.StoredRole(user)
	if !ok {
		return "", false
	}
	if r.ValidUntil != nil && *r.ValidUntil != types.TimestampInfinity &&
		int64(*r.ValidUntil) < now.UnixMicro() {
		return "", true
	}
	return r.Password, true
}

// PasswordRoles counts the stored roles that can log in with a password.
func (c *Catalog) PasswordRoles() int {
	n := 0
	for _, r := range c.roleSet().byOID {
		if r.CanLogin && r.Password != "" {
			n++
		}
	}
	return n
}

package catalog

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/streamsql/streamsql/types"
)

func TestPasswordForms(t *testing.T) {
	// PostgreSQL 15: SET password_encryption = md5; CREATE USER mdu PASSWORD 'abc'
	if got := MD5Password("mdu", "abc"); got != "md500da5aebe8890ea353ae3f7d3417c733" {
		t.Errorf("MD5Password = %s", got)
	}
	v, err := SCRAMVerifier("pw")
	if err != nil || !IsSCRAMVerifier(v) {
		t.Fatalf("SCRAMVerifier = %q, %v", v, err)
	}
	v2, _ := SCRAMVerifier("pw")
	if v == v2 {
		t.Error("two verifiers share a salt")
	}
	for in, method := range map[string]string{v: "md5", "md500da5aebe8890ea353ae3f7d3417c733": "scram-sha-256"} {
		if got, _ := EncryptPassword("u", in, method); got != in {
			t.Errorf("EncryptPassword(%q) re-hashed a stored form: %q", in, got)
		}
	}
	if got, _ := EncryptPassword("mdu", "abc", "MD5"); got != "md500da5aebe8890ea353ae3f7d3417c733" {
		t.Errorf("EncryptPassword md5 = %q", got)
	}
	if !PasswordMatches(v, "u", "pw") || PasswordMatches(v, "u", "pW") || !PasswordMatches(MD5Password("mdu", "abc"), "mdu", "abc") || PasswordMatches(MD5Password("mdu", "abc"), "mdu", "abd") {
		t.Error("PasswordMatches")
	}
	// made by PostgreSQL 15 for 'interop pw'
	if !PasswordMatches("SCRAM-SHA-256$4096:kVGivKiTI94YYkeSGppjqA==$dzx1VcTKqFLZV3BsniYz0PvTPcBSZz/CXVMdBJZPV2M=:CAoeQAeKLSbU8qhaQvMQHOPBn71KPate/BKdHgv159o=", "x", "interop pw") {
		t.Error("PostgreSQL's verifier does not match its password")
	}
	for _, bad := range []string{"SCRAM-SHA-256$x:abc$a:b", "md5xyz", "md5" + "0123456789abcdef0123456789abcdeg", "plain"} {
		if IsSCRAMVerifier(bad) || IsMD5Password(bad) {
			t.Errorf("%q taken for a stored form", bad)
		}
	}
}

// TestRolesPersist: roles survive reopening; the file is private; an
// expired VALID UNTIL hides the password from logins.
func TestRolesPersist(t *testing.T) {
	dir := t.TempDir()
	st := newStore(t)
	c := openTest(t, dir, st)
	if _, err := c.CreateRole(Role{Name: "alice", CanLogin: true, Inherit: true, ConnLimit: -1, Password: MD5Password("alice", "x")}, "admin"); err != nil {
		t.Fatal(err)
	}
	past := int64(time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro())
	if _, err := c.AlterRole("alice", "admin", func(r *Role) error {
		v := types.TimestampValue(past)
		r.ValidUntil = &v
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(dir, rolesFile)); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("%s: %v %v", rolesFile, st, err)
	}
	if err := c.EnsureSuperuser("root", "root pw"); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, rolesFile))
	if err := c.EnsureSuperuser("root", "root pw"); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, rolesFile)); string(after) != string(before) {
		t.Error("EnsureSuperuser with the same password rewrote the roles")
	}
	if r, _ := c.StoredRole("root"); r.OID != SuperuserOID || !r.Superuser || !PasswordMatches(r.Password, "root", "root pw") {
		t.Errorf("root: %+v", r)
	}
	c2 := openTest(t, dir, st)
	r, ok := c2.StoredRole("alice")
	if !ok || r.OID < FirstUserOID || r.Password != MD5Password("alice", "x") {
		t.Fatalf("after reopen: %+v %v", r, ok)
	}
	if pw, ok := c2.LoginPassword("alice", time.Now()); !ok || pw != "" {
		t.Errorf("expired role's login password %q %v", pw, ok)
	}
	if pw, ok := c2.LoginPassword("alice", time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)); !ok || pw == "" {
		t.Errorf("before expiry: %q %v", pw, ok)
	}
	if _, ok := c2.LoginPassword("nobody", time.Now()); ok {
		t.Error("an unknown user has a login password")
	}
}

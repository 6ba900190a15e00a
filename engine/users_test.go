package engine

import (
	"strings"
	"testing"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgerr"
)

// wantErr checks an error's SQLSTATE and, unless msg is "", its message.
func wantErr(t *testing.T, err error, code pgerr.Code, msg string) {
	t.Helper()
	e := pgerr.As(err)
	if e == nil || e.Code != code || (msg != "" && e.Message != msg) {
		t.Errorf("got %v, want %s %s", err, code, msg)
	}
}

// TestRoles: CREATE / ALTER / DROP USER and ROLE store roles as PostgreSQL
// does (SCRAM-SHA-256 verifiers by default, md5 under password_encryption
// = md5), survive a restart, and follow PostgreSQL's attribute rules.
func TestRoles(t *testing.T) {
	dir := t.TempDir()
	e, s := open(t, dir)
	mustRun(t, s, "CREATE USER alice WITH PASSWORD 'alice pw' CREATEDB")
	mustRun(t, s, "SET password_encryption = 'md5'")
	mustRun(t, s, "CREATE ROLE bob LOGIN PASSWORD 'bob pw' CONNECTION LIMIT 3")
	mustRun(t, s, "CREATE ROLE grp")
	mustRun(t, s, "CREATE ROLE pre LOGIN PASSWORD 'md5abcdefabcdefabcdefabcdefabcdefab'")
	got := mustRun(t, s, "SELECT rolname, rolcanlogin, rolcreatedb, rolconnlimit, left(rolpassword, 14) FROM pg_authid WHERE oid >= 16384 ORDER BY oid")
	want := []string{"alice|t|t|-1|SCRAM-SHA-256$", "bob|t|f|3|" + catalog.MD5Password("bob", "bob pw")[:14], "grp|f|f|-1|NULL", "pre|t|f|-1|md5abcdefabcde"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("pg_authid:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if pw, ok := e.LoginPassword("bob"); !ok || pw != catalog.MD5Password("bob", "bob pw") {
		t.Errorf("bob's stored password %q %v", pw, ok)
	}
	if got := mustRun(t, s, "SELECT rolpassword FROM pg_roles WHERE rolname = 'alice'"); len(got) != 1 || got[0] != "********" {
		t.Errorf("pg_roles shows %v", got)
	}
	_, _, err := run(t, s, "CREATE USER alice")
	wantErr(t, err, pgerr.DuplicateObject, `role "alice" already exists`)
	_, _, err = run(t, s, "CREATE USER pg_x")
	wantErr(t, err, "42939", `role name "pg_x" is reserved`)
	_, _, err = run(t, s, "CREATE USER tester") // the session's own (virtual superuser) name
	wantErr(t, err, pgerr.DuplicateObject, `role "tester" already exists`)

	// A rename clears an md5 password (the name is salted into it).
	mustRun(t, s, "ALTER ROLE bob RENAME TO robert")
	if pw, ok := e.LoginPassword("robert"); !ok || pw != "" {
		t.Errorf("robert's password after the rename: %q %v", pw, ok)
	}
	mustRun(t, s, "ALTER USER robert WITH PASSWORD NULL NOLOGIN")
	mustRun(t, s, "DROP USER IF EXISTS nobody, grp")
	_, _, err = run(t, s, "DROP ROLE grp")
	wantErr(t, err, pgerr.UndefinedObject, `role "grp" does not exist`)

	// Non-superusers: alice may change her own password, nothing else.
	as, err := e.NewSession("alice", "db", nil)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := as.set.get("is_superuser"); v != "off" {
		t.Errorf("alice's is_superuser = %s", v)
	}
	mustRun(t, as, "ALTER USER alice PASSWORD 'new pw'")
	_, _, err = run(t, as, "CREATE USER mallory")
	wantErr(t, err, pgerr.InsufficientPrivilege, "permission denied to create role")
	_, _, err = run(t, as, "ALTER USER alice SUPERUSER")
	wantErr(t, err, pgerr.InsufficientPrivilege, "")
	_, _, err = run(t, as, "ALTER USER robert PASSWORD 'x'")
	wantErr(t, err, pgerr.InsufficientPrivilege, "")
	if got := mustRun(t, as, "SELECT count(rolpassword) FROM pg_authid"); got[0] != "0" {
		t.Errorf("a non-superuser sees %s passwords in pg_authid", got[0])
	}
	as.Close()
	// A role that may not log in gets no session.
	_, err = e.NewSession("robert", "db", nil)
	wantErr(t, err, pgerr.InvalidAuthorizationSpec, `role "robert" is not permitted to log in`)

	// The initial superuser takes OID 10; everything survives a restart.
	if err := e.EnsureSuperuser("admin", "admin pw"); err != nil {
		t.Fatal(err)
	}
	e.Close()
	e, s = open(t, dir)
	defer e.Close()
	got = mustRun(t, s, "SELECT oid, rolname, rolsuper, rolcanlogin FROM pg_roles WHERE oid = 10 OR oid = 6171 OR oid >= 16384 ORDER BY oid")
	want = []string{"10|admin|t|t", "6171|pg_database_owner|f|f", "16384|alice|f|t", "16385|robert|f|f", "16387|pre|f|t"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("pg_roles after restart:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if pw, ok := e.LoginPassword("alice"); !ok || !catalog.IsSCRAMVerifier(pw) {
		t.Errorf("alice after restart: %q %v", pw, ok)
	}
	if n := e.PasswordRoles(); n != 3 {
		t.Errorf("PasswordRoles = %d, want 3 (admin, alice, pre)", n)
	}
	if got := mustRun(t, s, "SELECT pg_get_userbyid(10), pg_get_userbyid(16384)"); got[0] != "admin|alice" {
		t.Errorf("pg_get_userbyid: %v", got)
	}
	_, _, err = run(t, s, "DROP ROLE admin")
	wantErr(t, err, "55006", "cannot drop role admin because it is required by the database system")
	_, _, err = run(t, s, "SET password_encryption = 'plain'")
	wantErr(t, err, pgerr.InvalidParameterValue, "")
}

// TestVirtualSuperuser: without stored roles any user name is the
// superuser (trust mode), and ALTER USER on it stores it as OID 10.
func TestVirtualSuperuser(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	if got := mustRun(t, s, "SELECT rolname FROM pg_roles WHERE oid = 10"); got[0] != "tester" {
		t.Errorf("OID 10 is %v, want the session user", got)
	}
	if _, ok := e.LoginPassword("tester"); ok {
		t.Error("the virtual superuser has a stored password")
	}
	mustRun(t, s, "ALTER USER tester PASSWORD 'pw'")
	if pw, ok := e.LoginPassword("tester"); !ok || !catalog.IsSCRAMVerifier(pw) {
		t.Errorf("after ALTER USER: %q %v", pw, ok)
	}
	other, err := e.NewSession("someone", "db", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if got := mustRun(t, other, "SELECT rolname, rolsuper FROM pg_roles WHERE oid = 10"); got[0] != "tester|t" {
		t.Errorf("OID 10 for another session: %v", got)
	}
}

// TestConnectionLimit: CONNECTION LIMIT is enforced for roles that are not
// superusers (53300, as PostgreSQL) and shown in pg_roles.rolconnlimit.
func TestConnectionLimit(t *testing.T) {
	e, s := open(t, t.TempDir())
	mustRun(t, s, "CREATE USER bob CONNECTION LIMIT 1")
	mustRun(t, s, "CREATE USER boss SUPERUSER CONNECTION LIMIT 1")
	mustRun(t, s, "CREATE USER nobody CONNECTION LIMIT 0")
	if got := mustRun(t, s, "SELECT rolconnlimit FROM pg_roles WHERE rolname = 'bob'"); got[0] != "1" {
		t.Errorf("rolconnlimit %v", got)
	}
	b1, err := e.NewSession("bob", "db", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.NewSession("bob", "db", nil)
	wantErr(t, err, pgerr.TooManyConnections, `too many connections for role "bob"`)
	_, err = e.NewSession("nobody", "db", nil)
	wantErr(t, err, pgerr.TooManyConnections, `too many connections for role "nobody"`)
	for i := 0; i < 2; i++ { // superusers are not limited
		if _, err := e.NewSession("boss", "db", nil); err != nil {
			t.Fatal(err)
		}
	}
	b1.Close()
	b2, err := e.NewSession("bob", "db", nil)
	if err != nil {
		t.Fatalf("after bob's session closed: %v", err)
	}
	b2.Close()
	mustRun(t, s, "ALTER ROLE bob CONNECTION LIMIT -1")
	for i := 0; i < 3; i++ {
		if _, err := e.NewSession("bob", "db", nil); err != nil {
			t.Fatal(err)
		}
	}
}

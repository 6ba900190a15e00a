package catalog

import (
	"testing"

	"github.com/streamsql/streamsql/pgerr"
)

func TestRoleMembership(t *testing.T) {
	dir := t.TempDir()
	st := newStore(t)
	c := openTest(t, dir, st)
	mk := func(name string, r Role) *Role {
		t.Helper()
		r.Name, r.ConnLimit = name, -1
		out, err := c.CreateRole(r, "admin")
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	alice := mk("alice", Role{CanLogin: true, Inherit: true})
	team := mk("team", Role{Inherit: true})
	noinh := mk("noinh", Role{CanLogin: true})
	boss := mk("boss", Role{CanLogin: true, Inherit: true, CreateRole: true})
	code := func(err error) pgerr.Code { return pgerr.CodeOf(err) }

	if c.IsMemberOf(alice.OID, ReadServerFilesOID) || c.HasPrivsOfRole("alice", "pg_read_server_files", "alice") {
		t.Fatal("alice is a member before any grant")
	}
	// Through a group that inherits.
	if _, err := c.GrantRole("pg_read_server_files", "team", false, "admin"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GrantRole("team", "alice", false, "admin"); err != nil {
		t.Fatal(err)
	}
	if !c.IsMemberOf(alice.OID, ReadServerFilesOID) || !c.HasPrivsOfRole("alice", "pg_read_server_files", "alice") {
		t.Fatal("alice lacks pg_read_server_files through team")
	}
	// A role without INHERIT is a member but has not the privileges.
	if _, err := c.GrantRole("team", "noinh", false, "admin"); err != nil {
		t.Fatal(err)
	}
	if c.IsMemberOf(noinh.OID, ReadServerFilesOID) || !c.reaches(noinh.OID, ReadServerFilesOID, false) {
		t.Fatal("noinh: inherit ignored")
	}
	// PostgreSQL's notices and errors.
	if n, err := c.GrantRole("team", "alice", false, "admin"); err != nil || n == nil || n.Message != `role "alice" is already a member of role "team"` {
		t.Fatalf("second grant: %v %v", n, err)
	}
	if _, err := c.GrantRole("alice", "team", false, "admin"); code(err) != "0LP01" || err.Error() != `role "alice" is a member of role "team"` {
		t.Fatalf("circular grant: %v", err)
	}
	if _, err := c.GrantRole("team", "team", false, "admin"); code(err) != "0LP01" {
		t.Fatalf("self grant: %v", err)
	}
	if _, err := c.GrantRole("nosuch", "alice", false, "admin"); code(err) != pgerr.UndefinedObject {
		t.Fatalf("missing role: %v", err)
	}
	// Who may grant: not a plain user; CREATEROLE not for predefined roles;
	// the admin option does.
	if _, err := c.GrantRole("pg_read_server_files", "alice", false, "alice"); code(err) != pgerr.InsufficientPrivilege ||
		err.Error() != `must have admin option on role "pg_read_server_files"` {
		t.Fatalf("alice grants: %v", err)
	}
	if _, err := c.GrantRole("pg_read_server_files", "boss", false, "boss"); code(err) != pgerr.InsufficientPrivilege {
		t.Fatalf("createrole grants a predefined role: %v", err)
	}
	if _, err := c.GrantRole("team", "boss", false, "boss"); err != nil {
		t.Fatalf("createrole grants a plain role: %v", err)
	}
	if _, err := c.GrantRole("pg_write_server_files", "noinh", true, "admin"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GrantRole("pg_write_server_files", "alice", false, "noinh"); err != nil {
		t.Fatalf("admin option: %v", err)
	}
	// Predefined roles can be neither altered nor dropped.
	if _, err := c.AlterRole("pg_read_server_files", "admin", func(r *Role) error { r.CanLogin = true; return nil }); code(err) != "42939" {
		t.Fatalf("alter predefined: %v", err)
	}
	if _, err := c.DropRole("pg_read_server_files", "admin", false); code(err) != "2BP01" {
		t.Fatalf("drop predefined: %v", err)
	}
	// Persisted with the roles.
	c2 := openTest(t, dir, st)
	if !c2.IsMemberOf(alice.OID, ReadServerFilesOID) || !c2.IsMemberOf(alice.OID, WriteServerFilesOID) {
		t.Fatal("memberships lost at reopen")
	}
	// REVOKE, and DROP ROLE removes memberships.
	if _, err := c.RevokeRole("team", "alice", false, "admin"); err != nil {
		t.Fatal(err)
	}
	if c.IsMemberOf(alice.OID, ReadServerFilesOID) {
		t.Fatal("revoked membership still counts")
	}
	if w, err := c.RevokeRole("team", "alice", false, "admin"); err != nil || w == nil || w.Code != "01000" {
		t.Fatalf("revoke of a non-member: %v %v", w, err)
	}
	if _, err := c.DropRole("team", "admin", false); err != nil {
		t.Fatal(err)
	}
	for _, m := range c.roleSet().members {
		if m.Role == team.OID || m.Member == team.OID {
			t.Fatalf("membership of a dropped role kept: %+v", m)
		}
	}
	_ = boss
}

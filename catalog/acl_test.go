package catalog

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/types"
)

// TestACLPersistence: owners and ACLs survive a reopen; an ACL whose every
// entry was revoked stays empty (it does not fall back to the owner's
// default); a catalog written before owners existed loads with the
// bootstrap superuser as owner and the default ACL.
func TestACLPersistence(t *testing.T) {
	dir, st := t.TempDir(), newStore(t)
	c := openTest(t, dir, st)
	alice, err := c.CreateRole(Role{Name: "alice", CanLogin: true}, "admin")
	if err != nil {
		t.Fatal(err)
	}
	bob, err := c.CreateRole(Role{Name: "bob", CanLogin: true}, "admin")
	if err != nil {
		t.Fatal(err)
	}
	cols := []Column{{Name: "a", Type: types.TInt4}}
	t1 := mustCreate(t, c, &Relation{Name: "t1", Columns: cols, Owner: alice.OID})
	t2 := mustCreate(t, c, &Relation{Name: "t2", Columns: cols, Owner: alice.OID})
	if _, err := c.Grant(GrantSpec{OIDs: []uint32{t1.OID}, Actor: alice.OID, Privs: PrivSelect | PrivInsert, Grantees: []uint32{bob.OID, PublicRoleOID}, GrantOption: true}); err != nil {
		t.Fatal(err)
	}
	// The owner revokes everything, from itself too.
	if _, err := c.Grant(GrantSpec{OIDs: []uint32{t2.OID}, Actor: alice.OID, Privs: PrivAllTable, All: true, Grantees: []uint32{alice.OID}, Revoke: true}); err != nil {
		t.Fatal(err)
	}
	check := func(c *Catalog, when string) {
		t.Helper()
		r1, r2 := c.Relation(t1.OID), c.Relation(t2.OID)
		if got := strings.Join(c.ACLText(r1.ACL, "admin"), ","); got != "alice=arwdDxt/alice,bob=a*r*/alice,=a*r*/alice" {
			t.Errorf("%s: t1 ACL %s", when, got)
		}
		if r1.OwnerOID() != alice.OID || !c.HasPrivilege(bob.OID, r1, PrivSelect|PrivInsert) || c.HasPrivilege(bob.OID, r1, PrivUpdate) {
			t.Errorf("%s: t1 owner %d, bob's privileges wrong", when, r1.OwnerOID())
		}
		if r2.ACL == nil || len(r2.ACL) != 0 || c.HasPrivilege(alice.OID, r2, PrivSelect) || !c.IsOwner(alice.OID, r2) {
			t.Errorf("%s: t2 ACL %v (want empty, not the default)", when, r2.ACL)
		}
		if !c.HasPrivilege(SuperuserOID, r2, PrivAllTable) {
			t.Errorf("%s: the superuser lacks privileges", when)
		}
	}
	check(c, "before reopen")
	check(openTest(t, dir, st), "after reopen")

	// A catalog file without owners or ACLs (as written before them).
	path := filepath.Join(dir, catalogFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]any
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	for _, r := range f["relations"].([]any) {
		delete(r.(map[string]any), "owner")
		delete(r.(map[string]any), "acl")
	}
	old, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(old), `"acl"`) || strings.Contains(string(old), `"owner"`) {
		t.Fatal("owner or acl left in the old catalog")
	}
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	c = openTest(t, dir, st)
	for _, oid := range []uint32{t1.OID, t2.OID} {
		r := c.Relation(oid)
		if r.OwnerOID() != SuperuserOID || r.ACL != nil || !c.HasPrivilege(SuperuserOID, r, PrivSelect) || c.HasPrivilege(bob.OID, r, PrivSelect) {
			t.Errorf("old catalog: %s owner %d ACL %v", r.Name, r.OwnerOID(), r.ACL)
		}
	}
}

package catalog

import (
	"testing"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// A temporary schema is created with its first relation, searched before
// pg_catalog when it leads the path, named by pg_temp, and dropped (with
// its tables' storage) when the catalog opens again after a crash.
func TestTempSchema(t *testing.T) {
	dir, st := t.TempDir(), newStore(t)
	c := openTest(t, dir, st)
	perm := mustCreate(t, c, &Relation{Name: "pg_class", Columns: []Column{{Name: "a", Type: types.TInt4}}})
	tmp := mustCreate(t, c, &Relation{Schema: "pg_temp_7", Name: "pg_class", Columns: []Column{{Name: "b", Type: types.TInt4}}})
	path := []string{"pg_temp_7", "public"}
	if r, err := c.Resolve("", "pg_class", path); err != nil || r.OID != tmp.OID {
		t.Fatalf("unqualified name with a temporary schema first: %v %v", r, err)
	}
	if r, err := c.Resolve("pg_temp", "pg_class", path); err != nil || r.OID != tmp.OID {
		t.Fatalf("pg_temp.pg_class: %v %v", r, err)
	}
	if r, err := c.Resolve("", "pg_class", pathPublic); err != nil || r.Kind != KindSystem {
		t.Fatalf("without the temporary schema: %v %v", r, err)
	}
	if _, err := c.Resolve("pg_temp", "pg_class", pathPublic); pgerr.CodeOf(err) != pgerr.UndefinedSchema {
		t.Fatalf("pg_temp without a temporary schema: %v", err)
	}
	if !tmp.IsTemp() || perm.IsTemp() {
		t.Fatal("IsTemp")
	}
	c2 := openTest(t, dir, st) // as after a crash: the session never dropped it
	if r, err := c2.Resolve("pg_temp_7", "pg_class", path); err == nil {
		t.Fatalf("temporary table survived a reopen: %v", r)
	}
	if st.Table(tmp.OID) != nil {
		t.Fatal("temporary table's storage survived a reopen")
	}
	if r, err := c2.Resolve("public", "pg_class", path); err != nil || r.OID != perm.OID {
		t.Fatalf("permanent table after reopen: %v %v", r, err)
	}
}

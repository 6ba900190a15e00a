package catalog

import (
	"fmt"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// Default UNIQUE constraint names follow PostgreSQL 15: CREATE TABLE u (a
// int UNIQUE, b text, UNIQUE (a, b)) names u_a_key and u_a_b_key; CREATE
// TABLE uqp (a int, b int, a_b int, UNIQUE (a, b), UNIQUE (a_b)) names
// uqp_a_b_key and uqp_a_b_key1; u_a (key int UNIQUE) names u_a_key_key.
func TestUniqueNamesAndPersistence(t *testing.T) {
	dir := t.TempDir()
	st := newStore(t)
	c := openTest(t, dir, st)
	cols := []Column{{Name: "a", Type: types.TInt4}, {Name: "b", Type: types.TText}}
	u := mustCreate(t, c, &Relation{Name: "u", Columns: cols, Unique: []UniqueKey{{Columns: []int{0}}, {Columns: []int{0, 1}}}})
	if len(u.Unique) != 2 || u.Unique[0].Name != "u_a_key" || u.Unique[1].Name != "u_a_b_key" ||
		u.Unique[0].IndexOID == 0 || u.Unique[0].IndexOID == u.Unique[1].IndexOID {
		t.Fatalf("unique keys %+v", u.Unique)
	}
	if def := st.Table(u.OID).Def(); len(def.Unique) != 2 || def.Unique[1].Name != "u_a_b_key" || fmt.Sprint(def.Unique[1].Columns) != "[0 1]" {
		t.Fatalf("storage unique keys %+v", def.Unique)
	}
	// A name taken by an earlier key gets a number.
	p := mustCreate(t, c, &Relation{Name: "uqp", Columns: []Column{{Name: "a", Type: types.TInt4}, {Name: "b", Type: types.TInt4}, {Name: "a_b", Type: types.TInt4}},
		Unique: []UniqueKey{{Columns: []int{0, 1}}, {Columns: []int{2}}}})
	if p.Unique[0].Name != "uqp_a_b_key" || p.Unique[1].Name != "uqp_a_b_key1" {
		t.Fatalf("names %+v", p.Unique)
	}
	w := mustCreate(t, c, &Relation{Schema: "public", Name: "u_a", Columns: []Column{{Name: "key", Type: types.TInt4}}, Unique: []UniqueKey{{Columns: []int{0}}}})
	if w.Unique[0].Name != "u_a_key_key" {
		t.Fatalf("name %q", w.Unique[0].Name)
	}
	if _, err := c.CreateTable(&Relation{Name: "z", Columns: cols, Unique: []UniqueKey{{Name: "u_a_key", Columns: []int{0}}}}, false); err == nil {
		t.Fatal("a taken constraint name was accepted")
	} else {
		wantErr(t, err, pgerr.DuplicateTable, `relation "u_a_key" already exists`)
	}
	c2 := openTest(t, dir, st)
	got := c2.Relation(u.OID)
	if fmt.Sprint(got.Unique) != fmt.Sprint(u.Unique) {
		t.Fatalf("reopened unique keys %+v, want %+v", got.Unique, u.Unique)
	}
	if r, ok := c2.snap().indexes[u.Unique[1].IndexOID]; !ok || r.OID != u.OID {
		t.Fatal("unique index not registered after reopen")
	}
}

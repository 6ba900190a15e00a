package catalog

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/storage"
	"github.com/streamsql/streamsql/types"
)

// newStore opens a real store in a temporary directory.
func newStore(t *testing.T) *storage.Store {
	t.Helper()
	st, err := storage.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func openTest(t *testing.T, dir string, st *storage.Store) *Catalog {
	t.Helper()
	c, err := open(dir, st)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustCreate(t *testing.T, c *Catalog, r *Relation) *Relation {
	t.Helper()
	out, err := c.CreateTable(r, false)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mustView(t *testing.T, c *Catalog, schema, name string, cols []Column, deps ...uint32) *Relation {
	t.Helper()
	out, err := c.CreateView(&Relation{Schema: schema, Name: name, Kind: KindView, Columns: cols, ViewQuery: "SELECT 1"}, deps, false)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// wantErr checks a *pgerr.Error's SQLSTATE and message (and detail/hint when given).
func wantErr(t *testing.T, err error, code pgerr.Code, msg string, detailHint ...string) {
	t.Helper()
	e := pgerr.As(err)
	if e == nil {
		t.Fatalf("want %s %q, got %v", code, msg, err)
	}
	if e.Code != code || e.Message != msg {
		t.Fatalf("want %s %q, got %s %q", code, msg, e.Code, e.Message)
	}
	if len(detailHint) > 0 && e.Detail != detailHint[0] {
		t.Fatalf("detail: want %q, got %q", detailHint[0], e.Detail)
	}
	if len(detailHint) > 1 && e.Hint != detailHint[1] {
		t.Fatalf("hint: want %q, got %q", detailHint[1], e.Hint)
	}
}

var pathPublic = []string{"$user", "public"}

func sampleTable(name string) *Relation {
	return &Relation{Name: name, Columns: []Column{
		{Name: "a", Type: types.TInt4},
		{Name: "b", Type: types.TVarchar.WithTypmod(14), Default: "'x'::character varying"},
		{Name: "c", Type: types.ArrayOf(types.TNumeric.WithTypmod((10<<16 | 2) + 4))},
	}, PrimaryKey: []int{0}}
}

func TestCreateAssignsOIDsAndPersists(t *testing.T) {
	dir := t.TempDir()
	st := newStore(t)
	c := openTest(t, dir, st)
	tab := mustCreate(t, c, sampleTable("t"))
	if tab.OID < FirstUserOID || tab.Schema != "public" || tab.Kind != KindTable || tab.PKName != "t_pkey" || tab.PKIndexOID == 0 {
		t.Fatalf("bad table: %+v", tab)
	}
	if !tab.Columns[0].NotNull {
		t.Fatal("primary key column must be NOT NULL")
	}
	if st.Table(tab.OID) == nil {
		t.Fatal("no stored table")
	}
	if err := c.CreateSchema("s1", false); err != nil {
		t.Fatal(err)
	}
	tab2 := mustCreate(t, c, &Relation{Schema: "s1", Name: "t2", Columns: []Column{{Name: "x", Type: types.TText}}})
	v := mustView(t, c, "", "v", []Column{{Name: "a", Type: types.TInt4}}, tab.OID)
	if err := c.Comment(tab.OID, 0, "a table"); err != nil {
		t.Fatal(err)
	}
	if err := c.Comment(tab.OID, 2, "column b"); err != nil {
		t.Fatal(err)
	}

	c2 := openTest(t, dir, st)
	for _, want := range []*Relation{tab, tab2, v} {
		got := c2.Relation(want.OID)
		if got == nil {
			t.Fatalf("relation %s lost on reopen", want.Name)
		}
		if got.Name != want.Name || got.Schema != want.Schema || got.Kind != want.Kind || got.PKName != want.PKName ||
			got.PKIndexOID != want.PKIndexOID || got.RowTypeOID != want.RowTypeOID || got.ViewQuery != want.ViewQuery ||
			fmt.Sprint(got.DependsOn) != fmt.Sprint(want.DependsOn) || fmt.Sprint(got.PrimaryKey) != fmt.Sprint(want.PrimaryKey) {
			t.Fatalf("reopened %+v, want %+v", got, want)
		}
		for i := range want.Columns {
			g, w := got.Columns[i], want.Columns[i]
			if g.Name != w.Name || !g.Type.Equal(w.Type) || g.NotNull != w.NotNull || g.Default != w.Default {
				t.Fatalf("column %d: %+v, want %+v", i, g, w)
			}
		}
	}
	if d, ok := c2.ObjectDescription(tab.OID, 2); !ok || d != "column b" {
		t.Fatalf("comment lost: %q %v", d, ok)
	}
	// New OIDs continue after the persisted counter.
	tab3 := mustCreate(t, c2, &Relation{Name: "t3", Columns: []Column{{Name: "x", Type: types.TInt8}}})
	for _, r := range []*Relation{tab, tab2, v} {
		if tab3.OID <= r.OID || tab3.OID == r.PKIndexOID || tab3.OID == r.RowTypeOID {
			t.Fatalf("OID %d reused or out of order", tab3.OID)
		}
	}
	if got := c2.Table(tab.OID); got != st.Table(tab.OID) || got == nil {
		t.Fatal("Table does not return the stored table")
	}
	if c2.Table(v.OID) != nil {
		t.Fatal("a view has no stored table")
	}
}

func TestOpenReconcilesWithStorage(t *testing.T) {
	dir := t.TempDir()
	st := newStore(t)
	c := openTest(t, dir, st)
	tab := mustCreate(t, c, sampleTable("t"))
	// A stored table the catalog does not know (crash between the writes).
	if _, err := st.CreateTable(storage.TableDef{OID: 99999, Columns: []types.Column{{Name: "x", Type: types.TInt4}}, NotNull: []bool{false}}); err != nil {
		t.Fatal(err)
	}
	openTest(t, dir, st)
	if st.Table(99999) != nil {
		t.Fatal("orphaned stored table not dropped")
	}
	if st.Table(tab.OID) == nil {
		t.Fatal("known table dropped")
	}
	st.DropTable(tab.OID)
	if _, err := open(dir, st); err == nil {
		t.Fatal("a catalog table without storage must fail Open")
	}
}

func TestLostCatalogFileKeepsData(t *testing.T) {
	dir := t.TempDir()
	st := newStore(t)
	c := openTest(t, dir, st)
	if _, err := os.Stat(filepath.Join(dir, catalogFile)); err != nil {
		t.Fatalf("a new catalog is not written at once: %v", err)
	}
	tab := mustCreate(t, c, sampleTable("t"))
	if err := os.Remove(filepath.Join(dir, catalogFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := open(dir, st); err == nil {
		t.Fatal("opened without the catalog file while storage holds tables")
	}
	if st.Table(tab.OID) == nil {
		t.Fatal("the stored table was dropped")
	}
}

func TestCorruptFileFailsOpen(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, catalogFile), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := open(dir, newStore(t)); err == nil {
		t.Fatal("corrupt catalog accepted")
	}
}

func TestCreateDuplicates(t *testing.T) {
	c := openTest(t, t.TempDir(), newStore(t))
	tab := mustCreate(t, c, sampleTable("t"))
	_, err := c.CreateTable(sampleTable("t"), false)
	wantErr(t, err, pgerr.DuplicateTable, `relation "t" already exists`)
	got, err := c.CreateTable(sampleTable("t"), true)
	if got == nil || got.OID != tab.OID {
		t.Fatalf("IF NOT EXISTS: %v %v", got, err)
	}
	wantErr(t, err, pgerr.DuplicateTable, `relation "t" already exists`)
	_, err = c.CreateView(&Relation{Name: "t", Columns: []Column{{Name: "x", Type: types.TInt4}}}, nil, false)
	wantErr(t, err, pgerr.DuplicateTable, `relation "t" already exists`)
	_, err = c.CreateView(&Relation{Name: "t", Columns: []Column{{Name: "x", Type: types.TInt4}}}, nil, true)
	wantErr(t, err, pgerr.WrongObjectType, `"t" is not a view`)
	// The index name is taken too; an automatic key name moves aside.
	_, err = c.CreateTable(&Relation{Name: "t_pkey", Columns: []Column{{Name: "x", Type: types.TInt4}}}, false)
	wantErr(t, err, pgerr.DuplicateTable, `relation "t_pkey" already exists`)
	mustCreate(t, c, &Relation{Name: "u_pkey", Columns: []Column{{Name: "x", Type: types.TInt4}}})
	u := mustCreate(t, c, &Relation{Name: "u", Columns: []Column{{Name: "x", Type: types.TInt4}}, PrimaryKey: []int{0}})
	if u.PKName != "u_pkey1" {
		t.Fatalf("pk name %q, want u_pkey1", u.PKName)
	}
	_, err = c.CreateTable(&Relation{Schema: "nosuch", Name: "x"}, false)
	wantErr(t, err, pgerr.UndefinedSchema, `schema "nosuch" does not exist`)
	wantErr(t, c.CreateSchema("public", false), pgerr.DuplicateSchema, `schema "public" already exists`)
}

func TestViewReplace(t *testing.T) {
	c := openTest(t, t.TempDir(), newStore(t))
	tab := mustCreate(t, c, sampleTable("cat_t"))
	ab := []Column{{Name: "a", Type: types.TInt4}, {Name: "b", Type: types.TText}}
	v := mustView(t, c, "", "cat_v", ab, tab.OID)
	replace := func(cols []Column) (*Relation, error) {
		return c.CreateView(&Relation{Name: "cat_v", Columns: cols, ViewQuery: "SELECT 2"}, []uint32{tab.OID}, true)
	}
	_, err := replace(ab[:1])
	wantErr(t, err, pgerr.InvalidTableDefinition, "cannot drop columns from view")
	_, err = replace([]Column{ab[1], ab[0]})
	wantErr(t, err, pgerr.InvalidTableDefinition, `cannot change name of view column "a" to "b"`)
	_, err = replace([]Column{{Name: "a", Type: types.TText}, ab[1]})
	wantErr(t, err, pgerr.InvalidTableDefinition, `cannot change data type of view column "a" from integer to text`)
	nv, err := replace(append(ab, Column{Name: "c", Type: types.TInt4}))
	if err != nil {
		t.Fatal(err)
	}
	if nv.OID != v.OID || nv.ViewQuery != "SELECT 2" || len(nv.Columns) != 3 {
		t.Fatalf("replaced view: %+v", nv)
	}
	if q, _ := c.ViewDefinition(v.OID); q != " SELECT 2;" { // framed as PostgreSQL frames view definitions
		t.Fatalf("view definition %q", q)
	}
}

// The expected texts below are what PostgreSQL 15 reports for the same DDL.
func TestDropErrorsMatchPostgres(t *testing.T) {
	c := openTest(t, t.TempDir(), newStore(t))
	tab := mustCreate(t, c, sampleTable("cat_t"))
	v := mustView(t, c, "", "cat_v", []Column{{Name: "a", Type: types.TInt4}}, tab.OID)
	mustView(t, c, "", "cat_w", []Column{{Name: "a", Type: types.TInt4}}, v.OID)

	_, err := c.Drop(KindTable, "", "cat_t", false, false, pathPublic)
	wantErr(t, err, pgerr.DependentObjectsStillExist, "cannot drop table cat_t because other objects depend on it",
		"view cat_v depends on table cat_t\nview cat_w depends on view cat_v",
		"Use DROP ... CASCADE to drop the dependent objects too.")
	_, err = c.Drop(KindTable, "", "cat_v", false, false, pathPublic)
	wantErr(t, err, pgerr.WrongObjectType, `"cat_v" is not a table`, "", "Use DROP VIEW to remove a view.")
	_, err = c.Drop(KindView, "", "cat_t", false, false, pathPublic)
	wantErr(t, err, pgerr.WrongObjectType, `"cat_t" is not a view`, "", "Use DROP TABLE to remove a table.")
	n, err := c.Drop(KindTable, "", "cat_nope", true, false, pathPublic)
	if err != nil || n != `table "cat_nope" does not exist, skipping` {
		t.Fatalf("IF EXISTS: %q %v", n, err)
	}
	_, err = c.Drop(KindTable, "", "cat_nope", false, false, pathPublic)
	wantErr(t, err, pgerr.UndefinedTable, `table "cat_nope" does not exist`)
	_, err = c.Drop(KindTable, "nosuch", "cat_nope", false, false, pathPublic)
	wantErr(t, err, pgerr.UndefinedSchema, `schema "nosuch" does not exist`)
	n, err = c.Drop(KindTable, "nosuch", "cat_nope", true, false, pathPublic)
	if err != nil || n != `schema "nosuch" does not exist, skipping` {
		t.Fatalf("IF EXISTS: %q %v", n, err)
	}
	_, err = c.Drop(KindView, "", "cat_nope", false, false, pathPublic)
	wantErr(t, err, pgerr.UndefinedTable, `view "cat_nope" does not exist`)
	_, err = c.Drop(KindTable, "public", "cat_nope", false, false, pathPublic)
	wantErr(t, err, pgerr.UndefinedTable, `table "public.cat_nope" does not exist`)

	// Dropping the leaf view needs no cascade; nothing happened to the others.
	if n, err := c.Drop(KindView, "", "cat_w", false, false, pathPublic); err != nil || n != "" {
		t.Fatalf("drop leaf view: %q %v", n, err)
	}
	mustView(t, c, "", "cat_w", []Column{{Name: "a", Type: types.TInt4}}, v.OID)
	nt, err := c.DropWithDetail(KindTable, "", "cat_t", false, true, pathPublic)
	if err != nil {
		t.Fatal(err)
	}
	if nt.Message != "drop cascades to 2 other objects" || nt.Detail != "drop cascades to view cat_v\ndrop cascades to view cat_w" {
		t.Fatalf("cascade notice %q / %q", nt.Message, nt.Detail)
	}
	for _, name := range []string{"cat_t", "cat_v", "cat_w"} {
		if _, err := c.Resolve("", name, pathPublic); pgerr.CodeOf(err) != pgerr.UndefinedTable {
			t.Fatalf("%s survived the cascade: %v", name, err)
		}
	}
	if c.store.Table(tab.OID) != nil {
		t.Fatal("stored table not dropped")
	}
}

func TestDropSystemAndSchemas(t *testing.T) {
	c := openTest(t, t.TempDir(), newStore(t))
	_, err := c.Drop(KindTable, "", "pg_class", false, false, pathPublic)
	wantErr(t, err, pgerr.InsufficientPrivilege, `permission denied: "pg_class" is a system catalog`)
	if err := c.CreateSchema("cat_s1", false); err != nil {
		t.Fatal(err)
	}
	tab := mustCreate(t, c, &Relation{Schema: "cat_s1", Name: "t", Columns: []Column{{Name: "a", Type: types.TInt4}}})
	mustView(t, c, "public", "pv", []Column{{Name: "a", Type: types.TInt4}}, tab.OID)
	_, err = c.DropSchema("cat_s1", false, false)
	wantErr(t, err, pgerr.DependentObjectsStillExist, "cannot drop schema cat_s1 because other objects depend on it",
		"table cat_s1.t depends on schema cat_s1\nview pv depends on table cat_s1.t",
		"Use DROP ... CASCADE to drop the dependent objects too.")
	_, err = c.DropSchema("pg_catalog", false, false)
	wantErr(t, err, pgerr.DependentObjectsStillExist, "cannot drop schema pg_catalog because it is required by the database system")
	_, err = c.DropSchema("cat_nos", false, false)
	wantErr(t, err, pgerr.UndefinedSchema, `schema "cat_nos" does not exist`)
	if n, err := c.DropSchema("cat_nos", true, false); err != nil || n != `schema "cat_nos" does not exist, skipping` {
		t.Fatalf("%q %v", n, err)
	}
	n, err := c.DropSchema("cat_s1", false, true)
	if err != nil || n != "drop cascades to 2 other objects" {
		t.Fatalf("%q %v", n, err)
	}
	if _, err := c.Resolve("", "pv", pathPublic); err == nil {
		t.Fatal("dependent view in another schema survived")
	}
	_, err = c.Resolve("cat_s1", "t", pathPublic)
	wantErr(t, err, pgerr.UndefinedSchema, `schema "cat_s1" does not exist`)
	// A lone table gives the single-object notice.
	c.CreateSchema("cat_s2", false)
	mustCreate(t, c, &Relation{Schema: "cat_s2", Name: "t", Columns: []Column{{Name: "a", Type: types.TInt4}}})
	if n, err := c.DropSchema("cat_s2", false, true); err != nil || n != "drop cascades to table cat_s2.t" {
		t.Fatalf("%q %v", n, err)
	}
}

func TestSearchPath(t *testing.T) {
	c := openTest(t, t.TempDir(), newStore(t))
	c.CreateSchema("s1", false)
	c.CreateSchema("s2", false)
	one := []Column{{Name: "a", Type: types.TInt4}}
	pub := mustCreate(t, c, &Relation{Name: "t", Columns: one})
	s1 := mustCreate(t, c, &Relation{Schema: "s1", Name: "t", Columns: one})
	s2only := mustCreate(t, c, &Relation{Schema: "s2", Name: "only2", Columns: one})

	check := func(path []string, schema, name string, want uint32) {
		t.Helper()
		r, err := c.Resolve(schema, name, path)
		if err != nil || r.OID != want {
			t.Fatalf("Resolve(%q,%q,%v) = %v, %v; want oid %d", schema, name, path, r, err, want)
		}
	}
	check(pathPublic, "", "t", pub.OID)
	check([]string{"$user", "s1", "public"}, "", "t", s1.OID)
	check([]string{"s2", "public"}, "", "t", pub.OID)
	check(nil, "s2", "only2", s2only.OID)
	check([]string{"nosuch", "s1"}, "", "t", s1.OID)
	_, err := c.Resolve("", "only2", pathPublic)
	wantErr(t, err, pgerr.UndefinedTable, `relation "only2" does not exist`)
	_, err = c.Resolve("s1", "only2", pathPublic)
	wantErr(t, err, pgerr.UndefinedTable, `relation "s1.only2" does not exist`)

	if !c.TableIsVisible(pub.OID, pathPublic) || c.TableIsVisible(s1.OID, pathPublic) {
		t.Fatal("visibility with public path")
	}
	if c.TableIsVisible(pub.OID, []string{"s1", "public"}) || !c.TableIsVisible(s1.OID, []string{"s1", "public"}) {
		t.Fatal("visibility with s1 first: public.t is hidden by s1.t")
	}
	if n, _ := c.RelationName(s1.OID, pathPublic); n != "s1.t" {
		t.Fatalf("regclass out %q", n)
	}
	if n, _ := c.RelationName(pub.OID, pathPublic); n != "t" {
		t.Fatalf("regclass out %q", n)
	}
	if n, _ := c.RelationName(pub.PKIndexOID, pathPublic); n != "" {
		t.Fatalf("no key, yet index name %q", n)
	}
	for in, want := range map[string]uint32{"t": pub.OID, "S1.T": s1.OID, `"s1"."t"`: s1.OID, " public . t ": pub.OID, "16999": 16999} {
		got, err := c.RelationOID(in, pathPublic)
		if err != nil || got != want {
			t.Fatalf("RelationOID(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	_, err = c.RelationOID(`"T"`, pathPublic)
	wantErr(t, err, pgerr.UndefinedTable, `relation "T" does not exist`)
	_, err = c.RelationOID("nosuch.x", pathPublic)
	wantErr(t, err, pgerr.UndefinedSchema, `schema "nosuch" does not exist`)
	_, err = c.RelationOID(`a."b`, pathPublic)
	wantErr(t, err, "42602", "invalid name syntax")
}

func TestQuoteIdent(t *testing.T) {
	for in, want := range map[string]string{"abc": "abc", "Abc": `"Abc"`, "a b": `"a b"`, "select": `"select"`, `a"b`: `"a""b"`, "_x1": "_x1", "1x": `"1x"`} {
		if got := QuoteIdent(in); got != want {
			t.Errorf("QuoteIdent(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestConcurrentResolveDuringDDL(t *testing.T) {
	c := openTest(t, t.TempDir(), newStore(t))
	base := mustCreate(t, c, &Relation{Name: "base", Columns: []Column{{Name: "a", Type: types.TInt4}}})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 4)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				r, err := c.Resolve("", "base", pathPublic)
				if err != nil || r.OID != base.OID {
					errs <- fmt.Errorf("base: %v %v", r, err)
					return
				}
				if r, err := c.Resolve("", "tmp", pathPublic); err == nil && (r.Name != "tmp" || len(r.Columns) != 1) {
					errs <- fmt.Errorf("torn relation %+v", r)
					return
				}
				c.Relations()
				c.TableIsVisible(base.OID, pathPublic)
				pgClass, _ := c.Resolve("pg_catalog", "pg_class", nil)
				if _, err := pgClass.Rows(RowsContext{}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := 0; i < 20; i++ {
		mustCreate(t, c, &Relation{Name: "tmp", Columns: []Column{{Name: "x", Type: types.TInt8}}})
		if _, err := c.Drop(KindTable, "", "tmp", false, false, pathPublic); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestExecComment(t *testing.T) {
	c := openTest(t, t.TempDir(), newStore(t))
	tab := mustCreate(t, c, sampleTable("t1"))
	v := mustView(t, c, "", "v1", []Column{{Name: "a", Type: types.TInt4}}, tab.OID)
	c.CreateSchema("s1", false)
	run := func(q string) error {
		t.Helper()
		stmts, err := sql.Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		return c.ExecComment(stmts[0].AST.GetCommentStmt(), pathPublic)
	}
	for _, q := range []string{"COMMENT ON TABLE t1 IS 'tab'", "COMMENT ON COLUMN public.t1.b IS 'col b'",
		"COMMENT ON VIEW v1 IS 'view'", "COMMENT ON SCHEMA s1 IS 'schema'", "COMMENT ON INDEX t_pkey IS 'key'"} {
		if err := run(strings.Replace(q, "t_pkey", tab.PKName, 1)); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	sc := c.snap().schemas["s1"]
	for _, w := range []struct {
		oid  uint32
		sub  int32
		text string
	}{{tab.OID, 0, "tab"}, {tab.OID, 2, "col b"}, {v.OID, 0, "view"}, {sc.OID, 0, "schema"}, {tab.PKIndexOID, 0, "key"}} {
		if got, ok := c.ObjectDescription(w.oid, w.sub); !ok || got != w.text {
			t.Fatalf("comment on %d/%d = %q, want %q", w.oid, w.sub, got, w.text)
		}
	}
	// The errors PostgreSQL 15 gives for the same statements.
	wantErr(t, run("COMMENT ON TABLE nope IS 'x'"), pgerr.UndefinedTable, `relation "nope" does not exist`)
	wantErr(t, run("COMMENT ON COLUMN t1.nope IS 'x'"), pgerr.UndefinedColumn, `column "nope" of relation "t1" does not exist`)
	wantErr(t, run("COMMENT ON TABLE v1 IS 'x'"), pgerr.WrongObjectType, `"v1" is not a table`)
	wantErr(t, run("COMMENT ON VIEW t1 IS 'x'"), pgerr.WrongObjectType, `"t1" is not a view`)
	wantErr(t, run("COMMENT ON SCHEMA nope IS 'x'"), pgerr.UndefinedSchema, `schema "nope" does not exist`)
	wantErr(t, run("COMMENT ON TABLE s9.x IS 'x'"), pgerr.UndefinedSchema, `schema "s9" does not exist`)
	// IS NULL and IS '' remove a comment.
	if err := run("COMMENT ON TABLE t1 IS NULL"); err != nil {
		t.Fatal(err)
	}
	if err := run("COMMENT ON COLUMN t1.b IS ''"); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.ObjectDescription(tab.OID, 0); ok {
		t.Fatal("IS NULL kept the comment")
	}
	if _, ok := c.ObjectDescription(tab.OID, 2); ok {
		t.Fatal("IS '' kept the comment")
	}
}

package planner

import (
	"reflect"
	"testing"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// viewsCatalog adds Dependents to the test catalog: every view depends on
// every table (enough for these tests).
type viewsCatalog struct{ *fakeCatalog }

func (c viewsCatalog) Dependents(oid uint32) []*catalog.Relation {
	var out []*catalog.Relation
	for _, r := range c.rels {
		if r.Kind == catalog.KindView {
			out = append(out, r)
		}
	}
	return out
}

func planAlter(t *testing.T, d *testDB, text string) (*Alter, error) {
	t.Helper()
	env := d.env("")
	env.Catalog = viewsCatalog{d.cat}
	n := mustParse(t, text)
	if r := n.GetRenameStmt(); r != nil {
		return PlanRename(env, r)
	}
	return PlanAlterTable(env, n.GetAlterTableStmt())
}

// The new definition and the row conversion of a multi-action ALTER.
func TestPlanAlterDefinition(t *testing.T) {
	d := newTestDB(t, "CREATE TABLE t (a int PRIMARY KEY, b text, c numeric)")
	a, err := planAlter(t, d, "ALTER TABLE t DROP COLUMN a, ADD COLUMN d int DEFAULT 2 + 3, ALTER COLUMN b TYPE int USING length(b), ALTER c SET NOT NULL")
	if err != nil {
		t.Fatal(err)
	}
	want := []catalog.Column{{Name: "b", Type: types.TInt4}, {Name: "c", Type: types.TNumeric, NotNull: true}, {Name: "d", Type: types.TInt4, Default: "2 + 3"}}
	if !reflect.DeepEqual(a.New.Columns, want) {
		t.Errorf("columns = %+v, want %+v", a.New.Columns, want)
	}
	if a.New.PrimaryKey != nil || a.New.PKName != "" {
		t.Errorf("dropping the key column kept the key: %v %q", a.New.PrimaryKey, a.New.PKName)
	}
	if !reflect.DeepEqual(a.From, []int{1, 2, -1}) {
		t.Errorf("From = %v", a.From)
	}
	d.mustExec("INSERT INTO t VALUES (1, 'abc', 1.5), (2, NULL, 2)")
	snap := d.cat.tables[a.Old.OID].Snapshot()
	var got []string
	for _, ch := range snap.Chunks {
		for _, e := range a.Exprs {
			arr, err := e.Eval(d.env("").Eval, ch.Rec)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < arr.Len(); i++ {
				got = append(got, arr.ValueStr(i))
			}
		}
	}
	// per expression: b's lengths, c unchanged, d's default for each row
	if w := []string{"3", "(null)", "1.5", "2", "5", "5"}; !reflect.DeepEqual(got, w) {
		t.Errorf("converted values = %v, want %v", got, w)
	}

	// metadata-only changes need no rewrite
	a, err = planAlter(t, d, "ALTER TABLE t ALTER COLUMN b SET DEFAULT 'x', ALTER COLUMN b DROP NOT NULL")
	if err != nil || a.Exprs != nil || a.New.Columns[1].Default != "'x'" {
		t.Fatalf("metadata ALTER: %+v, %v", a, err)
	}
}

// PostgreSQL 15's errors (checked against it by tests/slt/alter.slt).
func TestPlanAlterErrors(t *testing.T) {
	d := newTestDB(t, "CREATE TABLE t (a int PRIMARY KEY, b text)")
	cases := []struct {
		sql  string
		code pgerr.Code
		msg  string
		hint string
	}{
		{"ALTER TABLE t ALTER COLUMN b TYPE int", pgerr.DatatypeMismatch, `column "b" cannot be cast automatically to type integer`, `You might need to specify "USING b::integer".`},
		{"ALTER TABLE t ALTER COLUMN b TYPE boolean USING a", pgerr.DatatypeMismatch, `result of USING clause for column "b" cannot be cast automatically to type boolean`, "You might need to add an explicit cast."},
		{"ALTER TABLE t ADD COLUMN a int", pgerr.DuplicateColumn, `column "a" of relation "t" already exists`, ""},
		{"ALTER TABLE t DROP COLUMN z", pgerr.UndefinedColumn, `column "z" of relation "t" does not exist`, ""},
		{"ALTER TABLE t RENAME COLUMN z TO y", pgerr.UndefinedColumn, `column "z" does not exist`, ""},
		{"ALTER TABLE t ALTER COLUMN a DROP NOT NULL", pgerr.InvalidTableDefinition, `column "a" is in a primary key`, ""},
		{"ALTER TABLE t ADD PRIMARY KEY (b)", pgerr.InvalidTableDefinition, `multiple primary keys for table "t" are not allowed`, ""},
		{"ALTER TABLE t DROP CONSTRAINT nope", pgerr.UndefinedObject, `constraint "nope" of relation "t" does not exist`, ""},
		{"ALTER TABLE nope ADD COLUMN x int", pgerr.UndefinedTable, `relation "nope" does not exist`, ""},
	}
	for _, c := range cases {
		_, err := planAlter(t, d, c.sql)
		e := pgerr.As(err)
		if e == nil || e.Code != c.code || e.Message != c.msg || (c.hint != "" && e.Hint != c.hint) {
			t.Errorf("%s: got %v (hint %q), want %s %q", c.sql, err, hintOf(e), c.code, c.msg)
		}
	}
	a, err := planAlter(t, d, "ALTER TABLE IF EXISTS nope ADD COLUMN x int")
	if err != nil || a.Old != nil || len(a.Notices) != 1 || a.Notices[0].Message != `relation "nope" does not exist, skipping` {
		t.Errorf("IF EXISTS: %+v, %v", a, err)
	}
}

func hintOf(e *pgerr.Error) string {
	if e == nil {
		return ""
	}
	return e.Hint
}

// Views are re-bound against the new definition: what they use cannot be
// dropped, retyped or renamed; CASCADE drops them.
func TestPlanAlterViews(t *testing.T) {
	d := newTestDB(t, "CREATE TABLE t (a int, b text, c int)", "CREATE VIEW v AS SELECT a, b FROM t")
	d.cat.rels["v"].DependsOn = []uint32{d.cat.rels["t"].OID}
	if _, err := planAlter(t, d, "ALTER TABLE t DROP COLUMN c, ALTER COLUMN c2 SET NOT NULL"); pgerr.CodeOf(err) != pgerr.UndefinedColumn {
		t.Fatalf("got %v", err)
	}
	if a, err := planAlter(t, d, "ALTER TABLE t DROP COLUMN c, ALTER COLUMN a SET NOT NULL"); err != nil || len(a.DropViews) != 0 {
		t.Fatalf("dropping an unused column: %+v, %v", a, err)
	}
	_, err := planAlter(t, d, "ALTER TABLE t DROP COLUMN b")
	if e := pgerr.As(err); e == nil || e.Code != pgerr.DependentObjectsStillExist ||
		e.Message != "cannot drop column b of table t because other objects depend on it" || e.Detail != "view v depends on column b of table t" {
		t.Fatalf("drop used column: %v", err)
	}
	_, err = planAlter(t, d, "ALTER TABLE t ALTER COLUMN a TYPE bigint")
	if e := pgerr.As(err); e == nil || e.Code != pgerr.FeatureNotSupported || e.Message != "cannot alter type of a column used by a view or rule" {
		t.Fatalf("retype used column: %v", err)
	}
	// Renames rewrite the view to read the new names under the old ones.
	vOID := d.cat.rels["v"].OID
	a, err := planAlter(t, d, "ALTER TABLE t RENAME COLUMN a TO z")
	if err != nil || a.ViewQueries[vOID] != "SELECT a, b FROM t t(a, b, c)" {
		t.Fatalf("rename used column: %v, %v", a, err)
	}
	a, err = planAlter(t, d, "ALTER TABLE t RENAME TO t2")
	if err != nil || a.ViewQueries[vOID] != "SELECT a, b FROM t2 t" {
		t.Fatalf("rename table read by a view: %v, %v", a, err)
	}
	a, err = planAlter(t, d, "ALTER TABLE t DROP COLUMN b CASCADE")
	if err != nil || len(a.DropViews) != 1 || a.DropViews[0] != d.cat.rels["v"].OID || len(a.Notices) != 1 || a.Notices[0].Message != "drop cascades to view v" {
		t.Fatalf("CASCADE: %+v, %v", a, err)
	}
}

package catalog

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// testSession is a SessionInfo with a fixed user and search path.
type testSession struct{}

func (testSession) User() string                  { return "alice" }
func (testSession) Database() string              { return "db1" }
func (testSession) Setting(string) (string, bool) { return "", false }
func (testSession) SearchPath() []string          { return pathPublic }
func (testSession) BackendPID() int32             { return 1 }

// call evaluates a registered function over constants; the result is
// rendered as text ("<NULL>" for NULL).
func call(t *testing.T, c *Catalog, name string, args ...expr.Expr) string {
	t.Helper()
	e, err := expr.NewCall(name, args)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	ctx := &expr.Context{Session: testSession{}}
	if c != nil {
		ctx.Catalog = c
	}
	batch := array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 1)
	out, err := e.Eval(ctx, batch)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	v := types.ValueAt(out, 0, e.Type())
	if v == nil {
		return "<NULL>"
	}
	return types.FormatText(v, e.Type(), &types.DefaultFormat)
}

func cOid(o uint32) expr.Expr  { return &expr.Const{V: int64(o), T: types.TOid} }
func cInt(i int64) expr.Expr   { return &expr.Const{V: i, T: types.TInt4} }
func cInt8(i int64) expr.Expr  { return &expr.Const{V: i, T: types.TInt8} }
func cText(s string) expr.Expr { return &expr.Const{V: s, T: types.TText} }
func cBool(b bool) expr.Expr   { return &expr.Const{V: b, T: types.TBool} }
func cNull(t types.T) expr.Expr {
	return &expr.Const{V: nil, T: t}
}

func TestFormatTypeMatchesPostgres(t *testing.T) {
	conn := pgConn(t)
	cases := [][2]any{{1042, -1}, {1042, nil}, {1043, nil}, {1043, 14}, {18, -1}, {1231, 655366}, {1007, -1},
		{99999, -1}, {1114, 3}, {1186, -1}, {1700, -1}, {1700, 655366}, {23, 5}, {1015, 14}, {2278, -1},
		{705, -1}, {18, nil}, {1184, 0}, {1083, 2}, {1014, 9}, {3802, -1}, {19, -1}, {1003, -1}}
	for _, tc := range cases {
		typmod := cNull(types.TInt4)
		if tc[1] != nil {
			typmod = cInt(int64(tc[1].(int)))
		}
		got := call(t, nil, "format_type", cOid(uint32(tc[0].(int))), typmod)
		want := pgRows(t, conn, "SELECT format_type($1::oid, $2::int4)", fmt.Sprint(tc[0]), tc[1])[0][0]
		if got != want {
			t.Errorf("format_type(%v, %v) = %q, PostgreSQL says %q", tc[0], tc[1], got, want)
		}
	}
}

func TestSizePrettyMatchesPostgres(t *testing.T) {
	conn := pgConn(t)
	for _, n := range []int64{0, 10239, 10240, -10240, 123456789, -123456789, 20971519, 20971520, 1 << 40, 1000000000000000000} {
		got := call(t, nil, "pg_size_pretty", cInt8(n))
		want := pgRows(t, conn, "SELECT pg_size_pretty($1::int8)", n)[0][0]
		if got != want {
			t.Errorf("pg_size_pretty(%d) = %q, PostgreSQL says %q", n, got, want)
		}
	}
}

func TestCatalogFunctions(t *testing.T) {
	c, tab, v := smallCatalog(t)
	if err := c.Comment(tab.OID, 2, "the b column"); err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		got, want string
	}{
		{call(t, c, "pg_table_is_visible", cOid(tab.OID)), "t"},
		{call(t, c, "pg_table_is_visible", cOid(1259)), "t"},
		{call(t, c, "pg_table_is_visible", cOid(tab.PKIndexOID)), "t"},
		{call(t, c, "pg_table_is_visible", cOid(99999)), "f"},
		{call(t, c, "pg_type_is_visible", cOid(23)), "t"},
		{call(t, c, "pg_type_is_visible", cOid(tab.RowTypeOID)), "t"},
		{call(t, c, "format_type", cOid(tab.RowTypeOID), cInt(-1)), "cat_t"},
		{call(t, c, "pg_get_userbyid", cOid(10)), "alice"},
		{call(t, c, "pg_get_userbyid", cOid(12345)), "unknown (OID=12345)"},
		{call(t, c, "pg_get_expr", cText("'x'::character varying"), cOid(tab.OID), cBool(true)), "'x'::character varying"},
		{call(t, c, "col_description", cOid(tab.OID), cInt(2)), "the b column"},
		{call(t, c, "col_description", cOid(tab.OID), cInt(1)), "<NULL>"},
		{call(t, c, "obj_description", cOid(tab.OID), &expr.Const{V: "pg_class", T: types.TName}), "<NULL>"},
		{call(t, c, "pg_get_viewdef", cOid(v.OID), cBool(true)), " SELECT 1;"},
		// PostgreSQL qualifies the table in the plain form, and in the pretty form only when not visible.
		{call(t, c, "pg_get_indexdef", cOid(tab.PKIndexOID), cInt(0), cBool(true)), "CREATE UNIQUE INDEX cat_t_pkey ON cat_t USING btree (a)"},
		{call(t, c, "pg_get_indexdef", cOid(tab.PKIndexOID)), "CREATE UNIQUE INDEX cat_t_pkey ON public.cat_t USING btree (a)"},
		{call(t, c, "pg_get_indexdef", cOid(tab.PKIndexOID), cInt(1), cBool(true)), "a"},
		{call(t, c, "pg_get_constraintdef", cOid(tab.PKIndexOID), cBool(true)), "PRIMARY KEY (a)"},
		{call(t, c, "pg_encoding_to_char", cInt(6)), "UTF8"},
		{call(t, c, "pg_relation_size", &expr.Const{V: int64(tab.OID), T: types.TRegClass}), "0"},
		{call(t, c, "has_table_privilege", cText("cat_t"), cText("select")), "t"},
		{call(t, c, "pg_is_in_recovery"), "f"},
		{call(t, c, "to_regclass", cText("cat_v")), fmt.Sprint(v.OID)},
		{call(t, c, "to_regclass", cText("nope")), "<NULL>"},
	}
	for i, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("check %d: got %q, want %q", i, ch.got, ch.want)
		}
	}
}

func TestRelationSizesTrackRows(t *testing.T) {
	c := openTest(t, t.TempDir(), newStore(t))
	tab := mustCreate(t, c, &Relation{Name: "s", Columns: []Column{{Name: "k", Type: types.TInt4}, {Name: "v", Type: types.TText}}, PrimaryKey: []int{0}})
	size := func(fn string, oid uint32) int64 {
		t.Helper()
		n, err := strconv.ParseInt(call(t, c, fn, &expr.Const{V: int64(oid), T: types.TRegClass}), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if size("pg_relation_size", tab.OID) != 0 || size("pg_total_relation_size", tab.OID) != 0 {
		t.Fatal("an empty table has a size")
	}
	kb := array.NewInt32Builder(memory.DefaultAllocator)
	vb := array.NewStringBuilder(memory.DefaultAllocator)
	for i := 0; i < 100; i++ {
		kb.Append(int32(i))
		vb.Append("value")
	}
	rec := array.NewRecordBatch(types.ArrowSchema(tab.ColumnTypes()), []arrow.Array{kb.NewArray(), vb.NewArray()}, 100)
	if _, err := c.Table(tab.OID).Insert(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	rel, idx, total := size("pg_relation_size", tab.OID), size("pg_indexes_size", tab.OID), size("pg_total_relation_size", tab.OID)
	if rel <= 0 || idx <= 0 || total != rel+idx || size("pg_relation_size", tab.PKIndexOID) != idx {
		t.Fatalf("sizes: relation %d, indexes %d, total %d", rel, idx, total)
	}
	if db, _ := strconv.ParseInt(call(t, c, "pg_database_size", &expr.Const{V: "db1", T: types.TName}), 10, 64); db != total {
		t.Fatalf("database size %d, want %d", db, total)
	}
}

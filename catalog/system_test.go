package catalog

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/jackc/pgx/v5"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// textOf renders row i of a as PostgreSQL's text output would for the
// catalog's column types (NULL as "<NULL>").
func textOf(a arrow.Array, i int) string {
	if a.IsNull(i) {
		return "<NULL>"
	}
	switch x := a.(type) {
	case *array.String:
		return x.Value(i)
	case *array.Boolean:
		if x.Value(i) {
			return "t"
		}
		return "f"
	case *array.Int16:
		return strconv.Itoa(int(x.Value(i)))
	case *array.Int32:
		return strconv.Itoa(int(x.Value(i)))
	case *array.Int64:
		return strconv.FormatInt(x.Value(i), 10)
	case *array.Uint32:
		return strconv.FormatUint(uint64(x.Value(i)), 10)
	case *array.Float32:
		return strconv.FormatFloat(float64(x.Value(i)), 'g', -1, 32)
	case *array.List:
		start, end := x.ValueOffsets(i)
		parts := []string{}
		for j := int(start); j < int(end); j++ {
			parts = append(parts, textOf(x.ListValues(), j))
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	return fmt.Sprintf("<%T>", a)
}

// sysRowsOf reads a system relation as rows of column name -> text.
func sysRowsOf(t *testing.T, c *Catalog, schema, name string, ctx RowsContext) []map[string]string {
	t.Helper()
	r, err := c.Resolve(schema, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	batches, err := r.Rows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, b := range batches {
		if int(b.NumCols()) != len(r.Columns) {
			t.Fatalf("%s: batch has %d columns, relation %d", name, b.NumCols(), len(r.Columns))
		}
		for i := 0; i < int(b.NumRows()); i++ {
			m := map[string]string{}
			for j, col := range r.Columns {
				if !arrow.TypeEqual(b.Column(j).DataType(), col.Type.ArrowType()) {
					t.Fatalf("%s.%s: arrow type %s, want %s", name, col.Name, b.Column(j).DataType(), col.Type.ArrowType())
				}
				m[col.Name] = textOf(b.Column(j), i)
			}
			out = append(out, m)
		}
	}
	return out
}

func findRow(rows []map[string]string, key, val string) map[string]string {
	for _, r := range rows {
		if r[key] == val {
			return r
		}
	}
	return nil
}

var testCtx = RowsContext{User: "alice", Database: "db1", SearchPath: pathPublic}

// smallCatalog holds a table with a key, a default and an array column,
// and a view over it.
func smallCatalog(t *testing.T) (*Catalog, *Relation, *Relation) {
	c := openTest(t, t.TempDir(), newStore(t))
	tab := mustCreate(t, c, &Relation{Name: "cat_t", Columns: []Column{
		{Name: "a", Type: types.TInt4},
		{Name: "b", Type: types.TVarchar.WithTypmod(14), Default: "'x'::character varying"},
		{Name: "c", Type: types.ArrayOf(types.TNumeric.WithTypmod((10<<16 | 2) + 4)), NotNull: true},
	}, PrimaryKey: []int{0}})
	v := mustView(t, c, "", "cat_v", []Column{{Name: "a", Type: types.TInt4}}, tab.OID)
	return c, tab, v
}

func TestEverySystemRelationBuilds(t *testing.T) {
	c, _, _ := smallCatalog(t)
	if len(c.system) < 60 {
		t.Fatalf("only %d system relations", len(c.system))
	}
	seen := map[uint32]string{}
	for _, r := range c.system {
		if prev, dup := seen[r.OID]; dup {
			t.Fatalf("OID %d used by %s and %s", r.OID, prev, r.Name)
		}
		seen[r.OID] = r.Name
		if r.OID >= FirstUserOID {
			t.Fatalf("%s has a user-range OID", r.Name)
		}
		// PostgreSQL never has NULL in a NOT NULL catalog column.
		for _, row := range sysRowsOf(t, c, r.Schema, r.Name, testCtx) {
			for _, col := range r.Columns {
				if col.NotNull && row[col.Name] == "<NULL>" {
					t.Fatalf("%s.%s is NULL in %v", r.Name, col.Name, row)
				}
			}
		}
	}
	for name := range sysRowFuncs {
		parts := strings.SplitN(name, ".", 2)
		if _, err := c.Resolve(parts[0], parts[1], nil); err != nil {
			t.Fatalf("rows registered for unknown relation %s", name)
		}
	}
}

func TestPgClassAndFriends(t *testing.T) {
	c, tab, v := smallCatalog(t)
	classes := sysRowsOf(t, c, "pg_catalog", "pg_class", testCtx)
	ct := findRow(classes, "relname", "cat_t")
	if ct == nil || ct["oid"] != fmt.Sprint(tab.OID) || ct["relkind"] != "r" || ct["relnamespace"] != "2200" ||
		ct["relhasindex"] != "t" || ct["relam"] != "2" || ct["relnatts"] != "3" || ct["relowner"] != "10" ||
		ct["reltype"] != fmt.Sprint(tab.RowTypeOID) || ct["relpersistence"] != "p" || ct["reloptions"] != "<NULL>" {
		t.Fatalf("pg_class cat_t: %v", ct)
	}
	ci := findRow(classes, "relname", "cat_t_pkey")
	if ci == nil || ci["relkind"] != "i" || ci["relam"] != "403" || ci["oid"] != fmt.Sprint(tab.PKIndexOID) {
		t.Fatalf("pg_class cat_t_pkey: %v", ci)
	}
	cv := findRow(classes, "relname", "cat_v")
	if cv == nil || cv["relkind"] != "v" || cv["relam"] != "0" || cv["relhasrules"] != "t" {
		t.Fatalf("pg_class cat_v: %v", cv)
	}
	if pc := findRow(classes, "relname", "pg_class"); pc == nil || pc["oid"] != "1259" || pc["relnamespace"] != "11" {
		t.Fatalf("pg_class pg_class: %v", pc)
	}
	if _, err := c.Drop(KindTable, "", "pg_class", false, false, pathPublic); err == nil {
		t.Fatal("dropped pg_class")
	}

	idx := sysRowsOf(t, c, "pg_catalog", "pg_index", testCtx)
	if len(idx) != 1 || idx[0]["indrelid"] != fmt.Sprint(tab.OID) || idx[0]["indkey"] != "{1}" || idx[0]["indisprimary"] != "t" {
		t.Fatalf("pg_index: %v", idx)
	}
	cons := sysRowsOf(t, c, "pg_catalog", "pg_constraint", testCtx)
	if len(cons) != 1 || cons[0]["conname"] != "cat_t_pkey" || cons[0]["contype"] != "p" || cons[0]["conkey"] != "{1}" ||
		cons[0]["conindid"] != fmt.Sprint(tab.PKIndexOID) {
		t.Fatalf("pg_constraint: %v", cons)
	}
	defs := sysRowsOf(t, c, "pg_catalog", "pg_attrdef", testCtx)
	if len(defs) != 1 || defs[0]["adnum"] != "2" || defs[0]["adbin"] != "'x'::character varying" {
		t.Fatalf("pg_attrdef: %v", defs)
	}
	ns := sysRowsOf(t, c, "pg_catalog", "pg_namespace", testCtx)
	var names []string
	for _, r := range ns {
		names = append(names, r["nspname"]+"="+r["oid"])
	}
	if strings.Join(names, " ") != "pg_catalog=11 public=2200 information_schema=13207" {
		t.Fatalf("pg_namespace: %v", names)
	}
	if err := c.Comment(v.OID, 0, "the view"); err != nil {
		t.Fatal(err)
	}
	desc := sysRowsOf(t, c, "pg_catalog", "pg_description", testCtx)
	if d := findRow(desc, "objoid", fmt.Sprint(v.OID)); len(desc) != 2 || d == nil || d["classoid"] != "1259" || d["description"] != "the view" {
		t.Fatalf("pg_description: %v", desc)
	}
	if d := findRow(desc, "objoid", "13590"); d == nil || d["classoid"] != "3079" {
		t.Fatalf("pg_description lacks plpgsql's: %v", desc)
	}
	roles := sysRowsOf(t, c, "pg_catalog", "pg_roles", testCtx)
	if len(roles) != 13 || roles[0]["rolname"] != "alice" || roles[0]["oid"] != "10" || roles[0]["rolsuper"] != "t" ||
		findRow(roles, "rolname", "pg_database_owner")["oid"] != "6171" ||
		findRow(roles, "rolname", "pg_read_server_files")["oid"] != "4569" {
		t.Fatalf("pg_roles: %v", roles)
	}
	dbs := sysRowsOf(t, c, "pg_catalog", "pg_database", testCtx)
	if len(dbs) != 3 || findRow(dbs, "datname", "db1") == nil || findRow(dbs, "datname", "postgres")["datcollate"] != "C.UTF-8" {
		t.Fatalf("pg_database: %v", dbs)
	}
	tables := sysRowsOf(t, c, "pg_catalog", "pg_tables", testCtx)
	if len(tables) != 1 || tables[0]["tablename"] != "cat_t" || tables[0]["hasindexes"] != "t" {
		t.Fatalf("pg_tables: %v", tables)
	}
	views := sysRowsOf(t, c, "pg_catalog", "pg_views", testCtx)
	if r := findRow(views, "viewname", "cat_v"); r == nil || r["definition"] != " SELECT 1;" {
		t.Fatalf("pg_views: %v", r)
	}
	settings := sysRowsOf(t, c, "pg_catalog", "pg_settings", RowsContext{Settings: func() []Setting {
		return []Setting{{Name: "work_mem", Setting: "4096", Unit: "kB"}}
	}})
	if len(settings) != 1 || settings[0]["unit"] != "kB" || settings[0]["setting"] != "4096" {
		t.Fatalf("pg_settings: %v", settings)
	}
	// Values from the session, in the parameter's unit as PostgreSQL shows them.
	session := map[string]string{"work_mem": "8MB", "statement_timeout": "2s", "TimeZone": "Europe/Paris"}
	settings = sysRowsOf(t, c, "pg_catalog", "pg_settings", RowsContext{Setting: func(n string) (string, bool) {
		v, ok := session[n]
		return v, ok
	}})
	for name, want := range map[string]string{"work_mem": "8192", "statement_timeout": "2000", "TimeZone": "Europe/Paris", "DateStyle": "ISO, MDY"} {
		if r := findRow(settings, "name", name); r == nil || r["setting"] != want {
			t.Fatalf("pg_settings %s: %v, want %s", name, r, want)
		}
	}
	if r := findRow(settings, "name", "work_mem"); r["source"] != "session" || r["unit"] != "kB" || r["context"] != "user" {
		t.Fatalf("pg_settings work_mem: %v", r)
	}
}

// --- Comparisons with a live PostgreSQL 15 (skipped when none is reachable).

func pgConn(t *testing.T) *pgx.Conn {
	t.Helper()
	url := os.Getenv("STREAMSQL_TEST_PG")
	if url == "" {
		url = "postgres://postgres:postgres@127.0.0.1:5432/postgres"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Skipf("no PostgreSQL to compare with: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// pgRows runs a query whose columns are all text and returns the rows;
// "true" and "false" (bool::text) become t and f, the output format.
func pgRows(t *testing.T, conn *pgx.Conn, query string, args ...any) [][]string {
	t.Helper()
	return pgQuery(t, conn, true, query, args...)
}

func pgQuery(t *testing.T, conn *pgx.Conn, bools bool, query string, args ...any) [][]string {
	t.Helper()
	rows, err := conn.Query(context.Background(), query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][]string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		r := make([]string, len(vals))
		for i, v := range vals {
			switch {
			case v == nil:
				r[i] = "<NULL>"
			case bools && v == "true":
				r[i] = "t"
			case bools && v == "false":
				r[i] = "f"
			default:
				r[i] = fmt.Sprint(v)
			}
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// pgTypeNameFor maps a catalog column type to the name PostgreSQL uses for
// the type it stands for, as format_type prints it.
var internalTypeNames = map[string][]string{
	"smallint[]":               {"int2vector", "smallint[]"},
	"oid[]":                    {"oidvector", "oid[]"},
	"text[]":                   {"aclitem[]", "text[]"},
	"text":                     {"pg_node_tree", "anyarray", "inet", "pg_lsn", "text"},
	"oid":                      {"xid", "oid"},
	"name":                     {"information_schema.sql_identifier", "name"},
	"character varying":        {"information_schema.character_data", "information_schema.yes_or_no", "character varying"},
	"integer":                  {"information_schema.cardinal_number", "integer"},
	"timestamp with time zone": {"information_schema.time_stamp", "timestamp with time zone"},
}

func TestSystemColumnsMatchPostgres(t *testing.T) {
	conn := pgConn(t)
	c := openTest(t, t.TempDir(), newStore(t))
	for _, r := range c.system {
		if strings.HasPrefix(r.Name, "streamsql_") {
			continue // ours, not PostgreSQL's
		}
		got := pgRows(t, conn, `SELECT a.attname::text, format_type(a.atttypid, NULL) FROM pg_attribute a
			WHERE a.attrelid = $1::oid AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`, fmt.Sprint(r.OID))
		name := pgRows(t, conn, `SELECT c.relname::text, n.nspname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = $1::oid`, fmt.Sprint(r.OID))
		if len(name) != 1 || name[0][0] != r.Name || name[0][1] != r.Schema {
			t.Fatalf("OID %d is %v in PostgreSQL, %s.%s here", r.OID, name, r.Schema, r.Name)
		}
		if len(got) != len(r.Columns) {
			t.Fatalf("%s: %d columns in PostgreSQL, %d here", r.Name, len(got), len(r.Columns))
		}
		for i, col := range r.Columns {
			ours := col.Type.String()
			ok := got[i][1] == ours
			for _, alt := range internalTypeNames[ours] {
				ok = ok || got[i][1] == alt
			}
			if got[i][0] != col.Name || !ok {
				t.Fatalf("%s column %d: PostgreSQL %v, here %s %s", r.Name, i+1, got[i], col.Name, ours)
			}
		}
	}
}

// ddlTable is the same table as smallCatalog's, for PostgreSQL.
const ddlTable = `CREATE TABLE cat_t(a int PRIMARY KEY, b varchar(10) DEFAULT 'x', c numeric(10,2)[] NOT NULL)`

// withPgTable creates ddlTable in a scratch schema of PostgreSQL and returns its OID.
func withPgTable(t *testing.T, conn *pgx.Conn) string {
	t.Helper()
	schema := fmt.Sprintf("cat_test_%d", os.Getpid())
	ctx := context.Background()
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema+"; SET search_path = "+schema+"; "+ddlTable); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE") })
	return pgRows(t, conn, "SELECT 'cat_t'::regclass::oid::text")[0][0]
}

func TestAttributesMatchPostgres(t *testing.T) {
	conn := pgConn(t)
	oid := withPgTable(t, conn)
	c, tab, _ := smallCatalog(t)
	cols := []string{"attname", "atttypid", "attlen", "attnum", "attndims", "atttypmod", "attbyval", "attalign",
		"attstorage", "attnotnull", "atthasdef", "attidentity", "attgenerated", "attisdropped", "attcollation", "attstattarget"}
	want := pgRows(t, conn, "SELECT "+strings.Join(cols, "::text, ")+"::text FROM pg_attribute WHERE attrelid = $1::oid AND attnum > 0 ORDER BY attnum", oid)
	var got [][]string
	for _, r := range sysRowsOf(t, c, "pg_catalog", "pg_attribute", testCtx) {
		if r["attrelid"] == fmt.Sprint(tab.OID) {
			var g []string
			for _, col := range cols {
				g = append(g, r[col])
			}
			got = append(got, g)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("pg_attribute:\n got %v\nwant %v", got, want)
	}
}

func TestInformationSchemaColumnsMatchPostgres(t *testing.T) {
	conn := pgConn(t)
	withPgTable(t, conn)
	c, _, _ := smallCatalog(t)
	cols := []string{"column_name", "ordinal_position", "column_default", "is_nullable", "data_type",
		"character_maximum_length", "character_octet_length", "numeric_precision", "numeric_precision_radix",
		"numeric_scale", "datetime_precision", "udt_schema", "udt_name", "dtd_identifier", "is_identity", "is_generated", "is_updatable"}
	want := pgRows(t, conn, "SELECT "+strings.Join(cols, "::text, ")+"::text FROM information_schema.columns WHERE table_name = 'cat_t' AND table_schema = current_schema() ORDER BY ordinal_position")
	var got [][]string
	for _, r := range sysRowsOf(t, c, "information_schema", "columns", testCtx) {
		if r["table_name"] == "cat_t" {
			var g []string
			for _, col := range cols {
				g = append(g, r[col])
			}
			got = append(got, g)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("information_schema.columns:\n got %v\nwant %v", got, want)
	}
	// The key in table_constraints and key_column_usage.
	var kinds []string
	for _, r := range sysRowsOf(t, c, "information_schema", "table_constraints", testCtx) {
		kinds = append(kinds, r["constraint_type"])
	}
	wantKinds := pgRows(t, conn, "SELECT constraint_type::text FROM information_schema.table_constraints WHERE table_name = 'cat_t' AND table_schema = current_schema()")
	var wk []string
	for _, r := range wantKinds {
		wk = append(wk, r[0])
	}
	sort.Strings(kinds)
	sort.Strings(wk)
	if fmt.Sprint(kinds) != fmt.Sprint(wk) {
		t.Fatalf("table_constraints: got %v want %v", kinds, wk)
	}
}

func TestPgTypeMatchesPostgres(t *testing.T) {
	conn := pgConn(t)
	c := openTest(t, t.TempDir(), newStore(t))
	cols := []string{"typname", "typnamespace", "typlen", "typbyval", "typtype", "typcategory", "typispreferred", "typdelim",
		"typelem", "typarray", "typinput::oid", "typoutput::oid", "typreceive::oid", "typsend::oid", "typmodin::oid",
		"typmodout::oid", "typalign", "typstorage", "typbasetype", "typtypmod", "typcollation"}
	for _, r := range sysRowsOf(t, c, "pg_catalog", "pg_type", testCtx) {
		if r["typtype"] == "c" {
			continue
		}
		want := pgRows(t, conn, "SELECT "+strings.Join(cols, "::text, ")+"::text FROM pg_type WHERE oid = $1::oid", r["oid"])
		if len(want) != 1 {
			t.Fatalf("type %s not in PostgreSQL", r["typname"])
		}
		var got []string
		for _, col := range cols {
			got = append(got, r[strings.TrimSuffix(col, "::oid")])
		}
		if fmt.Sprint(got) != fmt.Sprint(want[0]) {
			t.Fatalf("pg_type %s:\n got %v\nwant %v", r["typname"], got, want[0])
		}
	}
}

func TestDefaultsShownAsPostgres(t *testing.T) {
	conn := pgConn(t)
	cols := []struct {
		name, sqlType, def string
		t                  types.T
	}{
		{"a", "text", `'it''s'`, types.TText},
		{"b", "varchar(5)", `'x'`, types.TVarchar.WithTypmod(9)},
		{"c", "char(3)", `'y'`, types.TBpchar.WithTypmod(7)},
		{"d", "name", `'n'`, types.TName},
		{"e", "int", `'5'`, types.TInt4},
		{"f", "int", `5`, types.TInt4},
		{"g", "numeric", `1.5`, types.TNumeric},
		{"h", "bool", `true`, types.TBool},
		{"j", "int", `-1`, types.TInt4},
		{"k", "bigint", `'-7'`, types.TInt8},
		{"l", "timestamptz", `now()`, types.TTimestampTZ},
	}
	var ddl []string
	rel := &Relation{Name: "cat_d"}
	for _, c := range cols {
		ddl = append(ddl, c.name+" "+c.sqlType+" DEFAULT "+c.def)
		rel.Columns = append(rel.Columns, Column{Name: c.name, Type: c.t, Default: c.def})
	}
	schema := fmt.Sprintf("cat_test_d%d", os.Getpid())
	if _, err := conn.Exec(context.Background(), "CREATE SCHEMA "+schema+"; CREATE TABLE "+schema+".cat_d("+strings.Join(ddl, ", ")+")"); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
	want := pgQuery(t, conn, false, "SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid = $1::regclass ORDER BY adnum", schema+".cat_d")
	c := openTest(t, t.TempDir(), newStore(t))
	tab := mustCreate(t, c, rel)
	for i := range cols {
		got, ok := c.ColumnDefault(tab.OID, int16(i+1))
		if !ok || got != want[i][0] {
			t.Errorf("default of %s %s: got %q, PostgreSQL shows %q", cols[i].sqlType, cols[i].def, got, want[i][0])
		}
	}
}

func TestSourcesAndMaterializedViews(t *testing.T) {
	c, tab, _ := smallCatalog(t)
	src := mustCreate(t, c, &Relation{Name: "bids", Kind: KindSource, Columns: []Column{{Name: "price", Type: types.TInt8}},
		Connector: "nexmark", Options: map[string]string{"table": "bid", "events_per_second": "10"}, Format: "JSON"})
	mv, err := c.CreateView(&Relation{Name: "hot", Kind: KindMatView, Columns: []Column{{Name: "n", Type: types.TInt8}}, ViewQuery: "SELECT count(*) AS n FROM bids"}, []uint32{src.OID, tab.OID}, false)
	if err != nil {
		t.Fatal(err)
	}
	classes := sysRowsOf(t, c, "pg_catalog", "pg_class", testCtx)
	if r := findRow(classes, "relname", "bids"); r == nil || r["relkind"] != "f" {
		t.Fatalf("source in pg_class: %v", r)
	}
	if r := findRow(classes, "relname", "hot"); r == nil || r["relkind"] != "m" || r["oid"] != fmt.Sprint(mv.OID) {
		t.Fatalf("materialized view in pg_class: %v", r)
	}
	if ft := sysRowsOf(t, c, "pg_catalog", "pg_foreign_table", testCtx); len(ft) != 1 || ft[0]["ftrelid"] != fmt.Sprint(src.OID) ||
		ft[0]["ftserver"] != fmt.Sprint(sourceServerOID) || ft[0]["ftoptions"] != "{connector=nexmark,events_per_second=10,table=bid,format=JSON}" {
		t.Fatalf("pg_foreign_table: %v", ft)
	}
	if fs := sysRowsOf(t, c, "pg_catalog", "pg_foreign_server", testCtx); len(fs) != 1 || fs[0]["srvname"] != "streamsql" ||
		fs[0]["srvfdw"] != fmt.Sprint(sourceFDWOID) {
		t.Fatalf("pg_foreign_server: %v", fs)
	}
	if fdw := sysRowsOf(t, c, "pg_catalog", "pg_foreign_data_wrapper", testCtx); len(fdw) != 1 || fdw[0]["oid"] != fmt.Sprint(sourceFDWOID) {
		t.Fatalf("pg_foreign_data_wrapper: %v", fdw)
	}
	// As in PostgreSQL, information_schema lists no materialized views; the
	// source is a FOREIGN table with its columns.
	for _, r := range sysRowsOf(t, c, "information_schema", "columns", testCtx) {
		if r["table_name"] == "hot" {
			t.Fatalf("information_schema.columns lists a materialized view: %v", r)
		}
	}
	if r := findRow(sysRowsOf(t, c, "information_schema", "tables", testCtx), "table_name", "bids"); r == nil || r["table_type"] != "FOREIGN" {
		t.Fatalf("information_schema.tables: %v", r)
	}
	if r := findRow(classes, "relname", "hot"); r["relam"] != "2" || r["relreplident"] != "d" || r["relhasrules"] != "t" {
		t.Fatalf("materialized view in pg_class: %v", r)
	}
	if mvs := sysRowsOf(t, c, "pg_catalog", "pg_matviews", testCtx); len(mvs) != 1 || mvs[0]["definition"] != " "+mv.ViewQuery+";" {
		t.Fatalf("pg_matviews: %v", mvs)
	}
	if c.Table(src.OID) != nil {
		t.Fatal("a source stores no rows")
	}
	_, err = c.Drop(KindSource, "", "bids", false, false, pathPublic)
	wantErr(t, err, pgerr.DependentObjectsStillExist, "cannot drop source bids because other objects depend on it",
		"materialized view hot depends on source bids", "Use DROP ... CASCADE to drop the dependent objects too.")
	if n, err := c.Drop(KindSource, "", "bids", false, true, pathPublic); err != nil || n != "drop cascades to materialized view hot" {
		t.Fatalf("%q %v", n, err)
	}
}

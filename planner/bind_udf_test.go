package planner

import (
	"slices"
	"testing"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
)

// udfCatalog adds SQL functions to a fakeCatalog.
type udfCatalog struct {
	*fakeCatalog
	fns []*catalog.Function
}

func (c *udfCatalog) Functions(schema, name string, _ []string) []*catalog.Function {
	var out []*catalog.Function
	for _, f := range c.fns {
		if f.Name == name && (schema == "" || schema == "public") {
			out = append(out, f)
		}
	}
	return out
}

// TestSQLFunctionInlined: a call of a SQL function plans as its body with
// the arguments in place of the parameters (by name and by $n), coerced
// to the parameter types, and the result coerced to the return type; the
// plan names no function of its own; bodies that are not one expression
// are refused when the function is created.
func TestSQLFunctionInlined(t *testing.T) {
	d := newTestDB(t, "CREATE TABLE w (s text, n int)", "INSERT INTO w VALUES ('cacc', 2), ('x', NULL), (NULL, 5)")
	cat := &udfCatalog{fakeCatalog: d.cat}
	define := func(text string) error {
		stmts, err := sql.Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		env := d.env(text)
		env.Catalog = cat
		fn, err := FunctionDef(env, stmts[0].AST.GetCreateFunctionStmt())
		if err != nil {
			return err
		}
		fn.OID = uint32(90000 + len(cat.fns))
		cat.fns = append(cat.fns, fn)
		return nil
	}
	for _, f := range []string{
		`CREATE FUNCTION count_char(s text, c text) RETURNS bigint LANGUAGE sql AS $$ SELECT length(s) - length(replace(s, c, '')) $$`,
		`CREATE FUNCTION plus(int, int) RETURNS numeric LANGUAGE sql AS 'SELECT $1 + $2'`,
		`CREATE FUNCTION len(s text) RETURNS int LANGUAGE sql AS 'SELECT length(len.s)'`,
		`CREATE FUNCTION twice(x bigint) RETURNS bigint LANGUAGE sql AS 'SELECT plus(x::int, x::int)::bigint'`,
	} {
		if err := define(f); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	text := "SELECT s, count_char(s, 'c'), plus(n, 1), twice(n), len(s) FROM w"
	stmts, err := sql.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	env := d.env(text)
	env.Catalog = cat
	q, err := PlanSelect(env, stmts[0].AST)
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{q.Columns[1].Type.String(), q.Columns[2].Type.String(), q.Columns[3].Type.String()}; !slices.Equal(got, []string{"bigint", "numeric", "bigint"}) {
		t.Fatalf("column types %v", got)
	}
	rows, err := d.rows(q.Root, env)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(rows)
	want := []string{"NULL|NULL|6|10|NULL", "cacc|3|3|4|4", "x|0|NULL|NULL|1"}
	if !slices.Equal(rows, want) {
		t.Fatalf("rows %v, want %v", rows, want)
	}
	for _, bad := range []struct{ text, code string }{
		{`CREATE FUNCTION a(int) RETURNS bigint LANGUAGE sql AS 'SELECT count(*) FROM w'`, string(pgerr.FeatureNotSupported)},
		{`CREATE FUNCTION a(int) RETURNS bigint LANGUAGE sql AS 'SELECT sum($1)'`, string(pgerr.FeatureNotSupported)},
		{`CREATE FUNCTION a(int) RETURNS bigint LANGUAGE sql AS 'SELECT 1; SELECT 2'`, string(pgerr.FeatureNotSupported)},
		{`CREATE FUNCTION a(int) RETURNS bigint LANGUAGE sql AS 'SELECT n'`, string(pgerr.UndefinedColumn)},
		{`CREATE FUNCTION a(int) RETURNS int LANGUAGE sql AS 'SELECT ''x''::text'`, "42P13"},
		{`CREATE FUNCTION a(int) RETURNS int LANGUAGE sql SECURITY DEFINER AS 'SELECT 1'`, string(pgerr.FeatureNotSupported)},
		{`CREATE FUNCTION a(int) RETURNS int LANGUAGE sql SET work_mem = '1MB' AS 'SELECT 1'`, string(pgerr.FeatureNotSupported)},
		{`CREATE FUNCTION a(int) RETURNS int LANGUAGE plpgsql AS 'SELECT 1'`, string(pgerr.SyntaxError)}, // PL/pgSQL wants BEGIN
		{`CREATE FUNCTION a(int) RETURNS int LANGUAGE plperl AS 'return 1'`, string(pgerr.UndefinedObject)},
	} {
		err := define(bad.text)
		if e := pgerr.As(err); e == nil || string(e.Code) != bad.code {
			t.Errorf("%s: %v, want SQLSTATE %s", bad.text, err, bad.code)
		}
	}
}

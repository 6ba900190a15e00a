package planner

import (
	"reflect"
	"testing"

	"github.com/streamsql/streamsql/types"
)

func TestDMLLayouts(t *testing.T) {
	d := newTestDB(t, "CREATE TABLE w (id int PRIMARY KEY, name text DEFAULT 'anon', qty int8 NOT NULL DEFAULT 7)")
	ins, err := PlanInsert(d.env(""), mustParse(t, "INSERT INTO w (qty, id) VALUES ($1, $2)").GetInsertStmt())
	if err != nil {
		t.Fatal(err)
	}
	if want := []types.T{types.TInt8, types.TInt4}; !reflect.DeepEqual(ins.ParamTypes, want) {
		t.Errorf("insert params %v, want %v", ins.ParamTypes, want)
	}
	wantCols := []types.Column{{Name: "id", Type: types.TInt4}, {Name: "name", Type: types.TText}, {Name: "qty", Type: types.TInt8}}
	if got := ins.Source.Columns(); !reflect.DeepEqual(got, wantCols) {
		t.Errorf("insert source columns %v, want %v", got, wantCols)
	}
	up, err := PlanUpdate(d.env(""), mustParse(t, "UPDATE w SET qty = qty + $1 WHERE name = $2 RETURNING id, qty * 2 AS dbl").GetUpdateStmt())
	if err != nil {
		t.Fatal(err)
	}
	if want := []types.T{types.TInt8, types.TText}; !reflect.DeepEqual(up.ParamTypes, want) {
		t.Errorf("update params %v, want %v", up.ParamTypes, want)
	}
	if got := up.Source.Columns(); len(got) != 4 || got[0].Type.Kind != types.Int8 || !reflect.DeepEqual(got[1:], wantCols) {
		t.Errorf("update source columns %v: want row id then the table's columns", got)
	}
	if up.Returning == nil || len(up.Returning.Exprs) != 2 || up.Returning.Columns[1].Name != "dbl" || up.Returning.Columns[1].Type.Kind != types.Int8 {
		t.Errorf("update returning %+v", up.Returning)
	}
	del, err := PlanDelete(d.env(""), mustParse(t, "DELETE FROM w WHERE id > 1").GetDeleteStmt())
	if err != nil {
		t.Fatal(err)
	}
	if got := del.Source.Columns(); len(got) != 4 || got[0].Type.Kind != types.Int8 || !reflect.DeepEqual(got[1:], wantCols) {
		t.Errorf("delete source columns %v: want row id then the table's columns", got)
	}
}

// DML run end to end (through storage) and checked against PostgreSQL 15.
func TestDMLOracle(t *testing.T) {
	conn, _ := oracleConn(t)
	d := newTestDB(t)
	stmts := []string{
		"CREATE TABLE w (id int PRIMARY KEY, name text DEFAULT 'anon', qty int8 NOT NULL DEFAULT 7, price numeric(10,2))",
		"INSERT INTO w VALUES (1, 'a', 1, 1.005), (2, 'b', 2, 2)",
		"INSERT INTO w (id) VALUES (3)",
		"INSERT INTO w (id, name, qty) VALUES (4, DEFAULT, 40), (5, 'e', DEFAULT)",
		"INSERT INTO w (id, price) SELECT a + 10, a * 1.5 FROM generate_series(1, 3) a",
		"INSERT INTO w (id, qty, name) SELECT '40', '41', 'lit'",
		"INSERT INTO w (price, id, qty) VALUES ('3.333', '20', '5')",
		"UPDATE w SET qty = qty * 10, name = upper(name) WHERE id IN (1, 3)",
		"UPDATE w SET price = DEFAULT, name = name || '!' WHERE price > 2",
		"DELETE FROM w WHERE qty = 7 AND id > 10",
		"DELETE FROM w WHERE name IS NULL",
		"INSERT INTO w (id, name) VALUES (1, 'dup'), (30, 'new'), (30, 'again'), (2, 'dup') ON CONFLICT DO NOTHING",
		"INSERT INTO w (id, name) SELECT a + 29, 'sel' FROM generate_series(1, 3) a ON CONFLICT (id) DO NOTHING",
		"INSERT INTO w (id, name, qty) VALUES (1, 'up', 5), (40, 'in', 6) ON CONFLICT (id) DO UPDATE SET qty = w.qty + excluded.qty, name = excluded.name || w.name",
		"INSERT INTO w AS x (id, qty) VALUES (2, 1), (4, 1) ON CONFLICT (id) DO UPDATE SET qty = 0 WHERE x.qty > 10",
		"CREATE TABLE adj (id int, delta int8, tag text)",
		"INSERT INTO adj VALUES (1, 100, 'one'), (2, 5, 'two'), (30, -1, 'thirty'), (99, 0, 'none')",
		"UPDATE w SET qty = w.qty + adj.delta, name = adj.tag FROM adj WHERE adj.id = w.id AND adj.delta > 0",
		"DELETE FROM w USING adj WHERE adj.id = w.id AND adj.tag = 'thirty'",
	}
	for _, s := range stmts {
		if _, err := conn.Exec(d.ctx(), s); err != nil {
			t.Fatalf("postgres: %s: %v", s, err)
		}
		if _, _, err := d.run(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	q := "SELECT * FROM w ORDER BY id"
	want, err := pgRows(conn, q)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.query(q); !reflect.DeepEqual(got, want) {
		t.Errorf("after DML:\n got %q\nwant %q", got, want)
	}
}

// ON CONFLICT targets resolve to the matching constraints, as PostgreSQL
// infers its arbiter indexes.
func TestOnConflictArbiters(t *testing.T) {
	d := newTestDB(t, "CREATE TABLE oc (id int PRIMARY KEY, a int, b int, UNIQUE (a, b), CONSTRAINT oc_b UNIQUE (b))")
	for _, c := range []struct {
		sql  string
		want []string
	}{
		{"INSERT INTO oc VALUES (1) ON CONFLICT DO NOTHING", nil},
		{"INSERT INTO oc VALUES (1) ON CONFLICT (id) DO NOTHING", []string{"oc_pkey"}},
		{"INSERT INTO oc VALUES (1) ON CONFLICT (b, a) DO NOTHING", []string{"oc_u0"}},
		{"INSERT INTO oc VALUES (1) ON CONFLICT ON CONSTRAINT oc_b DO UPDATE SET a = excluded.a", []string{"oc_b"}},
	} {
		ins, err := PlanInsert(d.env(""), mustParse(t, c.sql).GetInsertStmt())
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		if !reflect.DeepEqual(ins.OnConflict.Arbiters, c.want) {
			t.Errorf("%s: arbiters %v, want %v", c.sql, ins.OnConflict.Arbiters, c.want)
		}
	}
}

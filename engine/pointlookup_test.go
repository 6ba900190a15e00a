package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// queryWith runs one statement with parameters and returns its rows as
// "a|b" lines.
func queryWith(t *testing.T, s *Session, text string, params ...types.Value) []string {
	t.Helper()
	stmts, err := sql.Parse(text)
	if err != nil || len(stmts) != 1 {
		t.Fatalf("parse %s: %v", text, err)
	}
	p, err := s.Prepare(context.Background(), stmts[0], nil)
	if err != nil {
		t.Fatalf("prepare %s: %v", text, err)
	}
	res, err := s.Execute(context.Background(), p, params)
	if err != nil {
		t.Fatalf("execute %s: %v", text, err)
	}
	var lines []string
	for res.Rows != nil {
		b, err := res.Rows.Next()
		if err != nil {
			t.Fatal(err)
		}
		if b == nil {
			break
		}
		for r := 0; r < int(b.NumRows()); r++ {
			var f []string
			for c := 0; c < int(b.NumCols()); c++ {
				f = append(f, types.FormatText(types.ValueAt(b.Column(c), r, res.Columns[c].Type), res.Columns[c].Type, &types.DefaultFormat))
			}
			lines = append(lines, strings.Join(f, "|"))
		}
	}
	if res.Rows != nil {
		res.Rows.Close()
	}
	return lines
}

// TestPrimaryKeyLookup: "WHERE pk = $1" reads the row through the key
// index and gives the same rows as a full scan, across updates, deletes,
// and a transaction's own writes.
func TestPrimaryKeyLookup(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE TABLE kt (id int PRIMARY KEY, v text, n int)")
	mustRun(t, s, "CREATE TABLE st (k text PRIMARY KEY, v int)")
	mustRun(t, s, "INSERT INTO kt SELECT g, 'v' || g, g % 3 FROM generate_series(1, 5000) g")
	mustRun(t, s, "INSERT INTO st VALUES ('a', 1), ('b', 2)")
	plan := strings.Join(mustRun(t, s, "EXPLAIN SELECT v FROM kt WHERE id = 7"), "\n")
	if !strings.Contains(plan, "Index Scan on kt (key: 7)") {
		t.Errorf("plan:\n%s", plan)
	}
	if plan := strings.Join(mustRun(t, s, "EXPLAIN SELECT v FROM kt WHERE id + 0 = 7"), "\n"); strings.Contains(plan, "Index Scan") {
		t.Errorf("an expression over the key used the index:\n%s", plan)
	}
	check := func(what string, text string, params []types.Value, want ...string) {
		t.Helper()
		got := queryWith(t, s, text, params...)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: %s %v = %q, want %q", what, text, params, got, want)
		}
	}
	const q = "SELECT id, v FROM kt WHERE id = $1"
	check("hit", q, []types.Value{int64(42)}, "42|v42")
	check("miss", q, []types.Value{int64(9999)})
	check("null", q, []types.Value{nil})
	check("other conjunct", "SELECT id FROM kt WHERE n = 1 AND id = $1", []types.Value{int64(42)})
	check("other conjunct true", "SELECT id FROM kt WHERE n = 0 AND id = $1", []types.Value{int64(42)}, "42")
	check("text key", "SELECT v FROM st WHERE k = $1", []types.Value{"b"}, "2")
	mustRun(t, s, "UPDATE kt SET v = 'new' WHERE id = 42")
	check("after update", q, []types.Value{int64(42)}, "42|new")
	mustRun(t, s, "DELETE FROM kt WHERE id = 43")
	check("after delete", q, []types.Value{int64(43)})
	mustRun(t, s, "BEGIN")
	mustRun(t, s, "UPDATE kt SET v = 'in tx' WHERE id = 44")
	mustRun(t, s, "INSERT INTO kt VALUES (43, 'back', 0)")
	check("own update", q, []types.Value{int64(44)}, "44|in tx")
	check("own insert", q, []types.Value{int64(43)}, "43|back")
	mustRun(t, s, "ROLLBACK")
	check("rolled back", q, []types.Value{int64(44)}, "44|v44")
	for i := 1; i <= 5000; i += 499 {
		want := []string{}
		if i != 43 {
			v := fmt.Sprint("v", i)
			if i == 42 {
				v = "new"
			}
			want = []string{fmt.Sprintf("%d|%s", i, v)}
		}
		check("sweep", q, []types.Value{int64(i)}, want...)
	}
}

// TestViewKeyLookup: "WHERE key = $1" on a keyed materialized view finds
// the row by the view's stream key and agrees with a scan of the view.
func TestViewKeyLookup(t *testing.T) {
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE TABLE vt (id int PRIMARY KEY, v text, n int)")
	mustRun(t, s, "INSERT INTO vt SELECT g, 'v' || g, g % 3 FROM generate_series(1, 3000) g")
	mustRun(t, s, "CREATE MATERIALIZED VIEW pv AS SELECT id, v, n * 2 AS n2 FROM vt WHERE n >= 0")
	mustRun(t, s, "CREATE MATERIALIZED VIEW agg AS SELECT n, count(*) AS c FROM vt GROUP BY n")
	mustRun(t, s, "FLUSH")
	plan := strings.Join(mustRun(t, s, "EXPLAIN SELECT v FROM pv WHERE id = 7"), "\n")
	if !strings.Contains(plan, "(key: 7)") {
		t.Errorf("plan:\n%s", plan)
	}
	check := func(what, text string, params []types.Value, want ...string) {
		t.Helper()
		got := queryWith(t, s, text, params...)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: %s %v = %q, want %q", what, text, params, got, want)
		}
	}
	const q = "SELECT id, v, n2 FROM pv WHERE id = $1"
	check("hit", q, []types.Value{int64(42)}, "42|v42|0")
	check("miss", q, []types.Value{int64(9999)})
	check("null", q, []types.Value{nil})
	check("other conjunct", "SELECT id FROM pv WHERE n2 = 2 AND id = $1", []types.Value{int64(42)})
	check("group key", "SELECT c FROM agg WHERE n = $1", []types.Value{int64(1)}, "1000")
	check("self join", "SELECT a.v, b.v FROM pv a JOIN pv b ON a.id = b.id WHERE a.id = $1", []types.Value{int64(5)}, "v5|v5")
	mustRun(t, s, "UPDATE vt SET v = 'new' WHERE id = 42")
	mustRun(t, s, "DELETE FROM vt WHERE id = 43")
	mustRun(t, s, "FLUSH")
	check("after update", q, []types.Value{int64(42)}, "42|new|0")
	check("after delete", q, []types.Value{int64(43)})
}

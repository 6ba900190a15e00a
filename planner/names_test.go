package planner

import (
	"testing"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// TestFigureName checks unaliased select-list names against PostgreSQL
// 15's (FigureColname): a column reference is named by its last field
// name, a "*" skipped.
func TestFigureName(t *testing.T) {
	for sql, want := range map[string]string{
		"SELECT a.x FROM a":             "x",
		"SELECT (a.*)::text FROM a":     "a",
		"SELECT (a.*) IS NULL FROM a":   "?column?",
		"SELECT x::numeric::float8":     "x",
		"SELECT (SELECT (a.*)::text)":   "a",
		"SELECT CASE WHEN x THEN 1 END": "case",
	} {
		tree, err := pg.Parse(sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		rt := tree.Stmts[0].Stmt.GetSelectStmt().TargetList[0].GetResTarget()
		if got := figureName(rt.Val); got != want {
			t.Errorf("%s: named %q, PostgreSQL names it %q", sql, got, want)
		}
	}
}

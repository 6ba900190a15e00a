package sql

import (
	"testing"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// Definitions whose operand of an IS test needs parentheses deparse to
// text that reads back as the same tree; those that do not are left as
// pg_query writes them.
func TestDeparseKeepsTestOperands(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"SELECT (NOT b) IS NULL FROM t", "SELECT (NOT b)::boolean IS NULL FROM t"},
		{"SELECT x FROM t WHERE (a AND b) IS NOT NULL", "SELECT x FROM t WHERE (a AND b)::boolean IS NOT NULL"},
		{"SELECT (a IS DISTINCT FROM b) IS TRUE", "SELECT (a IS DISTINCT FROM b)::boolean IS TRUE"},
		{"SELECT (a IS NOT DISTINCT FROM b) IS NULL", "SELECT (a IS NOT DISTINCT FROM b)::boolean IS NULL"},
		{"SELECT NOT (a IS NULL)", "SELECT NOT a IS NULL"},
		{"SELECT (a = 1) IS NULL", "SELECT a = 1 IS NULL"},
		{"SELECT (NOT b) IS TRUE", "SELECT (NOT b) IS TRUE"},
	} {
		r, err := pg.Parse(c.in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Deparse(r.Stmts[0].Stmt)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if got != c.want {
			t.Errorf("%s:\n got  %s\n want %s", c.in, got, c.want)
		}
		// read back, the text is the input's tree, or that tree with the
		// tests' operands cast to boolean
		back, err := pg.Parse(got)
		if err != nil {
			t.Fatalf("%s: %v", got, err)
		}
		fixed, _ := withParenthesizedTests(r.Stmts[0].Stmt)
		if !readsBack(r.Stmts[0].Stmt, got) && !readsBack(fixed, got) {
			t.Errorf("%s: %s reads back as %v", c.in, got, back.Stmts[0].Stmt)
		}
	}
}

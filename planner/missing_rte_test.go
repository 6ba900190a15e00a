package planner

import (
	"testing"

	"github.com/streamsql/streamsql/pgerr"
)

// TestMissingTableHints: a name of a FROM entry out of reach, or of a table
// under an alias, is an invalid reference with PostgreSQL 15's hint.
func TestMissingTableHints(t *testing.T) {
	d := newTestDB(t, schema...)
	cases := []struct{ sql, msg, hint string }{
		{"SELECT a, g FROM t x, (SELECT x.a AS g) ss", `invalid reference to FROM-clause entry for table "x"`, `There is an entry for table "x", but it cannot be referenced from this part of the query.`},
		{"UPDATE u SET d = b FROM (SELECT * FROM t WHERE t.a = u.a) ss", `invalid reference to FROM-clause entry for table "u"`, `There is an entry for table "u", but it cannot be referenced from this part of the query.`},
		{"UPDATE u SET d = 'z' FROM LATERAL (SELECT * FROM t WHERE b = d) ss", `invalid reference to FROM-clause entry for table "u"`, `There is an entry for table "u", but it cannot be referenced from this part of the query.`},
		{"DELETE FROM u USING LATERAL (SELECT * FROM t WHERE t.a = u.a) ss", `invalid reference to FROM-clause entry for table "u"`, `There is an entry for table "u", but it cannot be referenced from this part of the query.`},
		{"UPDATE t AS q SET c = t.c + 10 WHERE q.a = 10", `invalid reference to FROM-clause entry for table "t"`, `Perhaps you meant to reference the table alias "q".`},
		{"SELECT t.* FROM t AS q", `invalid reference to FROM-clause entry for table "t"`, `Perhaps you meant to reference the table alias "q".`},
		{"SELECT zz.a FROM t AS q", `missing FROM-clause entry for table "zz"`, ""},
		{"SELECT * FROM (t JOIN u USING (a)) AS x WHERE t.b = 1", `invalid reference to FROM-clause entry for table "t"`, `There is an entry for table "t", but it cannot be referenced from this part of the query.`},
		{"SELECT * FROM t x JOIN (u x CROSS JOIN u y) j ON x.a = y.a", `invalid reference to FROM-clause entry for table "y"`, `There is an entry for table "y", but it cannot be referenced from this part of the query.`},
		// a JOIN ... USING alias is no entry of its own once hidden
		{"SELECT * FROM (t JOIN u USING (a) AS x) AS xx WHERE x.a = 1", `missing FROM-clause entry for table "x"`, ""},
	}
	for _, c := range cases {
		_, _, err := d.run(c.sql)
		e := pgerr.As(err)
		if e == nil || e.Code != pgerr.UndefinedTable || e.Message != c.msg || e.Hint != c.hint {
			t.Errorf("%s: got %v, want %q (hint %q)", c.sql, err, c.msg, c.hint)
			if e != nil {
				t.Logf("hint %q", e.Hint)
			}
		}
	}
}

// TestMissingColumnHints: PostgreSQL 15's hints for a column that resolves
// nowhere: one out of reach, or the closest spellings.
func TestMissingColumnHints(t *testing.T) {
	d := newTestDB(t, schema...)
	cases := []struct{ sql, msg, hint string }{
		{"SELECT a, g FROM t x, (SELECT b AS g) ss", `column "b" does not exist`, `There is a column named "b" in table "x", but it cannot be referenced from this part of the query.`},
		{"SELECT t.d FROM t JOIN u ON t.a = u.a", `column t.d does not exist`, `Perhaps you meant to reference the column "u.d".`},
		{"SELECT bb FROM t", `column "bb" does not exist`, `Perhaps you meant to reference the column "t.b".`},
		{"SELECT aa FROM t JOIN u ON true", `column "aa" does not exist`, `Perhaps you meant to reference the column "t.a" or the column "u.a".`},
		{"SELECT zzzz FROM t", `column "zzzz" does not exist`, ""},
		// ORDER BY over a set operation: an arm's column that is not the
		// output's names its arm as PostgreSQL's RTE "*SELECT* k"
		{"SELECT a FROM t EXCEPT SELECT c FROM t ORDER BY c", `column "c" does not exist`, `There is a column named "c" in table "*SELECT* 2", but it cannot be referenced from this part of the query.`},
		{"SELECT a FROM t UNION SELECT a FROM u UNION ALL SELECT c AS zz FROM t ORDER BY zz", `column "zz" does not exist`, `There is a column named "zz" in table "*SELECT* 3", but it cannot be referenced from this part of the query.`},
		{"SELECT a FROM t UNION SELECT a FROM u ORDER BY nope", `column "nope" does not exist`, ""},
	}
	for _, c := range cases {
		_, _, err := d.run(c.sql)
		e := pgerr.As(err)
		if e == nil || e.Code != pgerr.UndefinedColumn || e.Message != c.msg || e.Hint != c.hint {
			t.Errorf("%s: got %v, want %q (hint %q)", c.sql, err, c.msg, c.hint)
			if e != nil {
				t.Logf("hint %q", e.Hint)
			}
		}
	}
}

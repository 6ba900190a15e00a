package planner

import (
	"reflect"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

var schema = []string{
	"CREATE TABLE t (a int PRIMARY KEY, b text, c int8)",
	"CREATE TABLE u (a int, d text)",
	"INSERT INTO t VALUES (1, 'x', 10), (2, 'y', 20), (3, NULL, NULL)",
	"INSERT INTO u VALUES (1, 'one'), (3, 'three'), (3, 'drei'), (4, 'four')",
}

// Expected codes, messages and positions are what PostgreSQL 15 reports
// for the same statements over the same tables.
func TestBindErrors(t *testing.T) {
	d := newTestDB(t, schema...)
	cases := []struct {
		sql  string
		code pgerr.Code
		msg  string
		pos  int
	}{
		{"SELECT x FROM t", pgerr.UndefinedColumn, `column "x" does not exist`, 8},
		{"SELECT t.x FROM t", pgerr.UndefinedColumn, `column t.x does not exist`, 8},
		{"SELECT a FROM t, u", pgerr.AmbiguousColumn, `column reference "a" is ambiguous`, 8},
		{"SELECT v.a FROM t", pgerr.UndefinedTable, `missing FROM-clause entry for table "v"`, 8},
		{"SELECT * FROM nope", pgerr.UndefinedTable, `relation "nope" does not exist`, 15},
		{"SELECT a, b FROM t GROUP BY a, c HAVING count(*) > 0 ORDER BY d", pgerr.UndefinedColumn, `column "d" does not exist`, 63},
		{"SELECT b, count(*) FROM t GROUP BY c HAVING true", pgerr.GroupingError, `column "t.b" must appear in the GROUP BY clause or be used in an aggregate function`, 8},
		{"SELECT u.d, count(*) FROM t JOIN u ON t.a = u.a GROUP BY t.a", pgerr.GroupingError, `column "u.d" must appear in the GROUP BY clause or be used in an aggregate function`, 8},
		{"SELECT a FROM t WHERE count(*) > 1", pgerr.GroupingError, `aggregate functions are not allowed in WHERE`, 23},
		{"SELECT sum(count(*)) FROM t", pgerr.GroupingError, `aggregate function calls cannot be nested`, 12},
		{"WITH RECURSIVE foo(i) AS (VALUES (1) UNION ALL (SELECT i+1 FROM foo WHERE i < 10 UNION ALL SELECT i+1 FROM foo WHERE i < 5)) SELECT * FROM foo", pgerr.InvalidRecursion, `recursive reference to query "foo" must not appear more than once`, 108},
		{"SELECT max(a) FILTER (WHERE sum(a) > 0) FROM t", pgerr.GroupingError, `aggregate functions are not allowed in FILTER`, 29},
		{"SELECT string_agg(DISTINCT b, ',' ORDER BY a) FROM t", pgerr.InvalidColumnReference, `in an aggregate with DISTINCT, ORDER BY expressions must appear in argument list`, 44},
		{"SELECT string_agg(DISTINCT b, ',' ORDER BY a::text) FROM t", pgerr.InvalidColumnReference, `in an aggregate with DISTINCT, ORDER BY expressions must appear in argument list`, 44},
		{"SELECT a FROM t ORDER BY 3", pgerr.InvalidColumnReference, `ORDER BY position 3 is not in select list`, 26},
		{"SELECT a FROM t WHERE a", pgerr.DatatypeMismatch, `argument of WHERE must be type boolean, not type integer`, 23},
		{"SELECT 1 UNION SELECT 1, 2", pgerr.SyntaxError, `each UNION query must have the same number of columns`, 23},
		{"SELECT DISTINCT a FROM t ORDER BY b", pgerr.InvalidColumnReference, `for SELECT DISTINCT, ORDER BY expressions must appear in select list`, 35},
		{"INSERT INTO t (a, zz) VALUES (1, 2)", pgerr.UndefinedColumn, `column "zz" of relation "t" does not exist`, 19},
		{"INSERT INTO u VALUES (1, 'a', 3)", pgerr.SyntaxError, `INSERT has more expressions than target columns`, 31},
		{"INSERT INTO u (a) VALUES (DEFAULT, DEFAULT)", pgerr.SyntaxError, `INSERT has more expressions than target columns`, 36},
		{"WITH x(n, b) AS (SELECT 1)\nSELECT * FROM x", pgerr.InvalidColumnReference, `WITH query "x" has 1 columns available but 2 columns specified`, 6},
		{"SELECT * FROM (t CROSS JOIN t AS t2) ss(p, q, r, s, x, y, z, w, v)", pgerr.InvalidColumnReference, `join expression "ss" has 6 columns available but 9 columns specified`, 0},
		{"SELECT a FROM t EXCEPT ALL SELECT a FROM t FOR NO KEY UPDATE", pgerr.FeatureNotSupported, `FOR NO KEY UPDATE is not allowed with UNION/INTERSECT/EXCEPT`, 0},
		{"SELECT a FROM t UNION SELECT a FROM t FOR SHARE", pgerr.FeatureNotSupported, `FOR SHARE is not allowed with UNION/INTERSECT/EXCEPT`, 0},
		{"INSERT INTO t (a, b) VALUES (1)", pgerr.SyntaxError, `INSERT has more target columns than expressions`, 19},
		{"UPDATE t SET zz = 1", pgerr.UndefinedColumn, `column "zz" of relation "t" does not exist`, 14},
		{"CREATE TABLE w (a int, a text)", pgerr.DuplicateColumn, `column "a" specified more than once`, 0},
		{"SELECT * FROM t JOIN u USING (zz)", pgerr.UndefinedColumn, `column "zz" specified in USING clause does not exist in left table`, 0},
		// Only a string literal's input error has a position; a number's
		// cast and a type modifier are applied at run time, without one.
		{"SELECT '9223372036854775808'::int8", pgerr.NumericValueOutOfRange, `value "9223372036854775808" is out of range for type bigint`, 8},
		{"SELECT 9223372036854775807.5::int8", pgerr.NumericValueOutOfRange, `bigint out of range`, 0},
		{"SELECT '1.0'::numeric(4,4)", pgerr.NumericValueOutOfRange, `numeric field overflow`, 0},
		// a frame offset's type error points at the whole value (its
		// literal), not at its ::
		{"SELECT sum(a) OVER (ORDER BY b RANGE BETWEEN '1 year'::interval PRECEDING AND CURRENT ROW) FROM t", pgerr.FeatureNotSupported, `RANGE with offset PRECEDING/FOLLOWING is not supported for column type text`, 46},
		{"SELECT sum(a) OVER (ORDER BY a ROWS BETWEEN 'x'::text PRECEDING AND CURRENT ROW) FROM t", pgerr.DatatypeMismatch, `argument of ROWS must be type bigint, not type text`, 45},
	}
	for _, c := range cases {
		_, _, err := d.run(c.sql)
		e := pgerr.As(err)
		if e == nil {
			t.Errorf("%s: want error %s, got %v", c.sql, c.code, err)
			continue
		}
		if e.Code != c.code || e.Message != c.msg || e.Position != c.pos {
			t.Errorf("%s:\n got %s %q at %d\nwant %s %q at %d", c.sql, e.Code, e.Message, e.Position, c.code, c.msg, c.pos)
		}
	}
}

func TestJoinPlanning(t *testing.T) {
	d := newTestDB(t, schema...)
	plan := d.explain("SELECT t.b, u.d FROM t, u WHERE t.a = u.a AND u.d <> 'x'")
	if !strings.Contains(plan, "Hash") || strings.Contains(plan, "Nested") {
		t.Errorf("comma join with equality should be a hash join:\n%s", plan)
	}
	if !strings.Contains(plan, "filter") {
		t.Errorf("single-table condition should be pushed into the scan:\n%s", plan)
	}
	got := sorted(d.query("SELECT t.b, u.d FROM t, u WHERE t.a = u.a AND u.d <> 'x'"))
	want := []string{"NULL|drei", "NULL|three", "x|one"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// Three inputs where the FROM order has no condition between the first two.
	plan = d.explain("SELECT count(*) FROM t, u, t AS t2 WHERE t.a = t2.c AND u.a = t2.a")
	if strings.Contains(plan, "Nested") {
		t.Errorf("join order should follow the equalities:\n%s", plan)
	}
}

func TestParamInference(t *testing.T) {
	d := newTestDB(t, schema...)
	cases := []struct {
		sql  string
		want []types.T
	}{
		{"SELECT * FROM t WHERE a = $1", []types.T{types.TInt4}},
		{"SELECT $1", []types.T{types.TText}},
		{"SELECT b FROM t WHERE c > $2 AND b = $1", []types.T{types.TText, types.TInt8}},
		{"SELECT a FROM t LIMIT $1", []types.T{types.TInt8}},
		{"SELECT a FROM t WHERE a IN ($1, $2) AND b LIKE $3", []types.T{types.TInt4, types.TInt4, types.TText}},
		{"SELECT a FROM t WHERE a = $1 OR a + 1 = $1", []types.T{types.TInt4}},
	}
	for _, c := range cases {
		stmts := mustParse(t, c.sql)
		q, err := PlanSelect(d.env(c.sql), stmts)
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		if !reflect.DeepEqual(q.ParamTypes, c.want) {
			t.Errorf("%s: params %v, want %v", c.sql, q.ParamTypes, c.want)
		}
	}
	// PostgreSQL: the first use types $1 (integer), so the second compares
	// text with integer.
	_, err := PlanSelect(d.env(""), mustParse(t, "SELECT a FROM t WHERE a = $1 AND b = $1"))
	if e := pgerr.As(err); e == nil || e.Code != pgerr.UndefinedFunction || e.Message != "operator does not exist: text = integer" {
		t.Errorf("conflicting parameter types: got %v", err)
	}
}

func TestSemiJoin(t *testing.T) {
	d := newTestDB(t, schema...)
	plan := d.explain("SELECT b FROM t WHERE a IN (SELECT a FROM u) AND c > 5")
	if !strings.Contains(plan, "(semi) on t.a = a") || strings.Contains(plan, "SubPlan") || strings.Contains(plan, "InitPlan") {
		t.Errorf("uncorrelated IN should be a semi join:\n%s", plan)
	}
	plan = d.explain("SELECT b FROM t WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.a = t.a AND u.d <> 'x')")
	if !strings.Contains(plan, "(anti) on t.a = u.a") || strings.Contains(plan, "SubPlan") {
		t.Errorf("correlated NOT EXISTS should be a hash anti join:\n%s", plan)
	}
	plan = d.explain("SELECT b FROM t WHERE a NOT IN (SELECT a FROM u)")
	if strings.Contains(plan, "anti") || strings.Contains(plan, "semi") {
		t.Errorf("NOT IN must not become an anti join:\n%s", plan)
	}
}

func TestHashJoinBuildsSmallerSide(t *testing.T) {
	d := newTestDB(t, "CREATE TABLE small (k int)", "CREATE TABLE big (k int, v int)",
		"INSERT INTO small VALUES (1), (2)", "INSERT INTO big SELECT g % 10, g FROM generate_series(1, 200) g")
	for _, q := range []string{
		"SELECT count(*) FROM small, big WHERE small.k = big.k",
		"SELECT count(*) FROM big, small WHERE small.k = big.k",
		"SELECT count(*) FROM small JOIN big ON small.k = big.k",
	} {
		plan := strings.Split(strings.TrimSpace(d.explain(q)), "\n")
		last := strings.TrimSpace(plan[len(plan)-1])
		if !strings.Contains(last, "on small") {
			t.Errorf("%s: the hash table should be built from small (the last child):\n%s", q, strings.Join(plan, "\n"))
		}
		if got := d.query(q); !reflect.DeepEqual(got, []string{"40"}) {
			t.Errorf("%s = %v, want 40", q, got)
		}
	}
}

func TestPushdownThroughViewsAndGroups(t *testing.T) {
	d := newTestDB(t, append(schema, "CREATE VIEW byb AS SELECT b, count(*) AS n, sum(c) AS s FROM t GROUP BY b")...)
	plan := d.explain("SELECT * FROM byb WHERE b = 'x' AND n > 0")
	lines := strings.Split(plan, "\n")
	scan := ""
	for _, l := range lines {
		if strings.Contains(l, "Scan on t") {
			scan = l
		}
	}
	if !strings.Contains(scan, "filter") || !strings.Contains(scan, "'x'") {
		t.Errorf("the group-key condition should reach the scan:\n%s", plan)
	}
	if got := d.query("SELECT * FROM byb WHERE b = 'x' AND n > 0"); !reflect.DeepEqual(got, []string{"x|1|10"}) {
		t.Errorf("got %v", got)
	}
}

// TestWithForwardReference checks PostgreSQL 15's report of a WITH item
// read before its definition without RECURSIVE: the message, its
// position, and the DETAIL and HINT that name the item.
func TestWithForwardReference(t *testing.T) {
	d := newTestDB(t, schema...)
	for sql, pos := range map[string]int{
		"WITH x AS (SELECT * FROM y), y AS (SELECT 1 AS n) SELECT * FROM x":                   26,
		"WITH x AS (SELECT * FROM (SELECT * FROM y) s), y AS (SELECT 1 AS n) SELECT * FROM x": 41,
	} {
		_, _, err := d.run(sql)
		e := pgerr.As(err)
		if e == nil || e.Code != pgerr.UndefinedTable || e.Message != `relation "y" does not exist` || e.Position != pos ||
			e.Detail != `There is a WITH item named "y", but it cannot be referenced from this part of the query.` ||
			e.Hint != "Use WITH RECURSIVE, or re-order the WITH items to remove forward references." {
			t.Errorf("%s: got %+v", sql, e)
		}
	}
	if _, _, err := d.run("WITH x AS (SELECT 1 AS n) SELECT * FROM nope"); pgerr.As(err) == nil || pgerr.As(err).Detail != "" {
		t.Errorf("a missing relation that is no WITH item: got %v", err)
	}
}

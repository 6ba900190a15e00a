package e2e

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/streamsql/streamsql/sql"
)

// TestDeepStatementsRefused: statements nested deeper than pg_query's C
// parser can take (SELECT 1+1+... with 30,000 terms overflowed its stack and
// killed streamsqld with SIGSEGV) are refused with 54001, through the simple
// and the extended protocol and the streaming statements, and the server
// and the connection go on; the deepest accepted ones still run.
func TestDeepStatementsRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s := startServer(t, t.TempDir())
	c := s.connect(ctx)
	execAll(t, ctx, c, "CREATE TABLE t (a int)", "INSERT INTO t VALUES (1), (2)")
	pc := c.PgConn()
	plus := func(n int) string { return "1" + strings.Repeat("+1", n) }
	deep := map[string]string{
		"plus":         "SELECT " + plus(30000),
		"plus 200000":  "SELECT " + plus(200000),
		"concat":       "SELECT 'a'" + strings.Repeat("||'a'", 30000),
		"cast":         "SELECT 1" + strings.Repeat("::int", 30000),
		"not":          "SELECT " + strings.Repeat("NOT ", 30000) + "true",
		"paren":        "SELECT " + strings.Repeat("(", 9000) + "1" + strings.Repeat(")", 9000),
		"case":         "SELECT " + strings.Repeat("CASE WHEN true THEN ", 5000) + "1" + strings.Repeat(" END", 5000),
		"array":        "SELECT " + strings.Repeat("ARRAY[", 5000) + "1" + strings.Repeat("]", 5000),
		"subquery":     strings.Repeat("SELECT (", 5000) + "SELECT 1" + strings.Repeat(")", 5000),
		"union":        "SELECT 1" + strings.Repeat(" UNION SELECT 1", 60000),
		"func":         "SELECT " + strings.Repeat("abs(", 5000) + "1" + strings.Repeat(")", 5000),
		"second stmt":  "SELECT 1; SELECT " + plus(30000),
		"insert":       "INSERT INTO t VALUES (" + plus(30000) + ")",
		"view":         "CREATE VIEW dv AS SELECT " + plus(30000) + " FROM t",
		"mview":        "CREATE MATERIALIZED VIEW dmv AS SELECT a, count(*) FROM t WHERE a < " + plus(30000) + " GROUP BY a EMIT ON UPDATE",
		"subscribe":    "COPY (SUBSCRIBE TO (SELECT a + " + plus(30000) + " FROM t)) TO STDOUT",
		"default":      "CREATE TABLE d (a int DEFAULT " + plus(30000) + ")",
		"paren chains": "SELECT " + strings.Repeat("(", 3000) + "1" + strings.Repeat(strings.Repeat("+1", 9)+")", 3000),
	}
	check := func(name string, err error) {
		t.Helper()
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "54001" || pe.Message != "stack depth limit exceeded" {
			t.Errorf("%s: got %v, want 54001 stack depth limit exceeded", name, err)
		}
		select {
		case <-s.exited:
			t.Fatalf("%s: streamsqld exited: %v\n%s", name, s.cmd.ProcessState, s.out.String())
		default:
		}
		var one int
		if err := c.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
			t.Fatalf("%s: the connection is not usable afterwards: %v", name, err)
		}
	}
	for name, q := range deep {
		_, err := pc.Exec(ctx, q).ReadAll()
		check("simple "+name, err)
		_, err = pc.Prepare(ctx, "", q, nil)
		check("extended "+name, err)
	}
	_, err := pc.Prepare(ctx, "", "SELECT $1::int"+strings.Repeat("+$1::int", 30000), nil)
	check("extended parameters", err)

	// The deepest accepted statements run, in the binder, planner,
	// evaluator and deparse (view and default definitions). (A stack
	// rlimit under 8 MB, inherited by the server, lowers the limit.)
	if sql.MaxNestingDepth() < 4000 {
		t.Skipf("stack rlimit lowers the nesting limit to %d", sql.MaxNestingDepth())
	}
	var got int
	if err := c.QueryRow(ctx, "SELECT "+plus(3990)).Scan(&got); err != nil || got != 3991 {
		t.Fatalf("3,990 terms: %d, %v", got, err)
	}
	if err := c.QueryRow(ctx, "SELECT $1::int"+strings.Repeat("+$1::int", 1990), 1).Scan(&got); err != nil || got != 1991 {
		t.Fatalf("1,990 parameter terms: %d, %v", got, err)
	}
	execAll(t, ctx, c,
		"CREATE VIEW dv AS SELECT a"+strings.Repeat("+a", 1900)+" AS s FROM t",
		"CREATE TABLE d (k int, a int DEFAULT "+plus(1900)+")",
		"INSERT INTO d (k) VALUES (1)",
		"CREATE MATERIALIZED VIEW dmv AS SELECT sum(a"+strings.Repeat("+a", 1900)+") AS s FROM t",
		"FLUSH")
	for q, want := range map[string]int{
		"SELECT max(s) FROM dv": 2 * 1901,
		"SELECT a FROM d":       1901,
		"SELECT s FROM dmv":     3 * 1901,
		"SELECT " + strings.Repeat("CASE WHEN true THEN ", 900) + "7" + strings.Repeat(" END", 900): 7,
		strings.Repeat("SELECT (", 900) + "SELECT 8" + strings.Repeat(")", 900):                     8,
	} {
		if err := c.QueryRow(ctx, q).Scan(&got); err != nil || got != want {
			t.Errorf("%.60s: %d, %v; want %d", q, got, err, want)
		}
	}
}

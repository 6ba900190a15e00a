package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestPLpgSQLNotices checks that RAISE NOTICE in a PL/pgSQL function
// reaches the client before the statement's result, one notice per row
// the function ran for, over the simple and the extended protocol, from a
// GROUP BY whose aggregation may run on several goroutines, and after a
// restart (the function is kept in the catalog).
func TestPLpgSQLNotices(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := startServer(t, dir)
	var notices []string
	connect := func() *pgx.Conn {
		cfg, err := pgx.ParseConfig(s.connString())
		if err != nil {
			t.Fatal(err)
		}
		cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
			notices = append(notices, n.Severity+" "+n.Code+" "+n.Message)
		}
		c, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := connect()
	for _, q := range []string{
		`CREATE FUNCTION tell(k int) RETURNS int LANGUAGE plpgsql AS $$
		BEGIN
			IF k % 100 = 0 THEN RAISE NOTICE 'row %', k; END IF;
			IF k = 250 THEN RAISE WARNING 'quarter'; END IF;
			RETURN k * 2;
		END $$`,
		`CREATE TABLE nt (k int)`,
		`INSERT INTO nt SELECT generate_series(1, 1000)`,
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	check := func(what string, run func() (int64, error)) {
		t.Helper()
		notices = nil
		sum, err := run()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if sum != 1001000 {
			t.Errorf("%s: sum %d, want 1001000", what, sum)
		}
		rows := 0
		warned := false
		for _, n := range notices {
			switch {
			case strings.HasPrefix(n, "NOTICE 00000 row "):
				rows++
			case n == "WARNING 01000 quarter":
				warned = true
			default:
				t.Errorf("%s: unexpected notice %q", what, n)
			}
		}
		if rows != 10 || !warned {
			t.Errorf("%s: notices %q, want 10 rows and the warning", what, notices)
		}
	}
	simple := func(c *pgx.Conn) func() (int64, error) {
		return func() (int64, error) {
			var sum int64
			err := c.QueryRow(ctx, "SELECT sum(tell(k)) FROM nt", pgx.QueryExecModeSimpleProtocol).Scan(&sum)
			return sum, err
		}
	}
	check("simple", simple(c))
	check("extended", func() (int64, error) {
		var sum int64
		err := c.QueryRow(ctx, "SELECT sum(tell(k)) FROM nt WHERE k > $1", 0).Scan(&sum)
		return sum, err
	})
	check("grouped", func() (int64, error) {
		rows, err := c.Query(ctx, "SELECT k % 7, sum(tell(k)) FROM nt GROUP BY 1")
		if err != nil {
			return 0, err
		}
		var total int64
		for rows.Next() {
			var g, sum int64
			if err := rows.Scan(&g, &sum); err != nil {
				return 0, err
			}
			total += sum
		}
		return total, rows.Err()
	})
	c.Close(ctx)
	s.kill()
	s = startServer(t, dir)
	c = connect()
	defer c.Close(ctx)
	check("after a restart", simple(c))
}

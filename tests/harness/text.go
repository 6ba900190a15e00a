package harness

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TextRows runs q over the simple protocol and returns its rows as the
// server's text, NULL as "NULL".
func TextRows(ctx context.Context, c *pgx.Conn, q string) ([][]string, error) {
	rows, err := c.Query(ctx, q, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]string
	for rows.Next() {
		var row []string
		for _, raw := range rows.RawValues() {
			if raw == nil {
				row = append(row, "NULL")
			} else {
				row = append(row, string(raw))
			}
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// EnvInt is the integer environment variable name, def when it is unset;
// a value that is not an integer fails the test.
func EnvInt(t testing.TB, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%s: %v", name, fmt.Errorf("not an integer: %w", err))
	}
	return n
}

package windowfuzz

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/streamsql/streamsql/tests/harness"
)

// TestReplayScript runs the statements of a file that WINDOWFUZZ_SCRIPT
// wrote (or one trimmed from it by hand) against an in-process server on
// the manual clock, restarting it at each "-- RESTART" line, and logs what
// each SELECT returns: a failing seed made small enough to read. It runs
// only when WINDOWFUZZ_REPLAY names the file.
func TestReplayScript(t *testing.T) {
	f := os.Getenv("WINDOWFUZZ_REPLAY")
	if f == "" {
		t.Skip("WINDOWFUZZ_REPLAY is not set")
	}
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	srv := harness.Start(t, t.TempDir())
	c, err := pgx.Connect(ctx, srv.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range strings.Split(string(b), ";\n") {
		q = strings.TrimSpace(q)
		if q == "" {
			continue
		}
		if q == "-- RESTART" {
			c = restart(ctx, t, srv, c)
			continue
		}
		if strings.HasPrefix(strings.ToUpper(q), "SELECT") {
			rows, err := harness.TextRows(ctx, c, q)
			t.Logf("%s: %v %v", q, rows, err)
			continue
		}
		if _, err := c.Exec(ctx, q); err != nil {
			t.Logf("%s: %v", q, err)
		}
	}
}

// restart closes c, restarts srv and returns a new connection to it.
func restart(ctx context.Context, t *testing.T, srv *harness.Server, c *pgx.Conn) *pgx.Conn {
	t.Helper()
	c.Close(ctx)
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	c, err := pgx.Connect(ctx, srv.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

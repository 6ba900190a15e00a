package harness

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestRestartKeepsData starts a server, writes a row, restarts it on the same
// data directory and reads the row back through a new connection.
func TestRestartKeepsData(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := Start(t, t.TempDir())
	c, err := pgx.Connect(ctx, s.ConnString())
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	for _, q := range []string{"CREATE TABLE h (a integer, b text)", "INSERT INTO h VALUES (1, 'one'), (2, NULL)"} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	c.Close(ctx)

	if err := s.Restart(); err != nil {
		t.Fatalf("restart: %v", err)
	}
	c, err = pgx.Connect(ctx, s.ConnString())
	if err != nil {
		t.Fatalf("connect after restart: %v", err)
	}
	defer c.Close(ctx)
	var n int
	var b *string
	if err := c.QueryRow(ctx, "SELECT count(*), max(b) FROM h").Scan(&n, &b); err != nil {
		t.Fatalf("select after restart: %v", err)
	}
	if n != 2 || b == nil || *b != "one" {
		t.Errorf("after restart: count = %d, max(b) = %v; want 2, one", n, b)
	}
}

// TestBackend gives each file its own empty server and discards it.
func TestBackend(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b := &Backend{Dir: t.TempDir()}
	db1, err := b.NewDB(ctx, "one")
	if err != nil {
		t.Fatal(err)
	}
	db2, err := b.NewDB(ctx, "two")
	if err != nil {
		t.Fatal(err)
	}
	if db1.ConnString() == db2.ConnString() {
		t.Errorf("two databases share %q", db1.ConnString())
	}
	c, err := pgx.Connect(ctx, db1.ConnString())
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	if _, err := c.Exec(ctx, "CREATE TABLE only_in_one (x integer)"); err != nil {
		t.Fatalf("create: %v", err)
	}
	c.Close(ctx)
	c, err = pgx.Connect(ctx, db2.ConnString())
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	if _, err := c.Exec(ctx, "SELECT * FROM only_in_one"); err == nil {
		t.Errorf("a table created in one database is visible in another")
	}
	c.Close(ctx)
	for _, db := range []interface{ Close() error }{db1, db2} {
		if err := db.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}
}

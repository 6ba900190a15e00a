package harness

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// TestUUIDOverTheWire: pgx sends and reads uuid in the binary format (16
// bytes each way, in the extended protocol) and in text (the simple
// protocol), and both give the same values.
func TestUUIDOverTheWire(t *testing.T) {
	s := Start(t, t.TempDir())
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE u (id uuid PRIMARY KEY, v int)"); err != nil {
		t.Fatal(err)
	}
	want := pgtype.UUID{Bytes: [16]byte{0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11}, Valid: true}
	// a binary parameter
	if _, err := conn.Exec(ctx, "INSERT INTO u VALUES ($1, 1)", want); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		var got pgtype.UUID
		var text string
		var v int
		// a binary result (extended protocol), and a uuid parameter compared
		if err := conn.QueryRow(ctx, "SELECT id, id::text, v FROM u WHERE id = $1", mode, want).Scan(&got, &text, &v); err != nil {
			t.Fatalf("mode %v: %v", mode, err)
		}
		if got != want || text != "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11" || v != 1 {
			t.Fatalf("mode %v: %v %q %d", mode, got, text, v)
		}
	}
	var random pgtype.UUID
	if err := conn.QueryRow(ctx, "SELECT gen_random_uuid()").Scan(&random); err != nil || !random.Valid || random.Bytes[6]>>4 != 4 {
		t.Fatalf("gen_random_uuid: %v %v", random, err)
	}
}

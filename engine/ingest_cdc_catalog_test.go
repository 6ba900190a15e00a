package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/streamsql/streamsql/connector/pgcdc/pgtest"
	"github.com/streamsql/streamsql/pgerr"
)

// TestCDCTableUpstreamColumns: a postgres-cdc table created without a
// column list (FROM a shared source, or WITH (connector = ...)) takes the
// upstream table's columns, types (with modifiers) and primary key from
// the upstream catalog, and follows changes as a declared one (a uuid
// column is uuid; declared as text, it reads its text form, as before
// streamsql had uuid); a table without a key is refused.
func TestCDCTableUpstreamColumns(t *testing.T) {
	pg := pgtest.Start(t)
	ctx := context.Background()
	up := pg.Connect(ctx)
	for _, q := range []string{"SET TimeZone = 'UTC'", "SET extra_float_digits = 1", "CREATE TABLE orders (" + cdcColumns + ", u uuid)",
		"CREATE TABLE nokey (a int, b text)"} {
		if _, err := up.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	g := &cdcGen{rng: rand.New(rand.NewPCG(3, 4)), live: map[int64]bool{}}
	for range 5 {
		g.upstreamTx(t, ctx, up, 20)
	}
	pg.Exec(ctx, "UPDATE orders SET u = md5(id::text)::uuid WHERE id % 2 = 0")
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE SOURCE pg WITH (connector = 'postgres-cdc', "+pg.Options()+", slot.name = 'cat', publication.name = 'cat_pub')")
	mustRun(t, s, "CREATE TABLE o1 FROM pg TABLE 'public.orders'")
	mustRun(t, s, fmt.Sprintf("CREATE TABLE o2 WITH (connector = 'postgres-cdc', %s, table.name = 'public.orders', slot.name = 'cat2')", pg.Options()))
	mustRun(t, s, fmt.Sprintf("CREATE TABLE o3 (id bigint PRIMARY KEY, u text) WITH (connector = 'postgres-cdc', %s, table.name = 'public.orders', slot.name = 'cat3')", pg.Options()))
	sel := "SELECT id, qty, small, price, note, ok, ts, tsl, d, j, tags, nums, f, big, b, tm, iv, r, vc, ch, dates, u::text FROM %s ORDER BY id"
	for _, tbl := range []string{"o1", "o2"} {
		waitSame(t, ctx, s, up, fmt.Sprintf(sel, tbl), fmt.Sprintf(sel, "orders"))
		waitRows(t, s, fmt.Sprintf(`SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod) || CASE WHEN attnotnull THEN ' not null' ELSE '' END, ', ' ORDER BY attnum)
			FROM pg_attribute WHERE attrelid = '%s'::regclass AND attnum > 0`, tbl),
			"id bigint not null, qty integer, small smallint, price numeric(12,3), note text, ok boolean, ts timestamp with time zone, "+
				"tsl timestamp without time zone, d date, j jsonb, tags text[], nums integer[], f double precision, big text, b bytea, "+
				"tm time without time zone, iv interval, r real, vc character varying(20), ch character(3), dates date[], u uuid")
	}
	waitSame(t, ctx, s, up, "SELECT id, u FROM o3 ORDER BY id", "SELECT id, u::text FROM orders ORDER BY id")
	for range 10 {
		g.upstreamTx(t, ctx, up, 1+g.rng.IntN(10)) // updates and deletes find their rows by the key read upstream
	}
	for _, tbl := range []string{"o1", "o2"} {
		waitSame(t, ctx, s, up, fmt.Sprintf(sel, tbl), fmt.Sprintf(sel, "orders"))
	}
	waitSame(t, ctx, s, up, "SELECT id, u FROM o3 ORDER BY id", "SELECT id, u::text FROM orders ORDER BY id")
	if _, _, err := run(t, s, "CREATE TABLE nk FROM pg TABLE 'nokey'"); pgerr.CodeOf(err) != pgerr.ObjectNotInPrerequisiteState {
		t.Errorf("a table without a key upstream: %v", err)
	}
	if _, _, err := run(t, s, "CREATE TABLE nt FROM pg TABLE 'nope'"); pgerr.CodeOf(err) != pgerr.UndefinedTable {
		t.Errorf("a missing upstream table: %v", err)
	}
}

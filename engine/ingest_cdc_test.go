package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/streamsql/streamsql/connector/pgcdc/pgtest"
	"github.com/streamsql/streamsql/pgerr"
)

// cdcColumns are the columns of the replicated test table, upstream and
// in streamsql alike.
const cdcColumns = `id bigint PRIMARY KEY, qty int, small smallint, price numeric(12,3), note text, ok boolean,
	ts timestamptz, tsl timestamp, d date, j jsonb, tags text[], nums int[], f float8, big text,
	b bytea, tm time, iv interval, r real, vc varchar(20), ch char(3), dates date[]`

// cdcSelect lists the table's rows in one order, for both sides.
const cdcSelect = `SELECT id, qty, small, price, note, ok, ts, tsl, d, j, tags, nums, f, big, b, tm, iv, r, vc, ch, dates FROM %s ORDER BY id`

// cdcView is a view over the table, run by both sides.
const cdcView = `SELECT ok, count(*) AS n, sum(qty) AS q, sum(price) AS p, max(ts) AS t FROM %s GROUP BY ok`

// cdcGen makes random rows and changes for the upstream table.
type cdcGen struct {
	rng  *rand.Rand
	next int64
	live map[int64]bool
}

func (g *cdcGen) lit(kind string) string {
	if g.rng.IntN(8) == 0 {
		return "NULL"
	}
	r := g.rng
	switch kind {
	case "qty":
		return fmt.Sprint(r.IntN(2000) - 1000)
	case "small":
		return fmt.Sprint(r.IntN(60000) - 30000)
	case "price":
		return fmt.Sprintf("%d.%03d", r.IntN(100000)-50000, r.IntN(1000))
	case "note":
		return fmt.Sprintf("'n%d ''q'' é %d'", r.IntN(100), r.IntN(10))
	case "ok":
		return []string{"true", "false"}[r.IntN(2)]
	case "ts":
		return fmt.Sprintf("'2024-%02d-%02d %02d:%02d:%02d.%06d+0%d'", 1+r.IntN(12), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), r.IntN(1000000), r.IntN(9))
	case "tsl":
		return fmt.Sprintf("'19%02d-%02d-%02d %02d:%02d:%02d.%03d'", r.IntN(100), 1+r.IntN(12), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), r.IntN(1000))
	case "d":
		return fmt.Sprintf("'%04d-%02d-%02d'", 1900+r.IntN(200), 1+r.IntN(12), 1+r.IntN(28))
	case "j":
		return fmt.Sprintf(`'{"a": %d, "b": [1, "x", null, {"c": %v}], "s": "é\"q"}'`, r.IntN(100), r.IntN(2) == 0)
	case "tags":
		return fmt.Sprintf(`'{"t%d","with space",NULL,"q\"uote"}'`, r.IntN(9))
	case "nums":
		return fmt.Sprintf("'{%d,%d,-3}'", r.IntN(100), r.IntN(100))
	case "f":
		switch r.IntN(10) {
		case 0:
			return "'NaN'"
		case 1:
			return "'-Infinity'"
		}
		return fmt.Sprint(r.NormFloat64() * 1e6)
	case "b":
		return fmt.Sprintf(`'\x%x'`, []byte{byte(r.IntN(256)), 0, byte(r.IntN(256)), '\\'})
	case "tm":
		return fmt.Sprintf("'%02d:%02d:%02d.%06d'", r.IntN(24), r.IntN(60), r.IntN(60), r.IntN(1000000))
	case "iv":
		return fmt.Sprintf("'%d years %d mons %d days %02d:%02d:%02d.%03d'", r.IntN(5), r.IntN(12)-6, r.IntN(40)-20, r.IntN(24), r.IntN(60), r.IntN(60), r.IntN(1000))
	case "r":
		return fmt.Sprintf("%g", float32(r.NormFloat64()*1000))
	case "vc":
		return fmt.Sprintf("'v%d'", r.IntN(100000))
	case "ch":
		return fmt.Sprintf("'%c'", 'a'+r.IntN(26))
	case "dates":
		return fmt.Sprintf("'{2020-01-%02d,NULL,infinity}'", 1+r.IntN(28))
	case "big":
		// Incompressible and over 2 kB: stored out of line (TOAST).
		b := make([]byte, 3000+r.IntN(3000))
		for i := range b {
			b[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[r.IntN(36)]
		}
		return "'" + string(b) + "'"
	}
	panic(kind)
}

var cdcKinds = []string{"qty", "small", "price", "note", "ok", "ts", "tsl", "d", "j", "tags", "nums", "f", "big", "b", "tm", "iv", "r", "vc", "ch", "dates"}

func (g *cdcGen) insert() string {
	g.next++
	g.live[g.next] = true
	vals := []string{fmt.Sprint(g.next)}
	for _, k := range cdcKinds {
		vals = append(vals, g.lit(k))
	}
	return fmt.Sprintf("INSERT INTO orders VALUES (%s)", strings.Join(vals, ", "))
}

func (g *cdcGen) pick() (int64, bool) {
	for id := range g.live { // map order is random enough
		return id, true
	}
	return 0, false
}

// change is a random insert, update (of a few columns, which leaves big
// TOAST-unchanged unless picked; sometimes of the key) or delete.
func (g *cdcGen) change() string {
	id, ok := g.pick()
	switch n := g.rng.IntN(10); {
	case !ok || n < 4:
		return g.insert()
	case n < 8:
		var sets []string
		for _, k := range cdcKinds {
			if g.rng.IntN(4) == 0 {
				sets = append(sets, k+" = "+g.lit(k))
			}
		}
		if g.rng.IntN(10) == 0 {
			g.next++
			delete(g.live, id)
			g.live[g.next] = true
			sets = append(sets, fmt.Sprintf("id = %d", g.next))
		}
		if len(sets) == 0 {
			sets = append(sets, "qty = qty + 1")
		}
		return fmt.Sprintf("UPDATE orders SET %s WHERE id = %d", strings.Join(sets, ", "), id)
	default:
		delete(g.live, id)
		return fmt.Sprintf("DELETE FROM orders WHERE id = %d", id)
	}
}

// upstreamTx runs n random changes upstream in one transaction.
func (g *cdcGen) upstreamTx(t *testing.T, ctx context.Context, conn *pgx.Conn, n int) {
	t.Helper()
	stmts := make([]string, n)
	for i := range stmts {
		stmts[i] = g.change()
	}
	if _, err := conn.Exec(ctx, "BEGIN; "+strings.Join(stmts, "; ")+"; COMMIT"); err != nil {
		t.Fatal(err)
	}
}

// waitSame polls until streamsql's answer to q equals upstream's.
func waitSame(t *testing.T, ctx context.Context, s *Session, up *pgx.Conn, mine, theirs string) {
	t.Helper()
	want := pgtest.Rows(ctx, t, up, theirs)
	deadline := time.Now().Add(60 * time.Second)
	var got []string
	for time.Now().Before(deadline) {
		got = mustRun(t, s, mine)
		if strings.Join(got, "\n") == strings.Join(want, "\n") {
			return
		}
		time.Sleep(10 * time.Millisecond) // polling for progress, not for correctness
	}
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Fatalf("%s: row %d of %d/%d differs:\n got %.300s\nwant %.300s", mine, i, len(got), len(want), g, w)
		}
	}
}

// TestCDCTable: a postgres-cdc table copies the upstream table (every
// type of cdcColumns, NULLs, TOASTed text), then follows random inserts,
// updates (some of the key, some leaving TOASTed values unchanged) and
// deletes; a view over it equals the same query run upstream; a restart
// goes on from the table's position; streamsql_sources shows it.
func TestCDCTable(t *testing.T) {
	pg := pgtest.Start(t)
	ctx := context.Background()
	up := pg.Connect(ctx)
	for _, q := range []string{"SET TimeZone = 'UTC'", "SET extra_float_digits = 1", "CREATE TABLE orders (" + cdcColumns + ")"} {
		if _, err := up.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	g := &cdcGen{rng: rand.New(rand.NewPCG(1, 2)), live: map[int64]bool{}}
	for range 10 {
		g.upstreamTx(t, ctx, up, 30)
	}
	dir := t.TempDir()
	e, s := open(t, dir)
	ddl := fmt.Sprintf(`CREATE TABLE orders (%s) WITH (connector = 'postgres-cdc', %s, table.name = 'public.orders', slot.name = 'cdc1')`, cdcColumns, pg.Options())
	mustRun(t, s, ddl)
	mustRun(t, s, "CREATE MATERIALIZED VIEW ov AS "+fmt.Sprintf(cdcView, "orders"))
	same := func() {
		t.Helper()
		waitSame(t, ctx, s, up, fmt.Sprintf(cdcSelect, "orders"), fmt.Sprintf(cdcSelect, "orders"))
		mustRun(t, s, "FLUSH")
		waitSame(t, ctx, s, up, "SELECT * FROM ov ORDER BY ok", fmt.Sprintf(cdcView, "orders")+" ORDER BY ok")
	}
	same()
	for range 30 {
		g.upstreamTx(t, ctx, up, 1+g.rng.IntN(20))
	}
	same()
	waitRows(t, s, "SELECT source_name, partition, status, last_error, rows > 0, bad_rows FROM streamsql_sources",
		"orders|0|streaming|NULL|t|0")
	e.Close()

	// Changes made while streamsql is down arrive after the restart, once.
	for range 10 {
		g.upstreamTx(t, ctx, up, 10)
	}
	pg.WaitSlotInactive(ctx, "cdc1")
	e, s = open(t, dir)
	defer func() { e.Close() }()
	same()
	for range 10 {
		g.upstreamTx(t, ctx, up, 10)
	}
	same()
}

// TestCDCTableErrors: bad options and upstream mismatches fail at CREATE
// TABLE with the option or column named; upstream DDL after that stops
// the table with a clear error in streamsql_sources.
func TestCDCTableErrors(t *testing.T) {
	pg := pgtest.Start(t)
	ctx := context.Background()
	pg.Exec(ctx, "CREATE TABLE items (id int PRIMARY KEY, name text, n int)")
	pg.Exec(ctx, "INSERT INTO items VALUES (1, 'a', 10), (2, 'b', 20)")
	e, s := open(t, t.TempDir())
	defer e.Close()
	with := func(extra string) string {
		return fmt.Sprintf("CREATE TABLE items (id int PRIMARY KEY, name text, n int) WITH (connector = 'postgres-cdc', %s%s)", pg.Options(), extra)
	}
	for _, c := range []struct {
		stmt string
		code pgerr.Code
		msg  string
	}{
		{with(", table.name = 'items', slot.name = 's2', colour = 'red'"), pgerr.InvalidParameterValue, `"colour"`},
		{with(", table.name = 'items'"), pgerr.InvalidParameterValue, `"slot.name"`},
		{with(", table.name = 'nope', slot.name = 's2'"), pgerr.UndefinedTable, "nope"},
		{with(", table.name = 'items', slot.name = 'Bad-Name'"), pgerr.InvalidParameterValue, "slot.name"},
		{strings.Replace(with(", table.name = 'items', slot.name = 's2'"), "n int)", "n int, extra int)", 1), pgerr.UndefinedColumn, `"extra"`},
		{strings.Replace(with(", table.name = 'items', slot.name = 's2'"), "name text", "name int", 1), pgerr.DatatypeMismatch, `"name"`},
		{strings.Replace(with(", table.name = 'items', slot.name = 's2'"), "id int PRIMARY KEY, name text", "id int, name text PRIMARY KEY", 1), pgerr.InvalidTableDefinition, "primary key"},
		{strings.Replace(with(", table.name = 'items', slot.name = 's2'"), "PRIMARY KEY", "", 1), pgerr.InvalidTableDefinition, "PRIMARY KEY"},
		{strings.Replace(with(", table.name = 'items', slot.name = 's2'"), fmt.Sprintf("port = '%d'", pg.Port), "port = '1'", 1), "08001", "cannot connect"},
	} {
		_, _, err := run(t, s, c.stmt)
		if pgerr.CodeOf(err) != c.code || err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s:\n got %v (%s), want %s containing %s", c.stmt, err, pgerr.CodeOf(err), c.code, c.msg)
		}
	}
	mustRun(t, s, with(", table.name = 'items', slot.name = 's2'"))
	waitRows(t, s, "SELECT * FROM items ORDER BY id", "1|a|10", "2|b|20")
	// Another table cannot take the slot.
	if _, _, err := run(t, s, strings.Replace(with(", table.name = 'items', slot.name = 's2'"), "TABLE items", "TABLE items2", 1)); pgerr.CodeOf(err) != pgerr.DuplicateObject {
		t.Errorf("a second table on slot s2: %v", err)
	}
	// Writes to other tables do not make the slot keep WAL: idle, the
	// reader confirms how far the walsender got.
	pg.Exec(ctx, "CREATE TABLE other (x int); INSERT INTO other SELECT generate_series(1, 10000)")
	upc := pg.Connect(ctx)
	var target string
	if err := upc.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&target); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; {
		var ok bool
		if err := upc.QueryRow(ctx, "SELECT confirmed_flush_lsn >= $1::pg_lsn FROM pg_replication_slots WHERE slot_name = 's2'", target).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("slot s2 not confirmed past %s", target)
		}
		time.Sleep(20 * time.Millisecond) // polling for a keepalive
	}
	pg.Exec(ctx, "ALTER TABLE items DROP COLUMN n")
	pg.Exec(ctx, "INSERT INTO items VALUES (3, 'c')")
	waitRows(t, s, "SELECT status, last_error LIKE '%upstream DDL%column \"n\" is gone%' FROM streamsql_sources", "failed|t")
	waitRows(t, s, "SELECT count(*) FROM items", "2")
	mustRun(t, s, "DROP TABLE items")
	waitRows(t, s, "SELECT count(*) FROM streamsql_sources", "0")
	up := pg.Connect(ctx)
	if got := pgtest.Rows(ctx, t, up, "SELECT count(*) FROM pg_replication_slots WHERE slot_name = 's2'"); got[0] != "0" {
		t.Errorf("slot s2 after DROP TABLE: %v", got)
	}

	// A type streamsql does not have (inet) reads as text, and only as
	// text; a uuid reads as uuid or as its text, not as another type.
	pg.Exec(ctx, "CREATE TABLE ids (id int PRIMARY KEY, u uuid, ip inet)")
	pg.Exec(ctx, "INSERT INTO ids VALUES (1, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '10.0.0.1'), (2, NULL, NULL)")
	uuidTable := "CREATE TABLE ids (id int PRIMARY KEY, u %s) WITH (connector = 'postgres-cdc', " + pg.Options() + ", table.name = 'ids', slot.name = 's3')"
	inetTable := "CREATE TABLE ips (id int PRIMARY KEY, ip %s) WITH (connector = 'postgres-cdc', " + pg.Options() + ", table.name = 'ids', slot.name = 's4')"
	if _, _, err := run(t, s, fmt.Sprintf(inetTable, "int")); pgerr.CodeOf(err) != pgerr.FeatureNotSupported {
		t.Errorf("inet as int: %v", err)
	}
	if _, _, err := run(t, s, fmt.Sprintf(uuidTable, "int")); pgerr.CodeOf(err) != pgerr.DatatypeMismatch {
		t.Errorf("uuid as int: %v", err)
	}
	mustRun(t, s, fmt.Sprintf(inetTable, "text"))
	mustRun(t, s, fmt.Sprintf(uuidTable, "text"))
	pg.Exec(ctx, "UPDATE ids SET u = 'b0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12' WHERE id = 2")
	waitRows(t, s, "SELECT * FROM ids ORDER BY id", "1|a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "2|b0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12")
	waitRows(t, s, "SELECT * FROM ips ORDER BY id", "1|10.0.0.1", "2|NULL")
}

// TestCDCSharedSource: CREATE SOURCE with the connection once, then
// tables FROM it, each replicating its upstream table (with a slot of its
// own, in the source's publication); the source itself cannot be read.
func TestCDCSharedSource(t *testing.T) {
	pg := pgtest.Start(t)
	ctx := context.Background()
	pg.Exec(ctx, "CREATE TABLE a (id int PRIMARY KEY, v text); CREATE TABLE b (k bigint PRIMARY KEY, n numeric)")
	pg.Exec(ctx, "INSERT INTO a VALUES (1, 'x'), (2, 'y'); INSERT INTO b VALUES (10, 1.5)")
	e, s := open(t, t.TempDir())
	defer e.Close()
	mustRun(t, s, "CREATE SOURCE pg WITH (connector = 'postgres-cdc', "+pg.Options()+", slot.name = 'shop', publication.name = 'shop_pub')")
	mustRun(t, s, "CREATE TABLE ta (id int PRIMARY KEY, v text) FROM pg TABLE 'public.a'")
	mustRun(t, s, "CREATE TABLE tb (k bigint PRIMARY KEY, n numeric) FROM pg TABLE 'b'")
	waitRows(t, s, "SELECT * FROM ta ORDER BY id", "1|x", "2|y")
	waitRows(t, s, "SELECT * FROM tb", "10|1.5")
	pg.Exec(ctx, "BEGIN; UPDATE a SET v = 'z' WHERE id = 2; DELETE FROM a WHERE id = 1; INSERT INTO b VALUES (11, -2); COMMIT")
	waitRows(t, s, "SELECT * FROM ta ORDER BY id", "2|z")
	waitRows(t, s, "SELECT * FROM tb ORDER BY k", "10|1.5", "11|-2")
	up := pg.Connect(ctx)
	if got := strings.Join(pgtest.Rows(ctx, t, up, "SELECT slot_name FROM pg_replication_slots ORDER BY 1"), ","); got != "shop_b,shop_public_a" {
		t.Errorf("slots: %s", got)
	}
	if got := strings.Join(pgtest.Rows(ctx, t, up, "SELECT tablename FROM pg_publication_tables WHERE pubname = 'shop_pub' ORDER BY 1"), ","); got != "a,b" {
		t.Errorf("publication: %s", got)
	}
	for _, c := range []struct {
		q    string
		code pgerr.Code
	}{
		{"CREATE TABLE tc (id int PRIMARY KEY) FROM ta TABLE 'a'", pgerr.WrongObjectType},
		{"CREATE TABLE tc (id int PRIMARY KEY) FROM nope TABLE 'a'", pgerr.UndefinedTable},
		{"CREATE TABLE tc (id int PRIMARY KEY) FROM pg TABLE 'a' WITH (connector = 'kafka')", pgerr.SyntaxError},
		{"CREATE TABLE tc (id int PRIMARY KEY) FROM pg", pgerr.SyntaxError},
		{"CREATE MATERIALIZED VIEW pv AS SELECT count(*) FROM pg", pgerr.FeatureNotSupported},
	} {
		if _, _, err := run(t, s, c.q); pgerr.CodeOf(err) != c.code {
			t.Errorf("%s: %v (%s), want %s", c.q, err, pgerr.CodeOf(err), c.code)
		}
	}
}

package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/connector/pgcdc/pgtest"
	"github.com/streamsql/streamsql/pgerr"
)

// TestCDCUpstreamRefusals: what the upstream PostgreSQL refuses is a
// clear error at CREATE TABLE with PostgreSQL's SQLSTATE (a wrong
// password, a user without the REPLICATION attribute, a user who may not
// create the publication: no CREATE on the database, or not the table's
// owner), and a slot dropped upstream while the table
// runs stops it with the reason in streamsql_sources.
func TestCDCUpstreamRefusals(t *testing.T) {
	pg := pgtest.Start(t)
	ctx := context.Background()
	pg.Exec(ctx, "CREATE TABLE items (id int PRIMARY KEY, name text)")
	pg.Exec(ctx, "INSERT INTO items VALUES (1, 'a'), (2, 'b')")
	pg.Exec(ctx, "CREATE ROLE pwuser LOGIN SUPERUSER PASSWORD 'right'")
	pg.Exec(ctx, "CREATE ROLE norepl LOGIN")
	pg.Exec(ctx, "CREATE ROLE reader LOGIN REPLICATION")
	pg.Exec(ctx, "GRANT SELECT ON items TO reader, norepl")
	pg.Exec(ctx, "GRANT CREATE ON DATABASE postgres TO reader, norepl")
	pg.Exec(ctx, "CREATE TABLE owned (id int PRIMARY KEY, name text)")
	pg.Exec(ctx, "ALTER TABLE owned OWNER TO norepl")
	pg.RequirePassword("pwuser")
	e, s := open(t, t.TempDir())
	defer e.Close()
	with := func(user, extra string) string {
		opts := strings.Replace(pg.Options(), "username = 'postgres'", "username = '"+user+"'", 1)
		return fmt.Sprintf("CREATE TABLE items (id int PRIMARY KEY, name text) WITH (connector = 'postgres-cdc', %s, table.name = 'items', slot.name = 'sx'%s)", opts, extra)
	}
	for _, c := range []struct {
		stmt, code, msg string
	}{
		{with("pwuser", ", password = 'wrong'"), "28P01", "password authentication failed"},
		{strings.Replace(with("reader", ""), "'reader'", "'pwuser'", 1), "28P01", "password"}, // none given
		{strings.Replace(with("norepl", ""), "table.name = 'items'", "table.name = 'owned'", 1), "42501", "replication"},
		{with("reader", ""), "42501", "items"}, // may not create the publication on a table it does not own
	} {
		_, _, err := run(t, s, c.stmt)
		if err == nil || !strings.Contains(err.Error(), c.msg) || string(pgerr.CodeOf(err)) != c.code {
			t.Errorf("%s:\n got %v (%s), want %s naming %q", c.stmt, err, pgerr.CodeOf(err), c.code, c.msg)
		}
	}
	// The right password works.
	mustRun(t, s, with("pwuser", ", password = 'right', publication.name = 'pub_pw'")+"")
	waitRows(t, s, "SELECT count(*) FROM items", "2")

	// The slot dropped upstream while the table runs.
	up := pg.Connect(ctx)
	deadline := time.Now().Add(20 * time.Second)
	for {
		// The reader reconnects: end its walsender and drop the slot while
		// it is not in use.
		up.Exec(ctx, "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = 'sx' AND active_pid IS NOT NULL")
		if _, err := up.Exec(ctx, "SELECT pg_drop_replication_slot('sx')"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("could not drop slot sx")
		}
		time.Sleep(10 * time.Millisecond) // polling for the walsender to end
	}
	waitRows(t, s, "SELECT status, last_error LIKE '%sx%' FROM streamsql_sources", "failed|t")
	waitRows(t, s, "SELECT count(*) FROM items", "2") // the rows read stay readable
}

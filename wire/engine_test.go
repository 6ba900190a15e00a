package wire

import (
	"context"
	"errors"
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/streamsql/streamsql/engine"
)

// startEngine serves a real engine on a fresh data directory.
func startEngine(t *testing.T) string {
	t.Helper()
	eng, err := engine.Open(engine.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatalf("engine.Open: %v", err)
	}
	srv := NewServer(eng, Options{Logf: t.Logf})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(func() {
		srv.Close()
		eng.Close()
	})
	return l.Addr().String()
}

// TestRealEngineWithPgx runs the protocol paths against the real engine:
// DDL, parameters in both formats, row limits, COPY and errors.
func TestRealEngineWithPgx(t *testing.T) {
	addr := startEngine(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, fakeURL(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	mustExec := func(sql string, args ...any) pgconn.CommandTag {
		t.Helper()
		tag, err := conn.Exec(ctx, sql, args...)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return tag
	}
	mustExec("create table items (id int4 primary key, name text, price numeric(10,2))")
	for i, name := range []string{"apple", "pear", "fig"} {
		if tag := mustExec("insert into items values ($1, $2, $3)", int32(i+1), name, float64(i)+0.5); tag.String() != "INSERT 0 1" {
			t.Errorf("insert tag %q", tag)
		}
	}
	// INSERT ... RETURNING through both protocols: PostgreSQL's tag.
	for i, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		rows, err := conn.Query(ctx, "insert into items values (10 + $1::int4, 'tmp', 0) returning id", mode, int32(i))
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
		}
		if rows.Err() != nil || rows.CommandTag().String() != "INSERT 0 1" {
			t.Errorf("insert returning [%v]: tag %q, %v", mode, rows.CommandTag(), rows.Err())
		}
	}
	mustExec("delete from items where name = 'tmp'")
	var n int64
	var names string
	if err := conn.QueryRow(ctx, "select count(*), string_agg(name, ',' order by id) from items where price > $1", 0.7).Scan(&n, &names); err != nil {
		t.Fatal(err)
	}
	if n != 2 || names != "pear,fig" {
		t.Errorf("got %d %q", n, names)
	}
	// Simple protocol, several statements.
	results, err := conn.PgConn().Exec(ctx, "select 1; update items set price = price * 2 where id < 3; select name from items order by id").ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 3 || results[1].CommandTag.String() != "UPDATE 2" || len(results[2].Rows) != 3 || string(results[2].Rows[0][0]) != "apple" {
		t.Errorf("simple results: %+v", results)
	}
	// COPY both ways.
	if tag, err := conn.PgConn().CopyFrom(ctx, strings.NewReader("4\tkiwi\t1.25\n5\t\\N\t\\N\n"), "copy items from stdin"); err != nil || tag.String() != "COPY 2" {
		t.Fatalf("copy from: %v %v", tag, err)
	}
	var out strings.Builder
	if _, err := conn.PgConn().CopyTo(ctx, &out, "copy (select * from items where id >= 3 order by id) to stdout (format csv)"); err != nil {
		t.Fatal(err)
	}
	if want := "3,fig,2.50\n4,kiwi,1.25\n5,,\n"; out.String() != want {
		t.Errorf("copy to: %q, want %q", out.String(), want)
	}
	// A user error leaves the connection usable.
	_, err = conn.Exec(ctx, "select nosuch from items")
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "42703" || pgErr.Message != `column "nosuch" does not exist` {
		t.Errorf("bad column: %v", err)
	}
	if err := conn.QueryRow(ctx, "select count(*) from items").Scan(&n); err != nil || n != 5 {
		t.Errorf("after error: %d %v", n, err)
	}
	// Errors raised in the wire (syntax, Bind) fail a transaction block too.
	for _, bad := range []func() error{
		func() error { _, err := conn.Exec(ctx, "selec 1"); return err },
		func() error { _, err := conn.Exec(ctx, "select $1::int4", "x"); return err },
	} {
		mustExec("begin")
		if err := bad(); err == nil {
			t.Fatal("bad statement succeeded")
		}
		if st := conn.PgConn().TxStatus(); st != 'E' {
			t.Errorf("transaction status %q after an error in a block, want E", st)
		}
		mustExec("rollback")
	}
}

// TestRealEngineWithPsql is the end-to-end check with the real client.
func TestRealEngineWithPsql(t *testing.T) {
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql not installed")
	}
	addr := startEngine(t)
	host, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(psql, "-h", host, "-p", port, "-U", "streamsql", "-X", "-A", "-t", "streamsql",
		"-c", "create table p (a int, b text)",
		"-c", "insert into p values (1, 'one'), (2, null)",
		"-c", "select a, coalesce(b, '<null>') from p order by a",
		"-c", `\copy p to stdout`,
		"-c", "show application_name",
		"-c", "show work_mem")
	// PGOPTIONS arrives in the startup packet's "options"; psql's own
	// application_name parameter wins over the one in options.
	cmd.Env = append(cmd.Environ(), "PGCONNECT_TIMEOUT=10", `PGOPTIONS=-c application_name=from\ options --work-mem=64kB`)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
	want := "CREATE TABLE\nINSERT 0 2\n1|one\n2|<null>\n1\tone\n2\t\\N\npsql\n64kB\n"
	if string(out) != want {
		t.Errorf("psql printed %q, want %q", out, want)
	}
}

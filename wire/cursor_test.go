package wire

import (
	"context"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
)

// TestCursorsWithPgx: DECLARE / FETCH / MOVE / CLOSE on the real engine
// through both protocols, FETCH's tag, and a protocol Describe of a SQL
// cursor's portal (psycopg's named cursors use it).
func TestCursorsWithPgx(t *testing.T) {
	addr := startEngine(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, fakeURL(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range []string{"create table cur (id int4, name text)", "insert into cur select g, 'n' || g from generate_series(1, 7) g"} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
		if _, err := conn.Exec(ctx, "begin", mode); err != nil {
			t.Fatal(err)
		}
		if tag, err := conn.Exec(ctx, "declare c cursor for select id, name from cur where id > $1 order by id", mode, 1); err != nil || tag.String() != "DECLARE CURSOR" {
			t.Fatalf("[%v] declare: %q %v", mode, tag, err)
		}
		fetch := func(q, want, wantTag string) {
			t.Helper()
			rows, err := conn.Query(ctx, q, mode)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for rows.Next() {
				var id int32
				var name string
				if err := rows.Scan(&id, &name); err != nil {
					t.Fatal(err)
				}
				got = append(got, name)
			}
			if rows.Err() != nil || strings.Join(got, ",") != want || rows.CommandTag().String() != wantTag {
				t.Fatalf("[%v] %s: %v %q %v; want %s %q", mode, q, got, rows.CommandTag(), rows.Err(), want, wantTag)
			}
		}
		fetch("fetch 2 from c", "n2,n3", "FETCH 2")
		if tag, err := conn.Exec(ctx, "move 2 in c", mode); err != nil || tag.String() != "MOVE 2" {
			t.Fatalf("[%v] move: %q %v", mode, tag, err)
		}
		fetch("fetch all c", "n6,n7", "FETCH 2")
		fetch("fetch next c", "", "FETCH 0")
		if tag, err := conn.Exec(ctx, "close c", mode); err != nil || tag.String() != "CLOSE CURSOR" {
			t.Fatalf("[%v] close: %q %v", mode, tag, err)
		}
		if _, err := conn.Exec(ctx, "commit", mode); err != nil {
			t.Fatal(err)
		}
	}

	c := dialRaw(t, fakeURL(addr))
	c.roundTrip(&pgproto3.Query{String: "begin; declare pc binary cursor for select id, name from cur order by id"})
	got := c.roundTrip(&pgproto3.Describe{ObjectType: 'P', Name: "pc"}, &pgproto3.Sync{})
	want := []string{"RowDescription id:23:4:-1:1,name:25:-1:-1:1", "ReadyForQuery T"}
	if !equalStrings(got, want) {
		t.Fatalf("describe portal of a cursor: %q", got)
	}
	// FETCH from a BINARY cursor answers a simple query in binary.
	got = c.roundTrip(&pgproto3.Query{String: "fetch 1 pc"})
	want = []string{"RowDescription id:23:4:-1:1,name:25:-1:-1:1", `DataRow "\x00\x00\x00\x01","n1"`, "CommandComplete FETCH 1", "ReadyForQuery T"}
	if !equalStrings(got, want) {
		t.Fatalf("fetch from a binary cursor: %q", got)
	}
}

// TestCursorsWithPsql: psql's FETCH_COUNT reads a query through a cursor
// (BEGIN, DECLARE ... NO SCROLL CURSOR, FETCH FORWARD n, CLOSE, COMMIT), and
// a script drives the cursor statements itself.
func TestCursorsWithPsql(t *testing.T) {
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql not installed")
	}
	addr := startEngine(t)
	host, port, _ := net.SplitHostPort(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	script := `create table f (a int, b text);
insert into f select g, 'v' || g from generate_series(1, 5) g;
\set FETCH_COUNT 2
select a, b from f order by a;
\unset FETCH_COUNT
begin;
declare c scroll cursor for select a from f order by a;
fetch 2 from c;
move forward 1 in c;
fetch prior from c;
fetch last from c;
close c;
commit;
declare h cursor with hold for select count(*) from f;
fetch all h;
close all;
`
	cmd := exec.CommandContext(ctx, psql, "-h", host, "-p", port, "-U", "streamsql", "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1", "-f", "-", "streamsql")
	cmd.Stdin = strings.NewReader(script)
	cmd.Env = append(cmd.Environ(), "PGCONNECT_TIMEOUT=10", "PSQLRC=/dev/null", "PAGER=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
	want := "1|v1\n2|v2\n3|v3\n4|v4\n5|v5\n1\n2\n2\n5\n5\n"
	if string(out) != want {
		t.Errorf("psql printed %q, want %q", out, want)
	}
}

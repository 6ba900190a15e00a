package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// dpSeqPG15 and dSeqPG15 are what PostgreSQL 15's psql prints for \dp and
// \d of the sequences after seqa's statements in TestSequencesOverTheWire
// (captured from PostgreSQL 15.18 with the same statements and roles).
const dpSeqPG15 = `                                Access privileges
 Schema |   Name    |   Type   | Access privileges | Column privileges | Policies 
--------+-----------+----------+-------------------+-------------------+----------
 public | sq        | sequence | seqa=rwU/seqa    +|                   | 
        |           |          | seqb=U/seqa      +|                   | 
        |           |          | =w/seqa           |                   | 
 public | st        | table    | seqa=arwdDxt/seqa+|                   | 
        |           |          | seqb=a/seqa       |                   | 
 public | st_id_seq | sequence | seqa=rwU/seqa    +|                   | 
        |           |          | seqb=r*/seqa     +|                   | 
        |           |          | =w/seqa           |                   | 
(3 rows)

`

const dSeqPG15 = `                     Sequence "public.st_id_seq"
  Type   | Start | Minimum |  Maximum   | Increment | Cycles? | Cache 
---------+-------+---------+------------+-----------+---------+-------
 integer |     1 |       1 | 2147483647 |         1 | no      |     1
Owned by: public.st.id

                             Sequence "public.sq"
  Type  | Start | Minimum |       Maximum       | Increment | Cycles? | Cache 
--------+-------+---------+---------------------+-----------+---------+-------
 bigint |     1 |       1 | 9223372036854775807 |         1 | no      |    10

`

// TestSequencesOverTheWire runs streamsqld with password authentication:
// seqa creates a CACHE 10 sequence and a serial table with psql and grants
// on them (\dp and \d print what PostgreSQL 15 prints); over pgx, two of
// seqa's connections get separate blocks of ten values, seqb is refused
// nextval with 42501 until granted USAGE (and his connection stays
// usable), and a closed connection's unused values are never handed out.
func TestSequencesOverTheWire(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir, "--auth", "password", "--password", "streamsql")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	execAll(t, ctx, s.connect(ctx), "CREATE USER seqa PASSWORD 'seqa pw'", "CREATE USER seqb PASSWORD 'seqb pw'")

	if psql, err := exec.LookPath("psql"); err != nil {
		t.Log("psql is not installed: \\dp and \\d are not checked")
	} else {
		psqlAs := func(cmds ...string) string {
			_, port := splitAddr(s.addr)
			args := []string{"-X", "-h", "127.0.0.1", "-p", port, "-U", "seqa", "-d", "streamsql"}
			for _, c := range cmds {
				args = append(args, "-c", c)
			}
			cmd := exec.CommandContext(ctx, psql, args...)
			cmd.Env = append(os.Environ(), "PGPASSWORD=seqa pw", "PGCONNECT_TIMEOUT=10", "PAGER=", "PSQLRC=/dev/null")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("psql %v: %v\n%s", cmds, err, out)
			}
			return string(out)
		}
		psqlAs("CREATE SEQUENCE sq CACHE 10", "CREATE TABLE st (id serial, v text)",
			"GRANT USAGE ON SEQUENCE sq TO seqb", "GRANT SELECT ON SEQUENCE st_id_seq TO seqb WITH GRANT OPTION",
			"GRANT UPDATE ON ALL SEQUENCES IN SCHEMA public TO PUBLIC", "GRANT INSERT ON st TO seqb")
		if got := psqlAs(`\dp`); got != dpSeqPG15 {
			t.Errorf("\\dp:\n%s\nwant (PostgreSQL 15)\n%s", got, dpSeqPG15)
		}
		if got := psqlAs(`\d st_id_seq`, `\d sq`); got != dSeqPG15 {
			t.Errorf("\\d:\n%s\nwant (PostgreSQL 15)\n%s", got, dSeqPG15)
		}
		execAll(t, ctx, s.connect(ctx), "REVOKE ALL ON SEQUENCE sq FROM seqb, PUBLIC")
	}
	connectAs := func(user, password string) *pgx.Conn {
		t.Helper()
		cfg, err := pgx.ParseConfig(s.connString())
		if err != nil {
			t.Fatal(err)
		}
		cfg.User, cfg.Password = user, password
		c, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			t.Fatalf("connect as %s: %v", user, err)
		}
		t.Cleanup(func() { c.Close(context.Background()) })
		return c
	}
	a1, a2 := connectAs("seqa", "seqa pw"), connectAs("seqa", "seqa pw")
	execAll(t, ctx, a1, "CREATE SEQUENCE IF NOT EXISTS sq CACHE 10")
	next := func(c *pgx.Conn) int64 {
		t.Helper()
		var v int64
		if err := c.QueryRow(ctx, "SELECT nextval('sq')").Scan(&v); err != nil {
			t.Fatalf("nextval: %v", err)
		}
		return v
	}
	for i, want := range []int64{1, 11, 2, 12} {
		c := a1
		if i%2 == 1 {
			c = a2
		}
		if got := next(c); got != want {
			t.Fatalf("nextval %d = %d, want %d", i, got, want)
		}
	}
	var curr1, curr2 int64
	if err := a1.QueryRow(ctx, "SELECT currval('sq')").Scan(&curr1); err != nil || curr1 != 2 {
		t.Fatalf("a1 currval %d %v", curr1, err)
	}
	if err := a2.QueryRow(ctx, "SELECT lastval()").Scan(&curr2); err != nil || curr2 != 12 {
		t.Fatalf("a2 lastval %d %v", curr2, err)
	}

	b := connectAs("seqb", "seqb pw")
	_, err := b.Exec(ctx, "SELECT nextval('sq')")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "42501" || pe.Message != "permission denied for sequence sq" {
		t.Fatalf("seqb's nextval: %v", err)
	}
	execAll(t, ctx, a1, "GRANT USAGE ON SEQUENCE sq TO seqb")
	if got := next(b); got != 21 {
		t.Fatalf("seqb's nextval after GRANT = %d, want 21", got)
	}
	// a2 leaves with 13..20 unused: nobody gets them.
	a2.Close(ctx)
	if got := next(connectAs("seqa", "seqa pw")); got != 31 {
		t.Fatalf("nextval after a2 closed = %d, want 31", got)
	}
	if got := next(a1); got != 3 {
		t.Fatalf("a1 keeps its block: %d, want 3", got)
	}
}

package e2e

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// dpPG15 is what PostgreSQL 15's psql prints for \dp after alice's
// statements in TestPrivilegesPsql (captured from PostgreSQL 15.18 with
// the same statements and role names).
const dpPG15 = `                                      Access privileges
 Schema | Name |       Type        |    Access privileges     | Column privileges | Policies 
--------+------+-------------------+--------------------------+-------------------+----------
 public | mv   | materialized view | alice=arwdDxt/alice     +|                   | 
        |      |                   | =ar/alice                |                   | 
 public | t    | table             | alice=arwdDxt/alice     +|                   | 
        |      |                   | bob=r/alice              |                   | 
 public | v    | view              | alice=arwdDxt/alice     +|                   | 
        |      |                   | bob=a*r*w*d*D*x*t*/alice |                   | 
(3 rows)

`

// TestPrivilegesPsql runs streamsqld with password authentication: the
// superuser creates alice and bob; alice creates relations and grants on
// them with psql, whose \dp prints what PostgreSQL 15 prints; bob, logged
// in with his password, reads what he was granted and is refused the rest
// with PostgreSQL's messages; owners and ACLs survive a restart.
func TestPrivilegesPsql(t *testing.T) {
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql is not installed (apt-get install postgresql-client)")
	}
	dir := t.TempDir()
	s := startServer(t, dir, "--auth", "password", "--password", "streamsql")
	ctx := context.Background()
	execAll(t, ctx, s.connect(ctx), "CREATE USER alice PASSWORD 'alice pw'", "CREATE USER bob PASSWORD 'bob pw'")

	psqlAs := func(user, password string, cmds ...string) (string, error) {
		_, port := splitAddr(s.addr)
		args := []string{"-X", "-h", "127.0.0.1", "-p", port, "-U", user, "-d", "streamsql"}
		for _, c := range cmds {
			args = append(args, "-c", c)
		}
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		cmd := exec.CommandContext(cctx, psql, args...)
		cmd.Env = append(os.Environ(), "PGPASSWORD="+password, "PGCONNECT_TIMEOUT=10", "PAGER=", "PSQLRC=/dev/null")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := psqlAs("alice", "alice pw",
		"CREATE TABLE t (a int, b text)",
		"INSERT INTO t VALUES (1, 'x')",
		"CREATE VIEW v AS SELECT * FROM t",
		"CREATE MATERIALIZED VIEW mv AS SELECT * FROM t",
		"GRANT SELECT ON t TO bob",
		"GRANT ALL ON v TO bob WITH GRANT OPTION",
		"GRANT SELECT, INSERT ON mv TO PUBLIC",
		"GRANT SELECT ON t TO alice")
	if err != nil {
		t.Fatalf("alice: %v\n%s", err, out)
	}
	dp, err := psqlAs("alice", "alice pw", `\dp`)
	if err != nil || dp != dpPG15 {
		t.Errorf("\\dp: %v\n%s\nwant (PostgreSQL 15)\n%s", err, dp, dpPG15)
	}
	if out, err := psqlAs("bob", "bob pw", `\dt`); err != nil || !strings.Contains(out, " public | t    | table | alice\n") {
		t.Errorf("\\dt: %v\n%s", err, out)
	}

	wantBob := func(stage string) {
		t.Helper()
		for _, tc := range []struct{ sql, want string }{
			{"SELECT a FROM t", " a \n---\n 1\n(1 row)\n"},
			{"SELECT count(*) FROM v", " count \n-------\n     1\n(1 row)\n"},
			{"INSERT INTO t VALUES (2, 'y')", "ERROR:  permission denied for table t"},
			{"DROP TABLE t", "ERROR:  must be owner of table t"},
			{"DROP VIEW v", "ERROR:  must be owner of view v"},
			{"ALTER MATERIALIZED VIEW mv OWNER TO bob", "ERROR:  must be owner of materialized view mv"},
		} {
			out, _ := psqlAs("bob", "bob pw", tc.sql)
			if !strings.Contains(out, tc.want) {
				t.Errorf("%s: bob: %s:\n%s\nwant %q", stage, tc.sql, out, tc.want)
			}
		}
	}
	wantBob("before restart")

	s.kill()
	s = startServer(t, dir, "--auth", "password", "--password", "streamsql")
	wantBob("after restart")
	if dp, err := psqlAs("bob", "bob pw", `\dp`); err != nil || dp != dpPG15 {
		t.Errorf("\\dp after restart: %v\n%s", err, dp)
	}
}

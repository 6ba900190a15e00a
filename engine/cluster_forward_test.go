package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
)

// fakeForwarder is a worker whose coordinator records what it is sent.
type fakeForwarder struct {
	fakeCluster
	users, sqls []string
	setups      [][]string
	caughtUp    int
	fail        error
}

func (f *fakeForwarder) ForwardAs(_ context.Context, user string, setup []string, sql string) (string, error) {
	f.users, f.setups, f.sqls = append(f.users, user), append(f.setups, setup), append(f.sqls, sql)
	if f.fail != nil {
		return "", f.fail
	}
	return "CREATE MATERIALIZED VIEW", nil
}

func (f *fakeForwarder) CaughtUp(context.Context) error { f.caughtUp++; return nil }

// TestClusterForward: a worker forwards what only the coordinator runs
// (DDL of views, sources, sinks and tables; writes of tables) with the
// session's user and settings, waits for the statement log, and returns
// the coordinator's tag or error; it refuses instead in a transaction
// block, with RETURNING, COPY FROM or parameters, and what the
// coordinator would refuse too.
func TestClusterForward(t *testing.T) {
	ff := &fakeForwarder{}
	s := openCluster(t, ff)
	mustRun(t, s, "SET streaming_parallelism = 3")
	mustRun(t, s, "SET search_path = public, \"my schema\"")
	mustRun(t, s, "SET TimeZone = 'Europe/Paris'")
	_, tag, err := run(t, s, "CREATE MATERIALIZED VIEW v AS SELECT 1")
	if err != nil || tag != "CREATE MATERIALIZED VIEW" {
		t.Fatalf("forwarded CREATE: %q, %v", tag, err)
	}
	if len(ff.sqls) != 1 || ff.sqls[0] != "CREATE MATERIALIZED VIEW v AS SELECT 1" || ff.users[0] != "tester" || ff.caughtUp != 1 {
		t.Fatalf("forwarded %q as %q, caught up %d times", ff.sqls, ff.users, ff.caughtUp)
	}
	got := strings.Join(ff.setups[0], "; ")
	for _, want := range []string{"SET streaming_parallelism TO '3'", `SET search_path TO public, "my schema"`, "SET timezone TO 'Europe/Paris'"} {
		if !strings.Contains(got, want) {
			t.Errorf("setup %q lacks %q", got, want)
		}
	}
	for _, q := range []string{"INSERT INTO t VALUES (1)", "DROP SOURCE b", "CREATE TABLE t (a int)", "CREATE TABLE s (id serial)", "CREATE SEQUENCE q", "DROP SEQUENCE q"} {
		if _, _, err := run(t, s, q); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
	if len(ff.sqls) != 7 {
		t.Fatalf("forwarded %q", ff.sqls)
	}
	ff.fail = pgerr.New(pgerr.UndefinedTable, `relation "nosuch" does not exist`)
	if _, _, err := run(t, s, "CREATE MATERIALIZED VIEW w AS SELECT * FROM nosuch"); pgerr.CodeOf(err) != pgerr.UndefinedTable {
		t.Fatalf("the coordinator's error: %v, want 42P01", err)
	}
	for q, what := range map[string]string{
		"INSERT INTO t VALUES (1) RETURNING a":          "INSERT runs only on the cluster's coordinator",
		"COPY t FROM STDIN":                             "COPY FROM runs only on the cluster's coordinator",
		"BEGIN; CREATE MATERIALIZED VIEW x AS SELECT 1": "CREATE MATERIALIZED VIEW runs only on the cluster's coordinator",
		"CREATE TEMPORARY TABLE tt (a int)":             "CREATE TEMPORARY TABLE is not supported on a cluster",
		"CREATE TEMPORARY SEQUENCE q":                   "CREATE TEMPORARY SEQUENCE is not supported on a cluster",
	} {
		n := len(ff.sqls)
		if _, _, err := run(t, s, q); pgerr.CodeOf(err) != pgerr.FeatureNotSupported || !strings.Contains(err.Error(), what) {
			t.Errorf("%s: %v, want 0A000 %q", q, err, what)
		}
		if len(ff.sqls) != n {
			t.Errorf("%s was forwarded", q)
		}
		run(t, s, "ROLLBACK")
	}
}

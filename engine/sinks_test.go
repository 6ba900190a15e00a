package engine

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
)

// TestFileSinkPrivilegesAndRestart: only superusers and members of
// pg_write_server_files create file sinks, inside FileSinkDir, never in
// the data directory; a sink survives a restart (catalog and job), keeps
// its owner, and only its owner drops it.
func TestFileSinkPrivilegesAndRestart(t *testing.T) {
	dir, allowed := t.TempDir(), t.TempDir()
	e, err := Open(Config{DataDir: dir, FileSinkDir: allowed})
	if err != nil {
		t.Fatal(err)
	}
	s, err := e.NewSession("tester", "db", nil)
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, s, "CREATE USER alice")
	mustRun(t, s, "CREATE TABLE ev (k text, n int) APPEND ONLY")
	mustRun(t, s, "GRANT SELECT ON ev TO alice")
	as, err := e.NewSession("alice", "db", nil)
	if err != nil {
		t.Fatal(err)
	}
	snk := func(name, path string) string {
		return "CREATE SINK " + name + " FROM ev WITH (connector = 'file', path = '" + path + "') FORMAT JSON"
	}
	_, _, err = run(t, as, snk("a1", filepath.Join(allowed, "a1")))
	wantErr(t, err, pgerr.InsufficientPrivilege, "must be superuser or have privileges of the pg_write_server_files role to create a file sink")
	mustRun(t, s, "GRANT pg_write_server_files TO alice")
	mustRun(t, as, snk("a1", filepath.Join(allowed, "a1")))
	for _, p := range []string{filepath.Join(dir, "out"), t.TempDir(), "/proc/self"} {
		_, _, err = run(t, as, snk("a2", p))
		wantErr(t, err, pgerr.InsufficientPrivilege, "")
		if err != nil && !strings.Contains(err.Error(), "permission denied to write to directory") {
			t.Errorf("%s: %v", p, err)
		}
	}
	// A blackhole sink needs no file privilege; only the owner drops it.
	mustRun(t, as, "CREATE SINK a3 FROM ev WITH (connector = 'blackhole')")
	mustRun(t, s, "CREATE SINK s1 FROM ev WITH (connector = 'blackhole')")
	_, _, err = run(t, as, "DROP SINK s1")
	wantErr(t, err, pgerr.InsufficientPrivilege, "")
	mustRun(t, s, "INSERT INTO ev VALUES ('a', 1), ('b', 2)")
	mustRun(t, s, "FLUSH")
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	e, err = Open(Config{DataDir: dir, FileSinkDir: allowed})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s, _ = e.NewSession("tester", "db", nil)
	mustRun(t, s, "INSERT INTO ev VALUES ('c', 3)")
	mustRun(t, s, "FLUSH")
	if got := mustRun(t, s, "SELECT sink_name, owner, status FROM streamsql_sinks ORDER BY 1"); strings.Join(got, ",") != "a1|alice|running,a3|alice|running,s1|tester|running" {
		t.Fatalf("streamsql_sinks after restart: %v", got)
	}
	// Every row once in a1's files: two before the restart, one after.
	var lines []string
	filepath.WalkDir(filepath.Join(allowed, "a1"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") {
				t.Errorf("hidden file %s after FLUSH", p)
			}
			b, _ := os.ReadFile(p)
			lines = append(lines, strings.Split(strings.TrimSpace(string(b)), "\n")...)
		}
		return nil
	})
	sort.Strings(lines)
	if strings.Join(lines, ",") != `{"k":"a","n":1},{"k":"b","n":2},{"k":"c","n":3}` {
		t.Fatalf("a1 files hold %v", lines)
	}
	as, _ = e.NewSession("alice", "db", nil)
	mustRun(t, as, "DROP SINK a1, a3")
	if got := mustRun(t, s, "SHOW SINKS"); strings.Join(got, ",") != "s1" {
		t.Fatalf("SHOW SINKS: %v", got)
	}
}

// TestSinkParallelism: a sink whose query retracts runs as one instance
// whatever streaming_parallelism says (its rows reach the writer as they
// come, so instances merged in no set order could write a key's new row
// before the delete of its old one); an append-only sink keeps the
// session's parallelism.
func TestSinkParallelism(t *testing.T) {
	e, err := Open(Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s, err := e.NewSession("tester", "db", nil)
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, s, "CREATE TABLE t (k int, v int)")
	mustRun(t, s, "CREATE TABLE a (k int, v int) APPEND ONLY")
	mustRun(t, s, "SET streaming_parallelism = 3")
	mustRun(t, s, "CREATE SINK agg AS SELECT k, count(*) AS n FROM t GROUP BY k WITH (connector = 'blackhole') FORMAT UPSERT ENCODE JSON")
	mustRun(t, s, "CREATE SINK app AS SELECT k, v FROM a WITH (connector = 'blackhole') FORMAT JSON")
	for name, want := range map[string]int{"agg": 1, "app": 3} {
		rel, err := e.cat.Resolve("", name, []string{"public"})
		if err != nil || rel == nil {
			t.Fatalf("%s: %v", name, err)
		}
		if rel.Parallelism != want {
			t.Errorf("sink %s runs %d instances, want %d", name, rel.Parallelism, want)
		}
	}
}

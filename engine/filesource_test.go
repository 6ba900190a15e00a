package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/pgerr"
)

// TestFileSourcePrivileges: only superusers and members of
// pg_read_server_files create file sources; nobody reads the data
// directory, /proc or devices, or outside FileSourceDir when it is set.
func TestFileSourcePrivileges(t *testing.T) {
	dir := t.TempDir()
	allowed := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("root:secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	inside := filepath.Join(allowed, "ok.txt")
	if err := os.WriteFile(inside, []byte("fine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(allowed, "server.key") // as --tls-key
	if err := os.WriteFile(key, []byte("-----BEGIN PRIVATE KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e, err := Open(Config{DataDir: dir, FileSourceDir: allowed, FileDenyPaths: []string{key}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s, err := e.NewSession("tester", "db", nil)
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, s, "CREATE USER alice")
	mustRun(t, s, "CREATE USER bob")
	mustRun(t, s, "CREATE ROLE readers")
	as, err := e.NewSession("alice", "db", nil)
	if err != nil {
		t.Fatal(err)
	}
	src := func(name, path string) string {
		return "CREATE SOURCE " + name + " (line text) WITH (connector = 'file', path = '" + path + "', delimiter = '|') FORMAT CSV"
	}
	// A plain user may not, not even for an allowed file.
	_, _, err = run(t, as, src("a1", inside))
	wantErr(t, err, pgerr.InsufficientPrivilege, "must be superuser or have privileges of the pg_read_server_files role to create a file source")
	_, _, err = run(t, as, "GRANT pg_read_server_files TO alice")
	wantErr(t, err, pgerr.InsufficientPrivilege, `must have admin option on role "pg_read_server_files"`)

	// A member through a group may, inside the directory only.
	mustRun(t, s, "GRANT pg_read_server_files TO readers")
	mustRun(t, s, "GRANT readers TO alice")
	if got := mustRun(t, as, "SELECT pg_has_role('pg_read_server_files', 'USAGE'), pg_has_role('bob', 'pg_read_server_files', 'member')"); strings.Join(got, ",") != "t|f" {
		t.Fatalf("pg_has_role: %v", got)
	}
	if got := mustRun(t, s, "SELECT r.rolname, m.rolname FROM pg_auth_members a JOIN pg_roles r ON r.oid = a.roleid JOIN pg_roles m ON m.oid = a.member ORDER BY 1"); strings.Join(got, ",") != "pg_read_server_files|readers,readers|alice" {
		t.Fatalf("pg_auth_members: %v", got)
	}
	mustRun(t, as, src("a2", inside))
	mustRun(t, as, "CREATE MATERIALIZED VIEW v2 AS SELECT line FROM a2")
	mustRun(t, s, "FLUSH")
	if got := mustRun(t, as, "SELECT line FROM v2"); strings.Join(got, ",") != "fine" {
		t.Fatalf("v2: %v", got)
	}
	for _, p := range []string{outside, filepath.Join(dir, "roles.json"), "/proc/self/environ", "/dev/zero", allowed + "/../" + filepath.Base(filepath.Dir(outside)) + "/secret.txt"} {
		_, _, err = run(t, as, src("a3", p))
		wantErr(t, err, pgerr.InsufficientPrivilege, "")
		if err != nil && !strings.Contains(err.Error(), "permission denied to read from file") {
			t.Errorf("%s: %v", p, err)
		}
	}
	// The superuser is bound by the same rules about places.
	for _, p := range []string{filepath.Join(dir, "roles.json"), key, outside} {
		_, _, err = run(t, s, src("s1", p))
		wantErr(t, err, pgerr.InsufficientPrivilege, "")
	}
	mustRun(t, s, src("s2", inside))

	// REVOKE takes the right away.
	mustRun(t, s, "REVOKE readers FROM alice")
	_, _, err = run(t, as, src("a4", inside))
	wantErr(t, err, pgerr.InsufficientPrivilege, "")
}

// TestFileSourceUnreadableAtRestart: a view whose file became forbidden
// (here, a link now pointing into the data directory) fails at start with
// a reason naming the view; the server starts and serves everything else.
func TestFileSourceUnreadableAtRestart(t *testing.T) {
	dir := t.TempDir()
	files := t.TempDir()
	data := filepath.Join(files, "data.txt")
	if err := os.WriteFile(data, []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(files, "link.txt")
	if err := os.Symlink(data, link); err != nil {
		t.Fatal(err)
	}
	e, s := open(t, dir)
	mustRun(t, s, "CREATE USER alice PASSWORD 'secret'") // roles.json exists
	mustRun(t, s, "CREATE TABLE t (a int)")
	mustRun(t, s, "INSERT INTO t VALUES (1), (2)")
	mustRun(t, s, "CREATE MATERIALIZED VIEW tv AS SELECT count(*) AS n FROM t")
	mustRun(t, s, "CREATE SOURCE f (line text) WITH (connector = 'file', path = '"+link+"', follow = 'true', delimiter = '|') FORMAT CSV")
	mustRun(t, s, "CREATE MATERIALIZED VIEW fv AS SELECT count(*) AS n FROM f")
	e.Close()

	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "roles.json"), link); err != nil {
		t.Fatal(err)
	}
	e, s = open(t, dir)
	defer e.Close()
	if got := mustRun(t, s, "SELECT n FROM tv"); strings.Join(got, ",") != "2" {
		t.Fatalf("tv: %v", got)
	}
	mustRun(t, s, "INSERT INTO t VALUES (3)")
	mustRun(t, s, "FLUSH")
	if got := mustRun(t, s, "SELECT n FROM tv"); strings.Join(got, ",") != "3" {
		t.Fatalf("tv after insert: %v", got)
	}
	_, _, err := run(t, s, "SELECT n FROM fv")
	if err == nil || !strings.Contains(err.Error(), "permission denied to read from file") || !strings.Contains(err.Error(), "fv") {
		t.Fatalf("reading fv: %v", err)
	}
	got := mustRun(t, s, "SELECT viewname, status, last_error LIKE '%permission denied%' FROM streamsql_views ORDER BY 1")
	if strings.Join(got, ",") != "fv|failed|t,tv|running|NULL" {
		t.Fatalf("streamsql_views: %v", got)
	}
}

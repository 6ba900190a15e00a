package e2e

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// connectAs connects to s as user with password.
func connectAs(t *testing.T, ctx context.Context, s *server, user, password string) *pgx.Conn {
	t.Helper()
	host, port, _ := net.SplitHostPort(s.addr)
	c, err := pgx.Connect(ctx, "host="+host+" port="+port+" user="+user+" password='"+password+"' dbname=streamsql sslmode=disable connect_timeout=10")
	if err != nil {
		t.Fatalf("connect as %s: %v", user, err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func wantSQLState(t *testing.T, err error, code, msg string) {
	t.Helper()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != code || !strings.Contains(pe.Message, msg) {
		t.Errorf("got %v, want %s %q", err, code, msg)
	}
}

// TestFileSourceAttacks: under --auth password a user that is not a
// superuser cannot read server files through a file source — not
// /proc/self/environ (which holds $STREAMSQL_PASSWORD), not the roles'
// password verifiers, not any file outside --file-source-dir — until a
// superuser grants pg_read_server_files, and then only inside the
// directory; --password-file keeps the password out of the environment.
func TestFileSourceAttacks(t *testing.T) {
	dir := t.TempDir()
	allowed := t.TempDir()
	secret := filepath.Join(t.TempDir(), "shadow")
	if err := os.WriteFile(secret, []byte("root:$6$hash\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(allowed, "ok.csv"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(allowed, "link.csv")); err != nil {
		t.Fatal(err)
	}
	pwFile := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pwFile, []byte("streamsql\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("STREAMSQL_PASSWORD", "") // the server must not depend on it
	os.Unsetenv("STREAMSQL_PASSWORD")
	s := startServer(t, dir, "--password-file", pwFile, "--file-source-dir", allowed)
	env, err := os.ReadFile("/proc/" + strconv.Itoa(s.cmd.Process.Pid) + "/environ")
	if err == nil && strings.Contains(string(env), "STREAMSQL_PASSWORD") {
		t.Error("the password is in the server's environment")
	}
	ctx := context.Background()
	admin := s.connect(ctx)
	execAll(t, ctx, admin, "CREATE USER alice PASSWORD 'alice pw'")
	alice := connectAs(t, ctx, s, "alice", "alice pw")
	src := func(name, path string) string {
		return "CREATE SOURCE " + name + " (line text) WITH (connector = 'file', path = '" + path + "', delimiter = '|') FORMAT CSV"
	}
	for _, p := range []string{"/proc/self/environ", filepath.Join(dir, "roles.json"), secret, filepath.Join(allowed, "ok.csv")} {
		_, err := alice.Exec(ctx, src("a", p))
		wantSQLState(t, err, "42501", "must be superuser or have privileges of the pg_read_server_files role")
	}
	execAll(t, ctx, admin, "GRANT pg_read_server_files TO alice")
	for _, p := range []string{"/proc/self/environ", "/dev/zero", filepath.Join(dir, "roles.json"), secret, filepath.Join(allowed, "link.csv"), allowed + "/../" + filepath.Base(filepath.Dir(secret)) + "/shadow"} {
		_, err := alice.Exec(ctx, src("a", p))
		wantSQLState(t, err, "42501", "permission denied to read from file")
	}
	execAll(t, ctx, alice, src("a", filepath.Join(allowed, "ok.csv")), "CREATE MATERIALIZED VIEW av AS SELECT line FROM a", "FLUSH")
	var line string
	if err := alice.QueryRow(ctx, "SELECT line FROM av").Scan(&line); err != nil || line != "hello" {
		t.Fatalf("alice's view: %q %v", line, err)
	}
}

// TestFileSourceForbiddenAfterRestart: a view over a file that became a
// FIFO, or a link to /dev/zero, between restarts does not keep the server
// from starting: the view is failed with the reason, reading it says so
// and names it, the other views and tables are served.
func TestFileSourceForbiddenAfterRestart(t *testing.T) {
	dir := t.TempDir()
	files := t.TempDir()
	data := filepath.Join(files, "in.csv")
	if err := os.WriteFile(data, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s := startServer(t, dir, "--password", "streamsql")
	c := s.connect(ctx)
	viewFixture(t, ctx, c)
	execAll(t, ctx, c,
		"CREATE SOURCE f (line text) WITH (connector = 'file', path = '"+data+"', follow = 'true', delimiter = '|') FORMAT CSV",
		"CREATE MATERIALIZED VIEW fv AS SELECT count(*) AS n FROM f",
		"CHECKPOINT")
	s.kill()

	for _, replace := range []func() error{
		func() error { return syscall.Mkfifo(data, 0o600) },
		func() error { return os.Symlink("/dev/zero", data) },
	} {
		if err := os.Remove(data); err != nil {
			t.Fatal(err)
		}
		if err := replace(); err != nil {
			t.Fatal(err)
		}
		s = startServer(t, dir, "--password", "streamsql")
		nc := connectNotices(t, ctx, s)
		c = nc.Conn
		var n int
		if err := c.QueryRow(ctx, "SELECT count(*) FROM v").Scan(&n); err != nil || n != 2 {
			t.Fatalf("view v after restart: %d %v", n, err)
		}
		execAll(t, ctx, c, "INSERT INTO t VALUES (3, 'c')", "FLUSH")
		if err := c.QueryRow(ctx, "SELECT count(*) FROM v").Scan(&n); err != nil || n != 3 {
			t.Fatalf("view v after an insert: %d %v", n, err)
		}
		// It did not start: it serves the checkpoint's rows (as many as
		// the follower had read by then) with a WARNING saying why.
		nc.take()
		if err := c.QueryRow(ctx, "SELECT n FROM fv").Scan(&n); err != nil {
			t.Fatalf("reading fv: %v", err)
		}
		if w := nc.take(); len(w) != 1 || !strings.HasPrefix(w[0], `WARNING: materialized view "fv" did not start: `) ||
			!(strings.Contains(w[0], "is not a regular file") || strings.Contains(w[0], "permission denied")) {
			t.Fatalf("reading fv: notices %q", w)
		}
		var status string
		if err := c.QueryRow(ctx, "SELECT status FROM streamsql_views WHERE viewname = 'fv'").Scan(&status); err != nil || status != "failed" {
			t.Fatalf("fv status %q %v", status, err)
		}
		execAll(t, ctx, c, "DELETE FROM t WHERE k = 3")
		s.kill()
	}
}

// TestPasswordNotInEnviron: $STREAMSQL_PASSWORD is blanked out of what
// /proc/<pid>/environ shows once the server has read it, and still logs
// the superuser in.
func TestPasswordNotInEnviron(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc")
	}
	t.Setenv("STREAMSQL_PASSWORD", "streamsql")
	s := startServer(t, t.TempDir())
	env, err := os.ReadFile("/proc/" + strconv.Itoa(s.cmd.Process.Pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(env), "STREAMSQL_PASSWORD=") {
		t.Fatal("the test did not pass the variable")
	}
	if strings.Contains(string(env), "STREAMSQL_PASSWORD=streamsql") {
		t.Error("the password is readable in /proc/<pid>/environ")
	}
	var one int
	if err := s.connect(context.Background()).QueryRow(context.Background(), "SELECT 1").Scan(&one); err != nil {
		t.Fatal(err)
	}
}

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAuthAndTLS runs streamsqld with password authentication and its
// self-signed certificate, creates users over SQL, and logs in with psql,
// pgjdbc and psycopg over TLS (require and verify-full with the server's
// certificate as the root), with SCRAM-SHA-256 and md5 users, then restarts
// and checks that the users and the certificate are kept.
func TestAuthAndTLS(t *testing.T) {
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql not installed")
	}
	dir := t.TempDir()
	// The initial superuser: streamsql / streamsql, what connString uses.
	s := startServer(t, dir, "--password", "streamsql", "--tls-self-signed")
	ctx := context.Background()
	c := s.connect(ctx)
	execAll(t, ctx, c,
		"CREATE USER alice WITH PASSWORD 'alice pw'",
		"SET password_encryption = 'md5'",
		"CREATE ROLE bob LOGIN PASSWORD 'bob pw'",
		"CREATE ROLE nologin PASSWORD 'x'")
	cert := filepath.Join(dir, "server.crt")
	certPEM, err := os.ReadFile(cert)
	if err != nil {
		t.Fatalf("self-signed certificate: %v", err)
	}

	host, port := splitAddr(s.addr)
	login := func(user, password, sslmode string) (string, error) {
		cmd := exec.Command(psql, "-h", "localhost", "-p", port, "-U", user, "-X", "-A", "-t", "-w", "streamsql",
			"-c", "select current_user", "-c", `\conninfo`)
		cmd.Env = append(cmd.Environ(), "PGPASSWORD="+password, "PGSSLMODE="+sslmode, "PGSSLROOTCERT="+cert, "PGCONNECT_TIMEOUT=10")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for _, tc := range []struct{ user, password, sslmode string }{
		{"alice", "alice pw", "verify-full"}, {"bob", "bob pw", "verify-full"}, {"alice", "alice pw", "require"},
		{"streamsql", "streamsql", "disable"},
	} {
		out, err := login(tc.user, tc.password, tc.sslmode)
		if err != nil || !strings.HasPrefix(out, tc.user+"\n") || strings.Contains(out, "SSL connection") != (tc.sslmode != "disable") {
			t.Errorf("psql %s sslmode=%s: %v\n%s", tc.user, tc.sslmode, err, out)
		}
	}
	for _, tc := range []struct{ user, password, want string }{
		{"alice", "wrong", `FATAL:  password authentication failed for user "alice"`},
		{"nobody", "alice pw", `FATAL:  password authentication failed for user "nobody"`},
		{"nologin", "x", `FATAL:  role "nologin" is not permitted to log in`},
	} {
		out, err := login(tc.user, tc.password, "verify-full")
		if err == nil || !strings.Contains(out, tc.want) {
			t.Errorf("psql %s/%s: %v\n%s\nwant %s", tc.user, tc.password, err, out, tc.want)
		}
	}

	t.Run("pgjdbc", func(t *testing.T) { jdbcLogins(t, port, cert) })
	t.Run("psycopg", func(t *testing.T) { psycopgLogins(t, host, port, cert) })

	// Restart without the initial-user flags: the users, their passwords
	// and the certificate stay.
	s.kill()
	s = startServer(t, dir, "--auth", "password", "--tls-self-signed", "--password", "streamsql")
	_, port = splitAddr(s.addr)
	if out, err := login("bob", "bob pw", "verify-full"); err != nil || !strings.HasPrefix(out, "bob\n") {
		t.Errorf("bob after restart: %v\n%s", err, out)
	}
	if again, err := os.ReadFile(cert); err != nil || !bytes.Equal(again, certPEM) {
		t.Errorf("the certificate changed across the restart (%v)", err)
	}
}

const jdbcProgram = `
import java.sql.*;

public class AuthCheck {
    // Arguments come in threes: url, user, password. Prints one line each:
    // "user=<current_user>" or "error=<SQLSTATE>".
    public static void main(String[] a) {
        for (int i = 0; i + 2 < a.length; i += 3) {
            try (Connection c = DriverManager.getConnection(a[i], a[i + 1], a[i + 2]);
                 ResultSet rs = c.createStatement().executeQuery("select current_user")) {
                rs.next();
                System.out.println("user=" + rs.getString(1));
            } catch (SQLException e) {
                System.out.println("error=" + e.getSQLState());
            }
        }
    }
}
`

// jdbcLogins logs in with pgjdbc (if installed) over TLS.
func jdbcLogins(t *testing.T, port, cert string) {
	const jar = "/usr/share/java/postgresql.jar"
	java, err := exec.LookPath("java")
	if err != nil {
		t.Skip("java not installed")
	}
	if _, err := os.Stat(jar); err != nil {
		t.Skip(jar + " not installed (libpostgresql-jdbc-java)")
	}
	src := filepath.Join(t.TempDir(), "AuthCheck.java")
	if err := os.WriteFile(src, []byte(jdbcProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	url := func(sslmode string) string {
		return fmt.Sprintf("jdbc:postgresql://localhost:%s/streamsql?sslmode=%s&sslrootcert=%s&connectTimeout=10", port, sslmode, cert)
	}
	args := []string{"-cp", jar, src,
		url("verify-full"), "alice", "alice pw",
		url("verify-full"), "bob", "bob pw",
		url("require"), "alice", "alice pw",
		url("verify-full"), "alice", "wrong",
		url("verify-full"), "nobody", "x",
	}
	out, err := exec.Command(java, args...).CombinedOutput()
	if err != nil && strings.Contains(string(out), "jdk.compiler") {
		t.Skipf("java cannot run source files: %s", out)
	}
	want := "user=alice\nuser=bob\nuser=alice\nerror=28P01\nerror=28P01\n"
	if err != nil || string(out) != want {
		t.Errorf("pgjdbc: %v\n%s\nwant\n%s", err, out, want)
	}
}

// psycopgLogins logs in with psycopg 3 (if installed for /usr/bin/python3).
func psycopgLogins(t *testing.T, host, port, cert string) {
	const python = "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import psycopg").Run(); err != nil {
		t.Skip("python3-psycopg not installed")
	}
	script := `
import sys, psycopg
port, cert = sys.argv[1], sys.argv[2]
for user, pw, mode in [("alice", "alice pw", "verify-full"), ("bob", "bob pw", "verify-full"), ("bob", "nope", "require")]:
    try:
        with psycopg.connect(host="localhost", port=port, dbname="streamsql", user=user, password=pw,
                             sslmode=mode, sslrootcert=cert, connect_timeout=10) as c:
            print("user=" + c.execute("select current_user").fetchone()[0] + " ssl=" + str(c.pgconn.ssl_in_use))
    except psycopg.OperationalError as e:
        print("error=" + ("28P01" if "password authentication failed" in str(e) else str(e)))
`
	out, err := exec.Command(python, "-c", script, port, cert).CombinedOutput()
	want := "user=alice ssl=True\nuser=bob ssl=True\nerror=28P01\n"
	if err != nil || string(out) != want {
		t.Errorf("psycopg (%s): %v\n%s\nwant\n%s", net.JoinHostPort(host, port), err, out, want)
	}
}

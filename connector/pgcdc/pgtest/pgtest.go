// Package pgtest starts a throw-away PostgreSQL 15 cluster for tests of
// the postgres-cdc connector: initdb in a temporary directory, wal_level =
// logical, listening on 127.0.0.1 at a free port, trust authentication.
// Tests skip (with a message) when PostgreSQL is not installed, except
// under CI=true, where they fail. As root, the cluster runs as the
// postgres user (initdb refuses root).
//
// A Cluster is used by one test; its methods are safe from that test's
// goroutine.
package pgtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Bin is where the PostgreSQL 15 programs are (STREAMSQL_PG_BIN overrides).
func Bin() string {
	if b := os.Getenv("STREAMSQL_PG_BIN"); b != "" {
		return b
	}
	return "/usr/lib/postgresql/15/bin"
}

// Cluster is a running test cluster.
type Cluster struct {
	t    testing.TB
	dir  string // owns data/, the socket and the log
	Port int
	run  func(name string, args ...string) *exec.Cmd
}

// Start starts a cluster, stopped and removed when the test ends.
func Start(t testing.TB) *Cluster {
	t.Helper()
	bin := Bin()
	if _, err := os.Stat(filepath.Join(bin, "initdb")); err != nil {
		msg := fmt.Sprintf("PostgreSQL 15 is not installed (%s/initdb: %v); apt-get install postgresql-15", bin, err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{t: t, dir: dir}
	c.run = func(name string, args ...string) *exec.Cmd {
		return exec.Command(filepath.Join(bin, name), args...)
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root needs the postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		c.run = func(name string, args ...string) *exec.Cmd {
			return exec.Command("runuser", append([]string{"-u", "postgres", "--", filepath.Join(bin, name)}, args...)...)
		}
	}
	t.Cleanup(func() {
		c.stop("immediate")
		os.RemoveAll(dir)
	})
	if out, err := c.run("initdb", "-D", c.data(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "--locale=C").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	c.Port = freePort(t)
	c.Start()
	return c
}

func (c *Cluster) data() string { return filepath.Join(c.dir, "data") }

// Start starts the (stopped) cluster and waits until it accepts
// connections.
func (c *Cluster) Start() {
	c.t.Helper()
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c wal_level=logical -c max_replication_slots=20 -c max_wal_senders=20 -c fsync=off -c synchronous_commit=off -c wal_sender_timeout=10s",
		c.Port, c.dir)
	if out, err := c.run("pg_ctl", "-D", c.data(), "-l", filepath.Join(c.dir, "log"), "-o", opts, "-w", "-t", "60", "start").CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "log"))
		c.t.Fatalf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
}

// Crash stops the cluster as kill -9 would leave it (immediate
// shutdown: no checkpoint, crash recovery at the next Start).
func (c *Cluster) Crash() { c.stop("immediate") }

func (c *Cluster) stop(mode string) {
	c.run("pg_ctl", "-D", c.data(), "-m", mode, "-w", "stop").Run()
}

// Options are the postgres-cdc WITH options (without table and slot) for
// database postgres.
func (c *Cluster) Options() string {
	return fmt.Sprintf("hostname = '127.0.0.1', port = '%d', username = 'postgres', database.name = 'postgres'", c.Port)
}

// DSN is a libpq connection string to database postgres.
func (c *Cluster) DSN() string {
	return fmt.Sprintf("host=127.0.0.1 port=%d user=postgres dbname=postgres sslmode=disable", c.Port)
}

// Connect opens a connection to database postgres, closed when the test
// ends.
func (c *Cluster) Connect(ctx context.Context) *pgx.Conn {
	c.t.Helper()
	conn, err := pgx.Connect(ctx, c.DSN())
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// Exec runs statements on a new connection.
func (c *Cluster) Exec(ctx context.Context, sql string) {
	c.t.Helper()
	conn := c.Connect(ctx)
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		c.t.Fatalf("%s: %v", sql, err)
	}
}

// RequirePassword makes connections of user over TCP authenticate with a
// password (SCRAM), ahead of the trust rule for everyone else, and
// reloads the configuration.
func (c *Cluster) RequirePassword(user string) {
	c.t.Helper()
	hba := filepath.Join(c.data(), "pg_hba.conf")
	old, err := os.ReadFile(hba)
	if err != nil {
		c.t.Fatal(err)
	}
	rule := fmt.Sprintf("host all %s 127.0.0.1/32 scram-sha-256\nhost replication %s 127.0.0.1/32 scram-sha-256\n", user, user)
	if err := os.WriteFile(hba, append([]byte(rule), old...), 0o600); err != nil {
		c.t.Fatal(err)
	}
	if out, err := c.run("pg_ctl", "-D", c.data(), "reload").CombinedOutput(); err != nil {
		c.t.Fatalf("pg_ctl reload: %v\n%s", err, out)
	}
}

// Rows runs a query and renders each row as its text columns joined by
// "|" (NULL as NULL), as the engine's tests do.
func Rows(ctx context.Context, t testing.TB, conn *pgx.Conn, sql string) []string {
	t.Helper()
	res, err := conn.PgConn().Exec(ctx, sql).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	var out []string
	for _, r := range res[len(res)-1].Rows {
		s := make([]string, len(r))
		for i, v := range r {
			s[i] = string(v)
			if v == nil {
				s[i] = "NULL"
			}
		}
		out = append(out, strings.Join(s, "|"))
	}
	return out
}

// WaitSlotInactive waits until no walsender uses slot (after the reader
// holding it died), so that the next reader can take it.
func (c *Cluster) WaitSlotInactive(ctx context.Context, slot string) {
	c.t.Helper()
	conn := c.Connect(ctx)
	defer conn.Close(ctx)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var active bool
		err := conn.QueryRow(ctx, "SELECT coalesce(bool_or(active), false) FROM pg_replication_slots WHERE slot_name = $1", slot).Scan(&active)
		if err != nil {
			c.t.Fatal(err)
		}
		if !active {
			return
		}
		time.Sleep(10 * time.Millisecond) // polling for the walsender to exit
	}
	c.t.Fatalf("slot %s still active", slot)
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

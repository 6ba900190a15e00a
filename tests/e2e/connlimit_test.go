package e2e

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sys/unix"
)

// lowerFileLimit sets the server process's RLIMIT_NOFILE soft limit.
func lowerFileLimit(t *testing.T, s *server, n uint64) {
	t.Helper()
	var old unix.Rlimit
	if err := unix.Prlimit(s.cmd.Process.Pid, unix.RLIMIT_NOFILE, nil, &old); err != nil {
		t.Skipf("prlimit: %v", err)
	}
	if err := unix.Prlimit(s.cmd.Process.Pid, unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: n, Max: old.Max}, nil); err != nil {
		t.Skipf("prlimit: %v", err)
	}
}

// openIdle opens n sockets that never send anything.
func openIdle(t *testing.T, addr string, n int) []net.Conn {
	t.Helper()
	var out []net.Conn
	for i := 0; i < n; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		out = append(out, c)
	}
	return out
}

// waitOutput waits until the server's output holds want, failing the test
// after limit (a bound on a condition the server reports, not a delay the
// test relies on).
func waitOutput(t *testing.T, s *server, want string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !strings.Contains(s.out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the server did not log %q within %s:\n%s", want, limit, s.out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Out of file descriptors (more idle sockets than ulimit -n), streamsqld
// used to exit ("accept4: too many open files"); it now backs off, and
// serves again once sockets close.
func TestSurvivesFileDescriptorExhaustion(t *testing.T) {
	s := startServer(t, t.TempDir(), "--max-connections", "1000")
	lowerFileLimit(t, s, 200)
	idle := openIdle(t, s.addr, 400)
	ctx := context.Background()
	// The dials complete in the kernel's backlog before the server accepts
	// them: hold the sockets until the server has run out of descriptors
	// (it logs the accept error), or closing them first could let it keep up.
	waitOutput(t, s, "too many open files", 30*time.Second)
	// A full round trip proves the server is still alive and accepting
	// after the descriptors ran out.
	for _, c := range idle {
		c.Close()
	}
	c, err := pgx.Connect(ctx, s.connString())
	if err != nil {
		t.Fatalf("connect after the flood: %v", err)
	}
	defer c.Close(ctx)
	var one int
	if err := c.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1: %v", err)
	}
	if out := s.out.String(); !strings.Contains(out, "too many open files") {
		t.Errorf("no EMFILE was logged (the flood did not exhaust descriptors?):\n%s", out)
	}
}

// With the default max_connections, idle sockets beyond the slots cannot
// lock a real client out.
func TestIdleFloodDoesNotLockOut(t *testing.T) {
	s := startServer(t, t.TempDir())
	lowerFileLimit(t, s, 300)
	idle := openIdle(t, s.addr, 1000)
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, s.connString())
	if err != nil {
		t.Fatalf("connect during an idle flood: %v", err)
	}
	c.Close(ctx)
}

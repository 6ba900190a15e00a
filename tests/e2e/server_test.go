package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// binary is the streamsqld built once for the package's tests.
var binary string

func TestMain(m *testing.M) {
	code, err := buildAndRun(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func buildAndRun(m *testing.M) (int, error) {
	root, err := repoRoot()
	if err != nil {
		return 0, err
	}
	dir, err := os.MkdirTemp("", "streamsqld-e2e-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "streamsqld")
	build := exec.Command("go", "build", "-o", binary, "./cmd/streamsqld")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("go build ./cmd/streamsqld: %v\n%s", err, out)
	}
	return m.Run(), nil
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("go.mod not found above %s", dir)
		}
		dir = parent
	}
}

// server is one running streamsqld process.
type server struct {
	t       *testing.T
	addr    string
	dataDir string
	cmd     *exec.Cmd
	out     *syncBuffer // stdout and stderr
	exited  chan struct{}
}

const startTimeout = 60 * time.Second

// startServer runs streamsqld on dataDir and a free loopback port, with
// extra command-line flags if given, and waits until it accepts a
// connection. The process is killed when the test ends.
func startServer(t *testing.T, dataDir string, flags ...string) *server {
	t.Helper()
	return startServerEnv(t, dataDir, nil, flags...)
}

// startServerEnv is startServer with env added to the process's
// environment.
func startServerEnv(t *testing.T, dataDir string, env []string, flags ...string) *server {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dataDir: dataDir,
		out: &syncBuffer{}, exited: make(chan struct{})}
	args := []string{"--listen", s.addr, "--data-dir", dataDir}
	if !slices.ContainsFunc(flags, func(f string) bool { return f == "--http" || strings.HasPrefix(f, "--http=") }) {
		args = append(args, "--http", "") // parallel servers would race for the default port
	}
	s.cmd = exec.Command(binary, append(args, flags...)...)
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if env != nil {
		s.cmd.Env = append(os.Environ(), env...)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start streamsqld: %v", err)
	}
	go func() { s.cmd.Wait(); close(s.exited) }()
	t.Cleanup(func() {
		s.kill()
		if t.Failed() || os.Getenv("STREAMSQL_SERVER_LOG") != "" {
			t.Logf("streamsqld output:\n%s", s.out.String())
		}
	})

	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	for {
		c, err := pgx.Connect(ctx, s.connString())
		if err == nil {
			c.Close(ctx)
			return s
		}
		select {
		case <-s.exited:
			t.Fatalf("streamsqld exited during startup: %v\n%s", s.cmd.ProcessState, s.out.String())
		case <-ctx.Done():
			t.Fatalf("streamsqld did not accept connections within %v: %v\n%s", startTimeout, err, s.out.String())
		case <-time.After(20 * time.Millisecond): // polling for readiness, not for correctness
		}
	}
}

func (s *server) connString() string {
	host, port, _ := net.SplitHostPort(s.addr)
	return fmt.Sprintf("host=%s port=%s user=streamsql password=streamsql dbname=streamsql sslmode=disable connect_timeout=10", host, port)
}

func (s *server) connect(ctx context.Context) *pgx.Conn {
	s.t.Helper()
	c, err := pgx.Connect(ctx, s.connString())
	if err != nil {
		s.t.Fatalf("connect: %v", err)
	}
	s.t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// kill sends SIGKILL and waits for the process to be gone.
func (s *server) kill() {
	select {
	case <-s.exited:
		return
	default:
	}
	s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.exited
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// syncBuffer is a bytes.Buffer safe for the process's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Package cluster_test runs streamsqld processes as cluster nodes against
// an etcd and an S3 store started inside the test (package clustertest,
// loopback only): membership, SHOW NODES and streamsql_nodes on every
// node, coordinator failover after kill -9, and the statements a cluster
// refuses until views are distributed.
package cluster_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/streamsql/streamsql/cluster/clustertest"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "streamsqld-cluster-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "streamsqld")
	if b := os.Getenv("STREAMSQLD_BINARY"); b != "" {
		// A binary built elsewhere (an older commit, for benchmarks that
		// compare): the tests of what it lacks fail.
		binary = b
		code := m.Run()
		os.RemoveAll(dir)
		os.Exit(code)
	}
	args := []string{"build", "-o", binary}
	if os.Getenv("STREAMSQLD_RACE") != "" { // the nodes run with the race detector
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, "../../cmd/streamsqld")...)
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build ./cmd/streamsqld: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type node struct {
	id     string
	addr   string
	cmd    *exec.Cmd
	out    *syncBuffer
	exited chan struct{}
}

func (n *node) kill() {
	select {
	case <-n.exited:
		return
	default:
	}
	n.cmd.Process.Signal(syscall.SIGKILL)
	<-n.exited
}

// start runs a streamsqld node with the cluster flags and waits until it
// accepts connections.
func start(t *testing.T, env []string, id string, flags ...string) *node {
	t.Helper()
	return launch(t, env, id, append([]string{"--node-id", id}, flags...)...)
}

// launch runs streamsqld with flags (and a listen address, a data
// directory, no HTTP) and waits until it accepts connections; id names
// it in the test's messages.
func launch(t *testing.T, env []string, id string, flags ...string) *node {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	n := &node{id: id, addr: addr, out: &syncBuffer{}, exited: make(chan struct{})}
	args := append([]string{"--listen", addr, "--data-dir", t.TempDir(), "--http", ""}, flags...)
	n.cmd = exec.Command(binary, args...)
	n.cmd.Stdout, n.cmd.Stderr = n.out, n.out
	n.cmd.Env = append(os.Environ(), env...)
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { n.cmd.Wait(); close(n.exited) }()
	t.Cleanup(func() {
		n.kill()
		if strings.Contains(n.out.String(), "WARNING: DATA RACE") { // STREAMSQLD_RACE
			t.Errorf("node %s: the race detector reported a data race", id)
		}
		if t.Failed() || os.Getenv("CLUSTER_NODE_LOGS") != "" { // set: on success too
			t.Logf("node %s output:\n%s", id, n.out.String())
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c, err := pgx.Connect(ctx, n.connString())
		cancel()
		if err == nil {
			c.Close(context.Background())
			return n
		}
		select {
		case <-n.exited:
			t.Fatalf("node %s exited during startup: %v\n%s", id, n.cmd.ProcessState, n.out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s did not accept connections: %v\n%s", id, err, n.out.String())
		}
		time.Sleep(20 * time.Millisecond) // polling for readiness
	}
}

func (n *node) connString() string {
	host, port, _ := net.SplitHostPort(n.addr)
	return fmt.Sprintf("host=%s port=%s user=streamsql dbname=streamsql sslmode=disable connect_timeout=10", host, port)
}

// query runs sql on n and returns its rows as "a|b|c" lines.
func (n *node) query(t *testing.T, sql string) ([]string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, n.connString())
	if err != nil {
		return nil, err
	}
	defer c.Close(context.Background())
	rows, err := c.Query(ctx, sql, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return nil, err
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = fmt.Sprint(v)
		}
		out = append(out, strings.Join(parts, "|"))
	}
	return out, rows.Err()
}

// waitNodes polls SHOW NODES on n until it equals want or 30 s pass.
func waitNodes(t *testing.T, n *node, sql string, want []string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var got []string
	var err error
	for time.Now().Before(deadline) {
		got, err = n.query(t, sql)
		if err == nil && strings.Join(got, "\n") == strings.Join(want, "\n") {
			return
		}
		time.Sleep(50 * time.Millisecond) // polling with a deadline
	}
	t.Fatalf("%s on %s: got %q (err %v), want %q", sql, n.id, got, err, want)
}

// TestClusterCoordinatorFailover: two nodes list each other with one
// coordinator, on SHOW NODES and streamsql_nodes alike; kill -9 of the
// coordinator makes the other the coordinator once the lease expires.
func TestClusterCoordinatorFailover(t *testing.T) {
	etcd := clustertest.StartEtcd(t)
	s3 := clustertest.StartS3(t, "ckpt")
	env := s3.Env()
	flags := []string{"--cluster", "etcd://" + etcd.Endpoint + "/sq", "--checkpoint-url", "s3://ckpt/sq", "--cluster-lease-ttl", "2s"}
	n1 := start(t, env, "n1", flags...)
	waitNodes(t, n1, "SHOW NODES", []string{"n1 *|" + n1.addr + "|coordinator|running|nothing"})
	n2 := start(t, env, "n2", flags...)
	both := func(self string) []string {
		r := []string{"n1|" + n1.addr + "|coordinator|running|nothing", "n2|" + n2.addr + "|worker|running|nothing"}
		for i := range r {
			if strings.HasPrefix(r[i], self+"|") {
				r[i] = strings.Replace(r[i], "|", " *|", 1)
			}
		}
		return r
	}
	waitNodes(t, n1, "SHOW NODES", both("n1"))
	waitNodes(t, n2, "SHOW NODES", both("n2"))
	const view = "SELECT node_id, address, role, state, is_self FROM streamsql_nodes ORDER BY node_id"
	waitNodes(t, n2, view, []string{"n1|" + n1.addr + "|coordinator|running|false", "n2|" + n2.addr + "|worker|running|true"})

	// A third process with n2's id is refused while n2 lives.
	dup := exec.Command(binary, append([]string{"--listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--http", "", "--node-id", "n2"}, flags...)...)
	dup.Env = append(os.Environ(), env...)
	out, err := dup.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "node id n2 is registered by "+n2.addr) {
		t.Fatalf("duplicate node id: err %v, output:\n%s", err, out)
	}

	killed := time.Now()
	n1.kill()
	waitNodes(t, n2, "SHOW NODES", []string{"n2 *|" + n2.addr + "|coordinator|running|nothing"})
	t.Logf("n2 became the coordinator %.2f s after kill -9 of n1 (lease TTL 2 s)", time.Since(killed).Seconds())

	// n1 comes back as a worker.
	n1b := start(t, env, "n1", flags...)
	waitNodes(t, n1b, "SELECT node_id, role FROM streamsql_nodes ORDER BY node_id", []string{"n1|worker", "n2|coordinator"})
}

// TestClusterZombieCoordinator: the coordinator is stopped (SIGSTOP) past
// its lease: the other node becomes coordinator and lists it no more.
// When it continues (SIGCONT) it finds its lease gone, registers again
// as a worker, and both nodes agree on who coordinates.
func TestClusterZombieCoordinator(t *testing.T) {
	etcd := clustertest.StartEtcd(t)
	s3 := clustertest.StartS3(t, "ckpt")
	flags := []string{"--cluster", "etcd://" + etcd.Endpoint + "/sq", "--checkpoint-url", "s3://ckpt/sq", "--cluster-lease-ttl", "1s"}
	n1 := start(t, s3.Env(), "n1", flags...)
	waitNodes(t, n1, "SELECT node_id, role FROM streamsql_nodes", []string{"n1|coordinator"})
	n2 := start(t, s3.Env(), "n2", flags...)
	waitNodes(t, n2, "SELECT node_id, role FROM streamsql_nodes ORDER BY 1", []string{"n1|coordinator", "n2|worker"})

	if err := n1.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := true
	defer func() {
		if stopped {
			n1.cmd.Process.Signal(syscall.SIGCONT)
		}
	}()
	waitNodes(t, n2, "SELECT node_id, role FROM streamsql_nodes ORDER BY 1", []string{"n2|coordinator"})
	if err := n1.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	stopped = false
	const q = "SELECT node_id, role, is_self FROM streamsql_nodes ORDER BY 1"
	waitNodes(t, n1, q, []string{"n1|worker|true", "n2|coordinator|false"})
	waitNodes(t, n2, q, []string{"n1|worker|false", "n2|coordinator|true"})
	if out := n1.out.String(); !strings.Contains(out, "node n1 lost its lease") {
		t.Fatalf("n1 did not log the lost lease:\n%s", out)
	}
}

// TestClusterRefusesWhatIsNotBuilt: a cluster node refuses statements
// that would need a distributed catalog with 0A000 naming the statement
// (CREATE SOURCE, CREATE TABLE and CREATE MATERIALIZED VIEW run on the
// coordinator: views_test.go, tables_test.go); reads run.
func TestClusterRefusesWhatIsNotBuilt(t *testing.T) {
	etcd := clustertest.StartEtcd(t)
	s3 := clustertest.StartS3(t, "ckpt")
	n := start(t, s3.Env(), "n1", "--cluster", "etcd://"+etcd.Endpoint+"/sq", "--checkpoint-url", "s3://ckpt/sq")
	for sql, what := range map[string]string{
		"ALTER TABLE t ADD b int": "ALTER TABLE",
		"CREATE ROLE r":           "CREATE ROLE",
		"DROP VIEW t":             "DROP VIEW",
	} {
		_, err := n.query(t, sql)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "0A000" || !strings.HasPrefix(pe.Message, what+" is not supported on a cluster node yet") {
			t.Errorf("%s: err = %v, want 0A000 naming %s", sql, err, what)
		}
	}
	got, err := n.query(t, "SELECT 1 + 1, count(*) FROM pg_class WHERE relname = 'streamsql_nodes'")
	if err != nil || len(got) != 1 || got[0] != "2|1" {
		t.Fatalf("read: %q %v", got, err)
	}
}

// TestClusterFlags: bad or incomplete cluster flags stop the server at
// once with a message naming the flag.
func TestClusterFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--cluster", "etcd://127.0.0.1:1/p", "--checkpoint-url", "s3://b/p"}, "--cluster needs --node-id"},
		{[]string{"--cluster", "etcd://127.0.0.1:1/p", "--node-id", "n1"}, "--cluster needs --checkpoint-url"},
		{[]string{"--cluster", "etcd://127.0.0.1:1", "--node-id", "n1", "--checkpoint-url", "s3://b"}, "needs a key prefix"},
		{[]string{"--cluster", "etcd://127.0.0.1:1/p", "--node-id", "n/1", "--checkpoint-url", "s3://b"}, "--node-id \"n/1\""},
		{[]string{"--cluster", "etcd://127.0.0.1:1/p", "--node-id", "n1", "--checkpoint-url", "gs://b"}, "scheme \"gs\" is not supported"},
		{[]string{"--cluster", "etcd://127.0.0.1:1/p", "--node-id", "n1", "--checkpoint-url", "s3://b", "--cluster-lease-ttl", "1500ms"}, "whole number of seconds"},
		{[]string{"--node-id", "n1"}, "--node-id needs --cluster"},
		{[]string{"--checkpoint-url", "s3://b/p"}, "--checkpoint-url needs --cluster"},
	} {
		cmd := exec.Command(binary, append([]string{"--data-dir", t.TempDir(), "--http", ""}, c.args...)...)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), c.msg) {
			t.Errorf("%v: exit %v, output %q, want status 2 and %q", c.args, err, out, c.msg)
		}
	}
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

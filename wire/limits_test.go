package wire

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// emfileListener fails its first n Accepts with EMFILE, as a process out
// of file descriptors does.
type emfileListener struct {
	net.Listener
	mu sync.Mutex
	n  int
}

func (l *emfileListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	fail := l.n > 0
	l.n--
	l.mu.Unlock()
	if fail {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	return l.Listener.Accept()
}

// recordSleeps makes srv's waits return at once, recording their lengths.
func recordSleeps(srv *Server) func() []time.Duration {
	var mu sync.Mutex
	var got []time.Duration
	srv.sleep = func(ctx context.Context, d time.Duration) bool {
		mu.Lock()
		got = append(got, d)
		mu.Unlock()
		return ctx.Err() == nil
	}
	return func() []time.Duration {
		mu.Lock()
		defer mu.Unlock()
		return append([]time.Duration(nil), got...)
	}
}

// serveOn starts srv on l and stops it at the end of the test.
func serveOn(t *testing.T, srv *Server, l net.Listener) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; err != ErrServerClosed {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
	})
}

// Out of file descriptors, Serve used to return (and streamsqld exited);
// now it backs off like net/http and accepts again.
func TestAcceptSurvivesEMFILE(t *testing.T) {
	env := newFakeEnv()
	var logMu sync.Mutex
	var logs []string
	srv := NewServerWith(env.factory, Options{Logf: func(f string, a ...any) {
		logMu.Lock()
		logs = append(logs, f)
		logMu.Unlock()
	}})
	sleeps := recordSleeps(srv)
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, srv, &emfileListener{Listener: inner, n: 10})
	ctx := context.Background()
	c, err := pgx.Connect(ctx, "postgres://alice@"+inner.Addr().String()+"/db?sslmode=disable")
	if err != nil {
		t.Fatalf("connect after EMFILE errors: %v", err)
	}
	c.Close(ctx)
	want := []time.Duration{5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000}
	got := sleeps()
	if len(got) != len(want) {
		t.Fatalf("backoffs %v, want %v ms", got, want)
	}
	for i := range want {
		if got[i] != want[i]*time.Millisecond {
			t.Errorf("backoff %d = %s, want %dms", i, got[i], want[i])
		}
	}
	logMu.Lock()
	defer logMu.Unlock()
	// Logged, at most once a second (floodLogf).
	if len(logs) < 1 || !strings.Contains(logs[0], "accept error") {
		t.Errorf("accept errors not logged: %q", logs)
	}
}

// A listener that fails for good still ends Serve.
func TestServeReturnsPermanentAcceptError(t *testing.T) {
	srv := NewServerWith(newFakeEnv().factory, Options{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	perm := errors.New("listener broken")
	if err := srv.Serve(failingListener{l, perm}); err != perm {
		t.Errorf("Serve = %v, want %v", err, perm)
	}
	l.Close()
	srv.Close()
}

type failingListener struct {
	net.Listener
	err error
}

func (l failingListener) Accept() (net.Conn, error) { return nil, l.err }

// waitFor polls cond (the server's state changes on other goroutines).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func pgCode(err error) (code, msg string) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code, pe.Message
	}
	return "", ""
}

func TestMaxConnections(t *testing.T) {
	srv, addr, _ := startFake(t, Options{MaxConnections: 3})
	ctx := context.Background()
	url := "postgres://alice@" + addr + "/db?sslmode=disable"
	var conns []*pgx.Conn
	for i := 0; i < 3; i++ {
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	_, err := pgx.Connect(ctx, url)
	if code, msg := pgCode(err); code != "53300" || msg != "sorry, too many clients already" {
		t.Fatalf("4th connection: %v", err)
	}
	conns[0].Close(ctx)
	waitFor(t, "a free slot", func() bool { return srv.Connections() == 2 })
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("after a close: %v", err)
	}
	c.Close(ctx)
	for _, c := range conns[1:] {
		c.Close(ctx)
	}
}

// Idle sockets that never authenticate cannot keep a real client out: a
// new connection takes the slot of the oldest one still authenticating.
func TestIdleSocketsDoNotLockOut(t *testing.T) {
	srv, addr, _ := startFake(t, Options{MaxConnections: 5})
	var idle []net.Conn
	for i := 0; i < 20; i++ {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		idle = append(idle, nc)
	}
	waitFor(t, "slots taken", func() bool { return srv.Connections() == 5 })
	ctx := context.Background()
	c, err := pgx.Connect(ctx, "postgres://alice@"+addr+"/db?sslmode=disable")
	if err != nil {
		t.Fatalf("connect with idle sockets holding every slot: %v", err)
	}
	defer c.Close(ctx)
	if n := srv.Connections(); n > 5 {
		t.Errorf("%d slots taken, max 5", n)
	}
}

// A client that has sent its startup packet and is authenticating is
// evicted last: idle sockets that arrive after it take each other's slots
// (TestIdleFloodDoesNotLockOut's flood, whose sockets the kernel may queue
// behind a real client).
func TestAuthenticatingClientOutlastsIdleSockets(t *testing.T) {
	srv, addr, _ := startFake(t, Options{MaxConnections: 3, Passwords: testPasswords})
	nc, fe := startupRaw(t, addr, map[string]string{"user": "alice", "database": "db"})
	defer nc.Close()
	if m, err := fe.Receive(); err != nil {
		t.Fatal(err)
	} else if _, ok := m.(*pgproto3.AuthenticationSASL); !ok {
		t.Fatalf("got %T, want AuthenticationSASL", m)
	}
	// it has spoken, and it is the oldest connection; ten idle sockets
	// for the two other slots: eight of them must be closed, not it
	var idle []net.Conn
	for i := 0; i < 10; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		idle = append(idle, c)
	}
	closed := map[int]bool{}
	deadline := time.Now().Add(10 * time.Second)
	for len(closed) < 8 && time.Now().Before(deadline) {
		for i, c := range idle {
			if closed[i] {
				continue
			}
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Millisecond))
			var b [1]byte
			if _, err := c.Read(b[:]); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
				closed[i] = true
			}
		}
	}
	if len(closed) != 8 {
		t.Fatalf("%d idle sockets closed, want 8 (the client's slot went to one)", len(closed))
	}
	_ = srv
	_ = nc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	var b [1]byte
	if _, err := nc.Read(b[:]); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the authenticating client lost its connection: %v", err)
	}
}

func TestSuperuserReservedConnections(t *testing.T) {
	_, addr, _ := startFake(t, Options{MaxConnections: 3, SuperuserReservedConnections: 1})
	ctx := context.Background()
	var conns []*pgx.Conn
	defer func() {
		for _, c := range conns {
			c.Close(ctx)
		}
	}()
	for i := 0; i < 2; i++ {
		c, err := pgx.Connect(ctx, "postgres://plainuser@"+addr+"/db?sslmode=disable")
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	_, err := pgx.Connect(ctx, "postgres://plainuser@"+addr+"/db?sslmode=disable")
	if code, msg := pgCode(err); code != "53300" || msg != "remaining connection slots are reserved for non-replication superuser connections" {
		t.Fatalf("3rd non-superuser: %v", err)
	}
	c, err := pgx.Connect(ctx, "postgres://alice@"+addr+"/db?sslmode=disable")
	if err != nil {
		t.Fatalf("superuser in the reserved slot: %v", err)
	}
	conns = append(conns, c)
}

// A client that connects and says nothing, or stops in the middle of
// SCRAM, is closed after authentication_timeout.
func TestAuthenticationTimeout(t *testing.T) {
	srv, addr, _ := startFake(t, Options{AuthenticationTimeout: 200 * time.Millisecond, Passwords: testPasswords})
	silent, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	nc, fe := startupRaw(t, addr, map[string]string{"user": "alice", "database": "db"})
	if m, err := fe.Receive(); err != nil {
		t.Fatal(err)
	} else if _, ok := m.(*pgproto3.AuthenticationSASL); !ok {
		t.Fatalf("got %T, want AuthenticationSASL", m)
	}
	for _, c := range []net.Conn{silent, nc} {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		var b [1]byte
		if _, err := c.Read(b[:]); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("connection still open after the authentication timeout: %v", err)
		}
	}
	waitFor(t, "slots freed", func() bool { return srv.Connections() == 0 })
}

// sendHeader writes a message header declaring a body of n bytes and a few
// bytes of it.
func sendHeader(t *testing.T, nc net.Conn, typ byte, n int) {
	t.Helper()
	var hdr [5]byte
	hdr[0] = typ
	binary.BigEndian.PutUint32(hdr[1:], uint32(n+4))
	if _, err := nc.Write(append(hdr[:], "hello"...)); err != nil {
		t.Fatal(err)
	}
}

func totalAlloc() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc
}

// A SASL message declaring 64 MiB is refused from its header, without
// allocating it (it used to cost 64 MiB per unauthenticated connection).
func TestOversizedAuthMessageRefused(t *testing.T) {
	_, addr, _ := startFake(t, Options{Passwords: testPasswords})
	before := totalAlloc()
	for i := 0; i < 20; i++ {
		nc, fe := startupRaw(t, addr, map[string]string{"user": "alice", "database": "db"})
		if _, err := fe.Receive(); err != nil {
			t.Fatal(err)
		}
		sendHeader(t, nc, 'p', 64<<20-5)
		_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		m, err := fe.Receive()
		if err != nil {
			t.Fatalf("no answer to a 64 MiB SASL message: %v", err)
		}
		if e, ok := m.(*pgproto3.ErrorResponse); !ok || e.Code != "08P01" || e.Message != "invalid message length" {
			t.Fatalf("got %#v", m)
		}
		nc.Close()
	}
	grew := totalAlloc() - before
	t.Logf("20 oversized SASL messages: %d KiB allocated in all", grew>>10)
	if grew > 16<<20 {
		t.Errorf("20 oversized SASL messages allocated %d MiB", grew>>20)
	}
}

// After login a message's body is allocated as it arrives: 20 clients that
// declare 64 MiB queries and send 5 bytes cost little.
func TestDeclaredHugeQueryCostsLittle(t *testing.T) {
	srv, addr, _ := startFake(t, Options{})
	before := totalAlloc()
	for i := 0; i < 20; i++ {
		nc, fe := startupRaw(t, addr, map[string]string{"user": "alice", "database": "db"})
		for {
			m, err := fe.Receive()
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := m.(*pgproto3.ReadyForQuery); ok {
				break
			}
		}
		sendHeader(t, nc, 'Q', 64<<20-5)
		_ = nc.(*net.TCPConn).CloseWrite() // the server reads the rest: EOF
	}
	waitFor(t, "connections ended", func() bool { return srv.Connections() == 0 })
	grew := totalAlloc() - before
	t.Logf("20 declared 64 MiB queries: %d KiB allocated in all", grew>>10)
	if grew > 32<<20 {
		t.Errorf("20 declared 64 MiB queries allocated %d MiB", grew>>20)
	}
}

// A body larger than the framer passes through whole and in order.
func TestLargeMessagesStillWork(t *testing.T) {
	_, addr, _ := startFake(t, Options{})
	ctx := context.Background()
	c, err := pgx.Connect(ctx, "postgres://alice@"+addr+"/db?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	long := strings.Repeat("x", 3<<20)
	for i := 0; i < 3; i++ {
		var got string
		if err := c.QueryRow(ctx, "select $1::text", long).Scan(&got); err != nil {
			t.Fatal(err.Error()[:min(200, len(err.Error()))])
		}
		if got != long {
			t.Fatalf("3 MiB literal came back as %d bytes", len(got))
		}
	}
}

func TestRequireTLS(t *testing.T) {
	cfg, rootPEM := selfSignedTLS(t)
	_, addr, _ := startFake(t, Options{TLSConfig: cfg, Passwords: testPasswords, RequireTLS: true})
	ctx := context.Background()
	_, err := pgx.Connect(ctx, "postgres://alice:s3cret%20p%C3%A4ssword@"+addr+"/db?sslmode=disable")
	code, msg := pgCode(err)
	if code != "28000" || msg != `no pg_hba.conf entry for host "127.0.0.1", user "alice", database "db", no encryption` {
		t.Fatalf("plaintext login under RequireTLS: %v", err)
	}
	c, err := pgx.Connect(ctx, "postgres://alice:s3cret%20p%C3%A4ssword@"+addr+"/db?sslmode=require")
	if err != nil {
		t.Fatalf("sslmode=require: %v", err)
	}
	c.Close(ctx)
	c, err = pgx.Connect(ctx, "postgres://alice:s3cret%20p%C3%A4ssword@"+addr+"/db?sslmode=verify-full&sslrootcert="+rootPEM)
	if err != nil {
		t.Fatalf("sslmode=verify-full: %v", err)
	}
	c.Close(ctx)
}

func TestFailedLoginsAreDelayed(t *testing.T) {
	srv, addr, _ := startFake(t, Options{Passwords: testPasswords})
	sleeps := recordSleeps(srv)
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		_, err := pgx.Connect(ctx, "postgres://alice:wrong@"+addr+"/db?sslmode=disable")
		if code, _ := pgCode(err); code != "28P01" {
			t.Fatalf("wrong password: %v", err)
		}
	}
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}
	if got := sleeps(); len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("delays %v, want %v", got, want)
	}
	// The right password gets in without waiting.
	c, err := pgx.Connect(ctx, "postgres://alice:s3cret%20p%C3%A4ssword@"+addr+"/db?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	c.Close(ctx)
	if got := sleeps(); len(got) != 3 {
		t.Errorf("a successful login waited: %v", got)
	}
}

func TestThrottle(t *testing.T) {
	th := newThrottle(0, 0)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	th.now = func() time.Time { return now }
	var got []time.Duration
	for i := 0; i < 8; i++ {
		got = append(got, th.failed("alice", "10.0.0.1"))
	}
	want := []time.Duration{100, 200, 400, 800, 1600, 3200, 5000, 5000}
	for i := range want {
		if got[i] != want[i]*time.Millisecond {
			t.Errorf("failure %d: delay %s, want %dms", i+1, got[i], want[i])
		}
	}
	// Another user from another address starts afresh; the same address
	// keeps its count for another user.
	if d := th.failed("bob", "10.0.0.2"); d != 100*time.Millisecond {
		t.Errorf("bob from elsewhere: %s", d)
	}
	if d := th.failed("carol", "10.0.0.1"); d != 5*time.Second {
		t.Errorf("carol from alice's guesser's address: %s", d)
	}
	// A success forgets the user's failures, not the address's.
	th.succeeded("alice")
	if d := th.failed("alice", "10.0.0.3"); d != 100*time.Millisecond {
		t.Errorf("alice after a success: %s", d)
	}
	// Failures are forgotten after a quiet while.
	now = now.Add(throttleForget + time.Second)
	if d := th.failed("carol", "10.0.0.1"); d != 100*time.Millisecond {
		t.Errorf("after %s: %s", throttleForget, d)
	}
	// Bounded memory: many names and addresses.
	for i := 0; i < 3*throttleEntries; i++ {
		th.failed("u"+strconv.Itoa(i), "a"+strconv.Itoa(i))
	}
	if n := th.entries(); n > throttleEntries {
		t.Errorf("%d entries kept, max %d", n, throttleEntries)
	}
}

func TestParseHBA(t *testing.T) {
	rules, err := ParseHBA(strings.NewReader(`
# comment
hostssl all      all        all            scram-sha-256
host    db1,db2  alice,bob  10.0.0.0/8     md5   # trailing comment
hostnossl all    guest      127.0.0.1      trust
host    all      all        ::1            reject
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 4 || rules[1].Line != 4 || rules[1].Databases[1] != "db2" || rules[2].Net.String() != "127.0.0.1/32" || rules[3].Net.String() != "::1/128" {
		t.Errorf("rules %+v", rules)
	}
	for _, bad := range []string{
		"host all all all",
		"local all all all trust",
		"hostx all all all trust",
		"host all all 10.0.0.0/33 trust",
		"host all all example.com trust",
		"host all all all password",
		"host all all all ident",
		"# nothing",
	} {
		if _, err := ParseHBA(strings.NewReader(bad)); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}

func TestHBARules(t *testing.T) {
	cfg, _ := selfSignedTLS(t)
	rules, err := ParseHBA(strings.NewReader(`
hostnossl all    guest  127.0.0.1/32  trust
host      nodb   all    all           reject
hostssl   all    all    127.0.0.0/8   scram-sha-256
host      other  all    10.0.0.0/8    trust
`))
	if err != nil {
		t.Fatal(err)
	}
	_, addr, _ := startFake(t, Options{TLSConfig: cfg, Passwords: testPasswords, HBA: rules})
	ctx := context.Background()
	try := func(user, pw, db, sslmode string) error {
		c, err := pgx.Connect(ctx, "postgres://"+user+":"+pw+"@"+addr+"/"+db+"?sslmode="+sslmode)
		if err == nil {
			c.Close(ctx)
		}
		return err
	}
	// trust for guest without TLS: no password needed.
	if err := try("guest", "x", "db", "disable"); err != nil {
		t.Errorf("guest: %v", err)
	}
	// reject.
	if code, msg := pgCode(try("alice", "s3cret%20p%C3%A4ssword", "nodb", "require")); code != "28000" ||
		msg != `pg_hba.conf rejects connection for host "127.0.0.1", user "alice", database "nodb", SSL encryption` {
		t.Errorf("reject: %s %s", code, msg)
	}
	// no entry for plaintext alice.
	if code, msg := pgCode(try("alice", "s3cret%20p%C3%A4ssword", "db", "disable")); code != "28000" ||
		msg != `no pg_hba.conf entry for host "127.0.0.1", user "alice", database "db", no encryption` {
		t.Errorf("no entry: %s %s", code, msg)
	}
	// scram-sha-256 over TLS: the right password works, a wrong one does not,
	// and an MD5-stored role cannot log in.
	if err := try("alice", "s3cret%20p%C3%A4ssword", "db", "require"); err != nil {
		t.Errorf("alice over TLS: %v", err)
	}
	if code, _ := pgCode(try("alice", "wrong", "db", "require")); code != "28P01" {
		t.Errorf("wrong password: %s", code)
	}
	if code, _ := pgCode(try("dave", "dave%20pw", "db", "require")); code != "28P01" {
		t.Errorf("md5 role under scram-sha-256: %s", code)
	}
}

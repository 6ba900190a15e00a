package wire

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/streamsql/streamsql/pgerr"
)

// startupRaw opens a socket and sends a StartupMessage by hand.
func startupRaw(t *testing.T, addr string, params map[string]string) (net.Conn, *pgproto3.Frontend) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(20 * time.Second))
	fe := pgproto3.NewFrontend(nc, nc)
	fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: params})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	return nc, fe
}

// findCorpus walks up from the package directory to the shared corpora.
func findCorpus(t *testing.T, rel string) string {
	t.Helper()
	dir, _ := os.Getwd()
	for {
		p := filepath.Join(dir, "shared", "corpora", rel)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skipf("corpus file %s not found", rel)
		}
		dir = parent
	}
}

func TestStartupParameterStatusMatchesPostgres(t *testing.T) {
	_, addr, _ := startFake(t, Options{})
	nc, fe := startupRaw(t, addr, map[string]string{"user": "alice", "database": "db", "application_name": "psql"})
	var names []string
	got := map[string]string{}
	var key *pgproto3.BackendKeyData
	for {
		m, err := fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		if ps, ok := m.(*pgproto3.ParameterStatus); ok {
			names = append(names, ps.Name)
			got[ps.Name] = ps.Value
		}
		if k, ok := m.(*pgproto3.BackendKeyData); ok {
			key = &pgproto3.BackendKeyData{ProcessID: k.ProcessID, SecretKey: append([]byte(nil), k.SecretKey...)}
		}
		if rfq, ok := m.(*pgproto3.ReadyForQuery); ok {
			if rfq.TxStatus != 'I' {
				t.Errorf("first ReadyForQuery status %q, want I", rfq.TxStatus)
			}
			break
		}
	}
	if key == nil || key.ProcessID == 0 || len(key.SecretKey) != 4 {
		t.Errorf("BackendKeyData = %+v, want a pid and a 4-byte key", key)
	}
	f, err := os.Open(findCorpus(t, "clients/server_parameter_status_pg15.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var wantNames []string
	want := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		k, v, _ := strings.Cut(line, "=")
		wantNames = append(wantNames, k)
		want[k] = v
	}
	if !equalStrings(names, wantNames) {
		t.Errorf("ParameterStatus names\n got %q\nwant %q", names, wantNames)
	}
	// Values that differ on purpose: our version, our user, the fake's zone.
	want["server_version"] = ServerVersion
	want["session_authorization"] = "alice"
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	nc.Close()
}

func TestBackendKeyDataUsesSessionPID(t *testing.T) {
	_, addr, _ := startFake(t, Options{})
	a := dialRaw(t, "postgres://withpid@"+addr+"/db?sslmode=disable")
	b := dialRaw(t, "postgres://withpid@"+addr+"/db?sslmode=disable")
	c := dialRaw(t, fakeURL(addr)) // PID() is 0: the server picks one
	if a.pid != 7000 || b.pid != 7001 {
		t.Errorf("pids %d, %d; want the sessions' 7000, 7001", a.pid, b.pid)
	}
	if c.pid == 0 || c.pid == a.pid || c.pid == b.pid {
		t.Errorf("server-chosen pid %d (others %d, %d)", c.pid, a.pid, b.pid)
	}
}

func TestStartupOptionsBecomeParameters(t *testing.T) {
	_, addr, env := startFake(t, Options{})
	_, fe := startupRaw(t, addr, map[string]string{
		"user": "u", "DateStyle": "ISO",
		"options": `-c statement_timeout=5s --search-path=a\ b -cwork_mem=64kB -B 10 -c DateStyle=German`,
	})
	for {
		m, err := fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := m.(*pgproto3.ReadyForQuery); ok {
			break
		}
	}
	env.mu.Lock()
	params := env.sessions[0].params
	env.mu.Unlock()
	want := map[string]string{"statement_timeout": "5s", "search_path": "a b", "work_mem": "64kB", "DateStyle": "ISO", "user": "u"}
	for k, v := range want {
		if params[k] != v {
			t.Errorf("param %s = %q, want %q (all: %q)", k, params[k], v, params)
		}
	}
	if len(params) != len(want)+1 { // + options itself
		t.Errorf("params %q", params)
	}
}

func TestSSLAndGSSRequestsDeclined(t *testing.T) {
	_, addr, _ := startFake(t, Options{})
	for _, msg := range []pgproto3.FrontendMessage{&pgproto3.SSLRequest{}, &pgproto3.GSSEncRequest{}} {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_ = nc.SetDeadline(time.Now().Add(20 * time.Second))
		fe := pgproto3.NewFrontend(nc, nc)
		fe.Send(msg)
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
		var b [1]byte
		if _, err := io.ReadFull(nc, b[:]); err != nil || b[0] != 'N' {
			t.Fatalf("%T answered %q, %v; want 'N'", msg, b[0], err)
		}
		fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "u"}})
		fe.Send(&pgproto3.Query{String: "select 3"})
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
		c := &rawClient{t: t, nc: nc, fe: fe}
		c.untilReady() // startup
		got := c.untilReady()
		want := []string{"RowDescription ?column?:23:4:-1:0", `DataRow "3"`, "CommandComplete SELECT 1", "ReadyForQuery I"}
		if !equalStrings(got, want) {
			t.Errorf("after %T: got %q, want %q", msg, got, want)
		}
		nc.Close()
	}
}

// rawStartupPacket sends a startup packet with an arbitrary version code.
func rawStartupPacket(t *testing.T, addr string, version uint32, params ...string) (net.Conn, *pgproto3.Frontend) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(20 * time.Second))
	body := []byte{byte(version >> 24), byte(version >> 16), byte(version >> 8), byte(version)}
	for _, p := range params {
		body = append(body, p...)
		body = append(body, 0)
	}
	body = append(body, 0)
	n := len(body) + 4
	pkt := append([]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}, body...)
	if _, err := nc.Write(pkt); err != nil {
		t.Fatal(err)
	}
	return nc, pgproto3.NewFrontend(nc, nc)
}

func TestProtocolVersions(t *testing.T) {
	_, addr, _ := startFake(t, Options{})
	// 2.0 is refused like PostgreSQL 15 does.
	nc, fe := rawStartupPacket(t, addr, 2<<16, "user", "u")
	m, err := fe.Receive()
	if err != nil {
		t.Fatal(err)
	}
	got := describeMsg(m)
	want := "ErrorResponse FATAL 0A000 unsupported frontend protocol 2.0: server supports 3.0 to 3.0 P0 D\"\" H\"\""
	if got != want {
		t.Errorf("protocol 2.0: got %s, want %s", got, want)
	}
	if _, err := fe.Receive(); err == nil {
		t.Error("connection stayed open after FATAL")
	}
	nc.Close()

	// 3.5 with a _pq_ option: NegotiateProtocolVersion, then a normal 3.0 session.
	_, fe = rawStartupPacket(t, addr, 3<<16|5, "user", "u", "_pq_.fancy", "on")
	m, err = fe.Receive()
	if err != nil {
		t.Fatal(err)
	}
	npv, ok := m.(*pgproto3.NegotiateProtocolVersion)
	if !ok || npv.NewestMinorProtocol != 0 || len(npv.UnrecognizedOptions) != 1 || npv.UnrecognizedOptions[0] != "_pq_.fancy" {
		t.Fatalf("got %s %+v, want NegotiateProtocolVersion 0 [_pq_.fancy]", describeMsg(m), m)
	}
	if m, err = fe.Receive(); err != nil || describeMsg(m) != "AuthenticationOk" {
		t.Fatalf("after negotiation: %v %v", describeMsg(m), err)
	}

	// A client asking for 3.2 (pgx's max_protocol_version) settles on 3.0.
	ctx := context.Background()
	pc, err := pgconn.Connect(ctx, fakeURL(addr)+"&max_protocol_version=3.2")
	if err != nil {
		t.Fatalf("3.2 client: %v", err)
	}
	if rs, err := pc.Exec(ctx, "select 8").ReadAll(); err != nil || string(rs[0].Rows[0][0]) != "8" {
		t.Errorf("3.2 client query: %v %v", rs, err)
	}
	pc.Close(ctx)

	// No user: FATAL 28000.
	_, fe = rawStartupPacket(t, addr, 3<<16, "database", "d")
	m, err = fe.Receive()
	if err != nil {
		t.Fatal(err)
	}
	if got := describeMsg(m); !strings.HasPrefix(got, "ErrorResponse FATAL 28000 no PostgreSQL user name specified in startup packet") {
		t.Errorf("no user: got %s", got)
	}
}

func TestSessionFactoryErrorIsFatal(t *testing.T) {
	_, addr, _ := startFake(t, Options{})
	_, err := pgconn.Connect(context.Background(), "postgres://u@"+addr+"/nosuchdb?sslmode=disable")
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "3D000" || pgErr.Severity != "FATAL" || pgErr.Message != `database "nosuchdb" does not exist` {
		t.Fatalf("got %v, want FATAL 3D000", err)
	}
}

func TestCancelRequest(t *testing.T) {
	_, addr, env := startFake(t, Options{})
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, fakeURL(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := conn.Exec(ctx, "select pg_sleep(1000)", pgx.QueryExecModeSimpleProtocol)
		errc <- err
	}()
	<-env.sleeping
	if err := conn.PgConn().CancelRequest(ctx); err != nil {
		t.Fatal(err)
	}
	err = <-errc
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "57014" || pgErr.Message != "canceling statement due to user request" {
		t.Fatalf("canceled statement returned %v", err)
	}
	var n int
	if err := conn.QueryRow(ctx, "select 5").Scan(&n); err != nil || n != 5 {
		t.Fatalf("after cancel: %d, %v", n, err)
	}
}

func TestCancelWithWrongKeyIsIgnored(t *testing.T) {
	srv, addr, _ := startFake(t, Options{})
	c := dialRaw(t, fakeURL(addr))
	canceled := make(chan struct{})
	srv.mu.Lock()
	target := srv.conns[c.pid]
	srv.mu.Unlock()
	if target == nil {
		t.Fatalf("pid %d not registered", c.pid)
	}
	target.setRunning(func() { close(canceled) })
	wrong := append([]byte(nil), c.secret...)
	wrong[0] ^= 0xff
	srv.cancelRequest(c.pid, wrong)
	srv.cancelRequest(c.pid+1, c.secret)
	select {
	case <-canceled:
		t.Fatal("a cancel request with the wrong key or pid canceled the statement")
	default:
	}
	srv.cancelRequest(c.pid, c.secret)
	select {
	case <-canceled:
	default:
		t.Fatal("the right key did not cancel")
	}
	target.setRunning(nil)
}

func TestOversizedMessageClosesOnlyThatConnection(t *testing.T) {
	_, addr, env := startFake(t, Options{MaxMessageSize: 1024})
	other := dialRaw(t, fakeURL(addr))
	big := dialRaw(t, fakeURL(addr))
	big.send(&pgproto3.Query{String: "select 1 -- " + strings.Repeat("x", 2000)})
	m, err := big.fe.Receive()
	if err != nil {
		t.Fatal(err)
	}
	if got := describeMsg(m); !strings.HasPrefix(got, "ErrorResponse FATAL 08P01 invalid message length") {
		t.Errorf("got %s", got)
	}
	if _, err := big.fe.Receive(); err == nil {
		t.Error("oversized message left the connection open")
	}
	if got := other.roundTrip(&pgproto3.Query{String: "select 4"}); len(got) != 4 || got[1] != `DataRow "4"` {
		t.Errorf("other connection: %q", got)
	}
	env.mu.Lock()
	bigSession := env.sessions[1]
	env.mu.Unlock()
	if !bigSession.isClosed() {
		t.Error("session of the closed connection is still open")
	}
}

func TestOversizedCopyDataIsFatal(t *testing.T) {
	_, addr, _ := startFake(t, Options{MaxMessageSize: 1024})
	c := dialRaw(t, fakeURL(addr))
	c.send(&pgproto3.Query{String: "copy t from stdin"}, &pgproto3.CopyData{Data: []byte(strings.Repeat("1\tx\n", 400))})
	var got []string
	for {
		m, err := c.fe.Receive()
		if err != nil {
			got = append(got, "closed")
			break
		}
		got = append(got, describeMsg(m))
	}
	want := []string{"CopyInResponse 0 [0 0]", `ErrorResponse FATAL 08P01 invalid message length P0 D"" H""`, "closed"}
	if !equalStrings(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestPanicInStatementIsRecovered(t *testing.T) {
	_, addr, _ := startFake(t, Options{})
	c := dialRaw(t, fakeURL(addr))
	got := c.roundTrip(&pgproto3.Query{String: "select wire_panic(); select 1"})
	want := []string{`ErrorResponse ERROR XX000 wire_panic called P0 D"" H""`, "ReadyForQuery I"}
	if !equalStrings(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	got = c.roundTrip(&pgproto3.Query{String: "select wire_panic_rows()"})
	want = []string{"RowDescription ?column?:23:4:-1:0", `DataRow "1"`, `DataRow "2"`,
		`ErrorResponse ERROR XX000 iterator exploded P0 D"" H""`, "ReadyForQuery I"}
	if !equalStrings(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	got = c.roundTrip(&pgproto3.Parse{Query: "select wire_panic()"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{})
	want = []string{"ParseComplete", "BindComplete", `ErrorResponse ERROR XX000 wire_panic called P0 D"" H""`, "ReadyForQuery I"}
	if !equalStrings(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := c.roundTrip(&pgproto3.Query{String: "select 1"}); len(got) != 4 {
		t.Errorf("after panics: %q", got)
	}
}

func TestNoticeAndInvalidUTF8(t *testing.T) {
	_, addr, _ := startFake(t, Options{})
	c := dialRaw(t, fakeURL(addr))
	got := c.roundTrip(&pgproto3.Query{String: "select wire_notice()"})
	want := []string{"NoticeResponse WARNING 01000 careful", "CommandComplete DO", "ReadyForQuery I"}
	if !equalStrings(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	got = c.roundTrip(&pgproto3.Query{String: "select '\xff'"})
	if len(got) != 2 || !strings.HasPrefix(got[0], "ErrorResponse ERROR 22021 invalid byte sequence for encoding \"UTF8\"") {
		t.Errorf("invalid UTF-8: %q", got)
	}
}

func TestStatementTimeout(t *testing.T) {
	_, addr, _ := startFake(t, Options{})
	c := dialRaw(t, fakeURL(addr))
	got := c.roundTrip(&pgproto3.Query{String: "select wire_timeout()"})
	want := []string{`ErrorResponse ERROR 57014 canceling statement due to statement timeout P0 D"" H""`, "ReadyForQuery I"}
	if !equalStrings(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestTerminateClosesSession(t *testing.T) {
	_, addr, env := startFake(t, Options{})
	c := dialRaw(t, fakeURL(addr))
	c.send(&pgproto3.Terminate{})
	if _, err := c.fe.Receive(); err == nil {
		t.Fatal("connection open after Terminate")
	}
	if !env.allClosed() {
		t.Error("session not closed after Terminate")
	}
}

func TestServerCloseEndsRunningStatements(t *testing.T) {
	srv, addr, env := startFake(t, Options{})
	c := dialRaw(t, fakeURL(addr))
	idle := dialRaw(t, fakeURL(addr))
	silent, err := net.Dial("tcp", addr) // connected, never sends a startup packet
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	c.send(&pgproto3.Query{String: "select pg_sleep(1000)"})
	<-env.sleeping
	start := time.Now()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d >= closeGrace {
		t.Errorf("Close took %v: a connection did not notice the shutdown", d)
	}
	// Both the busy and the idle client are told why, then disconnected.
	for _, cl := range []*rawClient{c, idle} {
		var got []string
		for {
			m, err := cl.fe.Receive()
			if err != nil {
				break
			}
			got = append(got, describeMsg(m))
		}
		want := []string{`ErrorResponse FATAL 57P01 terminating connection due to administrator command P0 D"" H""`}
		if !equalStrings(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	if !env.allClosed() {
		t.Error("sessions open after Close")
	}
	if _, err := net.Dial("tcp", addr); err == nil {
		t.Error("still accepting after Close")
	}
}

func TestManyConcurrentConnections(t *testing.T) {
	_, addr, env := startFake(t, Options{})
	const conns, rounds = 24, 10
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ctx := context.Background()
			conn, err := pgx.Connect(ctx, fakeURL(addr))
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close(ctx)
			for r := 0; r < rounds; r++ {
				n := 1 + (i*rounds+r)%50
				rows, err := conn.Query(ctx, fmt.Sprintf("select * from generate_series(1, %d)", n))
				if err != nil {
					errs <- err
					return
				}
				sum := 0
				for rows.Next() {
					var v int32
					if err := rows.Scan(&v); err != nil {
						errs <- err
						return
					}
					sum += int(v)
				}
				if err := rows.Err(); err != nil {
					errs <- err
					return
				}
				if sum != n*(n+1)/2 {
					errs <- fmt.Errorf("conn %d: sum of 1..%d = %d", i, n, sum)
					return
				}
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	env.mu.Lock()
	n := len(env.sessions)
	env.mu.Unlock()
	if n != conns {
		t.Errorf("%d sessions for %d connections", n, conns)
	}
}

func TestPgxExtendedAndSimple(t *testing.T) {
	_, addr, _ := startFake(t, Options{})
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, fakeURL(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// pgx's default mode: named statement, Describe, binary int4 results.
	for i := 0; i < 2; i++ {
		var got []int32
		rows, _ := conn.Query(ctx, "select * from generate_series(1, 5)")
		for rows.Next() {
			var v int32
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			got = append(got, v)
		}
		if err := rows.Err(); err != nil || fmt.Sprint(got) != "[1 2 3 4 5]" {
			t.Fatalf("got %v, %v", got, err)
		}
	}
	var (
		txt  string
		nul  *string
		b    bool
		big  int64
		bigP *int64
	)
	if err := conn.QueryRow(ctx, fakeMixed).Scan(&txt, &nul, &b, &big); err != nil {
		t.Fatal(err)
	}
	if txt != "a" || nul != nil || !b || big != 7 {
		t.Errorf("got %q %v %v %d", txt, nul, b, big)
	}
	_ = bigP
	// Several statements in one simple query, one result each.
	results, err := conn.PgConn().Exec(ctx, "select 1; insert into t values (1); select * from generate_series(1, 2)").ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var tags []string
	for _, r := range results {
		tags = append(tags, r.CommandTag.String())
	}
	if fmt.Sprint(tags) != "[SELECT 1 INSERT 0 1 SELECT 2]" {
		t.Errorf("tags %q", tags)
	}
	_, err = conn.Exec(ctx, "select 1/0")
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != string(pgerr.DivisionByZero) {
		t.Errorf("select 1/0: %v", err)
	}
}

func TestPgxParameters(t *testing.T) {
	requireTypesIO(t)
	_, addr, _ := startFake(t, Options{})
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, fakeURL(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var s string
	if err := conn.QueryRow(ctx, "select $1::text", "héllo").Scan(&s); err != nil || s != "héllo" {
		t.Errorf("text parameter: %q, %v", s, err)
	}
	var n int32
	if err := conn.QueryRow(ctx, "select $1::int4", int32(-17)).Scan(&n); err != nil || n != -17 {
		t.Errorf("int4 parameter: %d, %v", n, err)
	}
}

func TestCopyWithPgconn(t *testing.T) {
	_, addr, env := startFake(t, Options{})
	ctx := context.Background()
	pc, err := pgconn.Connect(ctx, fakeURL(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close(ctx)
	var out strings.Builder
	tag, err := pc.CopyTo(ctx, &out, "copy t to stdout")
	if err != nil {
		t.Fatal(err)
	}
	// What PostgreSQL 15 prints for the same rows (see oracleSetup).
	want := "1\tplain\n2\ttab\\there, newline\\nthere\n3\tback\\\\slash\n\\N\t\\N\n5\t\n6\tsay \"hi\", ok\n7\tcr\\rlf\n"
	if out.String() != want || tag.String() != "COPY 7" {
		t.Errorf("copy to: %q %q\nwant %q", tag, out.String(), want)
	}
	out.Reset()
	if _, err := pc.CopyTo(ctx, &out, "copy t to stdout (format csv, header)"); err != nil {
		t.Fatal(err)
	}
	want = "id,note\n1,plain\n2,\"tab\there, newline\nthere\"\n3,back\\slash\n,\n5,\"\"\n6,\"say \"\"hi\"\", ok\"\n7,\"cr\rlf\"\n"
	if out.String() != want {
		t.Errorf("copy csv: %q\nwant %q", out.String(), want)
	}
	tag, err = pc.CopyFrom(ctx, strings.NewReader("1\ta\n2\tb\n3\tc\n"), "copy t from stdin")
	if err != nil || tag.String() != "COPY 3" {
		t.Fatalf("copy from: %q %v", tag, err)
	}
	env.mu.Lock()
	copied := env.copied.String()
	env.mu.Unlock()
	if copied != "1\ta\n2\tb\n3\tc\n" {
		t.Errorf("engine received %q", copied)
	}
}

package wire

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/streamsql/streamsql/engine"
)

// FuzzSession feeds a whole client byte stream, startup packet included,
// to one connection of a server over the real engine, with trust or
// password authentication. Seeds are sessions of real clients (pgx, psql,
// pgjdbc, psycopg) recorded by TestCaptureFuzzSeeds into
// testdata/fuzz/FuzzSession, plus a few made here. Whatever the bytes, the
// connection must not panic (the wire's recovers log "panic") and must end
// once the input is used up and the server closes (no hang).
//
//	go test ./wire -run '^$' -fuzz FuzzSession -fuzztime 5m
func FuzzSession(f *testing.F) {
	startup := func(user string) []byte {
		b, _ := (&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30,
			Parameters: map[string]string{"user": user, "database": "db", "application_name": "fuzz"}}).Encode(nil)
		return b
	}
	msgs := func(ms ...pgproto3.FrontendMessage) []byte {
		var b []byte
		for _, m := range ms {
			b, _ = m.Encode(b)
		}
		return b
	}
	f.Add(false, append(startup("u"), msgs(
		&pgproto3.Query{String: "create table if not exists f(id int primary key, v text); insert into f values (1, 'a') on conflict do nothing"},
		&pgproto3.Parse{Name: "s", Query: "select v from f where id = $1", ParameterOIDs: []uint32{23}},
		&pgproto3.Describe{ObjectType: 'S', Name: "s"},
		&pgproto3.Bind{DestinationPortal: "p", PreparedStatement: "s", ParameterFormatCodes: []int16{1}, Parameters: [][]byte{{0, 0, 0, 1}}, ResultFormatCodes: []int16{1}},
		&pgproto3.Execute{Portal: "p", MaxRows: 1},
		&pgproto3.Execute{Portal: "p"},
		&pgproto3.Close{ObjectType: 'P', Name: "p"},
		&pgproto3.Sync{},
		&pgproto3.Query{String: "begin; declare c cursor for select * from generate_series(1, 3); fetch 2 from c; commit"},
		&pgproto3.Query{String: "copy f from stdin"}, &pgproto3.CopyData{Data: []byte("2\tb\n")}, &pgproto3.CopyDone{},
		&pgproto3.Terminate{})...))
	f.Add(true, append(startup("alice"), msgs(&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256", Data: []byte("n,,n=,r=abc")})...))
	f.Add(true, append(startup("dave"), msgs(&pgproto3.PasswordMessage{Password: "md5abc"})...))
	f.Add(false, []byte{0, 0, 0, 8, 4, 210, 22, 47}) // SSLRequest, then nothing
	// Statements nested too deeply for the C parser (54001), bad UTF-8 in
	// COPY and parameters (22021), too many columns (54011).
	deep := func(open, leaf, close string, n int) string {
		return strings.Repeat(open, n) + leaf + strings.Repeat(close, n)
	}
	f.Add(false, append(startup("u"), msgs(
		&pgproto3.Query{String: "SELECT 1" + strings.Repeat("+1", 30000)},
		&pgproto3.Query{String: "SELECT " + deep("NOT ", "true", "", 30000)},
		&pgproto3.Query{String: "SELECT " + deep("(", "1", ")", 9000)},
		&pgproto3.Query{String: "SELECT " + deep("CASE WHEN true THEN ", "1", " END", 5000)},
		&pgproto3.Query{String: "SELECT " + deep("ARRAY[", "1", "]", 5000)},
		&pgproto3.Query{String: deep("SELECT (", "SELECT 1", ")", 5000)},
		&pgproto3.Query{String: "SELECT 1" + strings.Repeat(" UNION SELECT 1", 50000)},
		&pgproto3.Parse{Query: "SELECT $1::int" + strings.Repeat("+$1::int", 30000)},
		&pgproto3.Sync{},
		&pgproto3.Query{String: "SELECT 1" + strings.Repeat("+1", 3990)},
		&pgproto3.Query{String: "SELECT " + strings.Repeat("1,", 70000) + "1"},
		&pgproto3.Query{String: "create table if not exists u(v text)"},
		&pgproto3.Query{String: "copy u from stdin"}, &pgproto3.CopyData{Data: []byte("a\xffb\n\000\nc\x00\n")}, &pgproto3.CopyDone{},
		&pgproto3.Parse{Name: "i", Query: "insert into u values ($1)", ParameterOIDs: []uint32{25}},
		&pgproto3.Bind{PreparedStatement: "i", ParameterFormatCodes: []int16{1}, Parameters: [][]byte{[]byte("a\xff\x00")}},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
		&pgproto3.Terminate{})...))

	eng, err := engine.Open(engine.Config{DataDir: f.TempDir()})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { eng.Close() })
	f.Fuzz(func(t *testing.T, auth bool, data []byte) {
		var logMu sync.Mutex
		var logs strings.Builder
		opts := Options{MaxMessageSize: 1 << 20, Logf: func(format string, args ...any) {
			logMu.Lock()
			fmt.Fprintf(&logs, format+"\n", args...)
			logMu.Unlock()
		}}
		if auth {
			opts.Passwords = testPasswords
		}
		srv := NewServer(eng, opts)
		mc := &memConn{in: bytes.NewReader(data), eof: make(chan struct{})}
		done := make(chan struct{})
		go func() {
			defer close(done)
			srv.serveConn(mc)
		}()
		// Statements that wait (a subscription, pg_sleep, a lock) end when
		// the server closes, as they would on shutdown.
		select {
		case <-done:
		case <-mc.eof:
			select {
			case <-done:
			case <-time.After(time.Second):
			}
		case <-time.After(5 * time.Second):
		}
		closed := make(chan struct{})
		go func() { srv.Close(); close(closed) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("connection still running 10s after the server began closing: %q", data)
		}
		<-closed
		logMu.Lock()
		defer logMu.Unlock()
		if strings.Contains(logs.String(), "panic") {
			t.Fatalf("panic on %q:\n%s", data, logs.String())
		}
	})
}

// memConn is a connection whose client sends a fixed byte stream and then
// hangs up; what the server writes is discarded.
type memConn struct {
	in      *bytes.Reader
	eof     chan struct{}
	eofOnce sync.Once
}

func (c *memConn) Read(p []byte) (int, error) {
	n, err := c.in.Read(p)
	if err == io.EOF {
		c.eofOnce.Do(func() { close(c.eof) })
	}
	return n, err
}
func (c *memConn) Write(p []byte) (int, error)      { return len(p), nil }
func (c *memConn) Close() error                     { return nil }
func (c *memConn) LocalAddr() net.Addr              { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5433} }
func (c *memConn) RemoteAddr() net.Addr             { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000} }
func (c *memConn) SetDeadline(time.Time) error      { return nil }
func (c *memConn) SetReadDeadline(time.Time) error  { return nil }
func (c *memConn) SetWriteDeadline(time.Time) error { return nil }

// recordingProxy forwards connections to addr and keeps what each client
// sent.
type recordingProxy struct {
	l    net.Listener
	mu   sync.Mutex
	sent []*bytes.Buffer
	wg   sync.WaitGroup
}

func newRecordingProxy(t *testing.T, addr string) *recordingProxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &recordingProxy{l: l}
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", addr)
			if err != nil {
				in.Close()
				continue
			}
			buf := &bytes.Buffer{}
			p.mu.Lock()
			p.sent = append(p.sent, buf)
			p.mu.Unlock()
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				io.Copy(out, io.TeeReader(in, &lockedWriter{mu: &p.mu, w: buf}))
				out.Close()
			}()
			go func() { io.Copy(in, out); in.Close() }()
		}
	}()
	return p
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (w *lockedWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(b)
}

// take returns the recorded client streams since the last call.
func (p *recordingProxy) take() [][]byte {
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	var out [][]byte
	for _, b := range p.sent {
		out = append(out, append([]byte(nil), b.Bytes()...))
	}
	p.sent = nil
	return out
}

// TestCaptureFuzzSeeds records real client sessions as FuzzSession seeds.
// It runs only with WIRE_CAPTURE_SEEDS=1 (it rewrites testdata).
func TestCaptureFuzzSeeds(t *testing.T) {
	if os.Getenv("WIRE_CAPTURE_SEEDS") == "" {
		t.Skip("set WIRE_CAPTURE_SEEDS=1 to record client sessions into testdata/fuzz/FuzzSession")
	}
	addr := startEngine(t)
	proxy := newRecordingProxy(t, addr)
	defer proxy.l.Close()
	host, port, _ := net.SplitHostPort(proxy.l.Addr().String())
	dir := filepath.Join("testdata", "fuzz", "FuzzSession")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	save := func(name string) {
		for i, s := range proxy.take() {
			body := fmt.Sprintf("go test fuzz v1\nbool(false)\n[]byte(%q)\n", s)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d", name, i)), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, "postgres://u@"+proxy.l.Addr().String()+"/db?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"create table seed(id int primary key, name text, ts timestamptz, score float8, tags text[])",
		"create materialized view seed_v as select name, count(*) from seed group by name",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 3; i++ {
		if _, err := conn.Exec(ctx, "insert into seed values ($1, $2, $3, $4, $5)", i, fmt.Sprint("n", i), time.Unix(int64(i), 0), float64(i)/3, []string{"a", "b"}); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	_ = conn.QueryRow(ctx, "select count(*) from seed where id < $1", 10).Scan(&n)
	_, _ = conn.Exec(ctx, "select 1/0")
	_, _ = conn.Exec(ctx, "-- ping")
	batch := &pgx.Batch{}
	batch.Queue("select id, name from seed where id = $1", 1)
	batch.Queue("select * from seed_v")
	_ = conn.SendBatch(ctx, batch).Close()
	rows, _ := conn.Query(ctx, "select * from seed", pgx.QueryExecModeSimpleProtocol)
	rows.Close()
	conn.Close(ctx)
	save("pgx")

	if psql, err := exec.LookPath("psql"); err == nil {
		cmd := exec.Command(psql, "-h", host, "-p", port, "-U", "u", "-X", "db")
		cmd.Stdin = strings.NewReader("\\d seed\n\\dt\n\\dm\n\\du\nselect * from seed;\nselect nosuch;\n\\copy seed(id, name) from stdin\n7\tx\n\\.\nbegin;\ndeclare c cursor for select * from seed;\nfetch 1 from c;\nrollback;\n")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Logf("psql: %v\n%s", err, out)
		}
		save("psql")
	}
	if java, err := exec.LookPath("java"); err == nil {
		src := filepath.Join(t.TempDir(), "Seed.java")
		prog := `import java.sql.*;
public class Seed { public static void main(String[] a) throws Exception {
  try (Connection c = DriverManager.getConnection(a[0], "u", "")) {
    DatabaseMetaData md = c.getMetaData();
    md.getTables(null, "public", "%", null).close();
    md.getColumns(null, "public", "seed", "%").close();
    try (PreparedStatement ps = c.prepareStatement("select name, score from seed where id = ?")) {
      for (int i = 0; i < 7; i++) { ps.setInt(1, i % 3); ps.executeQuery().close(); }
    }
    c.setAutoCommit(false);
    try (Statement st = c.createStatement()) { st.setFetchSize(1); ResultSet rs = st.executeQuery("select * from seed"); while (rs.next()) {} }
    c.commit();
    try { c.createStatement().execute("select nosuch"); } catch (SQLException e) { c.rollback(); }
  }
}}`
		if err := os.WriteFile(src, []byte(prog), 0o644); err == nil {
			url := fmt.Sprintf("jdbc:postgresql://%s:%s/db?sslmode=disable", host, port)
			if out, err := exec.Command(java, "-cp", "/usr/share/java/postgresql.jar", src, url).CombinedOutput(); err != nil {
				t.Logf("pgjdbc: %v\n%s", err, out)
			}
			save("pgjdbc")
		}
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import psycopg").Run(); err == nil {
		script := `import sys, psycopg
with psycopg.connect(host=sys.argv[1], port=sys.argv[2], user="u", dbname="db") as c:
    for i in range(6):
        c.execute("select name from seed where id = %s", (i,), prepare=None).fetchall()
    c.execute("select * from seed", binary=True).fetchall()
    try:
        c.execute("select nosuch")
    except psycopg.Error:
        c.rollback()
`
		if out, err := exec.Command("/usr/bin/python3", "-c", script, host, port).CombinedOutput(); err != nil {
			t.Logf("psycopg: %v\n%s", err, out)
		}
		save("psycopg")
	}
}

// TestEveryBadMessageIsAnError: well-framed messages with bodies that make
// no sense each get an ErrorResponse (then ReadyForQuery at the Sync, or a
// FATAL and the end of the connection), never silence or a hang.
func TestEveryBadMessageIsAnError(t *testing.T) {
	_, addr, _ := startFake(t, Options{})
	msg := func(typ byte, body ...byte) []byte {
		n := len(body) + 4
		return append([]byte{typ, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}, body...)
	}
	for name, raw := range map[string][]byte{
		"parse without terminators":           msg('P', 'a'),
		"parse of two statements":             msg('P', append(append([]byte("s\x00"), "select 1; select 2"...), 0, 0, 0)...),
		"bind of a missing stmt":              msg('B', 0, 'n', 'o', 0, 0, 0, 0, 0, 0, 0),
		"bind with a short body":              msg('B', 0, 0, 0, 1),
		"bind with negative counts":           msg('B', 0, 0, 0xff, 0xff, 0, 0, 0, 0),
		"describe of a bad kind":              msg('D', 'X', 0),
		"describe of a missing stmt":          msg('D', 'S', 'n', 'o', 0),
		"execute of a missing portal":         msg('E', 'n', 'o', 0, 0, 0, 0, 0),
		"close of a bad kind":                 msg('C', 'X', 0),
		"function call":                       msg('F', 0, 0, 0, 1, 0, 0, 0, 0, 0, 0),
		"unknown type":                        msg('z'),
		"copy done outside copy then garbage": append(msg('c'), msg('y', 1, 2, 3)...),
	} {
		c := dialRaw(t, fakeURL(addr))
		if _, err := c.nc.Write(append(raw, msg('S')...)); err != nil {
			t.Fatal(err)
		}
		_ = c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		var got []string
		for {
			m, err := c.fe.Receive()
			if err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					t.Errorf("%s: no answer within 10s (got %q)", name, got)
				}
				got = append(got, "closed")
				break
			}
			got = append(got, describeMsg(m))
			if _, ok := m.(*pgproto3.ReadyForQuery); ok {
				break
			}
		}
		hasError := false
		for _, g := range got {
			hasError = hasError || strings.HasPrefix(g, "ErrorResponse")
		}
		if !hasError || strings.Contains(strings.Join(got, " "), "XX000") {
			t.Errorf("%s: got %q, want an ErrorResponse (not XX000)", name, got)
		}
	}
}

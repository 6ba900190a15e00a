package wire

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/md5"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/streamsql/streamsql/catalog"
)

// testRoles are stored passwords in each form Options.Passwords may
// return: plain text (alice), a SCRAM-SHA-256 verifier (carol), an MD5 hash
// (dave), none (erin).
var testRoles = func() map[string]string {
	v, err := catalog.SCRAMVerifier("carol pw")
	if err != nil {
		panic(err)
	}
	return map[string]string{"alice": "s3cret pässword", "carol": v, "dave": catalog.MD5Password("dave", "dave pw"), "erin": "",
		// made by PostgreSQL 15: CREATE USER pgmade PASSWORD 'interop pw'
		"pgmade": "SCRAM-SHA-256$4096:kVGivKiTI94YYkeSGppjqA==$dzx1VcTKqFLZV3BsniYz0PvTPcBSZz/CXVMdBJZPV2M=:CAoeQAeKLSbU8qhaQvMQHOPBn71KPate/BKdHgv159o="}
}()

func testPasswords(user string) (string, bool) {
	pw, ok := testRoles[user]
	return pw, ok
}

func TestSCRAMAuthentication(t *testing.T) {
	_, addr, env := startFake(t, Options{Passwords: testPasswords})
	ctx := context.Background()
	url := func(userinfo string) string { return "postgres://" + userinfo + "@" + addr + "/db?sslmode=disable" }

	conn, err := pgx.Connect(ctx, url("alice:s3cret%20p%C3%A4ssword"))
	if err != nil {
		t.Fatalf("right password refused: %v", err)
	}
	var n int32
	if err := conn.QueryRow(ctx, "select 7").Scan(&n); err != nil || n != 7 {
		t.Errorf("after auth: %d %v", n, err)
	}
	conn.Close(ctx)

	for _, userinfo := range []string{"carol:carol%20pw", "dave:dave%20pw", "pgmade:interop%20pw"} {
		conn, err := pgx.Connect(ctx, url(userinfo))
		if err != nil {
			t.Fatalf("%s refused: %v", userinfo, err)
		}
		conn.Close(ctx)
	}
	for _, userinfo := range []string{"alice:wrong", "bob:s3cret%20p%C3%A4ssword", "alice", "carol:wrong", "pgmade:interop", "dave:wrong", "erin:", "erin:x"} {
		_, err := pgx.Connect(ctx, url(userinfo))
		var pgErr *pgconn.PgError
		user, _, _ := strings.Cut(userinfo, ":")
		want := `password authentication failed for user "` + user + `"`
		if userinfo == "alice" {
			// pgx without a password gives up before answering.
			if err == nil {
				t.Errorf("%s: connected without a password", userinfo)
			}
			continue
		}
		if !errors.As(err, &pgErr) || pgErr.Code != "28P01" || pgErr.Severity != "FATAL" || pgErr.Message != want {
			t.Errorf("%s: got %v, want FATAL 28P01 %s", userinfo, err, want)
		}
	}
	env.mu.Lock()
	sessions := len(env.sessions)
	env.mu.Unlock()
	if sessions != 4 {
		t.Errorf("%d sessions started, want 4 (failed logins get none)", sessions)
	}
}

func TestSCRAMWithPsql(t *testing.T) {
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql not installed")
	}
	_, addr, _ := startFake(t, Options{Passwords: testPasswords})
	host, port, _ := net.SplitHostPort(addr)
	for _, tc := range []struct {
		user, password string
		want           string
		fails          bool
	}{
		{user: "alice", password: "s3cret pässword", want: "9\n"},
		{user: "alice", password: "nope", want: `password authentication failed for user "alice"`, fails: true},
		{user: "carol", password: "carol pw", want: "9\n"},
		{user: "carol", password: "nope", want: `password authentication failed for user "carol"`, fails: true},
		{user: "dave", password: "dave pw", want: "9\n"},
		{user: "dave", password: "nope", want: `password authentication failed for user "dave"`, fails: true},
		{user: "nobody", password: "nope", want: `password authentication failed for user "nobody"`, fails: true},
	} {
		cmd := exec.Command(psql, "-h", host, "-p", port, "-U", tc.user, "-X", "-A", "-t", "-w", "db", "-c", "select 9")
		cmd.Env = append(cmd.Environ(), "PGPASSWORD="+tc.password, "PGCONNECT_TIMEOUT=10", "PGSSLMODE=disable")
		out, err := cmd.CombinedOutput()
		if (err != nil) != tc.fails || !strings.Contains(string(out), tc.want) {
			t.Errorf("%s password %q: %v\n%s\nwant %q", tc.user, tc.password, err, out, tc.want)
		}
	}
}

// selfSignedTLS makes a server certificate for 127.0.0.1 and writes it
// to a PEM file for clients that verify it.
func selfSignedTLS(t *testing.T) (*tls.Config, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	pemPath := filepath.Join(t.TempDir(), "root.crt")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(pemPath, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}}, pemPath
}

func TestTLS(t *testing.T) {
	cfg, rootPEM := selfSignedTLS(t)
	_, addr, _ := startFake(t, Options{TLSConfig: cfg, Passwords: testPasswords})
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, "postgres://alice:s3cret%20p%C3%A4ssword@"+addr+"/db?sslmode=verify-full&sslrootcert="+rootPEM)
	if err != nil {
		t.Fatalf("TLS connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, ok := conn.PgConn().Conn().(*tls.Conn); !ok {
		t.Errorf("connection is %T, not TLS", conn.PgConn().Conn())
	}
	rows, err := conn.Query(ctx, "select * from generate_series(1, 1000)")
	if err != nil {
		t.Fatal(err)
	}
	sum := 0
	for rows.Next() {
		var v int32
		rows.Scan(&v)
		sum += int(v)
	}
	if rows.Err() != nil || sum != 500500 {
		t.Errorf("sum %d, %v", sum, rows.Err())
	}
	// Plain connections still work when the client does not ask for TLS.
	plain, err := pgx.Connect(ctx, "postgres://alice:s3cret%20p%C3%A4ssword@"+addr+"/db?sslmode=disable")
	if err != nil {
		t.Fatalf("plain connect: %v", err)
	}
	plain.Close(ctx)
}

// scramFirstRound starts a SCRAM exchange as user and returns the server's
// salt and iteration count, then sends a wrong proof and returns the final
// error response.
func scramFirstRound(t *testing.T, addr, user string) (salt, iter string, fail *pgproto3.ErrorResponse) {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	fe := pgproto3.NewFrontend(nc, nc)
	fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber, Parameters: map[string]string{"user": user, "database": "db"}})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	msg, err := fe.Receive()
	if sasl, ok := msg.(*pgproto3.AuthenticationSASL); err != nil || !ok || len(sasl.AuthMechanisms) != 1 || sasl.AuthMechanisms[0] != "SCRAM-SHA-256" {
		t.Fatalf("%s: first answer %#v, %v; want SASL SCRAM-SHA-256", user, msg, err)
	}
	const clientNonce = "rOprNGfwEbeRWgbNEkqO"
	fe.Send(&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256", Data: []byte("n,,n=,r=" + clientNonce)})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	msg, err = fe.Receive()
	cont, ok := msg.(*pgproto3.AuthenticationSASLContinue)
	if err != nil || !ok {
		t.Fatalf("%s: second answer %#v, %v", user, msg, err)
	}
	first := string(cont.Data)
	nonce := scramAttr(first, 'r')
	if !strings.HasPrefix(nonce, clientNonce) {
		t.Fatalf("%s: server nonce %q does not extend the client's", user, nonce)
	}
	proof := base64.StdEncoding.EncodeToString(make([]byte, 32))
	fe.Send(&pgproto3.SASLResponse{Data: []byte("c=biws,r=" + nonce + ",p=" + proof)})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	msg, err = fe.Receive()
	fail, ok = msg.(*pgproto3.ErrorResponse)
	if err != nil || !ok {
		t.Fatalf("%s: answer to a wrong proof %#v, %v", user, msg, err)
	}
	return scramAttr(first, 's'), scramAttr(first, 'i'), fail
}

// TestAuthRevealsNothing: an unknown user, a role without a password and a
// wrong password look the same on the wire: a SCRAM exchange with a salt
// that stays the same per user and 4096 iterations, then the same FATAL.
func TestAuthRevealsNothing(t *testing.T) {
	_, addr, _ := startFake(t, Options{Passwords: testPasswords})
	for _, user := range []string{"carol", "nobody", "erin"} {
		salt1, iter1, fail1 := scramFirstRound(t, addr, user)
		salt2, iter2, fail2 := scramFirstRound(t, addr, user)
		if salt1 == "" || salt1 != salt2 || iter1 != "4096" || iter2 != "4096" {
			t.Errorf("%s: salts %q %q, iterations %s %s; want one salt and 4096", user, salt1, salt2, iter1, iter2)
		}
		if raw, err := base64.StdEncoding.DecodeString(salt1); err != nil || len(raw) != 16 {
			t.Errorf("%s: salt %q is not 16 bytes (PostgreSQL's length): %v", user, salt1, err)
		}
		for _, f := range []*pgproto3.ErrorResponse{fail1, fail2} {
			want := `password authentication failed for user "` + user + `"`
			if f.Severity != "FATAL" || f.Code != "28P01" || f.Message != want || f.Detail != "" || f.Hint != "" {
				t.Errorf("%s: %+v; want only FATAL 28P01 %s", user, f, want)
			}
		}
	}
}

// TestMD5Raw: the MD5 challenge, computed by hand as libpq does.
func TestMD5Raw(t *testing.T) {
	_, addr, _ := startFake(t, Options{Passwords: testPasswords})
	for _, tc := range []struct {
		password string
		ok       bool
	}{{"dave pw", true}, {"wrong", false}} {
		nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
		fe := pgproto3.NewFrontend(nc, nc)
		fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber, Parameters: map[string]string{"user": "dave"}})
		_ = fe.Flush()
		msg, err := fe.Receive()
		challenge, isMD5 := msg.(*pgproto3.AuthenticationMD5Password)
		if err != nil || !isMD5 {
			t.Fatalf("got %#v, %v; want an MD5 challenge", msg, err)
		}
		inner := md5.Sum([]byte(tc.password + "dave"))
		outer := md5.Sum(append([]byte(hex.EncodeToString(inner[:])), challenge.Salt[:]...))
		fe.Send(&pgproto3.PasswordMessage{Password: "md5" + hex.EncodeToString(outer[:])})
		_ = fe.Flush()
		msg, err = fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		switch m := msg.(type) {
		case *pgproto3.AuthenticationOk:
			if !tc.ok {
				t.Errorf("wrong password accepted")
			}
		case *pgproto3.ErrorResponse:
			if tc.ok || m.Code != "28P01" {
				t.Errorf("%q: %+v", tc.password, m)
			}
		default:
			t.Errorf("%q: got %#v", tc.password, msg)
		}
		nc.Close()
	}
}

// TestTLSWithPsql: sslmode=require and verify-full (the CA in
// PGSSLROOTCERT) from psql; a wrong CA fails; a server without TLS answers
// SSLRequest with 'N', so sslmode=require fails and prefer falls back.
func TestTLSWithPsql(t *testing.T) {
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql not installed")
	}
	cfg, rootPEM := selfSignedTLS(t)
	_, otherRoot := selfSignedTLS(t)
	_, addr, _ := startFake(t, Options{TLSConfig: cfg, Passwords: testPasswords})
	_, plainAddr, _ := startFake(t, Options{})
	run := func(addr, sslmode, root string) (string, error) {
		host, port, _ := net.SplitHostPort(addr)
		cmd := exec.Command(psql, "-h", host, "-p", port, "-U", "carol", "-X", "-A", "-t", "-w", "db", "-c", "select 9")
		cmd.Env = append(cmd.Environ(), "PGPASSWORD=carol pw", "PGCONNECT_TIMEOUT=10", "PGSSLMODE="+sslmode, "PGSSLROOTCERT="+root)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for _, mode := range []string{"require", "verify-ca", "verify-full"} {
		if out, err := run(addr, mode, rootPEM); err != nil || out != "9\n" {
			t.Errorf("sslmode=%s: %v\n%s", mode, err, out)
		}
	}
	if out, err := run(addr, "verify-full", otherRoot); err == nil || !strings.Contains(out, "certificate verify failed") {
		t.Errorf("verify-full with the wrong CA: %v\n%s", err, out)
	}
	if out, err := run(plainAddr, "require", rootPEM); err == nil || !strings.Contains(out, "server does not support SSL") {
		t.Errorf("sslmode=require without TLS: %v\n%s", err, out)
	}
	if out, err := run(plainAddr, "prefer", rootPEM); err != nil || out != "9\n" {
		t.Errorf("sslmode=prefer without TLS: %v\n%s", err, out)
	}
}

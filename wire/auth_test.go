package wire

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
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
)

func testPasswords(user string) (string, bool) {
	if user == "alice" {
		return "s3cret pässword", true
	}
	return "", false
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

	for _, userinfo := range []string{"alice:wrong", "bob:s3cret%20p%C3%A4ssword", "alice"} {
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
	if sessions != 1 {
		t.Errorf("%d sessions started, want 1 (failed logins get none)", sessions)
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
		password string
		want     string
		fails    bool
	}{
		{password: "s3cret pässword", want: "9\n"},
		{password: "nope", want: `password authentication failed for user "alice"`, fails: true},
	} {
		cmd := exec.Command(psql, "-h", host, "-p", port, "-U", "alice", "-X", "-A", "-t", "-w", "db", "-c", "select 9")
		cmd.Env = append(cmd.Environ(), "PGPASSWORD="+tc.password, "PGCONNECT_TIMEOUT=10", "PGSSLMODE=disable")
		out, err := cmd.CombinedOutput()
		if (err != nil) != tc.fails || !strings.Contains(string(out), tc.want) {
			t.Errorf("password %q: %v\n%s\nwant %q", tc.password, err, out, tc.want)
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

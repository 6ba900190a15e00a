package main

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseFlags(t *testing.T) {
	cfg, err := parseFlags(nil, io.Discard)
	if err != nil || cfg.listen != "127.0.0.1:5433" || cfg.dataDir != "./streamsql-data" {
		t.Errorf("defaults: %+v, %v", cfg, err)
	}
	cfg, err = parseFlags([]string{"--listen", ":6000", "--data-dir=/tmp/x"}, io.Discard)
	if err != nil || cfg.listen != ":6000" || cfg.dataDir != "/tmp/x" {
		t.Errorf("explicit: %+v, %v", cfg, err)
	}
	if cfg, err := parseFlags(nil, io.Discard); err != nil || cfg.subscribeBufferBytes != 32<<20 || cfg.subscribeMemoryLimit != 256<<20 || cfg.subscribeSpillLimit != 1<<30 {
		t.Errorf("subscribe bounds' defaults: %+v, %v", cfg, err)
	}
	if cfg, err := parseFlags([]string{"--subscribe-buffer-bytes", "4MB", "--subscribe-memory-limit=1GB", "--subscribe-spill-limit", "100000"}, io.Discard); err != nil ||
		cfg.subscribeBufferBytes != 4<<20 || cfg.subscribeMemoryLimit != 1<<30 || cfg.subscribeSpillLimit != 100000 {
		t.Errorf("subscribe bounds: %+v, %v", cfg, err)
	}
	for _, bad := range [][]string{{"--subscribe-buffer-bytes", "0"}, {"--subscribe-memory-limit", "lots"}, {"--subscribe-spill-limit", "-1MB"}} {
		if _, err := parseFlags(bad, io.Discard); err == nil {
			t.Errorf("%v was accepted", bad)
		}
	}
	// The row bound was replaced by bytes: refused by name.
	if _, err := parseFlags([]string{"--subscribe-buffer-rows", "10"}, io.Discard); err == nil || !strings.Contains(err.Error(), "--subscribe-buffer-rows was removed") {
		t.Errorf("--subscribe-buffer-rows: %v", err)
	}
	if cfg, err := parseFlags([]string{"--clock", "manual"}, io.Discard); err != nil || cfg.clock != "manual" {
		t.Errorf("--clock manual: %+v, %v", cfg, err)
	}
	if cfg, err := parseFlags(nil, io.Discard); err != nil || cfg.clock != "wall" {
		t.Errorf("--clock default: %+v, %v", cfg, err)
	}
	if _, err := parseFlags([]string{"--clock", "sundial"}, io.Discard); err == nil {
		t.Error("--clock sundial was accepted")
	}
	if cfg, err := parseFlags([]string{"--recover-damaged"}, io.Discard); err != nil || !cfg.recoverDamaged {
		t.Errorf("--recover-damaged: %+v, %v", cfg, err)
	}
	if cfg, _ := parseFlags(nil, io.Discard); cfg.recoverDamaged {
		t.Error("--recover-damaged is on by default")
	}
	if _, err := parseFlags([]string{"extra"}, io.Discard); err == nil {
		t.Error("a stray argument was accepted")
	}
	if _, err := parseFlags([]string{"--nope"}, io.Discard); err == nil {
		t.Error("an unknown flag was accepted")
	}
	if _, err := parseFlags([]string{"--tls-cert", "c.pem"}, io.Discard); err == nil {
		t.Error("--tls-cert without --tls-key was accepted")
	}
	if cfg, err := parseFlags(nil, io.Discard); err != nil || cfg.auth != "trust" || cfg.user != "" {
		t.Errorf("auth default: %+v, %v", cfg, err)
	}
	if _, err := parseFlags([]string{"--auth", "peer"}, io.Discard); err == nil {
		t.Error("--auth peer was accepted")
	}
	if _, err := parseFlags([]string{"--tls-self-signed", "--tls-cert", "a", "--tls-key", "b"}, io.Discard); err == nil {
		t.Error("--tls-self-signed with --tls-cert was accepted")
	}
	t.Setenv("STREAMSQL_PASSWORD", "pw")
	cfg, err = parseFlags(nil, io.Discard)
	if err != nil || cfg.password != "pw" || cfg.user != "streamsql" || cfg.auth != "password" {
		t.Fatalf("password from the environment: %+v, %v", cfg, err)
	}
	if cfg, err := parseFlags([]string{"--auth=trust"}, io.Discard); err != nil || cfg.auth != "trust" {
		t.Errorf("explicit trust with a password: %+v, %v", cfg, err)
	}
	if _, err := cfg.wireOptions(nil, fakeRoles{}); err == nil {
		t.Error("--auth password without any password role was accepted")
	}
	opts, err := cfg.wireOptions(nil, fakeRoles{"alice": "md5x"})
	if err != nil || opts.Passwords == nil || opts.TLSConfig != nil {
		t.Fatalf("options: %+v, %v", opts, err)
	}
	if pw, ok := opts.Passwords("alice"); pw != "md5x" || !ok {
		t.Errorf("Passwords(alice) = %q, %v", pw, ok)
	}
	if _, err := (config{tlsCert: "/nonexistent.pem", tlsKey: "/nonexistent.key"}).wireOptions(nil, fakeRoles{}); err == nil {
		t.Error("a missing certificate was accepted")
	}
}

type fakeRoles map[string]string

func (f fakeRoles) LoginPassword(user string) (string, bool) { pw, ok := f[user]; return pw, ok }
func (f fakeRoles) PasswordRoles() int                       { return len(f) }

// TestSelfSignedCert: the certificate is generated once, reused, and
// verifies as its own root for localhost and 127.0.0.1.
func TestSelfSignedCert(t *testing.T) {
	dir := t.TempDir()
	cfg := config{dataDir: dir, listen: "127.0.0.1:5433", tlsSelfSigned: true, auth: "trust"}
	opts, err := cfg.wireOptions(nil, fakeRoles{})
	if err != nil || opts.TLSConfig == nil {
		t.Fatalf("self-signed: %+v, %v", opts, err)
	}
	certPEM, err := os.ReadFile(filepath.Join(dir, "server.crt"))
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(dir, "server.key")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("server.key: %v %v", st, err)
	}
	again, err := cfg.wireOptions(nil, fakeRoles{})
	if err != nil || !bytes.Equal(again.TLSConfig.Certificates[0].Certificate[0], opts.TLSConfig.Certificates[0].Certificate[0]) {
		t.Errorf("second start made a new certificate (%v)", err)
	}
	block, _ := pem.Decode(certPEM)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	for _, host := range []string{"localhost", "127.0.0.1"} {
		if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: host}); err != nil {
			t.Errorf("verify for %s: %v", host, err)
		}
	}
}

// TestPasswordFile: the password comes from a private file, its line
// ending trimmed; a file others may read is refused; $STREAMSQL_PASSWORD
// is removed from the environment once read.
func TestPasswordFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "pw")
	if err := os.WriteFile(p, []byte("s3cret pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := parseFlags([]string{"--password-file", p}, io.Discard)
	if err != nil || cfg.password != "s3cret pw" || cfg.user != "streamsql" || cfg.auth != "password" {
		t.Fatalf("--password-file: %+v %v", cfg, err)
	}
	if _, err := parseFlags([]string{"--password-file", p, "--password", "x"}, io.Discard); err == nil {
		t.Error("--password with --password-file was accepted")
	}
	if err := os.Chmod(p, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := parseFlags([]string{"--password-file", p}, io.Discard); err == nil {
		t.Error("a group-readable password file was accepted")
	}
	if _, err := parseFlags([]string{"--password-file", filepath.Join(dir, "none")}, io.Discard); err == nil {
		t.Error("a missing password file was accepted")
	}
	t.Setenv("STREAMSQL_PASSWORD", "from env")
	cfg, err = parseFlags(nil, io.Discard)
	if err != nil || cfg.password != "from env" {
		t.Fatalf("$STREAMSQL_PASSWORD: %+v %v", cfg, err)
	}
	if _, set := os.LookupEnv("STREAMSQL_PASSWORD"); set {
		t.Error("$STREAMSQL_PASSWORD is still in the environment")
	}
	if cfg, err := parseFlags([]string{"--file-source-dir", dir}, io.Discard); err != nil || cfg.fileSourceDir != dir {
		t.Errorf("--file-source-dir: %+v %v", cfg, err)
	}
	if _, err := parseFlags([]string{"--file-source-dir", p}, io.Discard); err == nil {
		t.Error("--file-source-dir naming a file was accepted")
	}
}

func TestConnectionFlags(t *testing.T) {
	cfg, err := parseFlags(nil, io.Discard)
	if err != nil || cfg.maxConnections != 100 || cfg.superuserReserved != 3 || cfg.authTimeout != time.Minute || cfg.requireTLS {
		t.Fatalf("defaults: %+v, %v", cfg, err)
	}
	if got := cfg.serverSettings(); got["max_connections"] != "100" || got["superuser_reserved_connections"] != "3" || got["authentication_timeout"] != "1min" {
		t.Errorf("settings %v", got)
	}
	cfg, err = parseFlags([]string{"--max-connections", "10", "--superuser-reserved-connections", "2", "--authentication-timeout", "90s"}, io.Discard)
	if err != nil || cfg.maxConnections != 10 || cfg.superuserReserved != 2 || cfg.serverSettings()["authentication_timeout"] != "90s" {
		t.Errorf("explicit: %+v, %v", cfg, err)
	}
	opts, err := cfg.wireOptions(nil, nil)
	if err != nil || opts.MaxConnections != 10 || opts.SuperuserReservedConnections != 2 || opts.AuthenticationTimeout != 90*time.Second {
		t.Errorf("wire options %+v, %v", opts, err)
	}
	for _, bad := range [][]string{
		{"--max-connections", "0"},
		{"--max-connections", "3", "--superuser-reserved-connections", "3"},
		{"--superuser-reserved-connections", "-1"},
		{"--authentication-timeout", "0s"},
		{"--authentication-timeout", "1h"},
	} {
		if _, err := parseFlags(bad, io.Discard); err == nil {
			t.Errorf("%v was accepted", bad)
		}
	}
	_, err = parseFlags([]string{"--require-tls"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--require-tls") {
		t.Errorf("--require-tls without a certificate: %v", err)
	}
	if cfg, err := parseFlags([]string{"--require-tls", "--tls-self-signed"}, io.Discard); err != nil || !cfg.requireTLS {
		t.Errorf("--require-tls --tls-self-signed: %v", err)
	}
}

func TestTrustWarning(t *testing.T) {
	loop := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5433}
	wild := &net.TCPAddr{IP: net.IPv4zero, Port: 5433}
	if w := trustWarning("trust", loop); w != "" {
		t.Errorf("loopback: %q", w)
	}
	if w := trustWarning("password", wild); w != "" {
		t.Errorf("password: %q", w)
	}
	if w := trustWarning("trust", wild); !strings.Contains(w, "--auth trust") || !strings.Contains(w, "0.0.0.0:5433") {
		t.Errorf("trust on 0.0.0.0: %q", w)
	}
}

func TestHBAFileFlag(t *testing.T) {
	if _, err := parseFlags([]string{"--hba-file", "x", "--auth", "trust"}, io.Discard); err == nil {
		t.Error("--hba-file with --auth was accepted")
	}
	path := filepath.Join(t.TempDir(), "hba.conf")
	if err := os.WriteFile(path, []byte("hostssl all all all scram-sha-256\nhost all guest 127.0.0.1 trust\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := parseFlags([]string{"--hba-file", path}, io.Discard)
	if err != nil || cfg.auth != "hba" {
		t.Fatalf("%+v %v", cfg, err)
	}
	if _, err := cfg.wireOptions(nil, fakeRoles{}); err == nil || !strings.Contains(err.Error(), "--hba-file") {
		t.Errorf("password rules without password roles: %v", err)
	}
	opts, err := cfg.wireOptions(nil, fakeRoles{"alice": "md5x"})
	if err != nil || len(opts.HBA) != 2 || opts.Passwords == nil {
		t.Errorf("options %+v, %v", opts, err)
	}
	if err := os.WriteFile(path, []byte("host all all all ident\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.wireOptions(nil, fakeRoles{"alice": "md5x"}); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("bad rule: %v", err)
	}
}

func TestMemoryFlags(t *testing.T) {
	cfg, err := parseFlags(nil, io.Discard)
	if err != nil || cfg.memoryLimit != 0 || cfg.queryMemoryLimit != 1<<30 {
		t.Fatalf("defaults: %+v, %v", cfg, err)
	}
	cfg, err = parseFlags([]string{"--memory-limit", "16GB", "--query-memory-limit=512MiB"}, io.Discard)
	if err != nil || cfg.memoryLimit != 16<<30 || cfg.queryMemoryLimit != 512<<20 {
		t.Fatalf("explicit: %+v, %v", cfg, err)
	}
	if cfg, err := parseFlags([]string{"--memory-limit", "unlimited"}, io.Discard); err != nil || cfg.memoryLimit != -1 {
		t.Fatalf("unlimited: %+v, %v", cfg, err)
	}
	for _, bad := range []string{"lots", "12XB", "10kB", "-5GB"} {
		if _, err := parseFlags([]string{"--query-memory-limit", bad}, io.Discard); err == nil {
			t.Errorf("--query-memory-limit %s was accepted", bad)
		}
	}
}

// TestHugePagesFlag: huge pages are on unless --huge-pages=false.
func TestHugePagesFlag(t *testing.T) {
	if cfg, err := parseFlags(nil, io.Discard); err != nil || !cfg.hugePages {
		t.Fatalf("default: hugePages %v, %v", cfg.hugePages, err)
	}
	if cfg, err := parseFlags([]string{"--huge-pages=false"}, io.Discard); err != nil || cfg.hugePages {
		t.Fatalf("--huge-pages=false: hugePages %v, %v", cfg.hugePages, err)
	}
}

package main

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"io"
	"os"
	"path/filepath"
	"testing"
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
	if cfg, err := parseFlags([]string{"--subscribe-buffer-rows", "10"}, io.Discard); err != nil || cfg.subscribeBufferRows != 10 {
		t.Errorf("--subscribe-buffer-rows: %+v, %v", cfg, err)
	}
	if _, err := parseFlags([]string{"--subscribe-buffer-rows", "0"}, io.Discard); err == nil {
		t.Error("--subscribe-buffer-rows 0 was accepted")
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

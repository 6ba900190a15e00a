package main

import (
	"io"
	"net"
	"strings"
	"testing"
)

func TestHTTPFlag(t *testing.T) {
	cfg, err := parseFlags(nil, io.Discard)
	if err != nil || cfg.httpAddr != "127.0.0.1:5434" || !cfg.httpDefault {
		t.Errorf("default: %q %v, %v", cfg.httpAddr, cfg.httpDefault, err)
	}
	cfg, err = parseFlags([]string{"--http", ""}, io.Discard)
	if err != nil || cfg.httpAddr != "" || cfg.httpDefault {
		t.Errorf("off: %q %v, %v", cfg.httpAddr, cfg.httpDefault, err)
	}
	cfg, err = parseFlags([]string{"--http=127.0.0.1:9999"}, io.Discard)
	if err != nil || cfg.httpAddr != "127.0.0.1:9999" || cfg.httpDefault {
		t.Errorf("given: %q %v, %v", cfg.httpAddr, cfg.httpDefault, err)
	}
}

// TestStartHTTPBusyPort: a busy default port is a warning, a busy given
// one an error naming --http.
func TestStartHTTPBusyPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var logged []string
	logf := func(f string, a ...any) { logged = append(logged, f) }
	cfg := config{httpAddr: l.Addr().String(), httpDefault: true, auth: "trust"}
	if h, err := startHTTP(cfg, nil, nil, logf); err != nil || h != nil || len(logged) != 1 || !strings.Contains(logged[0], "no HTTP endpoints") {
		t.Errorf("default busy: %v %v %q", h, err, logged)
	}
	cfg.httpDefault = false
	if _, err := startHTTP(cfg, nil, nil, logf); err == nil || !strings.Contains(err.Error(), "--http "+cfg.httpAddr) {
		t.Errorf("given busy: %v", err)
	}
	if !isLoopback(l.Addr()) || isLoopback(&net.TCPAddr{IP: net.IPv4zero}) {
		t.Error("isLoopback")
	}
}

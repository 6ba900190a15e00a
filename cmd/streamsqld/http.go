package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/web"
	"github.com/streamsql/streamsql/wire"
)

// httpServer is streamsqld's HTTP endpoints (--http), or nil when off.
type httpServer struct {
	srv *http.Server
	l   net.Listener
}

// startHTTP listens on cfg.httpAddr and serves the web endpoints of eng.
// Under --auth password (or --hba-file) every request needs a role's
// name and password (HTTP basic); under --auth trust only a loopback
// address is accepted, since anyone reaching it would read the server's
// metrics and profiles. With tlsConfig set the endpoints speak HTTPS.
func startHTTP(cfg config, eng *engine.Engine, tlsConfig *tls.Config, logf func(string, ...any)) (*httpServer, error) {
	if cfg.httpAddr == "" {
		return nil, nil
	}
	opts := web.Options{Logf: logf}
	if cfg.auth == "password" || cfg.auth == "hba" {
		opts.Authenticate = func(user, password string) bool {
			stored, ok := eng.LoginPassword(user)
			return ok && wire.CheckPassword(stored, user, password)
		}
	}
	l, err := net.Listen("tcp", cfg.httpAddr)
	if err != nil && cfg.httpDefault {
		// Another streamsqld on this machine has the default port.
		logf("WARNING: no HTTP endpoints (dashboard, /metrics): %v; give --http ADDR to choose another address", err)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("--http %s: %w", cfg.httpAddr, err)
	}
	if opts.Authenticate == nil && !isLoopback(l.Addr()) {
		l.Close()
		return nil, fmt.Errorf("--http %s is not a loopback address and --auth is trust: anyone reaching it would read the server's metrics and profiles; use --auth password, --http 127.0.0.1:PORT, or --http '' to turn it off", cfg.httpAddr)
	}
	scheme := "http"
	if tlsConfig != nil {
		l = tls.NewListener(l, tlsConfig)
		scheme = "https"
	} else if opts.Authenticate != nil && !isLoopback(l.Addr()) {
		logf("WARNING: --http %s is not a loopback address and TLS is off: HTTP basic authentication sends passwords in clear text; configure --tls-cert/--tls-key or --tls-self-signed", cfg.httpAddr)
	}
	h := &httpServer{l: l, srv: &http.Server{Handler: web.New(eng, opts).Handler(), ReadHeaderTimeout: 10 * time.Second}}
	go func() {
		if err := h.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logf("http: %v", err)
		}
	}()
	fmt.Printf("streamsqld dashboard: %s://%s/ (metrics at /metrics)\n", scheme, l.Addr())
	return h, nil
}

// close stops serving; requests in flight are cut off.
func (h *httpServer) close() {
	if h != nil {
		h.srv.Close()
	}
}

// isLoopback reports whether addr is a loopback IP address.
func isLoopback(addr net.Addr) bool {
	ta, ok := addr.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

package web

import (
	"crypto/sha256"
	"net/http"
	"net/http/pprof"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/streamsql/streamsql/engine"
)

// Engine is what the server reads (*engine.Engine).
type Engine interface {
	Observe() engine.Overview
	SetObserver(engine.Observer)
}

// Options configure a Server.
type Options struct {
	// Authenticate, if set, checks the user name and password of HTTP
	// basic authentication on every request (streamsqld --auth password:
	// the roles' passwords); nil serves everyone.
	Authenticate func(user, password string) bool
	// Logf receives operational messages; nil discards them.
	Logf func(format string, args ...any)
}

// Server is the HTTP endpoints of one engine.
type Server struct {
	eng     Engine
	opts    Options
	reg     *prometheus.Registry
	mux     *http.ServeMux
	events  *eventMetrics
	authMu  sync.Mutex
	authOK  map[[32]byte]time.Time // credentials checked recently, until when
	started time.Time
}

// authCache is how long checked credentials are trusted without
// deriving the password's key again (a SCRAM check costs a PBKDF2).
const authCache = time.Minute

// New makes the endpoints of eng and installs itself as eng's observer.
func New(eng Engine, opts Options) *Server {
	s := &Server{eng: eng, opts: opts, reg: prometheus.NewRegistry(), mux: http.NewServeMux(),
		authOK: map[[32]byte]time.Time{}, started: time.Now()}
	s.events = newEventMetrics()
	s.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&engineCollector{s: s}, s.events.barrier, s.events.ckptDur, s.events.ckptFail, s.events.sinkDur)
	eng.SetObserver(s.events)

	s.mux.Handle("GET /metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{ErrorLog: s, Registry: s.reg}))
	s.mux.HandleFunc("/debug/pprof/", pprof.Index)
	s.mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	s.mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	s.mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	s.mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	s.routeAPI()
	s.routeAssets()
	return s
}

// Println implements promhttp.Logger.
func (s *Server) Println(v ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf("http /metrics: %v", v)
	}
}

// Handler returns the server's handler, with authentication when
// Options.Authenticate is set.
func (s *Server) Handler() http.Handler {
	if s.opts.Authenticate == nil {
		return s.mux
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pw, ok := r.BasicAuth()
		if !ok || !s.checkAuth(user, pw) {
			w.Header().Set("WWW-Authenticate", `Basic realm="streamsqld", charset="UTF-8"`)
			http.Error(w, "401 unauthorized: log in as a streamsqld role with its password", http.StatusUnauthorized)
			return
		}
		s.mux.ServeHTTP(w, r)
	})
}

// checkAuth checks credentials, remembering good ones for authCache.
func (s *Server) checkAuth(user, pw string) bool {
	k := sha256.Sum256([]byte(user + "\x00" + pw))
	now := time.Now()
	s.authMu.Lock()
	until, ok := s.authOK[k]
	s.authMu.Unlock()
	if ok && now.Before(until) {
		return true
	}
	if !s.opts.Authenticate(user, pw) {
		return false
	}
	s.authMu.Lock()
	for c, t := range s.authOK { // drop stale entries; the map stays small
		if now.After(t) {
			delete(s.authOK, c)
		}
	}
	s.authOK[k] = now.Add(authCache)
	s.authMu.Unlock()
	return true
}

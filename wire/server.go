package wire

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/streamsql/streamsql/engine"
)

// Options configure a Server.
type Options struct {
	// Logf receives connection-level log lines; nil discards them.
	Logf func(format string, args ...any)
	// MaxMessageSize bounds one protocol message (default 64 MiB).
	MaxMessageSize int
	// TLSConfig, when set, lets clients upgrade to TLS with SSLRequest;
	// otherwise SSLRequest is declined and connections are plain.
	TLSConfig *tls.Config
	// Passwords, when set, makes every connection authenticate (auth.go)
	// against the stored password it returns for the user, as PostgreSQL
	// stores rolpassword: a SCRAM-SHA-256 verifier (SCRAM exchange), an MD5
	// hash "md5..." (MD5 challenge), or plain text (SCRAM). ok false (no such
	// user) or "" (no password, or expired) fails like a wrong password.
	// When nil every user is accepted without a password. Called from
	// connection goroutines concurrently.
	Passwords func(user string) (stored string, ok bool)
	// MaxConnections bounds the connections, counted from accept (default
	// DefaultMaxConnections); SuperuserReservedConnections of them are
	// for superusers only (limits.go).
	MaxConnections               int
	SuperuserReservedConnections int
	// AuthenticationTimeout closes a connection that has not completed its
	// startup and authentication by then (default
	// DefaultAuthenticationTimeout).
	AuthenticationTimeout time.Duration
	// RequireTLS refuses connections that did not start TLS (FATAL 28000,
	// as a pg_hba.conf without a matching "host" line); it needs TLSConfig.
	RequireTLS bool
	// HBA, when set, decides per connection, as pg_hba.conf (hba.go): the
	// first matching rule's method, FATAL 28000 when none matches or it is
	// reject. Methods md5 and scram-sha-256 need Passwords.
	HBA []HBARule
	// FailedLoginDelay is the first delay after a failed password; it
	// doubles per recent failure of the user or client address, up to
	// MaxFailedLoginDelay (throttle.go). Defaults 100 ms and 5 s; negative:
	// no delay.
	FailedLoginDelay, MaxFailedLoginDelay time.Duration
}

// DefaultMaxMessageSize is the message size limit when Options.MaxMessageSize is 0.
const DefaultMaxMessageSize = 64 << 20

// SessionFactory starts the engine session for a new connection. user and
// database come from the startup message (database defaults to user); params
// are all the startup parameters the client sent.
type SessionFactory func(user, database string, params map[string]string) (engine.SessionAPI, error)

// Server serves the PostgreSQL protocol. Each connection runs on its own
// goroutine with its own session; the Server itself is safe for concurrent use.
type Server struct {
	newSession SessionFactory
	opts       Options

	ctx    context.Context // canceled by Close; parent of every statement context
	cancel context.CancelFunc

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	live      map[*conn]struct{} // every connection, from accept to close
	conns     map[uint32]*conn   // by process id (BackendKeyData), once started
	nextPID   uint32
	closed    bool
	wg        sync.WaitGroup
	// slots counts the connections holding a connection slot (limits.go).
	slots int
	// rejecting counts the goroutines telling clients "too many clients".
	rejecting atomic.Int32
	throttle  *throttle
	flood     floodLog
	// sleep waits for the accept backoff and failed-login delays; tests
	// replace it before Serve.
	sleep func(ctx context.Context, d time.Duration) bool
}

// NewServer returns a server whose connections get sessions of eng.
func NewServer(eng *engine.Engine, opts Options) *Server {
	return NewServerWith(func(user, db string, params map[string]string) (engine.SessionAPI, error) {
		return eng.NewSession(user, db, params)
	}, opts)
}

// NewServerWith returns a server whose connections get their sessions from
// factory. Tests use it to put a fake session behind the protocol.
func NewServerWith(factory SessionFactory, opts Options) *Server {
	if opts.MaxMessageSize <= 0 {
		opts.MaxMessageSize = DefaultMaxMessageSize
	}
	if opts.MaxConnections <= 0 {
		opts.MaxConnections = DefaultMaxConnections
	}
	if opts.AuthenticationTimeout <= 0 {
		opts.AuthenticationTimeout = DefaultAuthenticationTimeout
	}
	ctx, cancel := context.WithCancel(context.Background())
	var seed [4]byte
	_, _ = rand.Read(seed[:])
	return &Server{
		newSession: factory,
		opts:       opts,
		ctx:        ctx,
		cancel:     cancel,
		listeners:  map[net.Listener]struct{}{},
		live:       map[*conn]struct{}{},
		conns:      map[uint32]*conn{},
		throttle:   newThrottle(opts.FailedLoginDelay, opts.MaxFailedLoginDelay),
		sleep:      sleepCtx,
		// Start process ids somewhere in PostgreSQL's usual pid range.
		nextPID: 1000 + binary.BigEndian.Uint32(seed[:])%1_000_000,
	}
}

// ErrServerClosed is returned by Serve after Close.
var ErrServerClosed = errors.New("wire: server closed")

// Serve accepts connections on l until Close; each connection gets its own
// goroutine and engine session. It returns ErrServerClosed after Close, or
// the listener's error when it fails for good; temporary accept errors
// (out of file descriptors...) are logged and retried after a backoff
// (limits.go).
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrServerClosed
	}
	s.listeners[l] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
	}()
	var backoff time.Duration
	for {
		nc, err := l.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return ErrServerClosed
			}
			if !temporaryAcceptError(err) {
				return err
			}
			backoff = nextBackoff(backoff)
			s.floodLogf("wire: accept error: %v; retrying in %s", err, backoff)
			if !s.sleep(s.ctx, backoff) {
				return ErrServerClosed
			}
			continue
		}
		backoff = 0
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			return ErrServerClosed
		}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			s.serveConn(nc)
		}()
	}
}

// closeGrace is how long Close lets connections say goodbye (FATAL 57P01)
// before it closes their sockets.
const closeGrace = 5 * time.Second

// Close stops accepting, ends every connection (running statements are
// canceled; clients get FATAL 57P01 "terminating connection due to
// administrator command", as from PostgreSQL's fast shutdown), which closes
// their sessions, and waits for them.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.wg.Wait()
		return nil
	}
	s.closed = true
	for l := range s.listeners {
		l.Close()
	}
	// closing() must hold before any connection wakes up, or one woken
	// by its deadline could end without its goodbye (FATAL 57P01).
	s.cancel()
	// Wake connections blocked reading from their clients; give writes a
	// moment so the goodbye can still be sent.
	now := time.Now()
	for c := range s.live {
		_ = c.raw.SetReadDeadline(now)
		_ = c.raw.SetWriteDeadline(now.Add(closeGrace))
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(closeGrace):
		s.mu.Lock()
		for c := range s.live {
			c.raw.Close()
		}
		s.mu.Unlock()
		<-done
	}
	return nil
}

// closing reports whether Close has begun.
func (s *Server) closing() bool { return s.ctx.Err() != nil }

// untrack forgets a connection and frees its slot.
func (s *Server) untrack(c *conn) {
	s.mu.Lock()
	delete(s.live, c)
	if c.holdsSlot {
		c.holdsSlot = false
		s.slots--
	}
	s.mu.Unlock()
}

func (s *Server) logf(format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf(format, args...)
	}
}

// pidSession is implemented by sessions that have their own process id
// (pg_backend_pid); BackendKeyData then announces the same number.
type pidSession interface{ PID() int32 }

// register gives c a process id and secret key and makes it cancelable.
// It returns false when the server is closing.
func (s *Server) register(c *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if ps, ok := c.sess.(pidSession); ok {
		if pid := uint32(ps.PID()); pid > 0 && s.conns[pid] == nil {
			c.pid = pid
		}
	}
	for c.pid == 0 {
		s.nextPID++
		if _, used := s.conns[s.nextPID]; !used && s.nextPID != 0 {
			c.pid = s.nextPID
		}
	}
	_, _ = rand.Read(c.secret[:])
	s.conns[c.pid] = c
	c.setSignals() // activity.go
	return true
}

func (s *Server) unregister(c *conn) {
	s.mu.Lock()
	if s.conns[c.pid] == c {
		delete(s.conns, c.pid)
	}
	s.mu.Unlock()
}

// cancelRequest cancels the running statement of the connection with this
// process id when the secret matches; anything else is ignored, as in
// PostgreSQL.
func (s *Server) cancelRequest(pid uint32, secret []byte) {
	s.mu.Lock()
	c := s.conns[pid]
	s.mu.Unlock()
	if c == nil || subtle.ConstantTimeCompare(c.secret[:], secret) != 1 {
		s.logf("wire: ignored cancel request for pid %d", pid)
		return
	}
	c.cancelRunning()
}

package wire

import (
	"net"

	"github.com/streamsql/streamsql/engine"
)

// Options configure a Server.
type Options struct {
	// Logf receives connection-level log lines; nil discards them.
	Logf func(format string, args ...any)
	// MaxMessageSize bounds one protocol message (default 64 MiB).
	MaxMessageSize int
}

// Server serves the PostgreSQL protocol for an engine. STUB until the wire lands.
type Server struct{}

// NewServer returns a server for eng.
func NewServer(eng *engine.Engine, opts Options) *Server { return &Server{} }

// Serve accepts connections on l until Close; each connection gets its own
// goroutine and engine session.
func (s *Server) Serve(l net.Listener) error { return nil }

// Close stops accepting, closes open connections and waits for them.
func (s *Server) Close() error { return nil }

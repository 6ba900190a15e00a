package engine

import (
	"context"

	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// Engine is the database: catalog, storage and the sessions using them.
// Safe for concurrent use. STUB until the engine lands.
type Engine struct{ cfg Config }

// Open opens (creating if needed) the data directory and recovers its state.
func Open(cfg Config) (*Engine, error) { return &Engine{cfg: cfg}, nil }

// Close stops the engine; sessions must be closed first.
func (e *Engine) Close() error { return nil }

// NewSession starts a session for a connection. params are the startup
// parameters the client sent (application_name, client_encoding, DateStyle...).
func (e *Engine) NewSession(user, database string, params map[string]string) (*Session, error) {
	return &Session{}, nil
}

// Session is one connection's state. Used by one goroutine at a time.
type Session struct{}

var _ SessionAPI = (*Session)(nil)

// Prepare implements SessionAPI.
func (s *Session) Prepare(ctx context.Context, stmt sql.Statement, paramOIDs []uint32) (*Prepared, error) {
	return nil, pgerr.Unsupported("not implemented yet")
}

// Execute implements SessionAPI.
func (s *Session) Execute(ctx context.Context, p *Prepared, params []types.Value) (*Result, error) {
	return nil, pgerr.Unsupported("not implemented yet")
}

// TxStatus implements SessionAPI.
func (s *Session) TxStatus() TxStatus { return 'I' }

// Format implements SessionAPI.
func (s *Session) Format() types.FormatOptions { return types.DefaultFormat }

// ParamStatus implements SessionAPI.
func (s *Session) ParamStatus() map[string]string { return nil }

// Close implements SessionAPI.
func (s *Session) Close() {}

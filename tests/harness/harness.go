package harness

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync"
	"testing"

	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/exec/dataflow"
	"github.com/streamsql/streamsql/tests/slt"
	"github.com/streamsql/streamsql/wire"
)

// Server is an in-process streamsql: engine.Open on a data directory and a
// wire.Server on 127.0.0.1. Its processing time is a manual clock
// (engine.NewManualClock), kept across restarts, which only ADVANCE CLOCK
// moves, so that idle_timeout, EARLY EVERY and EMIT EVERY give the same
// results on every run. Its methods are safe for concurrent use.
type Server struct {
	dataDir string
	clock   *dataflow.ManualClock

	mu   sync.Mutex
	eng  *engine.Engine
	srv  *wire.Server
	addr string
	done chan error // Serve's result
}

// Start starts a server on dataDir (created if needed) and closes it when the
// test ends. It fails the test if the server cannot start.
func Start(t testing.TB, dataDir string) *Server {
	t.Helper()
	s, err := New(dataDir)
	if err != nil {
		t.Fatalf("start streamsql: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close streamsql: %v", err)
		}
	})
	return s
}

// New starts a server on dataDir (created if needed) listening on a free
// loopback port. The caller must Close it.
func New(dataDir string) (*Server, error) {
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	s := &Server{dataDir: dataDir, clock: engine.NewManualClock()}
	if err := s.start("127.0.0.1:0"); err != nil {
		return nil, err
	}
	return s, nil
}

// Addr is the server's host:port.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// ConnString is a libpq connection string for the server.
func (s *Server) ConnString() string {
	host, port, _ := net.SplitHostPort(s.Addr())
	return fmt.Sprintf("host=%s port=%s user=streamsql password=streamsql dbname=streamsql sslmode=disable", host, port)
}

// DataDir is the server's data directory.
func (s *Server) DataDir() string { return s.dataDir }

// Restart closes the server (connections, then the engine) and opens it
// again on the same data directory, on the same port when it is still free.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	addr := s.addr
	if err := s.stop(); err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	if err := s.start(addr); err != nil {
		if err2 := s.start("127.0.0.1:0"); err2 != nil {
			return fmt.Errorf("restart: %w", err)
		}
	}
	return nil
}

// Close stops the server. Closing twice is harmless.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stop()
}

// start opens the engine and serves on addr; s.mu is held (or s is new).
func (s *Server) start(addr string) error {
	eng, err := engine.Open(engine.Config{DataDir: s.dataDir, Clock: s.clock, CheckpointInterval: -1}) // CHECKPOINT only: results must not depend on timing
	if err != nil {
		return fmt.Errorf("open engine: %w", err)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		eng.Close()
		return fmt.Errorf("listen: %w", err)
	}
	srv := wire.NewServer(eng, wire.Options{})
	done := make(chan error, 1)
	go func() {
		err := srv.Serve(l)
		l.Close() // Serve returning early (an error) must not leave it open
		done <- err
	}()
	s.eng, s.srv, s.addr, s.done = eng, srv, l.Addr().String(), done
	return nil
}

// stop closes the wire server and the engine; s.mu is held.
func (s *Server) stop() error {
	if s.eng == nil {
		return nil
	}
	err := s.srv.Close()
	<-s.done
	if e := s.eng.Close(); e != nil && err == nil {
		err = e
	}
	s.eng, s.srv = nil, nil
	return err
}

// Backend is an slt.Backend that gives every file a fresh in-process server
// on a new temporary data directory under Dir ("" : the system temp dir).
// It is safe for concurrent use; each DB it returns owns its server and
// removes the data directory on Close.
type Backend struct {
	Dir string
}

// NewDB implements slt.Backend.
func (b *Backend) NewDB(ctx context.Context, name string) (slt.DB, error) {
	dir, err := os.MkdirTemp(b.Dir, "streamsql-slt-")
	if err != nil {
		return nil, fmt.Errorf("temp data dir: %w", err)
	}
	s, err := New(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &fileDB{s: s}, nil
}

// fileDB is one file's server; Close discards its data.
type fileDB struct{ s *Server }

func (d *fileDB) ConnString() string                { return d.s.ConnString() }
func (d *fileDB) Restart(ctx context.Context) error { return d.s.Restart() }

func (d *fileDB) Close() error {
	err := d.s.Close()
	if e := os.RemoveAll(d.s.DataDir()); e != nil && err == nil {
		err = e
	}
	return err
}

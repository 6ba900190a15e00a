package slt

import (
	"context"
	"net"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// fakeResult is what the fake server answers to one SQL text.
type fakeResult struct {
	cols []string
	rows [][]*string // nil entry: NULL
	tag  string
	err  *pgproto3.ErrorResponse
	drop bool // close the connection instead of answering
}

// fakeServer speaks just enough of the protocol (startup without
// authentication, simple Query) to answer canned results; unknown SQL gets
// a syntax error. It lets the runner be tested without a database.
type fakeServer struct {
	t       *testing.T
	l       net.Listener
	answers map[string]fakeResult

	mu       sync.Mutex
	seen     []string // SQL received, in order
	restarts int
	dbs      int
}

func newFakeServer(t *testing.T, answers map[string]fakeResult) *fakeServer {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeServer{t: t, l: l, answers: answers}
	t.Cleanup(func() { l.Close() })
	go s.serve()
	return s
}

func (s *fakeServer) serve() {
	for {
		c, err := s.l.Accept()
		if err != nil {
			return
		}
		go s.conn(c)
	}
}

func (s *fakeServer) conn(c net.Conn) {
	defer c.Close()
	be := pgproto3.NewBackend(c, c)
	for {
		msg, err := be.ReceiveStartupMessage()
		if err != nil {
			return
		}
		if _, ok := msg.(*pgproto3.SSLRequest); ok {
			if _, err := c.Write([]byte{'N'}); err != nil {
				return
			}
			continue
		}
		break
	}
	be.Send(&pgproto3.AuthenticationOk{})
	be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
	if be.Flush() != nil {
		return
	}
	for {
		msg, err := be.Receive()
		if err != nil {
			return
		}
		q, ok := msg.(*pgproto3.Query)
		if !ok {
			return
		}
		s.mu.Lock()
		s.seen = append(s.seen, q.String)
		s.mu.Unlock()
		a, ok := s.answers[q.String]
		switch {
		case !ok:
			be.Send(&pgproto3.ErrorResponse{Severity: "ERROR", Code: "42601", Message: "syntax error"})
		case a.drop:
			return
		case a.err != nil:
			be.Send(a.err)
		default:
			if a.cols != nil {
				fields := make([]pgproto3.FieldDescription, len(a.cols))
				for i, name := range a.cols {
					fields[i] = pgproto3.FieldDescription{Name: []byte(name), DataTypeOID: 25, DataTypeSize: -1, TypeModifier: -1}
				}
				be.Send(&pgproto3.RowDescription{Fields: fields})
				for _, r := range a.rows {
					vals := make([][]byte, len(r))
					for i, v := range r {
						if v != nil {
							vals[i] = []byte(*v)
						}
					}
					be.Send(&pgproto3.DataRow{Values: vals})
				}
			}
			tag := a.tag
			if tag == "" {
				tag = "SELECT"
			}
			be.Send(&pgproto3.CommandComplete{CommandTag: []byte(tag)})
		}
		be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
		if be.Flush() != nil {
			return
		}
	}
}

func (s *fakeServer) sql() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

// The fake server is its own Backend and DB: one shared "database".

func (s *fakeServer) NewDB(ctx context.Context, name string) (DB, error) {
	s.mu.Lock()
	s.dbs++
	s.mu.Unlock()
	return s, nil
}

func (s *fakeServer) ConnString() string {
	host, port, _ := net.SplitHostPort(s.l.Addr().String())
	return "host=" + host + " port=" + port + " user=u dbname=d sslmode=disable"
}

func (s *fakeServer) Restart(ctx context.Context) error {
	s.mu.Lock()
	s.restarts++
	s.mu.Unlock()
	return nil
}

func (s *fakeServer) Close() error { return nil }

func str(s string) *string { return &s }

// rowsOf builds text rows; "NULL" stands for SQL NULL.
func rowsOf(rows ...[]string) [][]*string {
	out := make([][]*string, len(rows))
	for i, r := range rows {
		out[i] = make([]*string, len(r))
		for j, v := range r {
			if v != "NULL" {
				out[i][j] = str(v)
			}
		}
	}
	return out
}

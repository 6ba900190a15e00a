package slt

import (
	"context"
	"net"
	"strconv"
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
// authentication, simple Query, and Parse/Bind/Describe/Execute/Sync of the
// unnamed statement) to answer canned results; unknown SQL gets a syntax
// error. It lets the runner be tested without a database.
type fakeServer struct {
	t       *testing.T
	l       net.Listener
	answers map[string]fakeResult

	mu        sync.Mutex
	seen      []string // SQL received, in order
	protocols []string // "simple" or "extended", for each of seen
	restarts  int
	dbs       int
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
	var stmt string // extended protocol: the unnamed statement's SQL
	failed := false // extended protocol: skip to Sync after an error
	for {
		msg, err := be.Receive()
		if err != nil {
			return
		}
		switch m := msg.(type) {
		case *pgproto3.Query:
			s.saw(m.String, "simple")
			if !s.answer(be, m.String, true) {
				return
			}
			be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
		case *pgproto3.Parse:
			stmt, failed = m.Query, false
			s.saw(stmt, "extended")
			be.Send(&pgproto3.ParseComplete{})
		case *pgproto3.Bind:
			if !failed {
				be.Send(&pgproto3.BindComplete{})
			}
		case *pgproto3.Describe:
			if a, ok := s.answers[stmt]; !failed && ok && a.cols != nil && a.err == nil {
				be.Send(rowDescription(a.cols))
			} else if !failed && ok {
				be.Send(&pgproto3.NoData{})
			}
		case *pgproto3.Execute:
			if !failed {
				if _, ok := s.answers[stmt]; !ok || s.answers[stmt].err != nil {
					failed = true
				}
				if !s.answer(be, stmt, false) {
					return
				}
			}
		case *pgproto3.Sync:
			be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
		default:
			return
		}
		if be.Flush() != nil {
			return
		}
	}
}

func (s *fakeServer) saw(sql, protocol string) {
	s.mu.Lock()
	s.seen = append(s.seen, sql)
	s.protocols = append(s.protocols, protocol)
	s.mu.Unlock()
}

// answer sends the canned answer to sql (describe: with its RowDescription);
// false means the connection must be dropped.
func (s *fakeServer) answer(be *pgproto3.Backend, sql string, describe bool) bool {
	a, ok := s.answers[sql]
	switch {
	case !ok:
		be.Send(&pgproto3.ErrorResponse{Severity: "ERROR", Code: "42601", Message: "syntax error"})
	case a.drop:
		return false
	case a.err != nil:
		be.Send(a.err)
	default:
		if a.cols != nil {
			if describe {
				be.Send(rowDescription(a.cols))
			}
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
			tag = "SELECT " + strconv.Itoa(len(a.rows))
		}
		be.Send(&pgproto3.CommandComplete{CommandTag: []byte(tag)})
	}
	return true
}

func rowDescription(cols []string) *pgproto3.RowDescription {
	fields := make([]pgproto3.FieldDescription, len(cols))
	for i, name := range cols {
		fields[i] = pgproto3.FieldDescription{Name: []byte(name), DataTypeOID: 25, DataTypeSize: -1, TypeModifier: -1}
	}
	return &pgproto3.RowDescription{Fields: fields}
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

package streamprop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/wire"
)

// server is an in-process streamsql (engine + wire on a loopback port) with
// a chosen barrier interval. Not safe for concurrent use: one test drives it.
type server struct {
	dir      string
	interval time.Duration
	logs     *logRing
	// parallelism is the server's --streaming-parallelism: the instances
	// of every keyed operator of the views (0: GOMAXPROCS).
	parallelism int

	eng  *engine.Engine
	srv  *wire.Server
	addr string
	done chan error
}

func startServer(dir string, interval time.Duration, logs *logRing, parallelism int) (*server, error) {
	s := &server{dir: dir, interval: interval, logs: logs, parallelism: parallelism}
	if err := s.start(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *server) start() error {
	eng, err := engine.Open(engine.Config{DataDir: s.dir, BarrierInterval: s.interval, Logf: s.logs.logf,
		StreamingParallelism: s.parallelism})
	if err != nil {
		return fmt.Errorf("open engine: %w", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		eng.Close()
		return fmt.Errorf("listen: %w", err)
	}
	srv := wire.NewServer(eng, wire.Options{})
	done := make(chan error, 1)
	go func() {
		err := srv.Serve(l)
		l.Close()
		done <- err
	}()
	s.eng, s.srv, s.addr, s.done = eng, srv, l.Addr().String(), done
	return nil
}

// close stops the wire server, then the engine. Closing twice is harmless.
func (s *server) close() error {
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

// restart closes the engine and opens it again on the same data: the views
// rebuild from the catalog and the tables.
func (s *server) restart() error {
	if err := s.close(); err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	return s.start()
}

func (s *server) connString() string {
	host, port, _ := net.SplitHostPort(s.addr)
	return fmt.Sprintf("host=%s port=%s user=streamsql dbname=streamsql sslmode=disable", host, port)
}

// logRing keeps the engine's last log lines, shown when a seed fails; it is
// safe for concurrent use (the engine logs from its goroutines).
type logRing struct {
	mu    sync.Mutex
	lines []string
	step  int // the step running, prefixed to lines
}

func (r *logRing) logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.lines) >= 400 {
		r.lines = r.lines[1:]
	}
	r.lines = append(r.lines, fmt.Sprintf("[step %d] ", r.step)+fmt.Sprintf(format, args...))
}

func (r *logRing) setStep(i int) {
	r.mu.Lock()
	r.step = i
	r.mu.Unlock()
}

func (r *logRing) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.lines, "\n")
}

// db is one connection, to streamsql or PostgreSQL. Statements and queries
// go through the simple query protocol, so results come back as text.
type db struct {
	name string
	conn *pgx.Conn
}

func connect(ctx context.Context, name, dsn string) (*db, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("%s: parse dsn: %w", name, err)
	}
	cfg.ConnectTimeout = 5 * time.Second
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: connect: %w", name, err)
	}
	return &db{name: name, conn: conn}, nil
}

func (d *db) close() {
	if d != nil && d.conn != nil {
		d.conn.Close(context.Background())
	}
}

// exec runs one statement and returns its command tag.
func (d *db) exec(ctx context.Context, sql string) (string, error) {
	rs, err := d.conn.PgConn().Exec(ctx, sql).ReadAll()
	if err != nil {
		return "", err
	}
	if len(rs) == 0 {
		return "", nil
	}
	return rs[len(rs)-1].CommandTag.String(), nil
}

// result is a query's answer in text form; a NULL is nullText.
type result struct {
	cols  []string
	float []bool // float4/float8 columns, compared with a tolerance
	rows  [][]string
}

const nullText = "\x00NULL"

func (d *db) query(ctx context.Context, sql string) (*result, error) {
	mrr := d.conn.PgConn().Exec(ctx, sql)
	var out *result
	results := 0
	for mrr.NextResult() {
		results++
		rr := mrr.ResultReader()
		// The field descriptions come from the reader: pgconn's Result
		// leaves them out when there are no rows.
		res := &result{}
		for _, f := range rr.FieldDescriptions() {
			res.cols = append(res.cols, f.Name)
			res.float = append(res.float, f.DataTypeOID == 700 || f.DataTypeOID == 701)
		}
		for rr.NextRow() {
			vals := rr.Values() // valid until the next row: copied
			cells := make([]string, len(vals))
			for j, v := range vals {
				if v == nil {
					cells[j] = nullText
				} else {
					cells[j] = string(v)
				}
			}
			res.rows = append(res.rows, cells)
		}
		if _, err := rr.Close(); err != nil {
			mrr.Close()
			return nil, err
		}
		out = res
	}
	if err := mrr.Close(); err != nil {
		return nil, err
	}
	if results != 1 {
		return nil, fmt.Errorf("%s: %d results for one query", d.name, results)
	}
	return out, nil
}

// copyText runs COPY table (cols) FROM STDIN with rows in text format.
func (d *db) copyText(ctx context.Context, c *copyStep) (string, error) {
	tag, err := d.conn.PgConn().CopyFrom(ctx, bytes.NewReader(c.textData()), c.statement())
	if err != nil {
		return "", err
	}
	return tag.String(), nil
}

// copyBinary sends the rows with pgx's CopyFrom (binary COPY).
func (d *db) copyBinary(ctx context.Context, c *copyStep) (string, error) {
	rows := make([][]any, len(c.rows))
	for i, r := range c.rows {
		vals := make([]any, len(r))
		for j, v := range r {
			if v.null {
				continue
			}
			x, err := c.cols[j].kind.goValue(v.text)
			if err != nil {
				return "", err
			}
			vals[j] = x
		}
		rows[i] = vals
	}
	n, err := d.conn.CopyFrom(ctx, pgx.Identifier{c.table}, c.colNames(), pgx.CopyFromRows(rows))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("COPY %d", n), nil
}

// sqlState is err's SQLSTATE, "" for nil and "?" for an error without one
// (a broken connection).
func sqlState(err error) string {
	if err == nil {
		return ""
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return "?"
}

// pgDSN is the PostgreSQL the oracle test uses.
func pgDSN() string {
	if dsn := os.Getenv("STREAMSQL_PG_DSN"); dsn != "" {
		return dsn
	}
	return "postgres://postgres:postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

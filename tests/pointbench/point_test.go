// Package pointbench measures point queries (SELECT ... WHERE id = $1 over
// the extended protocol, prepared once per connection, 8 connections) on a
// table and on a materialized view, against streamsql in-process and
// against PostgreSQL 15 when it is reachable (STREAMSQL_PG_DSN, default
// postgres://postgres:postgres@127.0.0.1:5432/postgres).
//
//	go test ./tests/pointbench -run '^$' -bench . -benchtime 20000x
//
// Each benchmark reports queries/s (qps) over all connections.
package pointbench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/wire"
)

const (
	rows  = 100_000
	conns = 8
)

// setup creates the table and the view; PostgreSQL gets the index its
// matview needs for point lookups (the table has its primary key).
func setup(ctx context.Context, c *pgx.Conn, postgres bool) error {
	stmts := []string{
		"DROP MATERIALIZED VIEW IF EXISTS point_v",
		"DROP TABLE IF EXISTS point_t",
		"CREATE TABLE point_t (id int PRIMARY KEY, name text NOT NULL, score float8, grp int)",
		fmt.Sprintf("INSERT INTO point_t SELECT g, 'name-' || g, g::float8 / 7, g %% 100 FROM generate_series(1, %d) g", rows),
		"CREATE MATERIALIZED VIEW point_v AS SELECT id, name, score * 2 AS score2 FROM point_t WHERE grp >= 0",
	}
	if postgres {
		stmts = append(stmts, "CREATE UNIQUE INDEX ON point_v (id)", "ANALYZE point_t", "ANALYZE point_v")
	} else {
		stmts = append(stmts, "FLUSH")
	}
	for _, s := range stmts {
		if _, err := c.Exec(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

// TestMain doubles as the streamsql server: run with POINTBENCH_SERVE set
// to a data directory, the test binary serves the engine there on a
// loopback port, prints the address and runs until its stdin closes. The
// benchmarks start it as a separate process, as PostgreSQL is, so that
// client and server do not share one Go scheduler.
func TestMain(m *testing.M) {
	if dir := os.Getenv("POINTBENCH_SERVE"); dir != "" {
		if err := serve(dir); err != nil {
			fmt.Fprintln(os.Stderr, "pointbench server:", err)
			os.Exit(1)
		}
		return
	}
	code := m.Run()
	if server != nil {
		serverStdin.Close() // the server stops, writing its profile if asked
		server.Wait()
	}
	os.Exit(code)
}

func serve(dir string) error {
	eng, err := engine.Open(engine.Config{DataDir: dir})
	if err != nil {
		return err
	}
	defer eng.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	if f := os.Getenv("POINTBENCH_CPUPROFILE"); f != "" { // profile the server side
		out, err := os.Create(f)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(out); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	srv := wire.NewServer(eng, wire.Options{})
	go srv.Serve(l)
	fmt.Println(l.Addr().String())
	io.Copy(io.Discard, os.Stdin) // until the parent goes away
	srv.Close()
	return nil
}

var (
	streamsqlOnce sync.Once
	streamsqlAddr string
	streamsqlErr  error
	server        *exec.Cmd
	serverStdin   io.Closer
)

// streamsqlURL starts the server process (once) and loads the data.
func streamsqlURL(b *testing.B) string {
	streamsqlOnce.Do(func() {
		dir, err := os.MkdirTemp("", "pointbench-")
		if err != nil {
			streamsqlErr = err
			return
		}
		server = exec.Command(os.Args[0], "-test.run=^$")
		server.Env = append(os.Environ(), "POINTBENCH_SERVE="+dir)
		server.Stderr = os.Stderr
		stdin, err := server.StdinPipe()
		if err != nil {
			streamsqlErr = err
			return
		}
		serverStdin = stdin // closed at the end: the server then exits
		out, err := server.StdoutPipe()
		if err != nil {
			streamsqlErr = err
			return
		}
		if err := server.Start(); err != nil {
			streamsqlErr = err
			return
		}
		addr, err := bufio.NewReader(out).ReadString('\n')
		if err != nil {
			streamsqlErr = fmt.Errorf("server did not start: %w", err)
			return
		}
		streamsqlAddr = "postgres://streamsql@" + strings.TrimSpace(addr) + "/streamsql?sslmode=disable"
		ctx := context.Background()
		c, err := pgx.Connect(ctx, streamsqlAddr)
		if err != nil {
			streamsqlErr = err
			return
		}
		defer c.Close(ctx)
		streamsqlErr = setup(ctx, c, false)
	})
	if streamsqlErr != nil {
		b.Fatal(streamsqlErr)
	}
	return streamsqlAddr
}

var (
	pgOnce sync.Once
	pgErr  error
)

func postgresURL(b *testing.B) string {
	dsn := os.Getenv("STREAMSQL_PG_DSN")
	if dsn == "" {
		dsn = "postgres://postgres:postgres@127.0.0.1:5432/postgres?sslmode=disable"
	}
	pgOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			pgErr = err
			return
		}
		defer c.Close(context.Background())
		pgErr = setup(context.Background(), c, true)
	})
	if pgErr != nil {
		b.Skipf("PostgreSQL not reachable at %s: %v", dsn, pgErr)
	}
	return dsn
}

// run spreads b.N point queries over conns connections, each preparing the
// statement once (pgx's statement cache) and binding a random id per query.
func run(b *testing.B, url, query string) {
	ctx := context.Background()
	cs := make([]*pgx.Conn, conns)
	for i := range cs {
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close(ctx)
		cs[i] = c
		var name string
		if err := c.QueryRow(ctx, query, 1).Scan(new(int32), &name, new(float64)); err != nil {
			b.Fatalf("%s: %v", query, err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	b.ResetTimer()
	start := time.Now()
	for i, c := range cs {
		n := b.N / conns
		if i < b.N%conns {
			n++
		}
		wg.Add(1)
		go func(c *pgx.Conn, n int, seed uint64) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, 1))
			var id int32
			var name string
			var score float64
			for j := 0; j < n; j++ {
				want := int32(r.IntN(rows) + 1)
				if err := c.QueryRow(ctx, query, want).Scan(&id, &name, &score); err != nil {
					errs <- err
					return
				}
				if id != want || !strings.HasPrefix(name, "name-") {
					errs <- fmt.Errorf("id %d: got %d %q", want, id, name)
					return
				}
			}
		}(c, n, uint64(i))
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "qps")
}

const (
	tableQuery = "SELECT id, name, score FROM point_t WHERE id = $1"
	viewQuery  = "SELECT id, name, score2 FROM point_v WHERE id = $1"
)

func BenchmarkPointTableStreamsql(b *testing.B) { run(b, streamsqlURL(b), tableQuery) }
func BenchmarkPointViewStreamsql(b *testing.B)  { run(b, streamsqlURL(b), viewQuery) }
func BenchmarkPointTablePostgres(b *testing.B)  { run(b, postgresURL(b), tableQuery) }
func BenchmarkPointViewPostgres(b *testing.B)   { run(b, postgresURL(b), viewQuery) }

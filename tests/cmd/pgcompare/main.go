// Command pgcompare loads the same data into streamsql and PostgreSQL and
// times the foundation benchmark queries on both, printing one line per
// query with the best of -runs wall-clock times (the query runs on the
// server; the client only counts the rows it receives).
//
//	go run ./tests/cmd/pgcompare -streamsql 127.0.0.1:5433 -postgres 'postgres://postgres:postgres@127.0.0.1:5432/postgres'
//
// Data: t(k, v) with -rows rows (default 10M) and 10,000 keys; a(id, x) with
// 1M rows joined to b(id, y) with 100k rows. Loading uses COPY FROM STDIN on
// both, and its time is reported too.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
)

type query struct{ name, sql string }

var queries = []query{
	{"group by 10k keys", "SELECT k, count(*), sum(v), avg(v) FROM t GROUP BY k"},
	{"hash join 1M x 100k", "SELECT count(*), sum(b.y) FROM a JOIN b ON a.x = b.id"},
	{"order by 1M rows", "SELECT id, x FROM a ORDER BY x DESC, id"},
}

func main() {
	ssql := flag.String("streamsql", "127.0.0.1:5433", "streamsql host:port")
	pgURL := flag.String("postgres", "postgres://postgres:postgres@127.0.0.1:5432/postgres", "PostgreSQL URL")
	rows := flag.Int("rows", 10_000_000, "rows in t")
	runs := flag.Int("runs", 3, "runs per query (best is reported)")
	flag.Parse()
	ctx := context.Background()
	targets := []struct{ name, url string }{
		{"streamsql", "postgres://streamsql@" + *ssql + "/streamsql?sslmode=disable"},
		{"postgres", *pgURL},
	}
	results := map[string]map[string]time.Duration{}
	for _, tg := range targets {
		conn, err := pgx.Connect(ctx, tg.url)
		if err != nil {
			fatal(fmt.Errorf("%s: %w", tg.name, err))
		}
		res := map[string]time.Duration{}
		load, err := loadData(ctx, conn, *rows)
		if err != nil {
			fatal(fmt.Errorf("%s: load: %w", tg.name, err))
		}
		res["load t (COPY)"] = load
		if tg.name == "postgres" {
			for _, tbl := range []string{"t", "a", "b"} {
				if _, err := conn.Exec(ctx, "VACUUM ANALYZE "+tbl); err != nil {
					fatal(err)
				}
			}
		}
		for _, q := range queries {
			best := time.Duration(1<<63 - 1)
			for i := 0; i < *runs; i++ {
				d, err := timeQuery(ctx, conn, q.sql)
				if err != nil {
					fatal(fmt.Errorf("%s: %s: %w", tg.name, q.name, err))
				}
				best = min(best, d)
			}
			res[q.name] = best
		}
		results[tg.name] = res
		conn.Close(ctx)
	}
	fmt.Printf("%-22s %12s %12s %8s\n", "", "streamsql", "postgres", "ratio")
	for _, name := range append([]string{"load t (COPY)"}, names()...) {
		s, p := results["streamsql"][name], results["postgres"][name]
		fmt.Printf("%-22s %12s %12s %7.2fx\n", name, s.Round(time.Millisecond), p.Round(time.Millisecond), float64(p)/float64(s))
	}
}

func names() []string {
	out := make([]string, len(queries))
	for i, q := range queries {
		out[i] = q.name
	}
	return out
}

func timeQuery(ctx context.Context, conn *pgx.Conn, sql string) (time.Duration, error) {
	start := time.Now()
	rows, err := conn.Query(ctx, sql, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return 0, err
	}
	for rows.Next() {
	}
	rows.Close()
	return time.Since(start), rows.Err()
}

// loadData (re)creates the tables and loads them with COPY; it returns the
// time taken to load t.
func loadData(ctx context.Context, conn *pgx.Conn, n int) (time.Duration, error) {
	for _, s := range []string{
		"DROP TABLE IF EXISTS t", "DROP TABLE IF EXISTS a", "DROP TABLE IF EXISTS b",
		"CREATE TABLE t (k bigint, v bigint)", "CREATE TABLE a (id bigint, x bigint)", "CREATE TABLE b (id bigint, y bigint)",
	} {
		if _, err := conn.Exec(ctx, s); err != nil {
			return 0, err
		}
	}
	rng := rand.New(rand.NewSource(1))
	start := time.Now()
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"t"}, []string{"k", "v"}, &gen{n: n, row: func(i int) []any {
		return []any{int64(rng.Intn(10000)), int64(rng.Intn(1_000_000))}
	}}); err != nil {
		return 0, err
	}
	load := time.Since(start)
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"a"}, []string{"id", "x"}, &gen{n: 1_000_000, row: func(i int) []any {
		return []any{int64(i + 1), int64((i + 1) % 100_000)}
	}}); err != nil {
		return 0, err
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"b"}, []string{"id", "y"}, &gen{n: 100_000, row: func(i int) []any {
		return []any{int64(i + 1), int64(i + 1)}
	}}); err != nil {
		return 0, err
	}
	return load, nil
}

// gen feeds generated rows to CopyFrom.
type gen struct {
	n, i int
	row  func(i int) []any
	cur  []any
}

func (g *gen) Next() bool {
	if g.i >= g.n {
		return false
	}
	g.cur = g.row(g.i)
	g.i++
	return true
}
func (g *gen) Values() ([]any, error) { return g.cur, nil }
func (g *gen) Err() error             { return nil }

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "pgcompare:", err)
	os.Exit(1)
}

package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/streamsql/streamsql/connector/pgcdc/pgtest"
)

const cdcBenchColumns = `id bigint PRIMARY KEY, grp int, price numeric(12,2), note text, ts timestamptz`

// cdcBenchFill inserts rows [from, to) upstream, 10000 to a transaction.
func cdcBenchFill(b *testing.B, pg *pgtest.Cluster, from, to int, per int) {
	ctx := context.Background()
	conn := pg.Connect(ctx)
	defer conn.Close(ctx)
	for lo := from; lo < to; lo += per {
		hi := min(lo+per, to) - 1
		if _, err := conn.Exec(ctx, fmt.Sprintf(`INSERT INTO orders SELECT i, i %% 100, i * 0.01, 'note ' || i,
			'2025-01-01 00:00:00+00'::timestamptz + i * interval '1 second' FROM generate_series(%d, %d) i`, lo, hi)); err != nil {
			b.Fatal(err)
		}
	}
}

// cdcBenchWait polls until the streamsql table has n rows.
func cdcBenchWait(b *testing.B, t *testing.T, s *Session, n int) {
	want := fmt.Sprint(n)
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		rows, _, err := run(t, s, "SELECT count(*) FROM orders")
		if err != nil {
			b.Fatal(err)
		}
		if rows[0] == want {
			return
		}
		time.Sleep(2 * time.Millisecond) // polling for the end
	}
	b.Fatalf("the table did not reach %d rows", n)
}

// BenchmarkCDCSnapshot: the initial snapshot of an upstream table of b.N
// rows (5 columns) into a new postgres-cdc table, from CREATE TABLE until
// every row is stored. Reports rows/s. -benchtime=1000000x for 1 M rows.
func BenchmarkCDCSnapshot(b *testing.B) {
	pg := pgtest.Start(b)
	pg.Exec(context.Background(), "CREATE TABLE orders ("+cdcBenchColumns+")")
	cdcBenchFill(b, pg, 0, b.N, 100000)
	t := &testing.T{} // for run, which only fails through b below
	e, s := open(t, b.TempDir())
	defer e.Close()
	b.ResetTimer()
	start := time.Now()
	if _, _, err := run(t, s, fmt.Sprintf(`CREATE TABLE orders (%s) WITH (connector = 'postgres-cdc', %s, table.name = 'orders', slot.name = 'bench')`, cdcBenchColumns, pg.Options())); err != nil {
		b.Fatal(err)
	}
	cdcBenchWait(b, t, s, b.N)
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "rows/s")
}

// BenchmarkCDCApply: b.N rows inserted upstream (transactions of 1000)
// while a postgres-cdc table with a materialized view over it streams;
// from the first insert until the view counts every row. Reports rows/s
// (the sustained apply rate, upstream inserts included).
func BenchmarkCDCApply(b *testing.B) {
	pg := pgtest.Start(b)
	pg.Exec(context.Background(), "CREATE TABLE orders ("+cdcBenchColumns+")")
	t := &testing.T{}
	e, s := open(t, b.TempDir())
	defer e.Close()
	if _, _, err := run(t, s, fmt.Sprintf(`CREATE TABLE orders (%s) WITH (connector = 'postgres-cdc', %s, table.name = 'orders', slot.name = 'bench')`, cdcBenchColumns, pg.Options())); err != nil {
		b.Fatal(err)
	}
	if _, _, err := run(t, s, "CREATE MATERIALIZED VIEW ov AS SELECT grp, count(*) AS n, sum(price) AS p FROM orders GROUP BY grp"); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	cdcBenchFill(b, pg, 0, b.N, 1000)
	up := time.Since(start)
	want := fmt.Sprint(b.N)
	for {
		rows, _, err := run(t, s, "SELECT coalesce(sum(n), 0) FROM ov")
		if err != nil {
			b.Fatal(err)
		}
		if rows[0] == want {
			break
		}
		time.Sleep(2 * time.Millisecond) // polling for the end
	}
	el := time.Since(start)
	b.ReportMetric(float64(b.N)/el.Seconds(), "rows/s")
	b.ReportMetric(float64(b.N)/up.Seconds(), "upstream-rows/s")
}

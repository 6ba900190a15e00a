package pgcdc_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/streamsql/streamsql/connector/pgcdc/pgtest"
)

// The anchor for the postgres-cdc benchmarks (engine/ingest_cdc_bench_test.go):
// PostgreSQL's own logical-replication subscriber, on the same machine and
// the same table, into a second database of the same cluster.

const anchorColumns = `id bigint PRIMARY KEY, grp int, price numeric(12,2), note text, ts timestamptz`

func anchorFill(b *testing.B, ctx context.Context, conn *pgx.Conn, from, to, per int) {
	for lo := from; lo < to; lo += per {
		hi := min(lo+per, to) - 1
		if _, err := conn.Exec(ctx, fmt.Sprintf(`INSERT INTO orders SELECT i, i %% 100, i * 0.01, 'note ' || i,
			'2025-01-01 00:00:00+00'::timestamptz + i * interval '1 second' FROM generate_series(%d, %d) i`, lo, hi)); err != nil {
			b.Fatal(err)
		}
	}
}

// anchorSubscriber makes database sub with the table and subscribes it
// to publication p of database postgres (copy_data as given).
func anchorSubscriber(b *testing.B, ctx context.Context, pg *pgtest.Cluster, copyData bool) *pgx.Conn {
	pg.Exec(ctx, "CREATE DATABASE sub")
	sub, err := pgx.Connect(ctx, pg.DSN()+" dbname=sub")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sub.Close(context.Background()) })
	if _, err := sub.Exec(ctx, "CREATE TABLE orders ("+anchorColumns+")"); err != nil {
		b.Fatal(err)
	}
	// A subscription to the same cluster cannot create its slot itself.
	pg.Exec(ctx, "SELECT pg_create_logical_replication_slot('anchor', 'pgoutput')")
	if _, err := sub.Exec(ctx, fmt.Sprintf(`CREATE SUBSCRIPTION anchor CONNECTION '%s' PUBLICATION p
		WITH (create_slot = false, slot_name = 'anchor', copy_data = %v)`, pg.DSN(), copyData)); err != nil {
		b.Fatal(err)
	}
	return sub
}

func anchorWait(b *testing.B, ctx context.Context, sub *pgx.Conn, n int) {
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		var got int
		if err := sub.QueryRow(ctx, "SELECT count(*) FROM orders").Scan(&got); err != nil {
			b.Fatal(err)
		}
		if got == n {
			return
		}
		time.Sleep(2 * time.Millisecond) // polling for the end
	}
	b.Fatalf("the subscriber did not reach %d rows", n)
}

// BenchmarkPGSubscriberSnapshot: PostgreSQL's subscriber copying a table
// of b.N rows (its initial table sync). Compare BenchmarkCDCSnapshot.
func BenchmarkPGSubscriberSnapshot(b *testing.B) {
	pg := pgtest.Start(b)
	ctx := context.Background()
	up := pg.Connect(ctx)
	if _, err := up.Exec(ctx, "CREATE TABLE orders ("+anchorColumns+"); CREATE PUBLICATION p FOR TABLE orders"); err != nil {
		b.Fatal(err)
	}
	anchorFill(b, ctx, up, 0, b.N, 100000)
	b.ResetTimer()
	start := time.Now()
	sub := anchorSubscriber(b, ctx, pg, true)
	anchorWait(b, ctx, sub, b.N)
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "rows/s")
}

// BenchmarkPGSubscriberApply: b.N rows inserted upstream (transactions of
// 1000) reaching PostgreSQL's subscriber. Compare BenchmarkCDCApply.
func BenchmarkPGSubscriberApply(b *testing.B) {
	pg := pgtest.Start(b)
	ctx := context.Background()
	up := pg.Connect(ctx)
	if _, err := up.Exec(ctx, "CREATE TABLE orders ("+anchorColumns+"); CREATE PUBLICATION p FOR TABLE orders"); err != nil {
		b.Fatal(err)
	}
	sub := anchorSubscriber(b, ctx, pg, false)
	b.ResetTimer()
	start := time.Now()
	anchorFill(b, ctx, up, 0, b.N, 1000)
	upT := time.Since(start)
	anchorWait(b, ctx, sub, b.N)
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "rows/s")
	b.ReportMetric(float64(b.N)/upT.Seconds(), "upstream-rows/s")
}

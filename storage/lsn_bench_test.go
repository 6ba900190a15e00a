package storage

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkInsertRetained is BenchmarkInsert on a retained table: a
// checkpoint's Retain every 1000 inserts (a mark of the position 500
// inserts back, so the in-memory chain holds about 1000 writes).
func BenchmarkInsertRetained(b *testing.B) {
	for _, rows := range []int64{1, 1000} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			s := mustOpen(b, b.TempDir())
			defer s.Close()
			tb, _ := s.CreateTable(kvDef(1, true))
			var cut uint64
			benchInserts(b, tb, rows, func(i int) {
				switch i % 1000 {
				case 500:
					cut = tb.Position().LSN()
				case 999:
					if err := tb.Retain(cut); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// BenchmarkCutLSN is the cut path's cost: a table's position and its LSN.
func BenchmarkCutLSN(b *testing.B) {
	s := mustOpen(b, b.TempDir())
	defer s.Close()
	tb, _ := s.CreateTable(kvDef(1, true))
	tb.Insert(ctx, seq(0, 10))
	b.ResetTimer()
	var sum uint64
	for i := 0; i < b.N; i++ {
		sum += tb.Position().LSN()
	}
	if sum != 1*uint64(b.N) {
		b.Fatal(sum)
	}
}

// BenchmarkRecoverRetained times Open of a table of 100k rows whose last
// 100k single-row updates are retained (replayed as deltas) or not, after
// a compaction that wrote them as history, or straight from the log.
func BenchmarkRecoverRetained(b *testing.B) {
	const n = 100_000
	for _, c := range []struct {
		name            string
		retain, compact bool
	}{{"plain", false, false}, {"retained", true, false}, {"plain-compacted", false, true}, {"retained-compacted", true, true}} {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			s := mustOpen(b, dir)
			tb, _ := s.CreateTable(kvDef(1, true))
			tb.Insert(ctx, seq(0, n))
			if c.retain {
				tb.Retain(tb.LSN())
			}
			tx := s.Begin() // one write per row would take minutes of fsyncs: batch them
			for i := int64(0); i < n; i++ {
				if i%1000 == 999 {
					tx.Commit(ctx)
					tx = s.Begin()
				}
				if _, err := tx.Update(ctx, tb, []int64{i}, kvBatch(row(i, "u"))); err != nil {
					b.Fatal(err)
				}
			}
			tx.Commit(ctx)
			if c.retain {
				tb.Retain(tb.LSN())
			}
			start := time.Now()
			if c.compact {
				if err := tb.Compact(); err != nil {
					b.Fatal(err)
				}
			}
			compact := time.Since(start)
			logBytes := tb.LogBytes()
			s.Close()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s := mustOpen(b, dir)
				if s.Table(1).RowCount() != n {
					b.Fatal("rows lost")
				}
				s.Close()
			}
			b.ReportMetric(float64(compact.Microseconds())/1e3, "compact-ms")
			b.ReportMetric(float64(logBytes)/1e6, "log-MB")
		})
	}
}

package file

import (
	"fmt"
	"testing"
)

// BenchmarkFileSink writes 4096-row batches of (bigint, text, timestamptz,
// double), committing every 64 batches.
func BenchmarkFileSink(b *testing.B) {
	c := cols(b, "id int8, host text, ts timestamptz, cpu float8")
	rows := make([]string, 4096)
	for i := range rows {
		rows[i] = fmt.Sprintf("%d|host-%d|2024-01-01 00:%02d:%02d.%06d+00|%d.25", i, i%100, i/60%60, i%60, i, i%100)
	}
	t := &testing.T{}
	rec := textBatch(t, c, rows...)
	for _, format := range []string{"JSON", "CSV", "PARQUET"} {
		b.Run(format, func(b *testing.B) {
			s := openSink(t, c, map[string]string{"path": b.TempDir()}, format, "", true)
			w, err := s.NewWriter(ctx, 0)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := w.Write(ctx, rec, nil); err != nil {
					b.Fatal(err)
				}
				if i%64 == 63 {
					p, _ := w.PreCommit(ctx, uint64(i))
					w.Commit(ctx, uint64(i), p)
				}
			}
			p, _ := w.PreCommit(ctx, uint64(b.N))
			w.Commit(ctx, uint64(b.N), p)
			b.ReportMetric(float64(b.N)*4096/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

package encode

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/types"
)

// benchBatch is 4096 rows of (bigint, text, timestamptz, double, numeric).
func benchBatch(b *testing.B) ([]types.Column, arrow.RecordBatch) {
	t := &testing.T{}
	cols := []types.Column{col(t, "id", "int8"), col(t, "host", "text"), col(t, "ts", "timestamptz"), col(t, "cpu", "float8"), col(t, "price", "numeric")}
	rows := make([][]string, 4096)
	for i := range rows {
		rows[i] = []string{fmt.Sprint(i), fmt.Sprintf("host-%d", i%100), fmt.Sprintf("2024-01-01 00:%02d:%02d.%06d+00", i/60%60, i%60, i), fmt.Sprintf("%d.25", i%100), fmt.Sprintf("%d.99", i)}
	}
	return cols, batch(t, cols, rows...)
}

func BenchmarkEncode(b *testing.B) {
	cols, rec := benchBatch(b)
	for _, f := range []Format{{Kind: Plain}, {Kind: Plain, Encoding: CSV}, {Kind: Upsert}, {Kind: Debezium}} {
		b.Run(f.Kind.String()+"_"+f.Encoding.String(), func(b *testing.B) {
			e, err := New(f, cols, []int{0})
			if err != nil {
				b.Fatal(err)
			}
			var bytes int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				e.Encode(rec, nil, func(k, v []byte) error { bytes += int64(len(k) + len(v)); return nil })
			}
			b.ReportMetric(float64(b.N)*4096/b.Elapsed().Seconds(), "rows/s")
			b.SetBytes(bytes / int64(b.N))
		})
	}
}

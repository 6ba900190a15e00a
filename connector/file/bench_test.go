package file

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

const benchRows = 200_000

// benchFile writes benchRows rows of a bid-like schema and returns the path.
func benchFile(b *testing.B, format string) string {
	var sb strings.Builder
	for i := range benchRows {
		ts := fmt.Sprintf("2024-01-01 %02d:%02d:%02d.%03d", i/3600%24, i/60%60, i%60, i%1000)
		if format == "csv" {
			fmt.Fprintf(&sb, "%d,%d,%d,channel-%d,https://www.nexmark.com/item.htm?query=%d,%s,%.2f\n",
				1000+i%997, 2000+i%7919, 100+i*37%100000, i%10, i, ts, float64(i%1000)/7)
		} else {
			fmt.Fprintf(&sb, `{"auction": %d, "bidder": %d, "price": %d, "channel": "channel-%d", "url": "https://www.nexmark.com/item.htm?query=%d", "date_time": "%s", "score": %.2f}`+"\n",
				1000+i%997, 2000+i%7919, 100+i*37%100000, i%10, i, ts, float64(i%1000)/7)
		}
	}
	return writeFile(b, "bench."+format, sb.String())
}

func benchRead(b *testing.B, format string) {
	path := benchFile(b, format)
	c := cols(b, "auction bigint, bidder bigint, price bigint, channel varchar, url varchar, date_time timestamp, score double precision")
	s := mustOpen(b, c, map[string]string{"path": path}, "")
	b.ResetTimer()
	rows := 0
	for b.Loop() {
		r := s.NewReader(ReaderOptions{Errors: func(err error) { b.Fatal(err) }})
		err := r.Run(context.Background(), func(rec arrow.RecordBatch) error {
			rows += int(rec.NumRows())
			rec.Release()
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkReadCSV(b *testing.B)  { benchRead(b, "csv") }
func BenchmarkReadJSON(b *testing.B) { benchRead(b, "json") }

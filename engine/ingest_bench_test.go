package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkKafkaTableIngest: b.N small JSON messages already in the topic
// (2 partitions), read into a new kafka table until all are stored
// (durable, with their positions). Reports rows/s.
func BenchmarkKafkaTableIngest(b *testing.B) {
	addr, prod := kafkaCluster(b)
	t := &testing.T{} // for open and run, which only fail on errors reported through b below
	const per = 10000
	for from := 0; from < b.N; from += per {
		var recs []*kgo.Record
		for i := from; i < min(from+per, b.N); i++ {
			recs = append(recs, &kgo.Record{Partition: int32(i % 2), Value: fmt.Appendf(nil, `{"id": %d, "v": "v%d"}`, i, i)})
		}
		if err := prod.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
			b.Fatal(err)
		}
	}
	e, s := open(t, b.TempDir())
	defer e.Close()
	b.ResetTimer()
	start := time.Now()
	if _, _, err := run(t, s, fmt.Sprintf(kafkaTableDDL, addr)); err != nil {
		b.Fatal(err)
	}
	want := fmt.Sprint(b.N)
	for {
		rows, _, err := run(t, s, "SELECT count(*) FROM kt")
		if err != nil {
			b.Fatal(err)
		}
		if rows[0] == want {
			break
		}
		time.Sleep(time.Millisecond) // polling for the end
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "rows/s")
}

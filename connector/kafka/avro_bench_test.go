package kafka

import (
	"context"
	"fmt"
	"testing"

	"github.com/streamsql/streamsql/connector/srtest"
)

// BenchmarkDecodeAvro decodes framed Avro metrics (host, region, cpu,
// mem, ts, ok: the datacenter-metrics record of metricSchema, about 40
// bytes) from memory into Arrow batches, as BenchmarkDecodeJSON: the
// decoder's share of the reader's CPU time. rows/s per core =
// 1e9 / cpu-ns/msg.
func BenchmarkDecodeAvro(b *testing.B) {
	reg := srtest.Start()
	defer reg.Close()
	id := reg.Register("t-value", metricSchema)
	src := mustOpen(b, cols(b, "host text, region text, cpu double precision, mem bigint, ts timestamptz, ok boolean"),
		map[string]string{"properties.bootstrap.server": "x:1", "topic": "t", "schema.registry": reg.URL()}, "PLAIN ENCODE AVRO")
	msgs := make([][]byte, 4096)
	for i := range msgs {
		msgs[i] = avroMsg(b, metricSchema, id, metric(fmt.Sprintf("host-%d", i%500),
			map[string]any{"string": fmt.Sprintf("eu-west-%d", i%4)}, float64(i%1000)/10, int64(1000+i%4096), 1_704_067_200_000_000+int64(i)*1000))
	}
	r := src.NewReader(ReaderOptions{})
	ctx := context.Background()
	b.ResetTimer()
	c0 := cpuTime()
	for i := range b.N {
		rec := &message{Value: msgs[i%len(msgs)]}
		if _, err := r.decode(ctx, rec); err != nil {
			b.Fatal(err)
		}
		if err := r.batch.Add(r.row); err != nil {
			b.Fatal(err)
		}
		if r.batch.Len() == BatchRows {
			r.batch.Take().Release()
		}
	}
	ns := float64((cpuTime() - c0).Nanoseconds()) / float64(b.N)
	b.ReportMetric(ns, "cpu-ns/msg")
	b.ReportMetric(1e9/ns, "rows/s/core")
}

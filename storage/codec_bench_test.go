package storage

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// BenchmarkEncode compares the log's codec with Arrow IPC (schema + batch
// per record, as a log record would need) on (bigint, text) batches:
//
//	go test ./storage -run '^$' -bench Encode
func BenchmarkEncode(b *testing.B) {
	for _, n := range []int64{1, 64 << 10} {
		rec := seq(0, n)
		b.Run(fmt.Sprintf("codec/rows=%d", n), func(b *testing.B) {
			var size int
			for i := 0; i < b.N; i++ {
				fr, err := encodeInsert(0, rec, false)
				if err != nil {
					b.Fatal(err)
				}
				size = len(fr)
			}
			b.ReportMetric(float64(size), "bytes/record")
		})
		b.Run(fmt.Sprintf("ipc/rows=%d", n), func(b *testing.B) {
			var size int
			for i := 0; i < b.N; i++ {
				var buf bytes.Buffer
				w := ipc.NewWriter(&buf, ipc.WithSchema(rec.Schema()))
				if err := w.Write(rec); err != nil {
					b.Fatal(err)
				}
				w.Close()
				size = buf.Len()
			}
			b.ReportMetric(float64(size), "bytes/record")
		})
		fr, _ := encodeInsert(0, rec, false)
		b.Run(fmt.Sprintf("codec-decode/rows=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := decodeRecord(fr[frameHeaderLen:], rec.Schema()); err != nil {
					b.Fatal(err)
				}
			}
		})
		var buf bytes.Buffer
		w := ipc.NewWriter(&buf, ipc.WithSchema(rec.Schema()))
		w.Write(rec)
		w.Close()
		b.Run(fmt.Sprintf("ipc-decode/rows=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				r, err := ipc.NewReader(bytes.NewReader(buf.Bytes()))
				if err != nil {
					b.Fatal(err)
				}
				var got arrow.RecordBatch
				for r.Next() {
					got = r.RecordBatch()
				}
				if got == nil || got.NumRows() != n {
					b.Fatal("ipc decode failed")
				}
				r.Release()
			}
		})
	}
}

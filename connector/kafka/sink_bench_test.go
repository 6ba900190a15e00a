package kafka

import (
	"context"
	"runtime/pprof"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// BenchmarkSink writes b.N rows (small JSON records, 1024 rows a batch)
// through the sink into a 4-partition topic of an in-process kfake
// broker, the way the runtime drives it: a barrier every 8 batches, a
// checkpoint every 64 (PreCommit), and the checkpoint's Commit one
// barrier later (as if the checkpoint took that long to become durable).
// It reports rows/s and the process's CPU seconds per million rows; the
// broker's goroutines carry the pprof label side=broker, so its share is
// read from a CPU profile:
//
//	go test -run '^$' -bench BenchmarkSink -benchtime 2000000x -cpuprofile cpu.out ./connector/kafka
//	go tool pprof -tagfocus side=broker -top cpu.out | head -3
func BenchmarkSink(b *testing.B) {
	for _, g := range []string{"exactly-once", "at-least-once"} {
		b.Run(g, func(b *testing.B) { benchSink(b, g) })
	}
}

func benchSink(b *testing.B, guarantee string) {
	var c *kfake.Cluster
	pprof.Do(context.Background(), pprof.Labels("side", "broker"), func(context.Context) {
		var err error
		c, err = kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(4))
		if err != nil {
			b.Fatal(err)
		}
	})
	defer c.Close()
	ctx := context.Background()
	s := openTestSink(b, testSpec(c.ListenAddrs()[0], map[string]string{"sink.delivery-guarantee": guarantee}))
	w, err := s.NewWriter(ctx, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	const perBatch = 1024
	rec := batch(1_000_000, 1_000_000+perBatch, 12)
	defer rec.Release()

	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	b.ResetTimer()
	start := time.Now()
	epoch := uint64(1)
	var toCommit uint64
	var pending []byte
	for n, batches := 0, 0; n < b.N; n, batches = n+perBatch, batches+1 {
		if err := w.Write(ctx, rec, nil); err != nil {
			b.Fatal(err)
		}
		if batches%8 != 7 {
			continue
		}
		if toCommit != 0 {
			if err := w.Commit(ctx, toCommit, pending); err != nil {
				b.Fatal(err)
			}
			toCommit = 0
		}
		if batches%64 == 63 {
			if pending, err = w.PreCommit(ctx, epoch); err != nil {
				b.Fatal(err)
			}
			toCommit = epoch
		} else if err := w.Barrier(ctx, epoch); err != nil {
			b.Fatal(err)
		}
		epoch++
	}
	if pending, err = w.PreCommit(ctx, epoch); err != nil {
		b.Fatal(err)
	}
	if err := w.Commit(ctx, epoch, pending); err != nil {
		b.Fatal(err)
	}
	el := time.Since(start)
	b.StopTimer()
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := time.Duration(syscall.TimevalToNsec(ru1.Utime) - syscall.TimevalToNsec(ru0.Utime) +
		syscall.TimevalToNsec(ru1.Stime) - syscall.TimevalToNsec(ru0.Stime))
	rows := float64((b.N + perBatch - 1) / perBatch * perBatch)
	b.ReportMetric(rows/el.Seconds(), "rows/s")
	b.ReportMetric(cpu.Seconds()/rows*1e6, "cpu-s/Mrows")
	b.ReportMetric(float64(ru1.Minflt-ru0.Minflt)/rows*1e6, "minflt/Mrows")
	if tw, ok := w.(*txnWriter); ok {
		b.ReportMetric(float64(tw.pool.bytes)/(1<<20), "pooled-MiB")
	}
	if st := w.Status(); float64(st.Rows) != rows {
		b.Fatalf("status %+v, want %v rows", st, rows)
	}
}

package bench

import (
	"context"
	"testing"
)

// benchEvents keeps `go test -bench` short; streamsqld bench nexmark runs
// the full sizes (docs/benchmarks.md).
const benchEvents = 1_000_000

// BenchmarkNexmark runs each query over benchEvents events into the
// discard sink, and its sources alone (gen/...). events/s is wall-clock
// throughput; events/cpu-s divides by the process's CPU time, the per-core
// figure (steadier on a shared machine).
func BenchmarkNexmark(b *testing.B) {
	for _, q := range Queries() {
		b.Run(q, func(b *testing.B) { benchRun(b, Options{Query: q, Events: benchEvents}) })
	}
	for _, q := range []string{"q0", "q3", "q4"} {
		b.Run("gen/"+q, func(b *testing.B) { benchRun(b, Options{Query: q, Events: benchEvents, GeneratorOnly: true}) })
	}
}

func benchRun(b *testing.B, o Options) {
	var events int64
	var wall, cpu float64
	var state int64
	for i := 0; i < b.N; i++ {
		r, err := Run(context.Background(), o)
		if err != nil {
			b.Fatal(err)
		}
		events += r.Events
		wall += r.Wall.Seconds()
		cpu += r.CPU.Seconds()
		state = max(state, r.StateHeap)
	}
	b.ReportMetric(float64(events)/wall, "events/s")
	b.ReportMetric(float64(events)/cpu, "events/cpu-s")
	b.ReportMetric(float64(state)/(1<<20), "state-MiB")
}

package dataflow

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/streamsql/streamsql/exec/dataflow/netx"
	"github.com/streamsql/streamsql/exec/stream"
)

// BenchmarkNetExchangeAgg runs the parallel aggregation of parAgg(2) over
// writes of 8192 rows, its exchange's outputs in-process ("local") or
// every one over loopback TCP ("tcp"), and reports rows/s through the
// whole job (scan, exchange, aggregation, merge, view).
func BenchmarkNetExchangeAgg(b *testing.B) {
	for _, mode := range []string{"local", "tcp"} {
		b.Run(mode, func(b *testing.B) {
			var relay Relay
			if mode == "tcp" {
				srv, err := netx.Listen("127.0.0.1:0", netx.Options{})
				if err != nil {
					b.Fatal(err)
				}
				defer srv.Close()
				relay = benchRelay{srv}
			}
			tbl := &fakeTable{}
			rt := New(Config{BarrierInterval: -1, Relay: relay, NoOperatorStats: true}, &fakeInputs{tables: map[uint32]*fakeTable{100: tbl}})
			defer rt.Close()
			if _, err := rt.StartJob(parAgg(2)); err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 1))
			vals := make([]int64, 8192)
			b.ResetTimer()
			start := time.Now()
			for i := range b.N {
				for k := range vals {
					vals[k] = rng.Int64N(100000)
				}
				tbl.insert(vals...)
				if i%16 == 15 || i == b.N-1 {
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					err := rt.Flush(ctx)
					cancel()
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.N*len(vals))/time.Since(start).Seconds(), "rows/s")
		})
	}
}

type benchRelay struct{ srv *netx.Server }

func (r benchRelay) Carry(ex ExchangeOutput, in <-chan stream.Message) <-chan stream.Message {
	id := fmt.Sprintf("%d/x%d/#%d", ex.Job, ex.Exchange, ex.Instance)
	out := r.srv.Inbound(ex.Ctx, id, ex.Fail)
	netx.Outbound(ex.Ctx, r.srv.Addr(), id, netx.Options{}, in, ex.Fail)
	return out
}

package stream

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/types"
)

// BenchmarkIntervalJoin feeds both sides chunks of 1024 rows in time order
// (1 µs apart, the right side with one row per 8 of the left), each
// followed by its watermark 50 µs behind, into an interval join with
// 0 <= left - right <= 100 µs, keyed by k (64 keys) or keyless (each row
// then meets only the other side's rows in its range, through the time
// queue); exact: the pairs are filtered by their times, not by evaluating
// the condition. It reports rows/s and the rows held at the end.
func BenchmarkIntervalJoin(b *testing.B) {
	for _, bc := range []struct {
		name         string
		keyed, exact bool
	}{{"keyed", true, false}, {"keyless", false, false}, {"keyed/exact", true, true}, {"keyless/exact", false, true}} {
		b.Run(bc.name, func(b *testing.B) {
			c := ivCase{exec.InnerJoin, bc.keyed, 0, 100, true, true, false, bc.exact}
			env := NewEnv(context.Background(), expr.Context{})
			j := newIntervalJoin(b, c)
			out := make(chan Message, 64)
			done := make(chan struct{})
			go func() {
				for range out {
				}
				close(done)
			}()
			r, err := j.newRun(env, out)
			if err != nil {
				b.Fatal(err)
			}
			const rows = 1024
			ks, vs := make([]int64, rows), make([]int64, rows)
			for i := range ks {
				ks[i], vs[i] = int64(i%64), int64(i)
			}
			chunk := func(cols []types.Column, t0, step int64) *Chunk {
				ts := make([]arrow.Timestamp, rows)
				for i := range ts {
					ts[i] = arrow.Timestamp(t0 + int64(i)*step)
				}
				kb := array.NewInt64Builder(memory.DefaultAllocator)
				kb.AppendValues(ks, nil)
				tb := array.NewTimestampBuilder(memory.DefaultAllocator, cols[1].Type.ArrowType().(*arrow.TimestampType))
				tb.AppendValues(ts, nil)
				vb := array.NewInt64Builder(memory.DefaultAllocator)
				vb.AppendValues(vs, nil)
				arrs := []arrow.Array{kb.NewArray(), tb.NewArray(), vb.NewArray()}
				return &Chunk{Rec: array.NewRecordBatch(types.ArrowSchema(cols), arrs, rows)}
			}
			b.ResetTimer()
			var lt, rt int64
			for i := 0; i < b.N; i++ {
				if err := r.consume(0, chunk(ivLeft, lt, 1)); err != nil {
					b.Fatal(err)
				}
				lt += rows
				r.iv.onMark(r, 0, Watermark{Col: 1, Value: lt - 50})
				if i%8 == 7 {
					if err := r.consume(1, chunk(ivRight, rt, 8)); err != nil {
						b.Fatal(err)
					}
					rt += rows * 8
					r.iv.onMark(r, 1, Watermark{Col: 1, Value: rt - 50})
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)*rows*9/8/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(r.sides[0].live+r.sides[1].live), "held")
			r.release()
			close(out)
			<-done
		})
	}
}

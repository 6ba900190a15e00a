package dataflow

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streamsql/streamsql/exec/stream"
)

// TestOperatorStatsCountRows checks the per-operator counters against the
// rows the operators really passed: a source of 25 rows through a filter
// keeping 5 of them into the view.
func TestOperatorStatsCountRows(t *testing.T) {
	var epochs atomic.Int64
	rt := New(Config{BarrierInterval: -1, OnEpoch: func(job string, d time.Duration) {
		if job == "v" && d >= 0 {
			epochs.Add(1)
		}
	}}, &fakeInputs{})
	t.Cleanup(rt.Close)
	scan := &stream.Scan{Rel: 25, Name: "s", Kind: stream.ScanSource, Cols: cols, AppendOnly: true}
	j, err := rt.StartJob(JobSpec{ID: 1, Name: "v", Plan: &stream.Filter{Input: scan, Cond: gt(19)}, Cols: cols})
	if err != nil {
		t.Fatal(err)
	}
	flush(t, rt)
	ops := j.Operators()
	if len(ops) != 3 {
		t.Fatalf("operators = %+v", ops)
	}
	sc, f, v := ops[0], ops[1], ops[2]
	if sc.Name != "Scan" || sc.RowsIn != 25 || sc.RowsOut != 25 || sc.Chunks != 3 || sc.Bytes < 25*8 || len(sc.Inputs) != 0 {
		t.Errorf("scan = %+v", sc)
	}
	if f.Name != "Filter" || f.RowsIn != 25 || f.RowsOut != 5 || len(f.Inputs) != 1 || f.Inputs[0] != sc.ID {
		t.Errorf("filter = %+v", f)
	}
	if v.ID != -1 || v.Name != "Materialize" || v.RowsIn != 5 || v.RowsOut != 5 || v.Inputs[0] != f.ID || v.Chunks == 0 || v.Chunks != f.Chunks {
		t.Errorf("view = %+v", v)
	}
	if epochs.Load() == 0 {
		t.Error("OnEpoch was not called")
	}
}

// TestOperatorStatsOff: with NoOperatorStats nothing is counted and the
// view still gets its rows.
func TestOperatorStatsOff(t *testing.T) {
	rt := New(Config{BarrierInterval: -1, NoOperatorStats: true}, &fakeInputs{})
	t.Cleanup(rt.Close)
	scan := &stream.Scan{Rel: 25, Name: "s", Kind: stream.ScanSource, Cols: cols, AppendOnly: true}
	j, err := rt.StartJob(JobSpec{ID: 1, Name: "v", Plan: &stream.Filter{Input: scan, Cond: gt(19)}, Cols: cols})
	if err != nil {
		t.Fatal(err)
	}
	flush(t, rt)
	if ops := j.Operators(); ops != nil {
		t.Errorf("operators = %+v", ops)
	}
	if n := len(contents(t, j)); n != 5 {
		t.Errorf("view has %d rows", n)
	}
}

// BenchmarkMeter is the cost of counting one message through an
// operator's meter (one extra channel hop per message), against handing
// it over a channel directly.
func BenchmarkMeter(b *testing.B) {
	for _, metered := range []bool{false, true} {
		name := "direct"
		if metered {
			name = "metered"
		}
		b.Run(name, func(b *testing.B) {
			rt := New(Config{BarrierInterval: -1}, &fakeInputs{})
			defer rt.Close()
			j := &Job{rt: rt, env: stream.NewEnv(context.Background(), rt.cfg.Eval)}
			defer j.env.Fail(context.Canceled)
			in := make(chan stream.Message, stream.ChannelSize)
			var out <-chan stream.Message = in
			if metered {
				out = j.meter(j.newMeter(&stream.Scan{Name: "s"}, nil, 0), in)
			}
			msg := stream.ChunkMsg(&stream.Chunk{Rec: rec(1, 2, 3)})
			done := make(chan struct{})
			go func() {
				for range b.N {
					<-out
				}
				close(done)
			}()
			b.ResetTimer()
			for range b.N {
				in <- msg
			}
			<-done
		})
	}
}

// TestOperatorStatsParallel: each instance of a parallel operator has
// counters of its own (Instance 0..n-1, its rows in the rows the exchange
// sent it: together the exchange's input), and the view counts the rows
// of all of them.
func TestOperatorStatsParallel(t *testing.T) {
	tbl := &fakeTable{rows: []int64{1, 2, 2, 3, 4, 5, 6, 7, 8, 9}}
	rt := newRuntime(t, &fakeInputs{tables: map[uint32]*fakeTable{100: tbl}})
	j, err := rt.StartJob(parAgg(3))
	if err != nil {
		t.Fatal(err)
	}
	flush(t, rt)
	ops := j.Operators()
	if len(ops) != 5 { // scan, 3 instances, the view
		t.Fatalf("operators = %+v", ops)
	}
	var sum, in int64
	for k, op := range ops[1:4] {
		if op.Name != "HashAgg" || op.Instance != k || len(op.Inputs) != 1 || op.Inputs[0] != ops[0].ID || op.RowsIn < op.RowsOut || op.RowsIn == 10 {
			t.Errorf("instance %d = %+v", k, op)
		}
		sum += op.RowsOut
		in += op.RowsIn
	}
	if in != 10 {
		t.Errorf("the instances' rows in add up to %d, want the scan's 10", in)
	}
	v := ops[4]
	if sum != 9 || v.RowsIn != sum || len(v.Inputs) != 3 { // 9 groups
		t.Errorf("instances sent %d rows; view = %+v", sum, v)
	}
}

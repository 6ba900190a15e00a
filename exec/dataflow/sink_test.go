package dataflow

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec/stream"
)

// A Sink job passes every output row to its sink, completes epochs (FLUSH
// waits for a finite source's end) and keeps no view.
func TestSinkJobCountsRowsAndCompletesEpochs(t *testing.T) {
	tbl := &fakeTable{rows: []int64{1, 5}}
	rt := newRuntime(t, &fakeInputs{tables: map[uint32]*fakeTable{100: tbl}})
	var rows, sum int64 // written on the sink's goroutine, read after a flush
	sink := func(c *stream.Chunk) {
		for i, v := range c.Rec.Column(0).(*array.Int64).Int64Values() {
			rows++
			sum += c.Op(i).Sign() * v
		}
	}
	src := &stream.Scan{Rel: 1000, Name: "s", Kind: stream.ScanSource, Cols: cols, AppendOnly: true}
	j, err := rt.StartJob(JobSpec{ID: 1, Name: "sink", Plan: &stream.Filter{Input: src, Cond: gt(99)}, Cols: cols, Sink: sink})
	if err != nil {
		t.Fatal(err)
	}
	flush(t, rt)
	if rows != 900 || sum != (100+999)*900/2 {
		t.Fatalf("sink saw %d rows summing to %d, want 900 rows of 100..999", rows, sum)
	}
	if j.Epoch() == 0 {
		t.Fatal("no epoch completed")
	}
	if _, _, err := j.Snapshot(); err == nil {
		t.Fatal("Snapshot of a sink job succeeded")
	}
	if _, err := rt.Subscribe(1, SubOptions{}); err == nil {
		t.Fatal("Subscribe to a sink job succeeded")
	}

	// Table changes reach the sink with their ops.
	rows, sum = 0, 0
	scan := &stream.Scan{Rel: 100, Name: "t", Kind: stream.ScanTable, Cols: cols}
	if _, err := rt.StartJob(JobSpec{ID: 2, Name: "sink2", Plan: scan, Cols: cols, Sink: sink}); err != nil {
		t.Fatal(err)
	}
	flush(t, rt)
	tbl.insert(7)
	tbl.delete(5)
	flush(t, rt)
	if rows != 4 || sum != 1+7 {
		t.Fatalf("sink saw %d rows netting %d, want 4 rows netting 8", rows, sum)
	}
}

package dataflow

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/stream"
)

// Two views over one table, read together while writes and epochs go on,
// always agree: they are read at one epoch.
func TestReadViewsAtOneEpoch(t *testing.T) {
	tbl := &fakeTable{}
	rt := New(Config{BarrierInterval: time.Millisecond}, &fakeInputs{tables: map[uint32]*fakeTable{100: tbl}})
	defer rt.Close()
	scan := &stream.Scan{Rel: 100, Name: "t", Kind: stream.ScanTable, Cols: cols}
	for id := uint32(1); id <= 2; id++ {
		if _, err := rt.StartJob(JobSpec{ID: id, Name: "v", Plan: scan, Cols: cols}); err != nil {
			t.Fatal(err)
		}
	}
	// The second view reads through the first.
	v3 := &stream.Scan{Rel: 1, Name: "v1", Kind: stream.ScanView, Cols: cols}
	if _, err := rt.StartJob(JobSpec{ID: 3, Name: "w", Plan: v3, Cols: cols}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := int64(0); ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			tbl.insert(i)
			time.Sleep(100 * time.Microsecond) // pacing only; correctness does not depend on it
		}
	}()
	count := func(rows []arrow.RecordBatch) int64 {
		n := int64(0)
		for _, r := range rows {
			n += r.NumRows()
		}
		return n
	}
	for k, seen := 0, 0; seen < 300; k++ {
		snaps, err := rt.ReadViews(ctx, []uint32{3, 1, 2})
		if err != nil {
			t.Fatal(err)
		}
		a, b, c := count(snaps[1]), count(snaps[2]), count(snaps[3])
		if a != b || b != c {
			t.Fatalf("read %d: views disagree: %d, %d, %d rows", k, a, b, c)
		}
		if a > 0 {
			seen++
		}
	}
	close(stop)
	wg.Wait()
}

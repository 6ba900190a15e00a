package dataflow

import (
	"context"
	"testing"
	"time"

	"github.com/streamsql/streamsql/exec/stream"
)

// A subscription's lag is the change rows the view handed it minus the
// ones its reader took: it grows while the client does not read and goes
// back to 0 once it has read everything; the snapshot does not count.
func TestSubscriptionLag(t *testing.T) {
	tbl := &fakeTable{rows: []int64{1, 2}}
	rt := newRuntime(t, &fakeInputs{tables: map[uint32]*fakeTable{100: tbl}})
	scan := &stream.Scan{Rel: 100, Name: "t", Kind: stream.ScanTable, Cols: cols}
	j, err := rt.StartJob(JobSpec{ID: 1, Name: "v", Plan: scan, Cols: cols})
	if err != nil {
		t.Fatal(err)
	}
	flush(t, rt)
	sub, err := rt.Subscribe(1, SubOptions{Snapshot: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	lag := func() SubLag {
		t.Helper()
		ls := j.SubscriptionLags()
		if len(ls) != 1 {
			t.Fatalf("lags %+v", ls)
		}
		return ls[0]
	}
	if l := lag(); l.LagRows != 0 {
		t.Fatalf("lag before any change: %+v", l)
	}
	tbl.insert(3)
	tbl.insert(4)
	flush(t, rt)
	tbl.insert(5)
	flush(t, rt)
	if l := lag(); l.LagRows != 3 || l.RowsSent != 3 || l.RowsRead != 0 || l.LagEpochs < 1 {
		t.Fatalf("lag after 3 unread rows: %+v", l)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	read := 0
	for read < 3 {
		u, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !u.Snapshot {
			read += int(updateRows(u))
		}
	}
	if l := lag(); l.LagRows != 0 || l.RowsRead != 3 || l.LagEpochs != 0 {
		t.Fatalf("lag after reading: %+v", l)
	}
}

// A job's backfill counts the table's rows as they are sent, and is over
// once an epoch after them completed.
func TestBackfillCounters(t *testing.T) {
	tbl := &fakeTable{rows: []int64{1, 2, 3}}
	rt := newRuntime(t, &fakeInputs{tables: map[uint32]*fakeTable{100: tbl}})
	scan := &stream.Scan{Rel: 100, Name: "t", Kind: stream.ScanTable, Cols: cols}
	j, err := rt.StartJob(JobSpec{ID: 1, Name: "v", Plan: scan, Cols: cols})
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := j.Backfill(); !ok || p.RowsTotal != 3 || p.RowsDone > 3 {
		t.Fatalf("backfill at start: %+v %v", p, ok)
	}
	flush(t, rt)
	if p, ok := j.Backfill(); !ok || p.RowsTotal != 3 || p.RowsDone != 3 || p.Backfilling {
		t.Fatalf("backfill after an epoch: %+v %v", p, ok)
	}
	empty := &fakeTable{}
	rt2 := newRuntime(t, &fakeInputs{tables: map[uint32]*fakeTable{100: empty}})
	j2, err := rt2.StartJob(JobSpec{ID: 1, Name: "v", Plan: scan, Cols: cols})
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := j2.Backfill(); ok {
		t.Fatalf("an empty table has a backfill: %+v", p)
	}
}

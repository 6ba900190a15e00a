package dataflow

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec/stream"
)

// values returns an update's rows (column 0) with their ops, sorted.
func values(u Update) string {
	var out []string
	row := 0
	for _, r := range u.Rows {
		for _, v := range r.Column(0).(*array.Int64).Int64Values() {
			op := stream.Insert
			if u.Ops != nil {
				op = u.Ops[row]
			}
			out = append(out, fmt.Sprintf("%s %d", op, v))
			row++
		}
	}
	sort.Strings(out)
	return fmt.Sprint(out)
}

// A SUBSCRIBE (query) reads the query's backfill as its snapshot, and
// without a snapshot only the changes made after it started.
func TestSubscribeQuerySnapshotIsTheBackfill(t *testing.T) {
	tbl := &fakeTable{rows: []int64{1, 5}}
	rt := newRuntime(t, &fakeInputs{tables: map[uint32]*fakeTable{100: tbl}})
	scan := &stream.Scan{Rel: 100, Name: "t", Kind: stream.ScanTable, Cols: cols}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, snapshot := range []bool{true, false} {
		sub, err := rt.SubscribeQuery(JobSpec{ID: 1000, Name: "q", Plan: scan, Cols: cols}, SubOptions{Snapshot: snapshot})
		if err != nil {
			t.Fatal(err)
		}
		// Once the start epoch is complete (no FLUSH needed: it was
		// injected), a new row is a change, with or without a snapshot.
		if err := rt.WaitEpoch(ctx, sub.Start()); err != nil {
			t.Fatal(err)
		}
		tbl.insert(7)
		flush(t, rt)
		var got []string
		if snapshot {
			u, err := sub.Next(ctx)
			if err != nil || !u.Snapshot {
				t.Fatalf("snapshot=%v: first update %+v, %v", snapshot, u, err)
			}
			got = append(got, values(u))
		}
		u, err := sub.Next(ctx)
		if err != nil || u.Snapshot {
			t.Fatalf("snapshot=%v: change %+v, %v", snapshot, u, err)
		}
		got = append(got, values(u))
		if _, ok, err := sub.TryNext(); ok || err != nil {
			t.Fatalf("snapshot=%v: unexpected update (%v)", snapshot, err)
		}
		want := "[[insert 7]]"
		if snapshot {
			want = "[[insert 1 insert 5] [insert 7]]"
		}
		if fmt.Sprint(got) != want {
			t.Fatalf("snapshot=%v: got %v, want %v", snapshot, got, want)
		}
		sub.Close()
		if rt.Job(1000) != nil {
			t.Fatal("closing the subscription left its job running")
		}
	}
}

// An empty view's snapshot sends nothing (an update without rows would be
// a progress mark) unless progress marks are asked for.
func TestSubscribeEmptyViewSnapshot(t *testing.T) {
	tbl := &fakeTable{}
	rt := newRuntime(t, &fakeInputs{tables: map[uint32]*fakeTable{100: tbl}})
	scan := &stream.Scan{Rel: 100, Name: "t", Kind: stream.ScanTable, Cols: cols}
	if _, err := rt.StartJob(JobSpec{ID: 1, Name: "v", Plan: scan, Cols: cols}); err != nil {
		t.Fatal(err)
	}
	flush(t, rt)
	plain, err := rt.Subscribe(1, SubOptions{Snapshot: true})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	prog, err := rt.Subscribe(1, SubOptions{Snapshot: true, Progress: true})
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	tbl.insert(3)
	flush(t, rt)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	u, err := plain.Next(ctx)
	if err != nil || u.Snapshot || values(u) != "[insert 3]" {
		t.Fatalf("first update without progress: %+v (%s), %v", u, values(u), err)
	}
	u, err = prog.Next(ctx)
	if err != nil || !u.Snapshot || len(u.Rows) != 0 {
		t.Fatalf("first update with progress: %+v, %v", u, err)
	}
}

// Progress marks count against the bound: a stalled subscriber with
// progress = true is ended too rather than queue marks forever.
func TestSubscribeProgressMarksAreBounded(t *testing.T) {
	tbl := &fakeTable{}
	rt := New(Config{BarrierInterval: -1, SubscribeBufferBytes: 3 * progressCost}, &fakeInputs{tables: map[uint32]*fakeTable{100: tbl}})
	defer rt.Close()
	scan := &stream.Scan{Rel: 100, Name: "t", Kind: stream.ScanTable, Cols: cols}
	if _, err := rt.StartJob(JobSpec{ID: 1, Name: "v", Plan: scan, Cols: cols}); err != nil {
		t.Fatal(err)
	}
	sub, err := rt.Subscribe(1, SubOptions{Progress: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	for i := 0; i < 5; i++ {
		flush(t, rt)
	}
	n := 0
	for {
		_, ok, err := sub.TryNext()
		if err != nil {
			break
		}
		if !ok {
			t.Fatalf("subscription still open after %d unread progress marks", n)
		}
		n++
	}
	if n != 3 {
		t.Fatalf("%d marks were queued, want the bound, 3", n)
	}
}

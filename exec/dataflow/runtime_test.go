package dataflow

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/exec/expr"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/types"
)

var cols = []types.Column{{Name: "a", Type: types.TInt8}}

func rec(vals ...int64) arrow.RecordBatch {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.AppendValues(vals, nil)
	return array.NewRecordBatch(types.ArrowSchema(cols), []arrow.Array{b.NewArray()}, int64(len(vals)))
}

// fakeTable is an in-memory table with a change feed.
type fakeTable struct {
	mu   sync.Mutex
	rows []int64
	log  []Delta // every write, in order
}

// fakeFeed reads the table's log of deltas; a position is a log length.
type fakeFeed struct {
	mu  *sync.Mutex // the table's
	log *[]Delta    // the table's
	at  int         // deltas delivered
}

func (f *fakeFeed) PollTo(p Position) ([]Delta, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	to := p.(int)
	if to <= f.at {
		return nil, nil
	}
	d := (*f.log)[f.at:to]
	f.at = to
	return d, nil
}
func (f *fakeFeed) Close() {}

func (t *fakeTable) insert(vals ...int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rows = append(t.rows, vals...)
	t.log = append(t.log, Delta{Inserted: []arrow.RecordBatch{rec(vals...)}})
}

func (t *fakeTable) delete(v int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	i := slices.Index(t.rows, v)
	t.rows = slices.Delete(t.rows, i, i+1)
	t.log = append(t.log, Delta{Deleted: []arrow.RecordBatch{rec(v)}})
}

type fakeInputs struct{ tables map[uint32]*fakeTable }

func (in *fakeInputs) SubscribeTable(oid uint32) ([]arrow.RecordBatch, Feed, error) {
	t := in.tables[oid]
	t.mu.Lock()
	defer t.mu.Unlock()
	f := &fakeFeed{mu: &t.mu, log: &t.log, at: len(t.log)}
	return []arrow.RecordBatch{rec(slices.Clone(t.rows)...)}, f, nil
}

func (in *fakeInputs) TablePosition(oid uint32) Position {
	t := in.tables[oid]
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.log)
}

func (in *fakeInputs) OpenSource(oid uint32, _ func(error)) (RunFunc, bool, error) {
	n := int64(oid) // a source of oid rows 0..oid-1, in batches of 10
	return func(ctx context.Context, emit func(arrow.RecordBatch) error) error {
		for i := int64(0); i < n; i += 10 {
			var vals []int64
			for k := i; k < min(i+10, n); k++ {
				vals = append(vals, k)
			}
			if err := emit(rec(vals...)); err != nil {
				return err
			}
		}
		return nil
	}, true, nil
}

func newRuntime(t *testing.T, in Inputs) *Runtime {
	rt := New(Config{BarrierInterval: -1}, in)
	t.Cleanup(rt.Close)
	return rt
}

func flush(t *testing.T, rt *Runtime) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rt.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

func contents(t *testing.T, j *Job) []int64 {
	_, recs, err := j.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, r := range recs {
		out = append(out, r.Column(0).(*array.Int64).Int64Values()...)
	}
	slices.Sort(out)
	return out
}

func gt(n int64) expr.Expr {
	e, err := expr.NewBinary(">", &expr.ColRef{Idx: 0, T: types.TInt8, Name: "a"}, &expr.Const{V: n, T: types.TInt8})
	if err != nil {
		panic(err)
	}
	return e
}

func TestTableViewBackfillChangesAndViewOnView(t *testing.T) {
	tbl := &fakeTable{rows: []int64{1, 5, 10}}
	rt := newRuntime(t, &fakeInputs{tables: map[uint32]*fakeTable{100: tbl}})
	scan := &stream.Scan{Rel: 100, Name: "t", Kind: stream.ScanTable, Cols: cols}
	v1, err := rt.StartJob(JobSpec{ID: 1, Name: "v1", Plan: &stream.Filter{Input: scan, Cond: gt(2)}, Cols: cols})
	if err != nil {
		t.Fatal(err)
	}
	tbl.insert(3, 1)
	flush(t, rt)
	if got := fmt.Sprint(contents(t, v1)); got != "[3 5 10]" {
		t.Fatalf("v1 = %s", got)
	}
	// A view on v1 starts from v1's snapshot and follows its changes.
	v2scan := &stream.Scan{Rel: 1, Name: "v1", Kind: stream.ScanView, Cols: cols}
	v2, err := rt.StartJob(JobSpec{ID: 2, Name: "v2", Plan: &stream.Filter{Input: v2scan, Cond: gt(4)}, Cols: cols})
	if err != nil {
		t.Fatal(err)
	}
	tbl.delete(5)
	tbl.insert(7)
	flush(t, rt)
	if got := fmt.Sprint(contents(t, v1)); got != "[3 7 10]" {
		t.Fatalf("v1 = %s", got)
	}
	if got := fmt.Sprint(contents(t, v2)); got != "[7 10]" {
		t.Fatalf("v2 = %s", got)
	}
	// Several flushes with no change keep everything.
	flush(t, rt)
	flush(t, rt)
	if got := fmt.Sprint(contents(t, v2)); got != "[7 10]" {
		t.Fatalf("v2 = %s", got)
	}
}

func TestSourceJobAndSubscription(t *testing.T) {
	rt := newRuntime(t, &fakeInputs{})
	scan := &stream.Scan{Rel: 25, Name: "s", Kind: stream.ScanSource, Cols: cols, AppendOnly: true}
	j, err := rt.StartJob(JobSpec{ID: 1, Name: "v", Plan: &stream.Filter{Input: scan, Cond: gt(19)}, Cols: cols})
	if err != nil {
		t.Fatal(err)
	}
	// The source is finite: FLUSH waits for its end.
	flush(t, rt)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if got := fmt.Sprint(contents(t, j)); got != "[20 21 22 23 24]" {
		t.Fatalf("v = %s", got)
	}
	sub, err := rt.Subscribe(1, SubOptions{Snapshot: true, Progress: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	flush(t, rt)
	u, err := sub.Next(ctx)
	if err != nil || !u.Snapshot || u.Rows[0].NumRows() != 5 {
		t.Fatalf("first update %+v, %v", u, err)
	}
	u, err = sub.Next(ctx)
	if err != nil || u.Snapshot || len(u.Rows) != 0 || u.Epoch <= 0 {
		t.Fatalf("progress update %+v, %v", u, err)
	}
}

func TestSubscriptionOverflowEndsOnlyTheSubscriber(t *testing.T) {
	tbl := &fakeTable{}
	// No changelog, no spill directory: the second epoch ends it (53400).
	rt := New(Config{BarrierInterval: -1, SubscribeBufferBytes: 1}, &fakeInputs{tables: map[uint32]*fakeTable{100: tbl}})
	defer rt.Close()
	scan := &stream.Scan{Rel: 100, Name: "t", Kind: stream.ScanTable, Cols: cols}
	j, err := rt.StartJob(JobSpec{ID: 1, Name: "v", Plan: scan, Cols: cols})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := rt.Subscribe(1, SubOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	for i := int64(0); i < 4; i++ {
		tbl.insert(i, i+10) // the first epoch is taken, the second overflows
		flush(t, rt)
	}
	if got := len(contents(t, j)); got != 8 {
		t.Fatalf("view has %d rows, want 8", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var err2 error
	for err2 == nil {
		_, err2 = sub.Next(ctx)
	}
	if err2 == ctx.Err() || err2 == nil {
		t.Fatalf("subscription did not end: %v", err2)
	}
}

func TestStopJobAndFlushWithoutJobs(t *testing.T) {
	tbl := &fakeTable{rows: []int64{1}}
	rt := newRuntime(t, &fakeInputs{tables: map[uint32]*fakeTable{100: tbl}})
	flush(t, rt)
	scan := &stream.Scan{Rel: 100, Name: "t", Kind: stream.ScanTable, Cols: cols}
	if _, err := rt.StartJob(JobSpec{ID: 1, Name: "v", Plan: scan, Cols: cols}); err != nil {
		t.Fatal(err)
	}
	v2 := &stream.Scan{Rel: 1, Name: "v", Kind: stream.ScanView, Cols: cols}
	j2, err := rt.StartJob(JobSpec{ID: 2, Name: "w", Plan: v2, Cols: cols})
	if err != nil {
		t.Fatal(err)
	}
	flush(t, rt)
	rt.StopJob(1)
	flush(t, rt) // the downstream view fails (its input stopped); flush does not wait for it
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for j2.Err() == nil && ctx.Err() == nil {
		flush(t, rt)
	}
	if j2.Err() == nil {
		t.Fatal("downstream job did not fail when its input stopped")
	}
	rt.StopJob(2)
	flush(t, rt)
}

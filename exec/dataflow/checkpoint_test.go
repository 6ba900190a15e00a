package dataflow

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/storage/checkpoint"
)

// ckInputs are fakeInputs that resume: a table position is its log length,
// a source's position the number of rows it emitted.
type ckInputs struct {
	fakeInputs
	mu       sync.Mutex
	retained map[uint32]uint64
}

func (in *ckInputs) PositionLSN(p Position) uint64 { return uint64(p.(int)) }

func (in *ckInputs) TableFeedFrom(oid uint32, lsn uint64) (Feed, error) {
	t := in.tables[oid]
	t.mu.Lock()
	defer t.mu.Unlock()
	if int(lsn) > len(t.log) {
		return nil, fmt.Errorf("position %d is past the table's end", lsn)
	}
	return &fakeFeed{mu: &t.mu, log: &t.log, at: int(lsn)}, nil
}

func (in *ckInputs) ReleaseTable(oid uint32) {
	in.mu.Lock()
	defer in.mu.Unlock()
	delete(in.retained, oid)
}

func (in *ckInputs) RetainTable(oid uint32, lsn uint64) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.retained == nil {
		in.retained = map[uint32]uint64{}
	}
	in.retained[oid] = lsn
}

// OpenSourceAt reads a source of oid rows 0..oid-1 in batches of 7 from pos.
func (in *ckInputs) OpenSourceAt(oid uint32, pos []byte, _ func(error)) (RunFunc, func() []byte, bool, error) {
	n := int64(oid)
	var at int64
	if pos != nil {
		at = int64(binary.LittleEndian.Uint64(pos))
	}
	emitted := at
	run := func(ctx context.Context, emit func(arrow.RecordBatch) error) error {
		for i := at; i < n; i += 7 {
			var vals []int64
			for k := i; k < min(i+7, n); k++ {
				vals = append(vals, k)
			}
			emitted = min(i+7, n)
			if err := emit(rec(vals...)); err != nil {
				return err
			}
		}
		return nil
	}
	position := func() []byte { return binary.LittleEndian.AppendUint64(nil, uint64(emitted)) }
	return run, position, true, nil
}

func openStore(t *testing.T, dir string) (*checkpoint.Store, *checkpoint.Checkpoint) {
	t.Helper()
	s, cp, err := checkpoint.Open(dir, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	return s, cp
}

func checkpointNow(t *testing.T, rt *Runtime) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, err := rt.Checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestResumeFromCheckpoint checkpoints views over a table, a source and
// another view, changes the table after the checkpoint, "crashes" (the
// runtime goes away, the checkpoint and the table stay) and resumes: each
// view comes back with its checkpointed rows at once, reads only what came
// after its cut, and ends equal to an uninterrupted run.
func TestResumeFromCheckpoint(t *testing.T) {
	dir := t.TempDir()
	tbl := &fakeTable{rows: []int64{1, 5, 10}}
	in := &ckInputs{fakeInputs: fakeInputs{tables: map[uint32]*fakeTable{100: tbl}}}
	const srcRows = 20000
	specs := func() []JobSpec {
		scan := &stream.Scan{Rel: 100, Name: "t", Kind: stream.ScanTable, Cols: cols}
		src := &stream.Scan{Rel: srcRows, Name: "s", Kind: stream.ScanSource, Cols: cols, AppendOnly: true}
		vscan := &stream.Scan{Rel: 1, Name: "v1", Kind: stream.ScanView, Cols: cols}
		return []JobSpec{
			{ID: 1, Name: "v1", Plan: &stream.Filter{Input: scan, Cond: gt(2)}, Cols: cols},
			{ID: 2, Name: "v2", Plan: &stream.Filter{Input: vscan, Cond: gt(4)}, Cols: cols},
			{ID: 3, Name: "vs", Plan: &stream.Filter{Input: src, Cond: gt(-1)}, Cols: cols},
		}
	}
	store, _ := openStore(t, dir)
	rt := New(Config{BarrierInterval: -1, CheckpointInterval: -1, Checkpoints: store}, in)
	var jobs []*Job
	for _, s := range specs() {
		j, err := rt.StartJob(s)
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, j)
	}
	tbl.insert(3, 1)
	// The checkpoint cuts the source somewhere in the middle.
	c := checkpointNow(t, rt)
	atCkpt := [3][]int64{contentsAt(t, jobs[0], c), contentsAt(t, jobs[1], c), contentsAt(t, jobs[2], c)}
	if st, _ := rt.CheckpointStats(); st.Epoch != c || st.Jobs != 3 || st.Count != 1 {
		t.Fatalf("stats %+v", st)
	}
	if in.retained[100] != 1 { // the log holds one write: insert(3, 1)
		t.Errorf("table retained from %d, want 1", in.retained[100])
	}
	tbl.delete(5)
	tbl.insert(7)
	flush(t, rt)
	rt.Close() // the crash

	store2, cp := openStore(t, dir)
	if cp == nil || cp.Manifest.Epoch != c {
		t.Fatalf("recovered %v, want epoch %d", cp, c)
	}
	rt2 := New(Config{BarrierInterval: -1, CheckpointInterval: -1, Checkpoints: store2, Recovered: cp}, in)
	defer rt2.Close()
	var jobs2 []*Job
	for i, s := range specs() {
		j, err := rt2.StartJob(s)
		if err != nil {
			t.Fatal(err)
		}
		if !j.resumed {
			t.Fatalf("job %s did not resume", s.Name)
		}
		e, _, _ := j.Snapshot()
		if got := contents(t, j); e != c || !slices.Equal(got, atCkpt[i]) {
			t.Fatalf("%s at restart: epoch %d rows %v, want epoch %d rows %v", s.Name, e, got, c, atCkpt[i])
		}
		jobs2 = append(jobs2, j)
	}
	rt2.EndRecovery()
	flush(t, rt2)
	if got := fmt.Sprint(contents(t, jobs2[0])); got != "[3 7 10]" {
		t.Fatalf("v1 = %s", got)
	}
	if got := fmt.Sprint(contents(t, jobs2[1])); got != "[7 10]" {
		t.Fatalf("v2 = %s", got)
	}
	got := contents(t, jobs2[2])
	if len(got) != srcRows || got[0] != 0 || got[srcRows-1] != srcRows-1 || slices.Compact(slices.Clone(got)) == nil || len(slices.Compact(slices.Clone(got))) != srcRows {
		t.Fatalf("vs has %d rows (want each of 0..%d once)", len(got), srcRows-1)
	}
	// The resumed table view read only the two writes after its cut.
	if n := jobs2[0].Counters().RowsIn; n != 2 {
		t.Errorf("v1 read %d rows after resuming, want 2", n)
	}
	// Checkpoints go on after the restart, incrementally.
	c2 := checkpointNow(t, rt2)
	if st, _ := rt2.CheckpointStats(); st.Epoch != c2 || st.Full || st.Jobs != 3 {
		t.Fatalf("stats after restart %+v", st)
	}
	// Once no job reads the table, the next checkpoint releases it.
	rt2.StopJob(2)
	rt2.StopJob(1)
	checkpointNow(t, rt2)
	in.mu.Lock()
	_, kept := in.retained[100]
	in.mu.Unlock()
	if kept {
		t.Error("the table is still retained after its views were dropped")
	}
}

// contentsAt is contents, checking the snapshot is of epoch e.
func contentsAt(t *testing.T, j *Job, e uint64) []int64 {
	t.Helper()
	if got, _, _ := j.Snapshot(); got != e {
		// The view may have moved on only if an epoch after e completed;
		// Checkpoint returns right after e's commit, and nothing injects.
		t.Fatalf("%s is at epoch %d, want %d", j.spec.Name, got, e)
	}
	return contents(t, j)
}

// TestChangedPlanIsRebuilt: a job whose plan differs from the
// checkpoint's starts from its inputs.
func TestChangedPlanIsRebuilt(t *testing.T) {
	dir := t.TempDir()
	tbl := &fakeTable{rows: []int64{1, 5, 10}}
	in := &ckInputs{fakeInputs: fakeInputs{tables: map[uint32]*fakeTable{100: tbl}}}
	scan := &stream.Scan{Rel: 100, Name: "t", Kind: stream.ScanTable, Cols: cols}
	store, _ := openStore(t, dir)
	rt := New(Config{BarrierInterval: -1, CheckpointInterval: -1, Checkpoints: store}, in)
	if _, err := rt.StartJob(JobSpec{ID: 1, Name: "v1", Plan: &stream.Filter{Input: scan, Cond: gt(2)}, Cols: cols}); err != nil {
		t.Fatal(err)
	}
	checkpointNow(t, rt)
	rt.Close()
	store2, cp := openStore(t, dir)
	rt2 := New(Config{BarrierInterval: -1, CheckpointInterval: -1, Checkpoints: store2, Recovered: cp}, in)
	defer rt2.Close()
	j, err := rt2.StartJob(JobSpec{ID: 1, Name: "v1", Plan: &stream.Filter{Input: scan, Cond: gt(6)}, Cols: cols})
	if err != nil {
		t.Fatal(err)
	}
	if j.resumed {
		t.Fatal("a job with another plan resumed")
	}
	flush(t, rt2)
	if got := fmt.Sprint(contents(t, j)); got != "[10]" {
		t.Fatalf("v1 = %s", got)
	}
}

// TestCheckpointDuringCloseKeepsEveryJob: a checkpoint whose jobs are
// decided just before Close begins is committed with all of them. Close
// marking the jobs stopped must not make it leave them out (a restart
// would rebuild them from their inputs and drop their changelogs).
func TestCheckpointDuringCloseKeepsEveryJob(t *testing.T) {
	dir := t.TempDir()
	tbl := &fakeTable{rows: []int64{1, 5, 10}}
	in := &ckInputs{fakeInputs: fakeInputs{tables: map[uint32]*fakeTable{100: tbl}}}
	store, _ := openStore(t, dir)
	rt := New(Config{BarrierInterval: -1, CheckpointInterval: -1, Checkpoints: store}, in)
	var jobs []*Job
	for id := uint32(1); id <= 3; id++ {
		scan := &stream.Scan{Rel: 100, Name: "t", Kind: stream.ScanTable, Cols: cols}
		j, err := rt.StartJob(JobSpec{ID: id, Name: fmt.Sprintf("v%d", id), Plan: &stream.Filter{Input: scan, Cond: gt(2)}, Cols: cols})
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, j)
	}
	first := checkpointNow(t, rt)
	closed := make(chan struct{})
	testHookCkptKept = func(r *Runtime) {
		if r != rt {
			return
		}
		testHookCkptKept = nil
		go func() { r.Close(); close(closed) }()
		// Close marks every job stopped before it waits for this commit.
		for _, j := range jobs {
			for !j.stopped.Load() {
				runtime.Gosched()
			}
		}
	}
	defer func() { testHookCkptKept = nil }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	second, _ := rt.Checkpoint(ctx) // it may report the close
	<-closed

	_, cp := openStore(t, dir)
	if cp == nil {
		t.Fatal("no checkpoint recovered")
	}
	var meta ckptMeta
	if err := json.Unmarshal(cp.Manifest.Meta, &meta); err != nil {
		t.Fatal(err)
	}
	if cp.Manifest.Epoch != first && cp.Manifest.Epoch != second {
		t.Fatalf("recovered epoch %d, want %d or %d", cp.Manifest.Epoch, first, second)
	}
	if len(meta.Jobs) != 3 {
		t.Fatalf("checkpoint %d (the one during Close: %v) holds %d jobs, want 3", cp.Manifest.Epoch, cp.Manifest.Epoch == second, len(meta.Jobs))
	}
}

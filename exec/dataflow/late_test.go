package dataflow

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/exec/stream"
)

// memLate is a LATE ROWS INTO table that outlives the runtimes of a test:
// the ts of the rows stored, and the epoch recorded with them.
type memLate struct {
	mu     sync.Mutex
	ts     []int64
	stored uint64
	fail   bool   // Store fails (a crash before the write)
	before func() // if set, runs at the next Store before it writes
}

func (m *memLate) Store(rows []arrow.RecordBatch, _ []int64, epoch uint64) error {
	m.mu.Lock()
	f := m.before
	m.before = nil
	m.mu.Unlock()
	if f != nil {
		f()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail {
		return errors.New("the process died")
	}
	for _, r := range rows {
		ts := r.Column(0).(*array.Timestamp)
		for i := 0; i < ts.Len(); i++ {
			m.ts = append(m.ts, int64(ts.Value(i)))
		}
	}
	if epoch > 0 {
		m.stored = epoch
	}
	return nil
}

func (m *memLate) Stored() (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stored, nil
}

func (m *memLate) rows() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return fmt.Sprint(m.ts)
}

// injectWait completes an epoch without FLUSH (which would store the late
// rows): what the views do between checkpoints.
func injectWait(t *testing.T, rt *Runtime) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rt.WaitEpoch(ctx, rt.Inject()); err != nil {
		t.Fatal(err)
	}
}

// TestLateRowsStoredOnceThroughRestarts: with checkpoints, LATE ROWS INTO
// stores each late row once however the process dies: before the
// checkpoint after the drop (the replay drops the row again), after that
// checkpoint but before the store (the resumed checkpoint holds the row and
// the table does not), and after the store while a later checkpoint still
// holds the row (the table says it has it).
func TestLateRowsStoredOnceThroughRestarts(t *testing.T) {
	dir := t.TempDir()
	tbl := &tsTable{}
	in := &tsCkInputs{tsInputs{tables: map[uint32]*tsTable{1: tbl}}}
	late := &memLate{}
	start := func() (*Runtime, *Job) {
		store, cp := openStore(t, dir)
		rt := New(Config{BarrierInterval: -1, CheckpointInterval: -1, Checkpoints: store, Recovered: cp}, in)
		plan := &stream.EOWC{Input: tsScan(1, stream.ScanTable, &stream.ScanWatermark{Col: 0, Expr: minus(0)}), TimeCol: 0}
		j, err := rt.StartJob(JobSpec{ID: 10, Name: "v", Cols: tsCols, Plan: plan, LateRows: late})
		if err != nil {
			t.Fatal(err)
		}
		if cp != nil && !j.resumed {
			t.Fatal("the job did not resume")
		}
		rt.EndRecovery()
		return rt, j
	}

	rt, j := start()
	tbl.insert(10)
	flush(t, rt)
	tbl.insert(5) // late: the watermark is 10
	flush(t, rt)  // takes a checkpoint and stores the row
	if got := late.rows(); got != "[5]" {
		t.Fatalf("after FLUSH: %s", got)
	}
	// 1. Dropped, then the process dies before a checkpoint.
	tbl.insert(3)
	injectWait(t, rt)
	if c := j.Counters(); c.LateRows != 2 || late.rows() != "[5]" {
		t.Fatalf("before a checkpoint: %+v, stored %s", c, late.rows())
	}
	rt.Close()

	rt, j = start()
	flush(t, rt)
	if c := j.Counters(); c.LateRows != 1 || late.rows() != "[5 3]" {
		t.Fatalf("after the replay: %+v, stored %s", j.Counters(), late.rows())
	}
	// 2. Dropped and checkpointed; the process dies before the store.
	tbl.insert(2)
	injectWait(t, rt)
	late.mu.Lock()
	late.fail = true
	late.mu.Unlock()
	checkpointNow(t, rt)
	waitFor(t, func() bool { return j.Counters().LateLost == 1 })
	rt.Close()
	late.mu.Lock()
	late.fail = false
	late.mu.Unlock()
	rt, j = start()
	flush(t, rt)
	if got := late.rows(); got != "[5 3 2]" || j.Counters().LateRows != 0 {
		t.Fatalf("after resuming the checkpoint that holds the row: %+v, stored %s", j.Counters(), got)
	}
	// 3. Stored while a later checkpoint was cut, which holds the row too;
	// the process dies after both.
	tbl.insert(1)
	injectWait(t, rt)
	var ckErr error
	late.mu.Lock()
	late.before = func() { _, ckErr = rt.Checkpoint(context.Background()) }
	late.mu.Unlock()
	flush(t, rt)
	if ckErr != nil {
		t.Fatal(ckErr)
	}
	rt.Close()
	_, cp := openStore(t, dir)
	held, err := restoredLate(cp, 10)
	if err != nil || len(held) != 1 || held[0].ckpt >= cp.Manifest.Epoch {
		t.Fatalf("the last checkpoint (%d) holds %d late batches (%v), want the stored one of an earlier checkpoint", cp.Manifest.Epoch, len(held), err)
	}

	rt, _ = start()
	defer rt.Close()
	flush(t, rt)
	if got := late.rows(); got != "[5 3 2 1]" {
		t.Fatalf("after resuming a checkpoint whose late rows are stored: %s", got)
	}
}

// waitFor polls cond until it holds (10 s at most).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(time.Millisecond)
	}
}

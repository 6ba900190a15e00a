package dataflow

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/stream"
)

// tsCkInputs are tsInputs that resume: a table position is its log
// length; a source has no position of its own (the test pushes its
// batches), so it resumes "where it was".
type tsCkInputs struct{ tsInputs }

func (in *tsCkInputs) PositionLSN(p Position) uint64 { return uint64(p.(int)) }

func (in *tsCkInputs) TableFeedFrom(oid uint32, lsn uint64) (Feed, error) {
	t := in.tables[oid]
	t.mu.Lock()
	defer t.mu.Unlock()
	return &fakeFeed{mu: &t.mu, log: &t.log, at: int(lsn)}, nil
}

func (in *tsCkInputs) ReleaseTable(uint32)        {}
func (in *tsCkInputs) RetainTable(uint32, uint64) {}

func (in *tsCkInputs) OpenSourceAt(oid uint32, _ []byte, onErr func(error)) (RunFunc, func() []byte, bool, error) {
	run, finite, err := in.OpenSource(oid, onErr)
	return run, func() []byte { return []byte{1} }, finite, err
}

// TestResumedWatermarkKeepsIdleTimeout: a view over a table and one over a
// source, both with WATERMARK FOR ts AS ts - 3s WITH (idle_timeout = 10s),
// checkpoint, "crash" and resume on a clock that restarted elsewhere (the
// wall clock after a restart): the watermark comes back as it was, the
// idle timeout counts from the restart (not from the zero time: that moved
// the watermark to year 2262), and rows after the restart move it on.
func TestResumedWatermarkKeepsIdleTimeout(t *testing.T) {
	const s = int64(time.Second / time.Microsecond)
	w := &stream.ScanWatermark{Col: 0, Expr: minus(3 * s), IdleTimeout: 10 * time.Second}
	specs := []JobSpec{
		{ID: 10, Name: "vt", Plan: tsScan(1, stream.ScanTable, w), Cols: tsCols},
		{ID: 11, Name: "vs", Plan: tsScan(2, stream.ScanSource, w), Cols: tsCols},
	}
	for _, restartAt := range []time.Time{time.Unix(1000, 0), time.Unix(500, 0), time.Unix(90000, 0)} {
		t.Run(fmt.Sprint(restartAt.Unix()), func(t *testing.T) {
			dir := t.TempDir()
			tbl := &tsTable{}
			src := &tsSource{batches: make(chan arrow.RecordBatch)}
			in := &tsCkInputs{tsInputs{tables: map[uint32]*tsTable{1: tbl}, sources: map[uint32]*tsSource{2: src}}}
			store, _ := openStore(t, dir)
			clock := NewManualClock(time.Unix(1000, 0))
			rt := New(Config{BarrierInterval: -1, CheckpointInterval: -1, Checkpoints: store, Clock: clock}, in)
			var jobs []*Job
			for _, sp := range specs {
				j, err := rt.StartJob(sp)
				if err != nil {
					t.Fatal(err)
				}
				jobs = append(jobs, j)
			}
			tbl.insert(100 * s)
			src.batches <- tsRec(100 * s)
			// The source's batch goes through its reader goroutine, which
			// runs apart from the barriers flush injects: on a loaded machine
			// it may take many epochs to arrive (a hundred was once too few).
			for i := 0; mark(t, jobs[0]) != 97*s || mark(t, jobs[1]) != 97*s; i++ {
				if i == 10000 {
					t.Fatalf("watermarks %d %d, want %d", mark(t, jobs[0]), mark(t, jobs[1]), 97*s)
				}
				flush(t, rt)
			}
			checkpointNow(t, rt)
			rt.Close() // the crash

			store2, cp := openStore(t, dir)
			clock2 := NewManualClock(restartAt)
			rt2 := New(Config{BarrierInterval: -1, CheckpointInterval: -1, Checkpoints: store2, Recovered: cp, Clock: clock2}, in)
			defer rt2.Close()
			var jobs2 []*Job
			for _, sp := range specs {
				j, err := rt2.StartJob(sp)
				if err != nil {
					t.Fatal(err)
				}
				if !j.resumed {
					t.Fatalf("%s did not resume", sp.Name)
				}
				jobs2 = append(jobs2, j)
			}
			rt2.EndRecovery()
			ctx := context.Background()
			check := func(when string, want int64) {
				t.Helper()
				for _, j := range jobs2 {
					if m := mark(t, j); m != want {
						t.Fatalf("%s %s: watermark %d (%s), want %d", j.spec.Name, when, m, time.UnixMicro(m).UTC(), want)
					}
				}
			}
			flush(t, rt2)
			check("at restart", 97*s)
			if err := rt2.AdvanceClock(ctx, 9*time.Second); err != nil {
				t.Fatal(err)
			}
			check("9s after restart", 97*s)
			if err := rt2.AdvanceClock(ctx, time.Second); err != nil {
				t.Fatal(err)
			}
			check("10s idle after restart", 107*s)
			// A row after the restart: the delay applies, the idle time
			// counts from it.
			tbl.insert(200 * s)
			src.batches <- tsRec(200 * s)
			for i := 0; mark(t, jobs2[0]) != 197*s || mark(t, jobs2[1]) != 197*s; i++ {
				if i == 10000 {
					t.Fatalf("watermarks %d %d after a row, want %d", mark(t, jobs2[0]), mark(t, jobs2[1]), 197*s)
				}
				flush(t, rt2)
			}
			if err := rt2.AdvanceClock(ctx, 10*time.Second); err != nil {
				t.Fatal(err)
			}
			check("10s idle after the row", 207*s)
		})
	}
}

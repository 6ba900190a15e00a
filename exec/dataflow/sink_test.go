package dataflow

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/connector/sink"
	"github.com/streamsql/streamsql/connector/sink/blackhole"
	"github.com/streamsql/streamsql/exec/stream"
)

// A Sink job passes every output row to its sink, completes epochs (FLUSH
// waits for a finite source's end) and keeps no view.
func TestSinkJobCountsRowsAndCompletesEpochs(t *testing.T) {
	tbl := &fakeTable{rows: []int64{1, 5}}
	rt := newRuntime(t, &fakeInputs{tables: map[uint32]*fakeTable{100: tbl}})
	var rows, sum int64 // written on the sink's goroutine, read after a flush
	sink := blackhole.New(func(rec arrow.RecordBatch, ops []stream.Op) {
		c := &stream.Chunk{Rec: rec, Ops: ops}
		for i, v := range c.Rec.Column(0).(*array.Int64).Int64Values() {
			rows++
			sum += c.Op(i).Sign() * v
		}
	})
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

// logSink records the sink protocol's calls; its pending bytes are the
// values written since the last PreCommit.
type logSink struct {
	mu  sync.Mutex
	log []string
}

func (s *logSink) add(format string, args ...any) {
	s.mu.Lock()
	s.log = append(s.log, fmt.Sprintf(format, args...))
	s.mu.Unlock()
}

func (s *logSink) calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

func (s *logSink) NewWriter(ctx context.Context, w int) (sink.Writer, error) {
	s.add("new")
	return &logWriter{s: s}, nil
}

func (s *logSink) Recover(ctx context.Context, w int, epoch uint64, pending []byte) (sink.Writer, error) {
	s.add("recover %s", pending)
	return &logWriter{s: s}, nil
}

type logWriter struct {
	s    *logSink
	open []int64
}

func (w *logWriter) Write(ctx context.Context, rec arrow.RecordBatch, ops []stream.Op) error {
	w.open = append(w.open, rec.Column(0).(*array.Int64).Int64Values()...)
	return nil
}
func (w *logWriter) Barrier(ctx context.Context, e uint64) error { return nil }
func (w *logWriter) PreCommit(ctx context.Context, e uint64) ([]byte, error) {
	p := fmt.Sprint(w.open)
	w.open = nil
	w.s.add("precommit %s", p)
	return []byte(p), nil
}
func (w *logWriter) Commit(ctx context.Context, e uint64, p []byte) error {
	w.s.add("commit %s", p)
	return nil
}
func (w *logWriter) Status() sink.Status { return sink.Status{} }
func (w *logWriter) Close() error        { return nil }

// With checkpoints, a sink job pre-commits at a checkpoint barrier, commits
// once the checkpoint is durable (CommitSinks waits for it), and after a
// restart recovers with the checkpoint's pending bytes and writes only what
// came after the cut.
func TestSinkTwoPhaseCommitAndRecover(t *testing.T) {
	dir, tbl, in, spec := tableSinkSetup(t)
	store, _ := openStore(t, dir)
	rt := New(Config{BarrierInterval: -1, CheckpointInterval: -1, Checkpoints: store}, in)
	ls := &logSink{}
	j, err := rt.StartJob(spec(ls))
	if err != nil {
		t.Fatal(err)
	}
	flush(t, rt)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rt.CommitSinks(ctx); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ls.calls(), "; "); got != "new; precommit [1 5]; commit [1 5]" {
		t.Fatalf("calls: %s", got)
	}
	c := j.SinkCommitted()
	tbl.insert(7)
	flush(t, rt)
	checkpointNow(t, rt) // pre-commits [7]; suppose the crash comes before its commit
	tbl.insert(9)
	flush(t, rt)
	rt.Close()
	if c == 0 {
		t.Fatal("no committed epoch")
	}

	store2, cp := openStore(t, dir)
	rt2 := New(Config{BarrierInterval: -1, CheckpointInterval: -1, Checkpoints: store2, Recovered: cp}, in)
	defer rt2.Close()
	ls2 := &logSink{}
	if _, err := rt2.StartJob(spec(ls2)); err != nil {
		t.Fatal(err)
	}
	rt2.EndRecovery()
	flush(t, rt2)
	if err := rt2.CommitSinks(ctx); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ls2.calls(), "; "); got != "recover [7]; precommit [9]; commit [9]" {
		t.Fatalf("calls after restart: %s", got)
	}
}

// tableSinkSetup is a checkpoint directory, a table 100 holding 1 and 5,
// the inputs with it, and the spec of a sink job 1 of that table into s.
func tableSinkSetup(t *testing.T) (dir string, tbl *fakeTable, in *ckInputs, spec func(s sink.Sink) JobSpec) {
	tbl = &fakeTable{rows: []int64{1, 5}}
	in = &ckInputs{fakeInputs: fakeInputs{tables: map[uint32]*fakeTable{100: tbl}}}
	spec = func(s sink.Sink) JobSpec {
		scan := &stream.Scan{Rel: 100, Name: "t", Kind: stream.ScanTable, Cols: cols}
		return JobSpec{ID: 1, Name: "snk", Plan: scan, Cols: cols, Sink: s}
	}
	return t.TempDir(), tbl, in, spec
}

// memSink is a two-phase sink in memory whose writers fail on chosen
// calls: visible rows are those committed (once per epoch).
type memSink struct {
	mu      sync.Mutex
	visible []int64
	done    map[uint64]bool // epochs made visible
	calls   map[string]int
	failOn  map[string]int // call name -> fail on that call number
	opens   int
}

type memEpoch struct {
	E    uint64
	Rows []int64
}

func (s *memSink) call(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[name]++
	if s.failOn[name] == s.calls[name] {
		return fmt.Errorf("injected %s failure", name)
	}
	return nil
}

// commit makes the staged epochs up to upTo visible, each once; it
// returns the rows of the epochs it committed now or found committed
// (what a writer counts, as the Kafka writer does).
func (s *memSink) commit(staged []memEpoch, upTo uint64) (rows int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range staged {
		if st.E <= upTo {
			if !s.done[st.E] {
				s.done[st.E] = true
				s.visible = append(s.visible, st.Rows...)
			}
			rows += int64(len(st.Rows))
		}
	}
	return rows
}

func (s *memSink) NewWriter(ctx context.Context, w int) (sink.Writer, error) {
	s.mu.Lock()
	s.opens++
	s.mu.Unlock()
	return &memWriter{s: s}, nil
}

func (s *memSink) Recover(ctx context.Context, w int, epoch uint64, pending []byte) (sink.Writer, error) {
	var staged []memEpoch
	if len(pending) > 0 {
		if err := json.Unmarshal(pending, &staged); err != nil {
			return nil, err
		}
	}
	n := s.commit(staged, epoch)
	wr, err := s.NewWriter(ctx, w)
	if err == nil {
		wr.(*memWriter).rows = n
	}
	return wr, err
}

type memWriter struct {
	s      *memSink
	open   []int64
	staged []memEpoch
	rows   int64 // committed
}

func (w *memWriter) Write(ctx context.Context, rec arrow.RecordBatch, ops []stream.Op) error {
	if err := w.s.call("write"); err != nil {
		return err
	}
	w.open = append(w.open, rec.Column(0).(*array.Int64).Int64Values()...)
	return nil
}
func (w *memWriter) Barrier(ctx context.Context, e uint64) error { return nil }
func (w *memWriter) PreCommit(ctx context.Context, e uint64) ([]byte, error) {
	if err := w.s.call("precommit"); err != nil {
		return nil, err
	}
	w.staged = append(w.staged, memEpoch{e, w.open})
	w.open = nil
	return json.Marshal(w.staged)
}
func (w *memWriter) Commit(ctx context.Context, e uint64, p []byte) error {
	if err := w.s.call("commit"); err != nil {
		return err
	}
	w.rows += w.s.commit(w.staged, e)
	n := 0
	for n < len(w.staged) && w.staged[n].E <= e {
		n++
	}
	w.staged = w.staged[n:]
	return nil
}
func (w *memWriter) Status() sink.Status { return sink.Status{Rows: w.rows} }
func (w *memWriter) Close() error        { return nil }

// A writer that fails is reopened at the last durable checkpoint and the
// output after it is written again: every row becomes visible exactly
// once, the job does not fail, and the failures show in its status.
func TestSinkWriterFailureRetried(t *testing.T) {
	for _, failOn := range []map[string]int{{"write": 3}, {"precommit": 2}, {"commit": 2}, {"write": 2, "commit": 1, "precommit": 3}} {
		t.Run(fmt.Sprint(failOn), func(t *testing.T) {
			tbl := &fakeTable{rows: []int64{1, 2}}
			in := &ckInputs{fakeInputs: fakeInputs{tables: map[uint32]*fakeTable{100: tbl}}}
			store, _ := openStore(t, t.TempDir())
			rt := New(Config{BarrierInterval: -1, CheckpointInterval: -1, Checkpoints: store}, in)
			defer rt.Close()
			ms := &memSink{done: map[uint64]bool{}, calls: map[string]int{}, failOn: failOn}
			scan := &stream.Scan{Rel: 100, Name: "t", Kind: stream.ScanTable, Cols: cols, AppendOnly: true}
			j, err := rt.StartJob(JobSpec{ID: 1, Name: "snk", Plan: scan, Cols: cols, Sink: ms})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			want := []int64{1, 2}
			for i := int64(3); i <= 12; i++ {
				tbl.insert(i)
				want = append(want, i)
				flush(t, rt)
				if i%3 == 0 {
					checkpointNow(t, rt)
				}
			}
			if err := rt.CommitSinks(ctx); err != nil {
				t.Fatal(err)
			}
			if j.Err() != nil {
				t.Fatalf("the job failed: %v", j.Err())
			}
			ms.mu.Lock()
			got := slices.Clone(ms.visible)
			opens := ms.opens
			ms.mu.Unlock()
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("visible %v, want %v", got, want)
			}
			if opens < 2 {
				t.Fatalf("the writer was opened %d times", opens)
			}
			if st, _, _ := j.SinkStatus(); st.Errors == 0 || st.LastError == "" || st.Status != "" || st.Rows != int64(len(want)) {
				t.Fatalf("status %+v, want %d rows", st, len(want))
			}
		})
	}
}

// The sink's row count goes on across restarts: it is kept in each
// checkpoint with the pending, and a writer recovering to a checkpoint
// adds the rows it commits. A crash between a checkpoint and its commit
// counts those rows once.
func TestSinkRowsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	tbl := &fakeTable{rows: []int64{1, 2}}
	in := &ckInputs{fakeInputs: fakeInputs{tables: map[uint32]*fakeTable{100: tbl}}}
	ms := &memSink{done: map[uint64]bool{}, calls: map[string]int{}}
	scan := &stream.Scan{Rel: 100, Name: "t", Kind: stream.ScanTable, Cols: cols, AppendOnly: true}
	spec := JobSpec{ID: 1, Name: "snk", Plan: scan, Cols: cols, Sink: ms}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rows := func(j *Job) int64 {
		st, _, _ := j.SinkStatus()
		return st.Rows
	}
	next := int64(3)
	for run := 0; run < 3; run++ {
		store, cp := openStore(t, dir)
		rt := New(Config{BarrierInterval: -1, CheckpointInterval: -1, Checkpoints: store, Recovered: cp}, in)
		j, err := rt.StartJob(spec)
		if err != nil {
			t.Fatal(err)
		}
		rt.EndRecovery()
		for i := 0; i < 3; i++ {
			tbl.insert(next)
			next++
			flush(t, rt)
		}
		if err := rt.CommitSinks(ctx); err != nil {
			t.Fatal(err)
		}
		if got, want := rows(j), next-1; got != want {
			t.Fatalf("run %d: sink rows %d, want %d", run, got, want)
		}
		tbl.insert(next) // pre-committed by a checkpoint; the crash may come before its commit
		next++
		flush(t, rt)
		checkpointNow(t, rt)
		rt.Close()
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	got := slices.Clone(ms.visible)
	slices.Sort(got)
	var want []int64
	for i := int64(1); i < next; i++ {
		want = append(want, i)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("visible %v, want %v once each", got, want)
	}
}

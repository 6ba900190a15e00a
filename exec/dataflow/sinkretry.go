package dataflow

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/streamsql/streamsql/connector/sink"
	"github.com/streamsql/streamsql/exec/stream"
)

// Retrying a failed sink writer in place. When a writer call fails, the
// sink job closes the writer and, with backoff, opens a new one with
// Recover(base, basePending) — base being the last durable checkpoint
// holding the job (without checkpoints, the last epoch committed) — and
// writes again what the job output after base, which it keeps in memory
// (replayLog) until a later checkpoint becomes durable. The input never
// rewinds, so the retry is invisible to the rest of the dataflow (it
// waits: backpressure) and, since Recover discards what followed base,
// exactly-once holds. Writers must produce the same pending bytes when an
// epoch is written again with the same rows (the file sink's staged names
// are <epoch>-<n>), because a checkpoint in flight may already hold the
// first ones. When the kept output passes sinkReplayLimit (checkpoints
// failing for long), the job stops keeping it and a writer failure fails
// the job instead.

// sinkReplayLimit bounds the output a sink job keeps for a retry.
const sinkReplayLimit = 256 << 20

// Backoff between attempts to reopen a failed writer.
const (
	sinkRetryFirst = 100 * time.Millisecond
	sinkRetryMax   = 30 * time.Second
)

// replayItem is a chunk, or the barrier of epoch (chunk nil); ckpt: the
// barrier was a checkpoint's the job pre-committed at.
type replayItem struct {
	chunk *stream.Chunk
	epoch uint64
	ckpt  bool
}

// replayLog is the sink job's output since its base; sink goroutine only.
type replayLog struct {
	items []replayItem
	bytes int64
	off   bool // passed sinkReplayLimit: no retry until the next base
}

func (l *replayLog) addChunk(c *stream.Chunk) {
	if l.off {
		return
	}
	l.items = append(l.items, replayItem{chunk: c})
	l.bytes += chunkBytes(c)
	if l.bytes > sinkReplayLimit {
		l.items, l.bytes, l.off = nil, 0, true
	}
}

func (l *replayLog) addBarrier(e uint64, ckpt bool) {
	if !l.off {
		l.items = append(l.items, replayItem{epoch: e, ckpt: ckpt})
	}
}

// trim drops the items up to barrier e (the new base).
func (l *replayLog) trim(e uint64) {
	for i, it := range l.items {
		if it.chunk == nil && it.epoch == e {
			for _, d := range l.items[:i+1] {
				if d.chunk != nil {
					l.bytes -= chunkBytes(d.chunk)
				}
			}
			l.items = append(l.items[:0:0], l.items[i+1:]...)
			return
		}
	}
}

func chunkBytes(c *stream.Chunk) int64 {
	var n int64
	for _, col := range c.Rec.Columns() {
		for _, b := range col.Data().Buffers() {
			if b != nil {
				n += int64(b.Len())
			}
		}
	}
	return n + int64(len(c.Ops))
}

// setBase makes epoch e (pending p) the point a reopened writer recovers
// to, and drops the kept output up to it.
func (s *sinkState) setBase(e uint64, p []byte, rows int64) {
	if !s.replay.off { // once off, the job keeps nothing more: it fails on the next error
		s.replay.trim(e)
	}
	s.base, s.basePending, s.baseRows, s.hasBase = e, p, rows, true
}

// retryStatus is what a retrying sink job adds to its writer's Status.
type retryStatus struct {
	mu       sync.Mutex
	errors   int64
	last     string
	retrying string // "" when not retrying
}

func (r *retryStatus) note(err error, retrying bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.errors++
		r.last = err.Error()
	}
	r.retrying = ""
	if retrying && err != nil {
		r.retrying = "retrying: " + err.Error()
	}
}

func (r *retryStatus) apply(st *sink.Status) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st.Errors += r.errors
	if r.last != "" && st.LastError == "" {
		st.LastError = r.last
	}
	if r.retrying != "" {
		st.Status = r.retrying
	}
}

// reopenWriter opens the job's writer: at the start (cause nil) with
// Recover from the resumed checkpoint or NewWriter; after a failure
// (cause) by closing the failed one and, with backoff until it works or
// the job stops, recovering to the base and writing the kept output again.
func (j *Job) reopenWriter(ctx context.Context, cause error) (sink.Writer, error) {
	s := j.sink
	if cause != nil {
		cause = fmt.Errorf("sink %s: %w", j.spec.Name, cause)
		if s.replay.off {
			return nil, cause
		}
		j.rt.cfg.Logf("%v; reopening it (from epoch %d)", cause, s.base)
		if b := s.w.Load(); b != nil {
			b.w.Close()
			s.w.Store(&writerBox{closedWriter{b.w}, b.rows}) // its Status still shows; no second Close
		}
	}
	wait := sinkRetryFirst
	for {
		if cause != nil {
			s.retry.note(cause, true)
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return nil, cause
			}
			wait = min(wait*2, sinkRetryMax)
		}
		w, err := j.openAndReplay(ctx)
		if err == nil {
			s.w.Store(&writerBox{w, s.baseRows})
			if cause != nil {
				s.retry.note(nil, false)
				j.rt.cfg.Logf("sink %s: writing again", j.spec.Name)
			}
			return w, nil
		}
		if w != nil {
			w.Close()
		}
		if ctx.Err() != nil || cause == nil {
			// The first open fails the job: CREATE SINK reports it (a
			// connector retries inside NewWriter / Recover what it can).
			return nil, fmt.Errorf("sink %s: %w", j.spec.Name, err)
		}
		cause = fmt.Errorf("sink %s: %w", j.spec.Name, err)
	}
}

// openAndReplay opens a writer at the base and writes the kept output.
func (j *Job) openAndReplay(ctx context.Context) (sink.Writer, error) {
	s := j.sink
	var w sink.Writer
	var err error
	if s.hasBase {
		w, err = j.spec.Sink.Recover(ctx, 0, s.base, s.basePending)
	} else {
		w, err = j.spec.Sink.NewWriter(ctx, 0)
	}
	if err != nil {
		return nil, err
	}
	if s.hasBase && s.base > s.committed.Load() {
		s.committed.Store(s.base) // Recover made everything up to the base visible
	}
	// What was pre-committed after the base is pre-committed again as the
	// kept output is written again.
	s.pend = nil
	for _, it := range s.replay.items {
		if it.chunk != nil {
			if err := w.Write(ctx, it.chunk.Rec, it.chunk.Ops); err != nil {
				return w, err
			}
			continue
		}
		e := it.epoch
		if !it.ckpt {
			if err := w.Barrier(ctx, e); err != nil {
				return w, err
			}
			continue
		}
		p, err := w.PreCommit(ctx, e)
		if err != nil {
			return w, err
		}
		j.preCommitted(pendingEpoch{e, p, s.baseRows + w.Status().Rows})
	}
	return w, nil
}

// closedWriter is a writer closed after a failure, kept for its Status.
type closedWriter struct{ sink.Writer }

func (closedWriter) Close() error { return nil }

package kafka

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamsql/streamsql/connector/sink"
	"github.com/streamsql/streamsql/exec/stream"
)

// aloWriter is the at-least-once writer (sink.delivery-guarantee =
// 'at-least-once'): an idempotent producer that sends rows as they come
// and waits for their acknowledgment at every barrier. Consumers see rows
// without waiting for checkpoints; after a crash the rows written after
// the last checkpoint are sent again. Owned by the job's sink goroutine;
// Status may be called from any goroutine.
type aloWriter struct {
	c       *sinkConfig
	enc     recordEncoder
	emitFn  func(key, value []byte)
	cl      *kgo.Client
	hook    *errHook
	ctx     context.Context // the Write in progress
	now     time.Time       // its time: the records' timestamp
	emitErr error           // the first error met by emit in this Write
	arena   []byte          // this epoch's keys and values, append only
	recs    recordPool      // back from onProduced
	sent    int64           // records produced since the last flush
	failed  atomic.Pointer[error]
	st      statusBox
}

func newALOWriter(ctx context.Context, c *sinkConfig, writer int) (sink.Writer, error) {
	w := &aloWriter{c: c, enc: c.newEncoder(), hook: &errHook{}}
	w.emitFn = w.emit
	cl, err := kgo.NewClient(c.producerOpts(w.hook)...)
	if err != nil {
		return nil, fmt.Errorf("kafka sink: %w", err)
	}
	w.cl = cl
	if err := backoff(ctx, &w.st, "creating topics", func() error { return ensureTopics(ctx, cl, c) }); err != nil {
		cl.Close()
		return nil, err
	}
	return w, nil
}

func (w *aloWriter) onProduced(r *kgo.Record, err error) {
	if err != nil {
		firstErr(&w.failed, err)
	}
	w.recs.put(r)
}

func (w *aloWriter) Write(ctx context.Context, rec arrow.RecordBatch, ops []stream.Op) error {
	w.ctx, w.now = ctx, time.Now()
	err := w.enc.Encode(ctx, rec, ops, w.emitFn)
	w.ctx = nil
	if err != nil {
		return fmt.Errorf("kafka sink %s: encoding: %w", w.c.name, err)
	}
	if err, w.emitErr = w.emitErr, nil; err != nil {
		return fmt.Errorf("kafka sink %s: %w", w.c.name, err)
	}
	return nil
}

func (w *aloWriter) emit(key, value []byte) {
	r := w.recs.get()
	r.Key, r.Value, r.Timestamp = w.keep(key), w.keep(value), w.now
	if err := waitRoom(w.ctx, w.cl, &w.st, w.hook, len(key)+len(value)); err != nil && w.emitErr == nil {
		w.emitErr = err
	}
	w.cl.Produce(w.ctx, r, w.onProduced)
	w.sent++
}

// keep copies b into the arena (the encoder reuses b); the arena is only
// appended to, so earlier records stay valid.
func (w *aloWriter) keep(b []byte) []byte {
	if b == nil {
		return nil
	}
	if cap(w.arena)-len(w.arena) < len(b) {
		w.arena = make([]byte, 0, max(1<<20, len(b)))
	}
	s := len(w.arena)
	w.arena = append(w.arena, b...)
	return w.arena[s:len(w.arena):len(w.arena)]
}

// flush waits until every record sent is acknowledged. A record that
// failed for good fails the job, which restarts from its checkpoint and
// sends the rows again.
func (w *aloWriter) flush(ctx context.Context) error {
	if err := waitFor(ctx, &w.st, w.hook, "acknowledgments", w.cl.Flush); err != nil {
		return fmt.Errorf("kafka sink %s: %w", w.c.name, err)
	}
	if e := w.failed.Load(); e != nil {
		w.st.errored(*e, "")
		return fmt.Errorf("kafka sink %s: producing to %s: %w", w.c.name, w.c.topic, *e)
	}
	n := w.sent
	w.sent = 0
	w.st.update(func(s *sink.Status) { s.Rows += n })
	return nil
}

func (w *aloWriter) Barrier(ctx context.Context, _ uint64) error { return w.flush(ctx) }

func (w *aloWriter) PreCommit(ctx context.Context, _ uint64) ([]byte, error) {
	return nil, w.flush(ctx)
}

func (w *aloWriter) Commit(_ context.Context, epoch uint64, _ []byte) error {
	w.st.update(func(s *sink.Status) { s.CommittedEpoch = max(s.CommittedEpoch, epoch) })
	return nil
}

func (w *aloWriter) Status() sink.Status { return w.st.get() }

func (w *aloWriter) Close() error {
	w.cl.Close()
	return nil
}

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

// txnWriter is the exactly-once writer: one Kafka transaction per
// checkpoint epoch (or several, one per part, when the epoch is larger
// than sink.max-epoch-bytes), each carrying a progress record; the
// epoch's encoded records are also its pending, so that a commit that did
// not happen before a crash is redone from the checkpoint. The design and
// the argument for every crash point are in docs/contributing/sinks-kafka.md.
//
// Rows are produced into an open transaction while the epoch runs (early),
// so that Commit only flushes, adds the progress record and ends the
// transaction; the transactions of the epoch being written and of the one
// waiting for its checkpoint use different transactional ids of a fixed
// pool of poolSize. Owned by the job's sink goroutine; Status may be
// called from any goroutine.
type txnWriter struct {
	c      *sinkConfig
	writer int
	enc    recordEncoder
	emitFn func(key, value []byte)
	admin  *kgo.Client
	hook   *errHook
	prog   *progressReader
	slots  []*slot

	ctx      context.Context // the Write in progress (for emit)
	now      time.Time       // its time: the records' timestamp (one clock read a batch)
	emitErr  error           // the first error met by emit in this Write
	cur      *epochBatch     // rows since the last PreCommit; nil: none yet
	prepared []*epochBatch   // PreCommitted, not committed, in epoch order

	committed   uint64 // the last epoch known committed
	skipping    bool   // drop rows until a barrier of epoch >= skipThrough
	skipThrough uint64

	recs     recordPool // records handed out by newRecord, back from the slots' promises
	lastSize int        // the bytes of the last epoch, to size the next one's buffer
	pool     chunkPool  // chunks of committed epochs, for the next ones
	st       statusBox
}

// slot is one transactional producer of the pool.
type slot struct {
	id      string
	cl      *kgo.Client
	hook    *errHook
	owner   *epochBatch // the batch whose early transaction it carries
	failed  atomic.Pointer[error]
	promise func(*kgo.Record, error)
}

func (s *slot) onProduced(_ *kgo.Record, err error) {
	if err != nil {
		firstErr(&s.failed, err)
	}
}

func (w *txnWriter) newSlotClient(s *slot) error {
	s.hook = &errHook{}
	opts := append(w.c.producerOpts(s.hook), kgo.TransactionalID(s.id), kgo.TransactionTimeout(w.c.txnTimeout))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("kafka sink: %w", err)
	}
	s.cl = cl
	s.failed.Store(nil)
	return nil
}

// fence (re)initializes the slot's transactional id: the broker aborts
// any transaction the id still has open and refuses its older producers.
// The slot's client is replaced, since its state after a failed
// transaction is not to be trusted.
func (w *txnWriter) fence(ctx context.Context, s *slot) error {
	if s.cl != nil {
		s.cl.Close()
	}
	if err := w.newSlotClient(s); err != nil {
		return err
	}
	return waitFor(ctx, &w.st, s.hook, "the transaction coordinator ("+s.id+")", func(ctx context.Context) error {
		_, _, err := s.cl.ProducerID(ctx)
		return err
	})
}

// openTxnWriter opens an exactly-once writer: it creates the topics,
// fences every transactional id of the pool, reads the progress topic and,
// when recovering, commits what pending holds that the progress topic
// does not show committed.
func openTxnWriter(ctx context.Context, c *sinkConfig, writer int, epoch uint64, pending []byte, recovering bool) (_ sink.Writer, err error) {
	w := &txnWriter{c: c, writer: writer, enc: c.newEncoder(), hook: &errHook{}}
	w.emitFn = w.emit
	w.admin, err = kgo.NewClient(append(c.client.Opts(), kgo.WithHooks(w.hook))...)
	if err != nil {
		return nil, fmt.Errorf("kafka sink: %w", err)
	}
	defer func() {
		if err != nil {
			w.Close()
		}
	}()
	w.prog = newProgressReader(w.admin, c, writer)
	w.prog.st = &w.st
	if err := backoff(ctx, &w.st, "creating topics", func() error { return ensureTopics(ctx, w.admin, c) }); err != nil {
		return nil, err
	}
	for i := 0; i < poolSize; i++ {
		s := &slot{id: fmt.Sprintf("%s-%d-%d", c.txnPrefix, writer, i)}
		s.promise = func(r *kgo.Record, err error) {
			s.onProduced(r, err)
			w.recs.put(r)
		}
		w.slots = append(w.slots, s)
		if err := backoff(ctx, &w.st, "fencing "+s.id, func() error { return w.fence(ctx, s) }); err != nil {
			return nil, err
		}
	}
	var p progress
	var ok bool
	if err := backoff(ctx, &w.st, "reading the progress topic", func() (err error) {
		p, ok, err = w.prog.read(ctx)
		return err
	}); err != nil {
		return nil, err
	}
	if ok {
		w.committed = p.Epoch
		if p.Part < p.Parts-1 && w.committed > 0 {
			w.committed-- // the epoch is only partly committed
		}
	}
	if recovering {
		batches, err := decodePending(pending)
		if err != nil {
			return nil, fmt.Errorf("kafka sink %s: checkpoint %d: %w", c.name, epoch, err)
		}
		for _, b := range batches {
			if err := w.commitBatch(ctx, b); err != nil {
				return nil, err
			}
		}
		if ok && p.Epoch > epoch {
			// A later epoch was committed before the crash (the runtime
			// fell back to an older checkpoint): its rows come again
			// in the replay and are dropped.
			w.skipping, w.skipThrough = true, p.Epoch
		}
		w.committed = max(w.committed, epoch)
	}
	w.st.update(func(s *sink.Status) { s.CommittedEpoch = w.committed })
	return w, nil
}

// Write encodes rec's rows into the open epoch and produces them into its
// early transaction while that is allowed.
func (w *txnWriter) Write(ctx context.Context, rec arrow.RecordBatch, ops []stream.Op) error {
	if w.skipping || rec.NumRows() == 0 {
		return nil
	}
	w.ctx, w.now = ctx, time.Now()
	if w.cur == nil {
		w.cur = &epochBatch{} // its first chunk is sized like the last epoch (add)
		if err := w.startEarly(ctx); err != nil {
			return err
		}
		w.updateOpen()
	} else if w.cur.mayStartLate(w.c.txnTimeout / 2) {
		if err := w.startEarly(ctx); err != nil {
			return err
		}
	}
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

// startEarly begins an early transaction for cur on a free slot; without
// one the epoch's rows are only kept, and sent at Commit unless a later
// Write can start it (mayStartLate): each epoch that goes without an
// early transaction makes the next one wait too, so without a late start
// one slow checkpoint would leave every later epoch sent at its commit.
//
// Order: a partition's log keeps records in the order they were appended,
// and read_committed consumers read it in that order. So cur may produce
// early only once every earlier uncommitted epoch has all its records
// appended in an early transaction that will commit: flushed, none
// failed, nothing left to send at Commit. Otherwise those records would
// be appended (at Commit) after cur's, and a consumer would see a later
// row of a key before an earlier one.
func (w *txnWriter) startEarly(ctx context.Context) error {
	for _, p := range w.prepared {
		if p.slot == nil || p.early != p.n {
			return nil
		}
		if !p.flushed {
			if err := waitFor(ctx, &w.st, p.slot.hook, "acknowledgments", p.slot.cl.Flush); err != nil {
				return fmt.Errorf("kafka sink %s: %w", w.c.name, err)
			}
			p.flushed = true
		}
		if p.slot.failed.Load() != nil {
			return nil
		}
	}
	s := w.freeSlot()
	if s == nil || s.cl.BeginTransaction() != nil {
		return nil
	}
	s.failed.Store(nil)
	s.owner = w.cur
	b := w.cur
	b.slot, b.earlyOn = s, true
	if b.openedAt.IsZero() {
		b.openedAt = time.Now()
	}
	// Starting late (an earlier epoch held the start back until it was
	// committed): the rows kept so far go first, in their order.
	var err error
	if rerr := b.scan(recPos{}, func(_ recPos, k, v []byte) bool {
		if err = waitRoom(ctx, s.cl, &w.st, s.hook, len(k)+len(v)); err != nil {
			return false
		}
		s.cl.Produce(ctx, w.newRecord(k, v), s.promise)
		b.early++
		return true
	}); rerr != nil {
		err = rerr
	}
	if err != nil { // as for an error of emit's: the job reopens the writer
		return fmt.Errorf("kafka sink %s: %w", w.c.name, err)
	}
	return nil
}

// abortLater aborts the early transactions of the epochs after b before
// b's rows are sent at commit (see startEarly: they must come first); the
// rows of those epochs are then sent at their own commits.
func (w *txnWriter) abortLater(ctx context.Context, b *epochBatch) error {
	later := append([]*epochBatch(nil), w.prepared...)
	if w.cur != nil {
		later = append(later, w.cur)
	}
	for _, x := range later {
		s := x.slot
		if x == b || s == nil || x.epoch < b.epoch && x != w.cur {
			continue
		}
		x.stopEarly()
		x.slot, s.owner, x.noEarly = nil, nil, true
		if err := backoff(ctx, &w.st, "fencing "+s.id, func() error { return w.fence(ctx, s) }); err != nil {
			return err
		}
	}
	return nil
}

func (w *txnWriter) freeSlot() *slot {
	for _, s := range w.slots {
		if s.owner == nil {
			return s
		}
	}
	return nil
}

func (w *txnWriter) emit(key, value []byte) {
	b := w.cur
	if b.earlyOn && (b.slot.failed.Load() != nil ||
		(b.n&1023 == 0 && time.Since(b.openedAt) > w.c.txnTimeout/2)) {
		b.stopEarly()
	}
	k, v := b.add(key, value, w.c.maxEpochBytes, w.lastSize, &w.pool)
	if b.earlyOn {
		if err := waitRoom(w.ctx, b.slot.cl, &w.st, b.slot.hook, len(k)+len(v)); err != nil && w.emitErr == nil {
			w.emitErr = err
		}
		b.slot.cl.Produce(w.ctx, w.newRecord(k, v), b.slot.promise)
		b.early++
	}
}

func (w *txnWriter) newRecord(k, v []byte) *kgo.Record {
	r := w.recs.get()
	r.Key, r.Value, r.Timestamp = k, v, w.now
	return r
}

// Barrier ends a non-checkpoint epoch: the rows stay in the open
// transaction.
func (w *txnWriter) Barrier(_ context.Context, epoch uint64) error {
	if w.skipping && epoch >= w.skipThrough {
		w.skipping = false
	}
	return nil
}

// PreCommit ends checkpoint epoch e: its rows (and those of any earlier
// epoch not yet committed) are the pending the runtime stores.
func (w *txnWriter) PreCommit(_ context.Context, epoch uint64) ([]byte, error) {
	if w.skipping && epoch >= w.skipThrough {
		w.skipping = false
	}
	if b := w.cur; b != nil {
		w.cur = nil
		b.epoch = epoch
		b.stopEarly()
		b.cut()
		w.prepared = append(w.prepared, b)
		w.lastSize = min(b.size, w.c.maxEpochBytes)
	} else {
		w.pool.drop() // an empty epoch: the sink went quiet, its memory goes
	}
	return encodePending(w.prepared), nil
}

// Commit commits every prepared epoch up to e, in order.
func (w *txnWriter) Commit(ctx context.Context, epoch uint64, _ []byte) error {
	for len(w.prepared) > 0 && w.prepared[0].epoch <= epoch {
		b := w.prepared[0]
		if err := w.commitBatch(ctx, b); err != nil {
			return err
		}
		w.recycle(b)
		w.prepared[0] = nil
		w.prepared = w.prepared[1:]
		w.updateOpen()
	}
	if epoch > w.committed {
		w.committed = epoch
	}
	w.st.update(func(s *sink.Status) { s.CommittedEpoch = w.committed })
	return nil
}

// recycle gives the chunks of committed batch b to the pool. Nothing
// reads them any more: every producer that was sent records pointing
// into them has had them acknowledged (a flush) or has been closed (a
// fence), and a batch whose chunks a pending aliases is shared.
func (w *txnWriter) recycle(b *epochBatch) {
	if !b.shared {
		w.pool.put(b.chunks, w.lastSize+w.lastSize/2+maxChunk)
	}
	b.chunks = nil
}

// commitBatch makes batch b visible exactly once: its early transaction
// commits with the progress record of its last part; if that fails (or there was
// none), the parts the progress topic does not show committed are sent
// again, each in its own transaction.
func (w *txnWriter) commitBatch(ctx context.Context, b *epochBatch) error {
	from := 0
	if s := b.slot; s != nil {
		b.slot, s.owner = nil, nil
		// Nothing went out early (or, a bug, not whole parts): the
		// transaction is ended unused, as a failed commit's is, and the
		// parts are sent below.
		ep := b.earlyParts()
		committed := false
		if ep > 0 && b.cuts[ep-1] == b.early {
			if err := w.commitEarly(ctx, s, b); err != nil {
				w.st.errored(err, fmt.Sprintf("committing epoch %d: %v", b.epoch, err))
			} else {
				committed, from = true, ep
			}
		}
		if !committed {
			if err := backoff(ctx, &w.st, "fencing "+s.id, func() error { return w.fence(ctx, s) }); err != nil {
				return err
			}
		}
	}
	if from == 0 && b.parts() > 0 {
		// What committed before is what the progress topic says.
		var p progress
		var ok bool
		if err := backoff(ctx, &w.st, "reading the progress topic", func() (err error) {
			p, ok, err = w.prog.read(ctx)
			return err
		}); err != nil {
			return err
		}
		if ok && p.Epoch > b.epoch {
			from = b.parts()
		} else if ok && p.Epoch == b.epoch {
			from = p.Part + 1
		}
	}
	if from < b.parts() {
		if err := w.abortLater(ctx, b); err != nil {
			return err
		}
	}
	for k := from; k < b.parts(); k++ {
		if err := w.sendPart(ctx, b, k); err != nil {
			return err
		}
	}
	w.st.update(func(s *sink.Status) { s.Rows += int64(b.n) })
	return nil
}

func (w *txnWriter) commitEarly(ctx context.Context, s *slot, b *epochBatch) error {
	// The progress record joins the records still in flight: one flush
	// waits for both (the transaction makes them visible together).
	p := progress{Sink: w.c.name, Writer: w.writer, Epoch: b.epoch, Part: b.earlyParts() - 1, Parts: b.parts()}
	s.cl.Produce(ctx, progressRecord(w.c, w.writer, p), s.promise)
	if err := waitFor(ctx, &w.st, s.hook, "acknowledgments", s.cl.Flush); err != nil {
		return err
	}
	if e := s.failed.Load(); e != nil {
		return *e
	}
	return s.cl.EndTransaction(ctx, kgo.TryCommit)
}

// sendPart sends part k of b in a transaction of its own with its
// progress record, until it is committed: after a failure the slot is
// fenced and the progress topic says whether the commit happened.
func (w *txnWriter) sendPart(ctx context.Context, b *epochBatch, k int) error {
	s := w.freeSlot()
	if s == nil {
		return fmt.Errorf("kafka sink %s: no free producer to commit epoch %d", w.c.name, b.epoch)
	}
	what := fmt.Sprintf("sending epoch %d part %d of %d", b.epoch, k+1, b.parts())
	return backoff(ctx, &w.st, what, func() error {
		err := w.sendOnce(ctx, s, b, k)
		if err == nil {
			return nil
		}
		if ferr := w.fence(ctx, s); ferr != nil {
			return ferr
		}
		p, ok, perr := w.prog.read(ctx)
		if perr != nil {
			return perr
		}
		if ok && p.done(b.epoch, k) {
			return nil
		}
		return err
	})
}

func (w *txnWriter) sendOnce(ctx context.Context, s *slot, b *epochBatch, k int) error {
	recs, err := b.part(k)
	if err != nil {
		return err
	}
	if err := s.cl.BeginTransaction(); err != nil {
		return err
	}
	s.failed.Store(nil)
	p := progress{Sink: w.c.name, Writer: w.writer, Epoch: b.epoch, Part: k, Parts: b.parts()}
	recs = append(recs, progressRecord(w.c, w.writer, p))
	for _, r := range recs {
		s.cl.Produce(ctx, r, s.promise)
	}
	if err := waitFor(ctx, &w.st, s.hook, "acknowledgments", s.cl.Flush); err != nil {
		return err
	}
	if e := s.failed.Load(); e != nil {
		return *e
	}
	return s.cl.EndTransaction(ctx, kgo.TryCommit)
}

// updateOpen shows the age of the oldest rows not yet committed.
func (w *txnWriter) updateOpen() {
	var t time.Time
	if len(w.prepared) > 0 {
		t = w.prepared[0].openedAt
	} else if w.cur != nil {
		t = w.cur.openedAt
		if t.IsZero() {
			t = time.Now()
			w.cur.openedAt = t
		}
	}
	w.st.setOpen(t)
}

// Status reports the writer's progress.
func (w *txnWriter) Status() sink.Status { return w.st.get() }

// Close aborts the open transactions (best effort, so that read_committed
// consumers are not held back until they time out) and releases the
// producers.
func (w *txnWriter) Close() error {
	for _, s := range w.slots {
		if s.cl == nil {
			continue
		}
		if s.owner != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = s.cl.AbortBufferedRecords(ctx)
			_ = s.cl.EndTransaction(ctx, kgo.TryAbort)
			cancel()
			s.owner = nil
		}
		s.cl.Close()
		s.cl = nil
	}
	if w.admin != nil {
		w.admin.Close()
		w.admin = nil
	}
	return nil
}

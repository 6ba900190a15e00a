package dataflow

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/storage/changelog"
	"github.com/streamsql/streamsql/types"
)

// SubOptions are a subscription's options.
type SubOptions struct {
	// Snapshot sends the view's rows at the start (as inserts).
	Snapshot bool
	// Progress sends an (empty) Update for every completed epoch, changed
	// or not.
	Progress bool
}

// Update is what a subscription reads: the initial snapshot, or the net
// changes of one epoch.
type Update struct {
	Epoch    uint64
	Time     time.Time // the epoch's wall-clock time
	Snapshot bool      // Rows is the view's content as of Epoch (all inserts)
	Rows     []arrow.RecordBatch
	// Ops has one op per row of Rows (concatenated); nil means all inserts.
	Ops []stream.Op
}

// Subscription reads a view's changes into a bounded buffer of its own:
// the view never waits for it. A subscriber whose unread changes exceed
// its byte bound (Config.SubscribeBufferBytes), or would take all
// subscribers past theirs (Config.SubscribeMemoryLimit), goes on reading
// from the view's durable changelog instead (toLog); where the view keeps
// no usable changelog (a SUBSCRIBE of a table or query, a failed log) it
// spills its later updates to a file of its own (spill.go) and reads them
// back in order. So nothing is lost and memory stays bounded; only
// without a spill directory, or past the spill's bound, the subscription
// ends with an error (53400). Next and TryNext are for one goroutine; the
// view's goroutine pushes concurrently.
type Subscription struct {
	opts  SubOptions
	rt    *Runtime
	limit int64  // Config.SubscribeBufferBytes
	start uint64 // the epoch the snapshot is taken at
	job   *Job
	sub   *changeSub
	onEnd func() // run once by Close (e.g. stop a private job)

	// tail, for a subscription resumed after an epoch (SubscribeSince),
	// reads the view's changelog; the view only signals its epochs.
	tail      *changelog.Cursor
	cols      []types.Column
	tailEpoch uint64 // the last epoch the view completed (guarded by mu)
	sent      uint64 // the last epoch returned (Next's goroutine)
	popped    uint64 // the epoch of the last update taken from queue (guarded by mu)

	mu     sync.Mutex
	queue  []queued
	bytes  int64         // the cost of queue, also counted in rt.subMem
	spill  *spillFile    // non-nil while updates go to disk (after queue)
	err    error         // set when the subscription ended
	signal chan struct{} // capacity 1: something was queued or it ended
	closed bool
	// started is when it was made (wall clock; fixed).
	started time.Time

	// id numbers the subscription in the runtime (fixed); pushed and
	// taken count the change rows handed to it and the ones its reader
	// took (snapshots not counted): their difference is its lag (sublag.go).
	id     int64
	pushed atomic.Int64
	taken  atomic.Int64
	// reached is the epoch of the last update its reader took.
	reached atomic.Uint64
}

// Subscribe starts reading view id's changelog after the last injected
// epoch (Start). Rows committed after that epoch completed come as changes
// (WaitEpoch(ctx, sub.Start()) waits for it).
func (rt *Runtime) Subscribe(id uint32, opts SubOptions) (*Subscription, error) {
	return rt.subscribe(id, 0, opts, nil)
}

// subscribe subscribes to job id after epoch after (0: the last injected
// one).
func (rt *Runtime) subscribe(id uint32, after uint64, opts SubOptions, onEnd func()) (*Subscription, error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	j := rt.jobs[id]
	if j == nil {
		return nil, pgerr.New(pgerr.ObjectNotInPrerequisiteState, "materialized view %d is not running", id)
	}
	if j.view == nil {
		return nil, errNoView
	}
	if after == 0 {
		after = rt.epoch
	}
	s := &Subscription{opts: opts, rt: rt, limit: rt.cfg.SubscribeBufferBytes, start: after, job: j, signal: make(chan struct{}, 1), onEnd: onEnd,
		cols: j.spec.Cols, popped: after, id: subIDs.Add(1), started: time.Now()}
	s.reached.Store(after)
	s.sub = &changeSub{client: s}
	j.subscribe(s.sub, after)
	return s, nil
}

// SubscribeQuery runs spec as a private job and subscribes to it; Close
// stops the job. The subscription starts after the job's first epoch,
// injected now, so its snapshot holds the query's rows as backfilled from
// its inputs (rather than arriving as the first epoch's inserts, even with
// Snapshot off).
func (rt *Runtime) SubscribeQuery(spec JobSpec, opts SubOptions) (*Subscription, error) {
	j, err := rt.StartJob(spec)
	if err != nil {
		return nil, err
	}
	rt.Inject() // the job's first epoch
	return rt.subscribe(spec.ID, j.first, opts, func() { rt.StopJob(spec.ID) })
}

// Start is the epoch the subscription's snapshot is taken at: the changes
// it reads are those of later epochs.
func (s *Subscription) Start() uint64 { return s.start }

// push queues a view's item; false ends the subscriber (overflow or closed).
func (s *Subscription) push(it subItem) bool {
	ok := s.pushItem(it)
	if ok && it.changes != nil && !it.snapshot {
		s.pushed.Add(int64(it.changes.Len()))
	}
	return ok
}

func (s *Subscription) pushItem(it subItem) bool {
	if s.tail != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.err != nil || s.closed {
			return false
		}
		s.tailEpoch = it.epoch
		s.wake()
		return true
	}
	u := Update{Epoch: it.epoch, Time: EpochTime(it.epoch), Snapshot: it.snapshot}
	skipSnapshot := func() bool {
		s.mu.Lock()
		s.popped = it.epoch // the changes after it come next
		s.mu.Unlock()
		return true
	}
	switch {
	case it.snapshot:
		if !s.opts.Snapshot {
			return skipSnapshot()
		}
		u.Rows = it.rows
		n := 0
		for _, r := range it.rows {
			n += int(r.NumRows())
		}
		if n == 0 { // an empty view: nothing to send but a progress mark
			if !s.opts.Progress {
				return skipSnapshot()
			}
			u.Rows = nil
		}
	case it.changes != nil:
		u.Rows = []arrow.RecordBatch{it.changes.Rec}
		u.Ops = it.changes.Ops
	case !s.opts.Progress:
		return true
	}
	n := cost(u)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil || s.closed {
		return false
	}
	if s.spill != nil { // behind on disk: later updates follow there
		return s.spillPush(u)
	}
	// The snapshot is always taken (it is the first update, and mostly
	// shares its buffers with the view or table).
	if !it.snapshot && (s.bytes+n > s.limit || s.rt.subMem.Load()+n > s.rt.cfg.SubscribeMemoryLimit) {
		if s.toLog(it.epoch) {
			return true
		}
		if s.rt.cfg.SubscribeSpill != "" {
			if err := s.startSpill(); err != nil {
				s.rt.cfg.Logf("subscription: %v", err)
				return s.end(pgerr.New(pgerr.ConfigurationLimitExceeded, "subscription ended: its unread changes passed %s and could not be spilled to disk: %v", sizeText(s.limit), err).
					WithHint("Read the subscription faster, or free space in the data directory."))
			}
			return s.spillPush(u)
		}
		if s.bytes > 0 {
			err := s.overflowErr(n)
			s.rt.cfg.Logf("materialized view %s: slow subscriber %d ended: %v", s.job.spec.Name, s.id, err)
			return s.end(err)
		}
	}
	s.queue = append(s.queue, queued{u: u, n: n})
	s.bytes += n
	s.rt.subMem.Add(n)
	s.wake()
	return true
}

// queued is an update waiting in memory, with its cost.
type queued struct {
	u Update
	n int64
}

// end ends the subscription with err after what is queued (s.mu held);
// it returns false for push.
func (s *Subscription) end(err error) bool {
	s.err = err
	s.wake()
	return false
}

// overflowErr is the error of a subscriber past its memory bound that can
// neither read a changelog nor spill.
func (s *Subscription) overflowErr(n int64) error {
	if s.bytes+n <= s.limit {
		return pgerr.New(pgerr.ConfigurationLimitExceeded, "subscription ended: the unread changes of all subscriptions passed %s (--subscribe-memory-limit)", sizeText(s.rt.cfg.SubscribeMemoryLimit)).
			WithHint("Read the subscriptions faster, or subscribe to materialized views, whose subscribers read on from the view's changelog.")
	}
	return pgerr.New(pgerr.ConfigurationLimitExceeded, "subscription ended: more than %s of changes were waiting to be read (--subscribe-buffer-bytes)", sizeText(s.limit)).
		WithHint("Read the subscription faster, or subscribe to a materialized view, whose subscribers read on from the view's changelog.")
}

// progressCost is what a progress mark counts against the bounds (a
// stalled subscriber with progress = true must not queue marks without
// bound either).
const progressCost = 64

// cost is what an update counts against the bounds: the size of its Arrow
// buffers (not of the Go values they hold: cheap, and what the memory is)
// plus its ops, at least progressCost.
func cost(u Update) int64 {
	n := int64(len(u.Ops))
	for _, r := range u.Rows {
		for _, c := range r.Columns() {
			n += dataSize(c.Data())
		}
	}
	return max(n, progressCost)
}

// dataSize is the size of an array's buffers, its children's and its
// dictionary's (arrow/util.TotalArraySize, without that package's
// protobuf dependencies). A slice counts its whole buffers: what it keeps
// alive.
func dataSize(d arrow.ArrayData) int64 {
	if d == nil {
		return 0
	}
	var n int64
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, c := range d.Children() {
		n += dataSize(c)
	}
	if d.DataType().ID() == arrow.DICTIONARY {
		n += dataSize(d.Dictionary())
	}
	return n
}

// sizeText formats a byte count for messages: "32 MiB", "1000 bytes".
func sizeText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d kiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

func (s *Subscription) wake() {
	select {
	case s.signal <- struct{}{}:
	default:
	}
}

// finish ends the subscription with err (the view stopped or failed).
func (s *Subscription) finish(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		var d *DroppedError
		if errors.As(err, &d) {
			s.err = pgerr.New(pgerr.ObjectNotInPrerequisiteState, "subscription ended: %v", d)
		} else {
			s.err = pgerr.New(pgerr.ObjectNotInPrerequisiteState, "subscription ended: the view stopped: %v", err)
		}
	}
	s.wake()
}

// TryNext returns the next update if one is queued. After the queue is
// empty it returns the error that ended the subscription, if any.
func (s *Subscription) TryNext() (Update, bool, error) {
	u, ok, err := s.tryNext()
	if ok {
		s.reached.Store(u.Epoch)
		if !u.Snapshot {
			s.taken.Add(updateRows(u))
		}
	}
	return u, ok, err
}

func (s *Subscription) tryNext() (Update, bool, error) {
	s.mu.Lock()
	if len(s.queue) > 0 {
		q := s.queue[0]
		s.queue[0] = queued{}
		s.queue = s.queue[1:]
		s.bytes -= q.n
		s.rt.subMem.Add(-q.n)
		s.popped = q.u.Epoch
		s.mu.Unlock()
		return q.u, true, nil
	}
	tail, sp, err := s.tail, s.spill, s.err
	s.mu.Unlock()
	if tail != nil {
		return s.tryTail()
	}
	if sp != nil {
		return s.trySpill(sp)
	}
	return Update{}, false, err
}

// release drops the queue from memory (s.mu held).
func (s *Subscription) release(keep int) {
	for _, q := range s.queue[keep:] {
		s.bytes -= q.n
		s.rt.subMem.Add(-q.n)
	}
	clear(s.queue[keep:])
	s.queue = s.queue[:keep]
}

// toLog turns a subscriber that fell more than its bound behind into one
// that reads the view's changelog (s.mu and the view's subMu are held, on
// the view's goroutine): the queued changes are dropped from memory and
// read again from the log, where every epoch sent to clients is, so
// nothing is lost and memory stays bounded however far behind it falls
// (until the log's retention). It reports false when the view keeps no
// usable log (the subscription then ends with 53400). A snapshot still
// queued stays queued: it is not in the log.
func (s *Subscription) toLog(epoch uint64) bool {
	vl := s.job.clog
	if !vl.usable() {
		return false
	}
	keep, after := 0, s.popped
	if len(s.queue) > 0 && s.queue[0].u.Snapshot {
		keep, after = 1, s.queue[0].u.Epoch
	}
	cur, err := vl.log.NewCursor(after)
	if err != nil {
		return false
	}
	s.rt.cfg.Logf("materialized view %s: slow subscriber %d has %s of changes unread; it reads on from the view's changelog", s.job.spec.Name, s.id, sizeText(s.bytes))
	s.release(keep)
	s.tail, s.tailEpoch, s.sent = cur, epoch, after
	s.wake()
	return true
}

// Next waits for the next update.
func (s *Subscription) Next(ctx context.Context) (Update, error) {
	for {
		u, ok, err := s.TryNext()
		if ok || err != nil {
			return u, err
		}
		select {
		case <-s.signal:
		case <-ctx.Done():
			return Update{}, ctx.Err()
		}
	}
}

// Close ends the subscription.
func (s *Subscription) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.release(0)
	tail, sp := s.tail, s.spill
	s.spill = nil
	s.mu.Unlock()
	if sp != nil {
		sp.remove()
	}
	s.job.unsubscribe(s.sub)
	if tail != nil {
		tail.Close()
	}
	if s.onEnd != nil {
		s.onEnd()
	}
}

// SubscribeSince subscribes to view id's changes after epoch since (no
// snapshot): those in its changelog, then each later epoch's as it is
// committed. The epochs must still be kept (55000 otherwise).
func (rt *Runtime) SubscribeSince(id uint32, since uint64, opts SubOptions) (*Subscription, error) {
	rt.mu.Lock()
	j := rt.jobs[id]
	rt.mu.Unlock()
	if j == nil {
		return nil, pgerr.New(pgerr.ObjectNotInPrerequisiteState, "materialized view %d is not running", id)
	}
	if j.view == nil {
		return nil, errNoView
	}
	if since > EpochAt(time.Now()) {
		return nil, pgerr.New(pgerr.InvalidParameterValue, "since %s is in the future", EpochTime(since).Format(time.RFC3339Nano)).
			WithHint("Give the epoch_time of the last change or progress row the subscription received.")
	}
	j.subMu.Lock()
	defer j.subMu.Unlock()
	if err := j.Err(); err != nil {
		return nil, err
	}
	if j.stopped.Load() {
		return nil, errStopped
	}
	if !j.clog.usable() {
		return nil, pgerr.New(pgerr.ObjectNotInPrerequisiteState, "the changes of materialized view %s after %s are not kept (it keeps them while a client subscribes, and for the retention after)", j.spec.Name, EpochTime(since).Format(time.RFC3339Nano)).
			WithHint("Subscribe again with snapshot = true.")
	}
	cur, err := j.clog.log.NewCursor(since)
	if err != nil {
		from := j.clog.log.From()
		return nil, pgerr.New(pgerr.ObjectNotInPrerequisiteState, "the changes of materialized view %s after %s are no longer kept (they are kept after %s)",
			j.spec.Name, EpochTime(since).Format(time.RFC3339Nano), EpochTime(from).Format(time.RFC3339Nano)).
			WithHint("Subscribe again with snapshot = true: the snapshot is the view as of now, then its changes.")
	}
	s := &Subscription{opts: opts, rt: rt, limit: rt.cfg.SubscribeBufferBytes, start: j.delivered, job: j, signal: make(chan struct{}, 1),
		tail: cur, cols: j.spec.Cols, tailEpoch: j.delivered, sent: since}
	s.sub = &changeSub{client: s, after: j.delivered, active: true, noSnapshot: true}
	j.subs = append(j.subs, s.sub)
	return s, nil
}

// tryTail returns the next update of a tail subscription: the next frame
// of the changelog, else a progress mark for the view's last epoch.
func (s *Subscription) tryTail() (Update, bool, error) {
	s.mu.Lock()
	last, err, closed := s.tailEpoch, s.err, s.closed
	s.mu.Unlock()
	if closed {
		return Update{}, false, err
	}
	e, payload, ok, rerr := s.tail.Next()
	if rerr != nil {
		if errors.Is(rerr, changelog.ErrTrimmed) {
			return Update{}, false, pgerr.New(pgerr.ObjectNotInPrerequisiteState, "subscription ended: it fell behind the view's changelog retention").
				WithHint("Subscribe again with snapshot = true, or read faster.")
		}
		return Update{}, false, fmt.Errorf("subscription: %w", rerr)
	}
	if ok {
		_, c, derr := decodeFrame(payload, s.cols)
		if derr != nil {
			return Update{}, false, pgerr.New(pgerr.DataCorrupted, "subscription: %v", derr)
		}
		s.sent = e
		return Update{Epoch: e, Time: EpochTime(e), Rows: []arrow.RecordBatch{c.Rec}, Ops: c.Ops}, true, nil
	}
	if s.opts.Progress && last > s.sent {
		s.sent = last
		return Update{Epoch: last, Time: EpochTime(last)}, true, nil
	}
	return Update{}, false, err
}

package dataflow

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/connector"
	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
)

// root is a leaf reader that barriers are injected into (tables, sources).
type root struct {
	table  uint32 // the table a table reader reads (0 for sources)
	source uint32 // the source a source reader reads (0 for tables)
	idx    int    // its index among the job's roots
	split  int    // a split source's reader: its share (split.go)
	splits int    // of how many (0: the source's only reader)
	values bool   // sends a plan's constant rows (stream.ScanValues)
	mu     sync.Mutex
	reqs   []barrierReq  // barriers requested, not yet sent
	wake   chan struct{} // capacity 1: signaled by request
	// A split read on another node (nodesplits.go): remote on the
	// coordinator's proxy root, with the last epoch the node reported;
	// report, on the node, sends each cut to the coordinator.
	remote   bool
	reported atomic.Uint64
	report   func(b barrierReq, pos []byte, resumable bool, w *wmTracker)
}

func newRoot() *root { return &root{wake: make(chan struct{}, 1)} }

// barrierReq asks a root for a barrier; flush is set for FLUSH's.
type barrierReq struct {
	epoch uint64
	flush bool
	ckpt  bool     // a checkpoint barrier: the reader records its position
	cut   Position // a table reader's: deliver the writes up to here first
}

// request asks the reader to send a barrier after what it has read so far.
// It never blocks.
func (r *root) request(b barrierReq) {
	r.mu.Lock()
	r.reqs = append(r.reqs, b)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// take returns the requested barriers in order and forgets them.
func (r *root) take() []barrierReq {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.reqs
	r.reqs = nil
	return e
}

// sourceRun is an opened source reader.
type sourceRun struct {
	run        RunFunc
	position   func() []byte // nil: the reader cannot report positions
	partition  func() int32  // nil: not partitioned (SourceReader)
	partitions func() []int32
	marks      func([]PartMark)
	finite     bool
	inputEnd   func(context.Context) ([]byte, error) // nil: FLUSH does not wait for this unbounded source
	start      []byte                                // the position it starts at (nil: the start)
	split      bool                                  // one of a split source's readers: tells merge its end
	align      *aligner                              // a split generator's reader: its barriers cut at the readers' common event time (splitalign.go)
	// runParts, when not nil, runs a reader that routes its rows for the
	// exchange of routing route, instead of run (route.go).
	runParts func(ctx context.Context, emit func(parts []arrow.RecordBatch) error) error
	route    *stream.Routing
	recycle  func(arrow.RecordBatch) // SourceReader.Recycle
}

// startLeaf returns the input channel of a Scan; rt.mu is held. ri, when
// the job resumes, holds its opened inputs.
func (j *Job) startLeaf(s *stream.Scan, ri *resumeInputs) (<-chan stream.Message, error) {
	out := make(chan stream.Message, stream.ChannelSize)
	switch s.Kind {
	case stream.ScanTable:
		var rows []arrow.RecordBatch
		var feed Feed
		if ri != nil {
			feed = ri.feeds[ri.nt]
			ri.nt++
		} else {
			var err error
			if rows, feed, err = j.rt.in.SubscribeTable(s.Rel); err != nil {
				return nil, err
			}
			j.bf.add(rows)
		}
		r := newRoot()
		r.table, r.idx = s.Rel, len(j.roots)
		j.roots = append(j.roots, r)
		w := j.newWM(s)
		if ri != nil {
			ri.applyWM(w)
		}
		j.wg.Add(1)
		go j.readTable(r, rows, feed, w, out)
	case stream.ScanSource:
		if k := j.rt.readersOf(s); k > 1 { // startFlow keeps the readers apart; here they are merged
			chs, err := j.startSplit(s, k, j.frags, ri) // (the caller labels the merge)
			if err != nil {
				return nil, err
			}
			return j.merge(chs), nil
		}
		var src sourceRun
		if ri != nil {
			src = ri.srcs[ri.ns]
			ri.ns++
		} else {
			var err error
			src, err = j.openScan(s, nil, 0, 1, func() (sourceRun, error) {
				if res, ok := j.rt.in.(SourceResumer); ok && j.rt.ck != nil {
					return openSourceAt(res, j.spec.ID, s.Rel, nil, j.rowError)
				}
				run, finite, err := j.rt.in.OpenSource(s.Rel, j.rowError)
				return sourceRun{run: run, finite: finite}, err
			})
			if err != nil {
				return nil, err
			}
		}
		r := newRoot()
		r.source, r.idx = s.Rel, len(j.roots)
		j.roots = append(j.roots, r)
		w := j.newWM(s)
		if ri != nil {
			ri.applyWM(w)
		}
		j.wg.Add(1)
		go j.readSource(r, src, w, out)
	case stream.ScanValues:
		// Constant rows: sent once, as a table's backfill with no
		// changes after it; a resumed job's state already holds them.
		rows := s.Values
		if ri != nil {
			rows = nil
			ri.applyWM(nil)
		} else {
			j.bf.add(rows)
		}
		r := newRoot()
		r.values, r.idx = true, len(j.roots)
		j.roots = append(j.roots, r)
		j.wg.Add(1)
		go j.readTable(r, rows, noChanges{}, nil, out)
	case stream.ScanView:
		up := j.rt.jobs[s.Rel]
		if up == nil {
			return nil, pgerr.New(pgerr.ObjectNotInPrerequisiteState, "materialized view \"%s\" is not running", s.Name)
		}
		sub := &changeSub{ch: make(chan subItem, stream.ChannelSize), done: j.env.Ctx.Done(), noSnapshot: ri != nil}
		after := j.rt.epoch
		if ri != nil {
			after = ri.epoch // the upstream view resumed at the same epoch
		}
		up.subscribe(sub, after)
		j.wg.Add(1)
		go j.readView(s.Name, up, sub, out)
	default:
		return nil, fmt.Errorf("dataflow: scan of unknown kind %d", s.Kind)
	}
	return out, nil
}

// newWM returns the watermark tracker of a table or source scan (nil
// without WATERMARK FOR).
func (j *Job) newWM(s *stream.Scan) *wmTracker {
	ectx := j.env.Eval
	ectx.Ctx = j.env.Ctx
	return newWMTracker(s.Watermark, &ectx, j.rt.cfg.Clock, j.rowError)
}

// sendWM sends w's watermark if it rose (w may be nil).
func (j *Job) sendWM(out chan<- stream.Message, w *wmTracker) bool {
	if m, ok := w.pending(); ok {
		return j.send(out, m)
	}
	return true
}

// sendNew sends new rows (inserts), then the watermark they raise.
func (j *Job) sendNew(out chan<- stream.Message, recs []arrow.RecordBatch, w *wmTracker) bool {
	if !j.sendRows(out, recs, stream.Insert) {
		return false
	}
	for _, rec := range recs {
		w.observe(rec)
	}
	return j.sendWM(out, w)
}

// sendLent is sendNew for one batch whose buffers its reader lent: its
// chunk carries recycle, so that its consumer can give them back. The
// watermark is observed before the chunk is sent: nothing here reads the
// batch once it is.
func (j *Job) sendLent(out chan<- stream.Message, rec arrow.RecordBatch, recycle func(arrow.RecordBatch), w *wmTracker) bool {
	return j.sendOwned(out, rec, nil, recycle, w) && j.sendWM(out, w)
}

// sendOwned sends a reader's batch of its own (none when empty) as a
// chunk with part and recycle, after observing its watermark: nothing
// here reads the batch once it is sent (its consumer may give its
// buffers back).
func (j *Job) sendOwned(out chan<- stream.Message, rec arrow.RecordBatch, part *stream.Part, recycle func(arrow.RecordBatch), w *wmTracker) bool {
	if rec == nil || rec.NumRows() == 0 {
		return true
	}
	settle(rec)
	j.rowsIn.Add(rec.NumRows())
	w.observe(rec)
	return j.send(out, stream.ChunkMsg(&stream.Chunk{Rec: rec, Part: part, Recycle: recycle}))
}

// send delivers m unless the job is ending.
func (j *Job) send(out chan<- stream.Message, m stream.Message) bool {
	select {
	case out <- m:
		return true
	case <-j.env.Ctx.Done():
		return false
	}
}

// settle computes the null counts of rec's columns, which Arrow otherwise
// computes lazily and stores on first use: batches shared between
// goroutines (a table's batches read by several jobs and queries, a view's
// changes read by several subscribers) must not be written while shared.
func settle(rec arrow.RecordBatch) {
	for _, c := range rec.Columns() {
		c.NullN()
	}
}

func (j *Job) sendRows(out chan<- stream.Message, recs []arrow.RecordBatch, op stream.Op) bool {
	for _, rec := range recs {
		if rec == nil || rec.NumRows() == 0 {
			continue
		}
		settle(rec)
		j.rowsIn.Add(rec.NumRows())
		c := &stream.Chunk{Rec: rec}
		if op != stream.Insert {
			c.Ops = make([]stream.Op, rec.NumRows())
			for i := range c.Ops {
				c.Ops[i] = op
			}
		}
		if !j.send(out, stream.ChunkMsg(c)) {
			return false
		}
	}
	return true
}

// sendBarriers sends the requested barriers, first advancing an idle
// input's watermark (w may be nil).
func (j *Job) sendBarriers(out chan<- stream.Message, reqs []barrierReq, w *wmTracker) bool {
	if len(reqs) > 0 {
		w.idle()
		if !j.sendWM(out, w) {
			return false
		}
	}
	for _, b := range reqs {
		if !j.send(out, stream.BarrierMsg(stream.Barrier{Epoch: b.epoch, Checkpoint: b.ckpt})) {
			return false
		}
	}
	return true
}

// recordCut records a root's position at a barrier's cut: the table's
// LSN (table readers) or the source reader's position (pos, nil when the
// source cannot resume), and its watermark. Checkpoints keep it; view
// changelogs keep every epoch's (changelog.go).
func (j *Job) recordCut(r *root, b barrierReq, pos []byte, resumable bool, w *wmTracker) {
	if r.report != nil {
		r.report(b, pos, resumable, w)
		return
	}
	if !b.ckpt && j.rt.cl == nil {
		return
	}
	rm := rootMeta{Table: r.table, Source: r.source, Pos: pos, Resumable: resumable, Split: r.split, Splits: r.splits, Values: r.values}
	switch {
	case r.table != 0:
		res, ok := j.rt.in.(TableResumer)
		if !ok {
			return // no position: the job is not resumable
		}
		rm.LSN = res.PositionLSN(b.cut)
		j.recordCutPos(r, b.epoch, cutPos{table: true, lsn: rm.LSN})
	case resumable:
		j.recordCutPos(r, b.epoch, cutPos{pos: pos})
	}
	if !b.ckpt {
		return
	}
	if w != nil && w.cur != math.MinInt64 {
		rm.WM, rm.HasW = w.cur, true
	}
	rm.Parts = w.partMarks()
	j.rt.recordRoot(b.epoch, r, rm)
}

// noChanges is the Feed of constant rows: nothing after them.
type noChanges struct{}

func (noChanges) PollTo(Position) ([]Delta, error) { return nil, nil }
func (noChanges) Close()                           {}

// readTable sends the table's rows (the backfill), then, at each injected
// barrier, the writes up to the barrier's cut (the table's position when the
// epoch was injected, the same for every job) and the barrier. So an epoch
// holds exactly the same writes in every view that reads the table, and a
// write acknowledged before FLUSH precedes FLUSH's barrier.
func (j *Job) readTable(r *root, rows []arrow.RecordBatch, feed Feed, w *wmTracker, out chan<- stream.Message) {
	defer j.wg.Done()
	defer close(out)
	defer feed.Close()
	if !j.sendBackfill(out, rows, w) {
		return
	}
	drain := func(cut Position) bool {
		deltas, err := feed.PollTo(cut)
		for _, d := range deltas {
			// Deletes first: a keyed view must see the old row leave before
			// the new one (same key) arrives.
			if !j.sendRows(out, d.Deleted, stream.Delete) || !j.sendNew(out, d.Inserted, w) {
				return false
			}
		}
		if err != nil {
			j.fail(fmt.Errorf("reading table changes: %w", err))
			return false
		}
		return true
	}
	for {
		select {
		case <-j.env.Ctx.Done():
			return
		case <-r.wake:
			for _, b := range r.take() {
				if !drain(b.cut) {
					return
				}
				j.recordCut(r, b, nil, true, w)
				if !j.sendBarriers(out, []barrierReq{b}, w) {
					return
				}
			}
		}
	}
}

// readSource runs a connector reader on a goroutine of its own and sends
// its batches, with the injected barriers in between. A finite source
// holds back a FLUSH barrier (and the ones after it) until it has ended.
func (j *Job) readSource(r *root, src sourceRun, w *wmTracker, out chan<- stream.Message) {
	defer j.wg.Done()
	defer close(out)
	ctx, cancel := context.WithCancel(j.env.Ctx)
	defer cancel()
	type posRec struct {
		rec   arrow.RecordBatch
		parts []arrow.RecordBatch // a routed reader's step (rec is nil)
		pos   []byte
		part  int32
	}
	recs := make(chan posRec, 1)
	ended := make(chan error, 1)
	finite := src.finite
	pos := src.start // the position after the last batch sent on
	al := src.align
	defer al.stop()
	go func() {
		emit := func(pr posRec) error {
			if src.position != nil {
				pr.pos = src.position()
			}
			if src.partition != nil {
				pr.part = src.partition()
			}
			select {
			case recs <- pr:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if src.runParts != nil {
			ended <- src.runParts(ctx, func(parts []arrow.RecordBatch) error { return emit(posRec{parts: parts}) })
			return
		}
		ended <- src.run(ctx, func(rec arrow.RecordBatch) error { return emit(posRec{rec: rec}) })
	}()
	if src.partition != nil {
		w.partitioned(src.partitions)
	}
	// A split partitioned reader with no partitions, or whose partitions
	// are all idle (idle_timeout), is idle: told to the merge.
	idle := false
	sendRec := func(pr posRec) bool {
		pos = pr.pos
		if pr.parts != nil {
			return j.sendParts(out, pr.parts, src.route, src.recycle, w)
		}
		if pr.rec == nil { // the position moved without rows (SourceReader.InputEnd)
			return true
		}
		if src.partition == nil && src.recycle != nil {
			return j.sendLent(out, pr.rec, src.recycle, w)
		}
		if src.partition == nil {
			return j.sendNew(out, []arrow.RecordBatch{pr.rec}, w)
		}
		if idle { // rows again: the merge counts this reader before its rows pass
			idle = false
			if !j.send(out, idleMsg(false)) {
				return false
			}
		}
		if !j.sendRows(out, []arrow.RecordBatch{pr.rec}, stream.Insert) {
			return false
		}
		w.observePart(pr.rec, pr.part)
		return j.sendWM(out, w)
	}
	send := func(reqs []barrierReq) bool {
		if src.split && src.partitions != nil && len(reqs) > 0 {
			ps := src.partitions()
			if now := (ps != nil && len(ps) == 0) || w.partsIdle(); now != idle {
				idle = now
				if !j.send(out, idleMsg(idle)) {
					return false
				}
			}
		}
		for _, b := range reqs {
			j.recordCut(r, b, pos, src.position != nil, w)
			if !j.sendBarriers(out, []barrierReq{b}, w) {
				return false
			}
		}
		if len(reqs) > 0 && src.marks != nil && w != nil {
			src.marks(w.partStates())
		}
		return true
	}
	var held []barrierReq // barriers waiting for a finite source's end, or for an unbounded one's InputEnd
	// A FLUSH barrier of an unbounded source with an InputEnd waits until
	// the reader has emitted what its input held when the barrier came:
	// flushEnd is that end once asked (endWait while asking).
	type endRes struct {
		end []byte
		err error
	}
	endCh := make(chan endRes, 1)
	var flushEnd []byte
	var endWait, endKnown bool
	askEnd := func() {
		endWait, endKnown, flushEnd = true, false, nil
		go func() {
			ectx, cancel := context.WithTimeout(ctx, flushEndTimeout)
			e, err := src.inputEnd(ectx)
			cancel()
			select {
			case endCh <- endRes{e, err}:
			case <-ctx.Done():
			}
		}()
	}
	// release sends the held barriers up to the next FLUSH barrier after
	// the first, and asks the input's end for that one.
	release := func() bool {
		i := 1
		for i < len(held) && !held[i].flush {
			i++
		}
		if !send(held[:i]) {
			return false
		}
		held = held[i:]
		endWait, endKnown, flushEnd = false, false, nil
		if len(held) > 0 {
			askEnd()
		}
		return true
	}
	reached := func() bool {
		return endKnown && (flushEnd == nil || (pos != nil && connector.PositionReached(pos, flushEnd)))
	}
	for {
		rc := recs
		var moved <-chan struct{}
		var late <-chan time.Time
		if al.blocked() { // the others have not taken the barrier yet: send no rows past it
			rc = nil
		} else if al != nil && ended != nil {
			var hold bool
			if moved, late, hold = al.hold(w.cur); hold { // ahead of another reader: let it catch up
				rc = nil
			}
		}
		select {
		case <-j.env.Ctx.Done():
			return
		case <-moved:
		case <-late:
		case pr := <-rc:
			if !sendRec(pr) {
				return
			}
			if al != nil {
				al.sent(w.cur)
				if !send(al.ready(w.cur)) {
					return
				}
			}
			if reached() && !release() {
				return
			}
		case <-al.settled():
			if !send(al.ready(w.cur)) {
				return
			}
		case <-al.expired():
			if !send(al.ready(w.cur)) {
				return
			}
		case er := <-endCh:
			if er.err != nil {
				// FLUSH does not wait for an input whose end cannot be asked
				// (brokers down): it would wait for as long as they are.
				j.rt.cfg.Logf("FLUSH does not wait for a source of %s: %v", j.spec.Name, er.err)
				er.end = nil
			}
			flushEnd, endKnown = er.end, true
			if reached() && !release() {
				return
			}
		case err := <-ended:
			ended = nil // a bounded source is done; barriers go on
			if err != nil && ctx.Err() == nil {
				j.fail(fmt.Errorf("source: %w", err))
				return
			}
			// Batches emitted before the end are still in recs.
			for len(recs) > 0 {
				if !sendRec(<-recs) {
					return
				}
			}
			if al != nil {
				al.a.end(al.i)
				if !send(al.all()) {
					return
				}
			}
			if src.split && (err == nil && !j.send(out, doneMsg())) {
				return
			}
			if !send(held) {
				return
			}
			held, endWait, endKnown, flushEnd = nil, false, false, nil
		case <-r.wake:
			reqs := r.take()
			if ended != nil && (finite || src.inputEnd != nil) {
				for i, b := range reqs {
					if b.flush || len(held) > 0 {
						held = append(held, reqs[i:]...)
						reqs = reqs[:i]
						break
					}
				}
			}
			if al != nil && ended != nil {
				reqs = al.take(reqs, w.cur)
			}
			if !send(reqs) {
				return
			}
			if !finite && len(held) > 0 && !endWait {
				askEnd()
			}
		}
	}
}

// flushEndTimeout bounds asking an unbounded source where its input ends
// for FLUSH.
const flushEndTimeout = 30 * time.Second

// readView sends an upstream view's snapshot, then each of its epochs'
// changes followed by that epoch's barrier.
func (j *Job) readView(name string, up *Job, sub *changeSub, out chan<- stream.Message) {
	defer j.wg.Done()
	defer close(out)
	for {
		var it subItem
		var ok bool
		select {
		case it, ok = <-sub.ch:
		case <-j.env.Ctx.Done():
			up.unsubscribe(sub)
			return
		}
		if !ok {
			err := up.stopErr()
			var d *DroppedError
			if errors.As(err, &d) && !j.stopped.Load() {
				j.fail(err) // the subscriber is told which view was dropped
				return
			}
			if !j.stopped.Load() {
				j.fail(pgerr.New(pgerr.ObjectNotInPrerequisiteState, "materialized view \"%s\" that this view reads has stopped: %v", name, err))
			}
			return
		}
		if it.snapshot {
			if !j.sendRows(out, it.rows, stream.Insert) || !j.sendMarks(out, it.marks) {
				return
			}
			continue
		}
		if it.changes != nil {
			j.rowsIn.Add(int64(it.changes.Len()))
			if !j.send(out, stream.ChunkMsg(it.changes)) {
				return
			}
		}
		if !j.sendMarks(out, it.marks) {
			return
		}
		if !j.send(out, stream.BarrierMsg(stream.Barrier{Epoch: it.epoch, Checkpoint: j.rt.isCheckpoint(it.epoch)})) {
			return
		}
	}
}

// sendMarks sends an upstream view's watermarks.
func (j *Job) sendMarks(out chan<- stream.Message, marks []stream.Watermark) bool {
	for _, w := range marks {
		if !j.send(out, stream.WatermarkMsg(w)) {
			return false
		}
	}
	return true
}

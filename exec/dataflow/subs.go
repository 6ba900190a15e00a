package dataflow

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec/stream"
)

// subItem is what a view hands a subscriber: its snapshot once (the
// backfill), then each completed epoch's net changes (nil: none).
type subItem struct {
	epoch    uint64
	changes  *stream.Chunk
	snapshot bool
	rows     []arrow.RecordBatch // the snapshot's rows
	// marks are the view's watermarks that rose in this epoch (for the
	// snapshot: all of them), sent after the rows.
	marks []stream.Watermark
}

// changeSub is one reader of a view's changelog: a downstream job's leaf
// (ch, blocking: backpressure) or a client subscription (client, never
// blocking). It starts after epoch after: its snapshot is the view as of
// that epoch. Guarded by the view job's subMu.
type changeSub struct {
	after  uint64
	active bool
	// noSnapshot: a resumed downstream job, at the same epoch as the view
	// already, takes only the changes after it.
	noSnapshot bool
	dead       bool            // ended early; dropped at the next epoch
	ch         chan subItem    // downstream job
	done       <-chan struct{} // the downstream job's end
	client     *Subscription
}

// deliver hands an item over; false means the subscriber is gone (or, for
// a client, ended by an overflow) and must be dropped. Called with the
// view job's subMu held, from its view goroutine or a registration.
func (s *changeSub) deliver(j *Job, it subItem) bool {
	if s.client != nil {
		return s.client.push(it)
	}
	select {
	case s.ch <- it:
		return true
	case <-s.done:
		return false
	case <-j.env.Ctx.Done():
		return false
	}
}

// end tells the subscriber that the view ended. subMu is held.
func (s *changeSub) end(err error) {
	if s.client != nil {
		s.client.finish(err)
		return
	}
	close(s.ch)
}

// subscribe registers s to start after the last injected epoch (rt.mu is
// held, so no epoch starts meanwhile). If the view already delivered that
// epoch, s starts now.
func (j *Job) subscribe(s *changeSub, after uint64) {
	j.subMu.Lock()
	defer j.subMu.Unlock()
	s.after = after
	if err := j.Err(); err != nil || j.stopped.Load() || j.view == nil {
		if err == nil && j.view == nil {
			err = errNoView
		} else if err == nil {
			err = errStopped
		}
		s.end(err)
		return
	}
	j.subs = append(j.subs, s)
	if j.delivered >= after && j.mayActivate(s) {
		j.activate(s)
	}
}

// mayActivate reports whether s may start now: a client waits while the
// view holds its changes after a restart (its state is not yet what the
// client would be sent changes against). subMu is held.
func (j *Job) mayActivate(s *changeSub) bool {
	return s.client == nil || j.clog == nil || j.clog.hold == nil
}

// activate hands s the view's snapshot (as of j.delivered); subMu is held.
func (j *Job) activate(s *changeSub) {
	s.active = true
	if s.noSnapshot {
		return
	}
	_, rows, err := j.view.SnapshotEpoch()
	if err != nil {
		s.end(err)
		s.dead = true
		return
	}
	for _, r := range rows {
		settle(r)
	}
	if !s.deliver(j, subItem{epoch: j.delivered, snapshot: true, rows: rows, marks: j.Watermarks()}) {
		s.dead = true
	}
}

// endSubs ends every subscriber of the view.
func (j *Job) endSubs(err error) {
	j.subMu.Lock()
	defer j.subMu.Unlock()
	if j.clog != nil && j.clog.hold != nil {
		j.clog.hold = nil
		j.rt.cl.unhold(j.rt)
	}
	for _, s := range j.subs {
		if !s.dead {
			s.end(err)
		}
	}
	j.subs = nil
}

// unsubscribe drops s (a client that went away).
func (j *Job) unsubscribe(s *changeSub) {
	j.subMu.Lock()
	defer j.subMu.Unlock()
	for i, x := range j.subs {
		if x == s {
			j.subs = append(j.subs[:i], j.subs[i+1:]...)
			return
		}
	}
}

package storage

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
)

// Group commit. Writers hand framed records to the committer (one goroutine
// per Store) and wait; the committer takes everything pending as one group,
// appends each table's records to its log with one write, fsyncs every log
// the group touched (in parallel when there are several), publishes the new
// table states and wakes the group's writers. While it fsyncs, the next group
// accumulates, so under load many commits share one fsync.
//
// A write or fsync error poisons the store: the failed group and every later
// write report it (as PostgreSQL PANICs on fsync failure, since the kernel may
// have dropped the dirty pages); reopening the store recovers from the logs.

// logFile is a table's open log. Only the committer writes it; compaction and
// DropTable replace or close it while holding the table's writer lock after a
// barrier, when no request for the table is pending.
type logFile struct {
	f      *os.File
	path   string
	size   atomic.Int64 // bytes in the file
	markAt int64        // offset of the mark block (lsn.go); set with f
}

// commitReq is one write to make durable: one or more frames of one table
// (several when a write is split, see recMore), or a mark slot to write in
// place (lsn.go). A request with neither is a barrier: it completes once
// every earlier request has.
type commitReq struct {
	t      *Table
	frames [][]byte
	st     *state // the table state to publish once durable (nil for barriers and marks)
	mark   []byte // a mark slot, written at markAt
	markAt int64
}

// group is a set of requests committed together.
type group struct {
	reqs []commitReq
	done chan struct{}
	err  error // valid once done is closed
}

func (g *group) wait() error {
	<-g.done
	return g.err
}

// CommitStats counts the committer's work since Open.
type CommitStats struct {
	Commits int64 // writes made durable
	Groups  int64 // groups written
	Fsyncs  int64 // fsync calls
}

type committer struct {
	mu      sync.Mutex
	cond    sync.Cond
	cur     *group
	err     error // sticky: the first write/fsync failure
	closed  bool
	stopped chan struct{}

	commits, groups, fsyncs atomic.Int64
}

var errClosed = errors.New("storage: store is closed")

func newCommitter() *committer {
	c := &committer{cur: &group{done: make(chan struct{})}, stopped: make(chan struct{})}
	c.cond.L = &c.mu
	go c.run()
	return c
}

// submit queues a request; the caller waits on the returned group. Requests
// of one table must be submitted in log order (the table's writer lock
// ensures it).
func (c *committer) submit(r commitReq) (*group, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return nil, c.err
	}
	if c.closed {
		return nil, errClosed
	}
	g := c.cur
	g.reqs = append(g.reqs, r)
	if len(g.reqs) == 1 {
		c.cond.Signal()
	}
	return g, nil
}

// close commits what is pending and stops the committer.
func (c *committer) close() {
	c.mu.Lock()
	c.closed = true
	c.cond.Signal()
	c.mu.Unlock()
	<-c.stopped
}

func (c *committer) run() {
	defer close(c.stopped)
	for {
		c.mu.Lock()
		for len(c.cur.reqs) == 0 && !c.closed {
			c.cond.Wait()
		}
		if len(c.cur.reqs) == 0 {
			c.mu.Unlock()
			return
		}
		g := c.cur
		c.cur = &group{done: make(chan struct{})}
		err := c.err
		c.mu.Unlock()

		if err == nil {
			err = c.flush(g)
			if err != nil {
				c.mu.Lock()
				c.err = err
				c.mu.Unlock()
			}
		}
		g.err = err
		close(g.done)
		runtime.Gosched() // let the writers just woken queue their next writes
	}
}

// tableBatch is one table's share of a group.
type tableBatch struct {
	t      *Table
	frames [][]byte
	marks  []commitReq // mark slots to write in place
	bytes  int
	writes int // requests
	last   *state
}

// flush writes and fsyncs a group, then publishes its states.
func (c *committer) flush(g *group) error {
	var batches []*tableBatch
	for _, r := range g.reqs {
		if len(r.frames) == 0 && r.mark == nil {
			continue
		}
		var b *tableBatch
		for _, x := range batches { // groups touch few tables
			if x.t == r.t {
				b = x
				break
			}
		}
		if b == nil {
			b = &tableBatch{t: r.t}
			batches = append(batches, b)
		}
		if r.mark != nil {
			b.marks = append(b.marks, r)
			continue
		}
		for _, f := range r.frames {
			b.frames = append(b.frames, f)
			b.bytes += len(f)
		}
		b.writes++
		b.last = r.st
	}
	if len(batches) == 0 {
		return nil
	}
	c.groups.Add(1)
	c.fsyncs.Add(int64(len(batches)))
	if len(batches) == 1 {
		if err := batches[0].writeAndSync(); err != nil {
			return err
		}
	} else {
		errs := make([]error, len(batches))
		var wg sync.WaitGroup
		for i, b := range batches {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = b.writeAndSync()
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
	}
	for _, b := range batches {
		if b.last == nil { // only marks
			continue
		}
		c.commits.Add(int64(b.writes))
		b.t.pub.Store(b.last)
		b.t.published()
	}
	return nil
}

// smallFrame is the size under which frames are copied into one buffer
// rather than written on their own.
const smallFrame = 64 << 10

func (b *tableBatch) writeAndSync() error {
	lf := b.t.log
	var buf []byte
	write := func(p []byte) error {
		n, err := lf.f.Write(p)
		lf.size.Add(int64(n))
		if err != nil {
			return fmt.Errorf("storage: write %s: %w", lf.path, err)
		}
		return nil
	}
	for _, f := range b.frames {
		if len(f) >= smallFrame {
			if len(buf) > 0 {
				if err := write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
			if err := write(f); err != nil {
				return err
			}
			continue
		}
		if len(b.frames) == 1 {
			buf = f
		} else {
			buf = append(buf, f...)
		}
	}
	if len(buf) > 0 {
		if err := write(buf); err != nil {
			return err
		}
	}
	for _, m := range b.marks {
		if _, err := lf.f.WriteAt(m.mark, m.markAt); err != nil {
			return fmt.Errorf("storage: write %s: %w", lf.path, err)
		}
	}
	if err := lf.f.Sync(); err != nil {
		return fmt.Errorf("storage: fsync %s: %w", lf.path, err)
	}
	return nil
}

package storage

import (
	"errors"
	"fmt"
	"io"
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
// Failures are per table (failure.go). A failed write (a full disk: ENOSPC)
// cuts the table's log back to where the batch began, so the log holds only
// complete, acknowledged writes, and fails the batch's requests and every
// later request built on them; the table's next writer rolls its writer
// state back to the durable one (Table.settle) and writing goes on once
// there is space. A failed fsync, or a log that cannot be cut back, fails
// the table for good: it refuses writes until the server restarts and
// recovers from its log (as PostgreSQL PANICs on fsync failure, since the
// kernel may have dropped the dirty pages). Other tables are not affected.

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
	gen    uint64 // t.gen when submitted (failure.go)
	mark   []byte // a mark slot, written at markAt
	markAt int64
}

// group is a set of requests committed together.
type group struct {
	reqs []commitReq
	done chan struct{}
	errs []error // per request, nil when every request succeeded; valid once done is closed
}

// fail records request i's error. Only the committer calls it, before done
// is closed.
func (g *group) fail(i int, err error) {
	if g.errs == nil {
		g.errs = make([]error, len(g.reqs))
	}
	g.errs[i] = err
}

// ticket is one submitted request: its group and index.
type ticket struct {
	g *group
	i int
}

// wait returns once the request is done: nil when it is durable (a
// barrier: when every earlier request is done), else its error.
func (k ticket) wait() error {
	<-k.g.done
	if k.g.errs != nil {
		return k.g.errs[k.i]
	}
	return nil
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
	closed  bool
	stopped chan struct{}

	commits, groups, fsyncs atomic.Int64

	// Fault injection for tests: when set, used instead of f.Write and
	// f.Sync on logs. Set before the writes they should affect.
	writeFile func(f *os.File, p []byte) (int, error)
	syncFile  func(f *os.File) error
}

var errClosed = errors.New("storage: store is closed")

func newCommitter() *committer {
	c := &committer{cur: &group{done: make(chan struct{})}, stopped: make(chan struct{})}
	c.cond.L = &c.mu
	go c.run()
	return c
}

// submit queues a request; the caller waits on the returned ticket.
// Requests of one table must be submitted in log order (the table's writer
// lock ensures it).
func (c *committer) submit(r commitReq) (ticket, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ticket{}, errClosed
	}
	g := c.cur
	g.reqs = append(g.reqs, r)
	if len(g.reqs) == 1 {
		c.cond.Signal()
	}
	return ticket{g, len(g.reqs) - 1}, nil
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
		c.mu.Unlock()

		c.flush(g)
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
	writes int   // requests with frames
	reqs   []int // indexes in the group of the requests in the batch
	gen    uint64
	last   *state
}

// flush writes and fsyncs a group, publishes the states of the tables
// whose batches are durable and records the failures of the others.
func (c *committer) flush(g *group) {
	var batches []*tableBatch
	for i, r := range g.reqs {
		if len(r.frames) == 0 && r.mark == nil {
			continue
		}
		if len(r.frames) > 0 {
			if err := r.t.failure.staleErr(r.gen); err != nil { // built on a failed write
				g.fail(i, err)
				continue
			}
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
		b.reqs = append(b.reqs, i)
		if r.mark != nil {
			b.marks = append(b.marks, r)
			continue
		}
		for _, f := range r.frames {
			b.frames = append(b.frames, f)
			b.bytes += len(f)
		}
		b.writes++
		b.gen = max(b.gen, r.gen)
		b.last = r.st
	}
	if len(batches) == 0 {
		return
	}
	c.groups.Add(1)
	c.fsyncs.Add(int64(len(batches)))
	errs := make([]error, len(batches))
	if len(batches) == 1 {
		errs[0] = batches[0].writeAndSync(c)
	} else {
		var wg sync.WaitGroup
		for i, b := range batches {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = b.writeAndSync(c)
			}()
		}
		wg.Wait()
	}
	for k, b := range batches {
		if errs[k] != nil {
			for _, i := range b.reqs {
				g.fail(i, errs[k])
			}
			continue
		}
		if b.last == nil { // only marks
			continue
		}
		c.commits.Add(int64(b.writes))
		b.t.pub.Store(b.last)
		b.t.published()
	}
}

// smallFrame is the size under which frames are copied into one buffer
// rather than written on their own.
const smallFrame = 64 << 10

// writeAndSync appends the batch's frames to the table's log, writes its
// mark slots and fsyncs the log. On failure it records the table's failure
// (failure.go) and returns the error for the batch's requests: a failed
// write is cut back off the log; a failed fsync fails the table for good.
func (b *tableBatch) writeAndSync(c *committer) error {
	lf := b.t.log
	start := lf.size.Load()
	var buf []byte
	write := func(p []byte) error {
		var n int
		var err error
		if c.writeFile != nil {
			n, err = c.writeFile(lf.f, p)
		} else {
			n, err = lf.f.Write(p)
		}
		lf.size.Add(int64(n))
		return err
	}
	err := func() error {
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
				return err
			}
		}
		return nil
	}()
	if err != nil {
		return b.t.failed(b, "write to", err, lf.cutBack(start))
	}
	sync := lf.f.Sync
	if c.syncFile != nil {
		sync = func() error { return c.syncFile(lf.f) }
	}
	if err := sync(); err != nil {
		lf.cutBack(start) // best effort: the table is failed anyway
		return b.t.failed(b, "fsync", err, errFsync)
	}
	return nil
}

// cutBack truncates the log to size, dropping a failed write's bytes,
// puts the file offset there and fsyncs, so that a crash cannot bring back
// whole frames of the failed batch (writes reported failed). Only the
// committer calls it.
func (lf *logFile) cutBack(size int64) error {
	if lf.size.Load() == size {
		return nil
	}
	if err := lf.f.Truncate(size); err != nil {
		return fmt.Errorf("truncate %s: %w", lf.path, err)
	}
	if _, err := lf.f.Seek(size, io.SeekStart); err != nil {
		return fmt.Errorf("seek %s: %w", lf.path, err)
	}
	lf.size.Store(size)
	if err := lf.f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", lf.path, err)
	}
	return nil
}

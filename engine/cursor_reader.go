package engine

import (
	"context"
	"fmt"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/pgerr"
)

// reader reads a cursor's rows from its iterator for FETCHes that run in
// different statements, each with its own context. The iterator runs under
// the cursor's own context (canceled by close).
//
// An ordinary iterator computes its next batch at once; canceling the FETCH
// that asked for it cancels the cursor's context, and the cursor fails (as
// a portal does in PostgreSQL). A live one (TryNexter: a subscription) may
// wait for input indefinitely: that wait runs on its own goroutine, so a
// canceled FETCH leaves it pending and the cursor usable; the next read
// takes its result.
//
// A reader is used by its session's goroutine only (besides the pending
// Next's goroutine, which hands its result over a channel).
type reader struct {
	it      exec.Iterator
	try     TryNexter          // it's non-blocking side, nil for ordinary queries
	cancel  context.CancelFunc // ends the iterator's context
	batch   arrow.RecordBatch  // current batch, rows [off, NumRows) unread
	off     int64
	pending chan nextResult // a live Next still waiting, started by an earlier read
	done    bool            // the iterator reported the end
}

type nextResult struct {
	b   arrow.RecordBatch
	err error
}

func newReader(it exec.Iterator, cancel context.CancelFunc) *reader {
	r := &reader{it: it, cancel: cancel}
	r.try, _ = it.(TryNexter)
	return r
}

// live reports an iterator whose rows may wait for input.
func (r *reader) live() bool { return r.try != nil }

// waitCanceled is the error of a read whose wait for a live iterator's next
// rows ended with the reading statement's context; the wait goes on for the
// next read and the cursor stays usable.
type waitCanceled struct{ err error }

func (w waitCanceled) Error() string { return w.err.Error() }
func (w waitCanceled) Unwrap() error { return w.err }

// read returns up to max rows, reading a new batch when the current one is
// used up. It returns nil at the end of the rows, and also, when wait is
// false, when a live iterator has nothing ready.
func (r *reader) read(ctx context.Context, max int64, wait bool) (arrow.RecordBatch, error) {
	if r.batch == nil {
		if err := r.fill(ctx, wait); err != nil || r.batch == nil {
			return nil, err
		}
	}
	n := r.batch.NumRows()
	if r.off == 0 && n <= max {
		b := r.batch
		r.batch = nil
		return b, nil
	}
	end := r.off + min(max, n-r.off)
	b := r.batch.NewSlice(r.off, end)
	r.off = end
	if r.off == n {
		r.batch = nil
	}
	return b, nil
}

// fill sets r.batch to the iterator's next non-empty batch, or r.done at
// the end; when wait is false and a live iterator has nothing ready it
// leaves both unset.
func (r *reader) fill(ctx context.Context, wait bool) error {
	for r.batch == nil && !r.done {
		var b arrow.RecordBatch
		var err error
		switch {
		case r.pending != nil:
			if wait {
				select {
				case res := <-r.pending:
					r.pending, b, err = nil, res.b, res.err
				case <-ctx.Done():
					return waitCanceled{ctx.Err()}
				}
			} else {
				select {
				case res := <-r.pending:
					r.pending, b, err = nil, res.b, res.err
				default:
					return nil
				}
			}
		case r.try != nil:
			var ok bool
			b, ok, err = r.tryNext()
			if err == nil && !ok {
				if !wait {
					return nil
				}
				r.pending = r.startNext()
				continue
			}
		default:
			stop := context.AfterFunc(ctx, r.cancel)
			b, err = r.it.Next()
			stop()
			if err != nil && ctx.Err() != nil && pgerr.As(err) == nil {
				err = ctx.Err()
			}
		}
		if err != nil {
			return err
		}
		if b == nil {
			r.done = true
		} else if b.NumRows() > 0 {
			r.batch, r.off = b, 0
		}
	}
	return nil
}

// tryNext calls TryNext, turning a panic into an error.
func (r *reader) tryNext() (b arrow.RecordBatch, ok bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			b, ok, err = nil, false, pgerr.Internal("%s", fmt.Sprint(p))
		}
	}()
	return r.try.TryNext()
}

// startNext runs a live iterator's Next on its own goroutine.
func (r *reader) startNext() chan nextResult {
	ch := make(chan nextResult, 1)
	it := r.it
	go func() {
		defer func() {
			if p := recover(); p != nil {
				ch <- nextResult{err: pgerr.Internal("%s", fmt.Sprint(p))}
			}
		}()
		b, err := it.Next()
		ch <- nextResult{b, err}
	}()
	return ch
}

// materialize reads the rest of the rows into memory and closes the
// iterator, so the cursor no longer depends on the transaction or snapshot
// it was opened in (WITH HOLD).
func (r *reader) materialize(ctx context.Context) error {
	var bs []arrow.RecordBatch
	if r.batch != nil {
		bs = append(bs, r.batch.NewSlice(r.off, r.batch.NumRows()))
		r.batch = nil
	}
	for !r.done {
		if err := r.fill(ctx, true); err != nil {
			return err
		}
		if r.batch != nil {
			bs = append(bs, r.batch)
			r.batch = nil
		}
	}
	r.close()
	*r = reader{it: exec.NewSliceIter(bs), cancel: func() {}}
	return nil
}

// close ends the iterator's context and closes it; an iterator with a
// pending Next is closed once that Next returns (it does promptly, its
// context being canceled).
func (r *reader) close() {
	r.cancel()
	it, pending := r.it, r.pending
	r.batch, r.pending, r.done = nil, nil, true
	if pending != nil {
		go func() {
			<-pending
			_ = it.Close()
		}()
		return
	}
	_ = it.Close()
}

// rowStore keeps every row a SCROLL cursor has read, for backward moves.
type rowStore struct {
	batches []arrow.RecordBatch
	ends    []int64 // ends[i]: rows in batches[:i+1]
	n       int64
}

func (s *rowStore) add(b arrow.RecordBatch) {
	s.n += b.NumRows()
	s.batches = append(s.batches, b)
	s.ends = append(s.ends, s.n)
}

// slice returns rows [from, to) (0-based), or a prefix of them that lies in
// one stored batch.
func (s *rowStore) slice(from, to int64) arrow.RecordBatch {
	i := sort.Search(len(s.ends), func(i int) bool { return s.ends[i] > from })
	start := s.ends[i] - s.batches[i].NumRows()
	return s.batches[i].NewSlice(from-start, min(to, s.ends[i])-start)
}

// row returns row i (0-based) as a one-row batch.
func (s *rowStore) row(i int64) arrow.RecordBatch { return s.slice(i, i+1) }

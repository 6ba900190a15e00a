package pgerr

import (
	"context"
	"sync"
)

// NoticeQueue holds notices raised where the client's connection may not
// be written: while an expression is evaluated (a PL/pgSQL function's
// RAISE NOTICE), possibly on a worker goroutine of a parallel operator.
// The connection that owns it sends them at its next safe point (before
// a batch of rows, an error or the command's completion). Safe for
// concurrent use.
type NoticeQueue struct {
	mu sync.Mutex
	q  []*Error
}

// Add queues n.
func (q *NoticeQueue) Add(n *Error) {
	q.mu.Lock()
	q.q = append(q.q, n)
	q.mu.Unlock()
}

// Take returns the queued notices, oldest first, and empties the queue.
func (q *NoticeQueue) Take() []*Error {
	q.mu.Lock()
	out := q.q
	q.q = nil
	q.mu.Unlock()
	return out
}

type noticeQueueKey struct{}

// WithNoticeQueue returns ctx carrying q (NoticeQueueOf).
func WithNoticeQueue(ctx context.Context, q *NoticeQueue) context.Context {
	return context.WithValue(ctx, noticeQueueKey{}, q)
}

// NoticeQueueOf returns the queue ctx carries, or nil (no client to tell:
// a materialized view's maintenance).
func NoticeQueueOf(ctx context.Context) *NoticeQueue {
	if ctx == nil {
		return nil
	}
	q, _ := ctx.Value(noticeQueueKey{}).(*NoticeQueue)
	return q
}

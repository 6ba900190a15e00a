package dataflow

import (
	"sync/atomic"
	"time"
)

// Subscription lag (streamsql_subscription_lag_rows, the
// streamsql_subscriptions system view; docs/observability.md): each client
// subscription counts the change rows the view handed it (wherever they
// wait: its memory queue, its spill file, or the view's changelog it reads
// after falling behind) and the rows its reader took. The difference is
// how many changed rows the subscriber has still to read. The initial
// snapshot is not counted. Both counters are atomics: reading them never
// waits for the view or the reader.

// subIDs numbers the subscriptions of the process.
var subIDs atomic.Int64

// SubLag is one client subscription's position (a snapshot).
type SubLag struct {
	ID        int64     // unique in the process
	Started   time.Time // when it subscribed
	RowsSent  int64     // change rows the view handed it
	RowsRead  int64     // change rows its reader took
	LagRows   int64     // RowsSent - RowsRead
	LagEpochs int64     // epochs the view completed that the reader has not reached
}

// SubscriptionLags lists the job's client subscriptions (not downstream
// jobs) with their lag. It takes the job's subscriber lock for a moment.
func (j *Job) SubscriptionLags() []SubLag {
	j.subMu.Lock()
	subs := make([]*Subscription, 0, len(j.subs))
	for _, s := range j.subs {
		if !s.dead && s.client != nil {
			subs = append(subs, s.client)
		}
	}
	j.subMu.Unlock()
	done := j.done.Load()
	out := make([]SubLag, len(subs))
	for i, s := range subs {
		read := s.taken.Load()
		sent := s.pushed.Load()
		out[i] = SubLag{ID: s.id, Started: s.started, RowsSent: sent, RowsRead: read, LagRows: max(sent-read, 0)}
		if at := s.reached.Load(); done > at && at > 0 {
			out[i].LagEpochs = int64(done - at)
		}
	}
	return out
}

// updateRows counts an update's rows.
func updateRows(u Update) int64 {
	var n int64
	for _, r := range u.Rows {
		if r != nil {
			n += r.NumRows()
		}
	}
	return n
}

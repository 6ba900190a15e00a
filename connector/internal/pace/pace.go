// Package pace spaces a generator's output in wall-clock time: the datagen
// and nexmark readers use it for rows_per_second and events_per_second.
//
// A Pacer is owned by one reader goroutine and is not safe for concurrent
// use. It never busy-waits: it sleeps on a timer, or returns at once when
// the context is canceled.
package pace

import (
	"context"
	"time"
)

// MaxLag bounds how far a Pacer lets the schedule fall behind the wall
// clock: when the consumer stalled for longer, the schedule restarts at the
// current time, so a stall is followed by at most MaxLag's worth of items at
// full speed rather than by everything the stall "owed".
const MaxLag = time.Second

// Clock is the time source of a Pacer (a fake in tests).
type Clock interface {
	Now() time.Time
	// Sleep waits d or until ctx is done, and returns ctx.Err() in that case.
	Sleep(ctx context.Context, d time.Duration) error
}

// Pacer lets item number n (from 0) out at start + n/rate: after Wait(ctx,
// n) returns nil, at least n/rate seconds have passed since the schedule
// started (the first Wait), give or take MaxLag restarts.
type Pacer struct {
	rate    float64 // items per second, > 0
	clock   Clock
	started bool
	start   time.Time // when item base is due
	base    int64
}

// New returns a Pacer for rate items per second on the real clock.
func New(rate float64) *Pacer { return NewWithClock(rate, realClock{}) }

// NewWithClock returns a Pacer for rate (> 0) items per second on clock.
func NewWithClock(rate float64, clock Clock) *Pacer {
	return &Pacer{rate: rate, clock: clock}
}

// Batch is the number of items to release at a time for rate items per
// second: a tenth of a second's worth, at least 1 and at most limit.
func Batch(rate float64, limit int) int {
	n := int(min(rate/10, float64(limit)))
	return min(max(n, 1), limit)
}

// Wait blocks until item n is due and returns nil, or returns ctx.Err() when
// ctx is canceled first. Items are numbered from 0; n never decreases
// between calls.
func (p *Pacer) Wait(ctx context.Context, n int64) error {
	now := p.clock.Now()
	if !p.started {
		p.started, p.start, p.base = true, now, n
	}
	due := p.start.Add(time.Duration(float64(n-p.base) / p.rate * float64(time.Second)))
	d := due.Sub(now)
	if d <= 0 {
		if -d > MaxLag {
			p.start, p.base = now, n // restart the schedule: no catch-up burst
		}
		return ctx.Err()
	}
	return p.clock.Sleep(ctx, d)
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

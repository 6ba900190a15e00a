package dataflow

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
)

// ManualClock is a stream.Clock that only moves when Advance is called:
// tests, and a server started with --clock manual (ADVANCE CLOCK), drive
// processing time with it instead of sleeping. Safe for concurrent use.
//
// After channels are buffered (capacity 1) and filled before Advance
// returns, in deadline order, so an operator that polls its timer channel
// when a barrier arrives sees every tick that happened before the barrier
// was injected.
type ManualClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []clockWaiter
}

type clockWaiter struct {
	at time.Time
	ch chan time.Time
}

// NewManualClock returns a manual clock reading t0.
func NewManualClock(t0 time.Time) *ManualClock { return &ManualClock{now: t0} }

// Now implements stream.Clock.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// After implements stream.Clock: the channel receives the clock's time once
// Advance has moved it to Now()+d or later (at once when d <= 0).
func (c *ManualClock) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, clockWaiter{at: c.now.Add(d), ch: ch})
	return ch
}

// Advance moves the clock forward by d (a negative d is ignored: the clock
// never goes back) and fires the After channels that are due.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d > 0 {
		c.now = c.now.Add(d)
	}
	sort.SliceStable(c.waiters, func(i, j int) bool { return c.waiters[i].at.Before(c.waiters[j].at) })
	n := 0
	for _, w := range c.waiters {
		if w.at.After(c.now) {
			break
		}
		w.ch <- c.now
		n++
	}
	c.waiters = append(c.waiters[:0], c.waiters[n:]...)
}

// Pending is the number of After channels not yet fired (for tests).
func (c *ManualClock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiters)
}

// Clock returns the runtime's processing-time clock.
func (rt *Runtime) Clock() stream.Clock { return rt.cfg.Clock }

// AdvanceClock moves a manual clock forward by d, then injects a barrier
// and waits until every job has completed it, so that every reader has
// seen the new time (idle watermarks moved, operators' timers fired) and
// the views show what followed. With another clock it fails with 55000.
func (rt *Runtime) AdvanceClock(ctx context.Context, d time.Duration) error {
	mc, ok := rt.cfg.Clock.(*ManualClock)
	if !ok {
		return pgerr.New(pgerr.ObjectNotInPrerequisiteState, "ADVANCE CLOCK needs the manual clock").
			WithHint("Start streamsqld with --clock manual.")
	}
	if d < 0 {
		return pgerr.New(pgerr.InvalidParameterValue, "the clock cannot go back")
	}
	mc.Advance(d)
	return rt.WaitEpoch(ctx, rt.Inject())
}

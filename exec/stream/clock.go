package stream

import "time"

// Clock is processing time as the runtime sees it: the wall clock in a
// server, a manual clock in tests and in a server started with a manual
// clock (advanced by a statement), so that EARLY EVERY, EMIT EVERY,
// idle_timeout and PROCTIME() are testable without sleeping. Safe for
// concurrent use.
type Clock interface {
	Now() time.Time
	// After returns a channel that receives the clock's time once it has
	// reached Now()+d.
	After(d time.Duration) <-chan time.Time
}

// WallClock is the real clock.
type WallClock struct{}

// Now implements Clock.
func (WallClock) Now() time.Time { return time.Now() }

// After implements Clock.
func (WallClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// clock returns env's clock (the wall clock when none is set).
func (e *Env) clock() Clock {
	if e.Clock == nil {
		return WallClock{}
	}
	return e.Clock
}

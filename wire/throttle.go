package wire

import (
	"sync"
	"time"
)

// throttle slows down password guessing. Each failed password
// authentication is counted against the user name and against the client's
// IP address; the failing connection then waits base << (n-1), at most
// max, before it gets FATAL 28P01, where n is the larger of the two counts
// of failures within throttleForget of each other. Only the failing
// connection waits: other logins (of the same user too) go on at once,
// and a successful login of a user forgets that user's failures (not the
// address's, which a guesser with an account of its own could otherwise
// reset). The state is bounded: at most throttleEntries keys, the stale
// ones dropped first, then arbitrary ones. Safe for concurrent use.
type throttle struct {
	base, max time.Duration
	now       func() time.Time

	mu    sync.Mutex
	fails map[string]failRecord
}

type failRecord struct {
	n    int
	last time.Time
}

const (
	defaultFailedLoginDelay    = 100 * time.Millisecond
	defaultMaxFailedLoginDelay = 5 * time.Second
	throttleForget             = 10 * time.Minute
	throttleEntries            = 10_000
)

func newThrottle(base, max time.Duration) *throttle {
	if base == 0 {
		base = defaultFailedLoginDelay
	}
	if max == 0 {
		max = defaultMaxFailedLoginDelay
	}
	return &throttle{base: base, max: max, now: time.Now, fails: map[string]failRecord{}}
}

// failed records a failed login of user from addr and returns how long the
// connection should wait before saying so.
func (t *throttle) failed(user, addr string) time.Duration {
	if t.base < 0 {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	n := max(t.bump("u\x00"+user, now), t.bump("a\x00"+addr, now))
	d := t.base
	for i := 1; i < n && d < t.max; i++ {
		d *= 2
	}
	return min(d, t.max)
}

// bump counts one failure for key and returns the count.
func (t *throttle) bump(key string, now time.Time) int {
	r, ok := t.fails[key]
	if !ok || now.Sub(r.last) > throttleForget {
		r = failRecord{}
	}
	if !ok && len(t.fails) >= throttleEntries {
		t.shrink(now)
	}
	r.n++
	r.last = now
	t.fails[key] = r
	return r.n
}

// shrink drops stale records, then arbitrary ones, down to three
// quarters of throttleEntries (so that it runs once per many failures).
func (t *throttle) shrink(now time.Time) {
	for k, r := range t.fails {
		if now.Sub(r.last) > throttleForget {
			delete(t.fails, k)
		}
	}
	for k := range t.fails {
		if len(t.fails) <= throttleEntries*3/4 {
			break
		}
		delete(t.fails, k)
	}
}

// succeeded forgets user's failures.
func (t *throttle) succeeded(user string) {
	t.mu.Lock()
	delete(t.fails, "u\x00"+user)
	t.mu.Unlock()
}

// entries is the number of keys held (for tests).
func (t *throttle) entries() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.fails)
}

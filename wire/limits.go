package wire

import (
	"context"
	"errors"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/streamsql/streamsql/pgerr"
)

// Connection limits. The Server owns a count of connection slots, guarded
// by Server.mu:
//
//   - a slot is taken at accept, before the startup packet is read, so
//     connections that have not authenticated yet count (as in PostgreSQL);
//   - with all Options.MaxConnections slots taken, a new connection takes
//     the slot of the oldest connection still authenticating (which is
//     closed: it gets nothing, as a connection killed by
//     authentication_timeout) and otherwise gets FATAL 53300 "sorry, too
//     many clients already". A client that authenticates in a few
//     milliseconds therefore always gets in unless established sessions
//     hold every slot; holding slots with idle unauthenticated sockets
//     needs new connections faster than real clients log in, and each is
//     closed after Options.AuthenticationTimeout anyway;
//   - after authentication a role without SUPERUSER is refused (FATAL
//     53300 "remaining connection slots are reserved for non-replication
//     superuser connections", PostgreSQL 15's text) when fewer than
//     Options.SuperuserReservedConnections slots are free;
//   - a role's CONNECTION LIMIT is the engine's (Engine.NewSession).
//
// Refused connections are answered after their startup packet (so that
// SSL negotiation and cancel requests work as in PostgreSQL) by at most
// maxRejecting goroutines; beyond that they are closed at once.

// DefaultMaxConnections is Options.MaxConnections when 0 (PostgreSQL's
// max_connections default).
const DefaultMaxConnections = 100

// DefaultAuthenticationTimeout is Options.AuthenticationTimeout when 0
// (PostgreSQL's authentication_timeout default).
const DefaultAuthenticationTimeout = time.Minute

// maxAuthMessage bounds a message during authentication (a password or
// SASL message), as PostgreSQL's PG_MAX_AUTH_TOKEN_LENGTH.
const maxAuthMessage = 65535

// maxRejecting bounds the connections being told "too many clients" at
// once; rejectTimeout is how long each may take to send its startup packet.
const (
	maxRejecting  = 64
	rejectTimeout = 5 * time.Second
)

var (
	errTooManyClients = pgerr.New(pgerr.TooManyConnections, "sorry, too many clients already")
	errReservedSlots  = pgerr.New(pgerr.TooManyConnections, "remaining connection slots are reserved for non-replication superuser connections")
)

// Accept backoff, as net/http's Server.Serve: a temporary accept error
// (out of file descriptors, a connection aborted before accept) waits
// 5 ms, doubling up to 1 s, and accepting goes on.
const (
	acceptBackoffMin = 5 * time.Millisecond
	acceptBackoffMax = time.Second
)

// temporaryAcceptError reports whether an Accept error is worth retrying.
func temporaryAcceptError(err error) bool {
	if errors.Is(err, net.ErrClosed) {
		return false
	}
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ECONNABORTED, syscall.ECONNRESET,
		syscall.ENOBUFS, syscall.ENOMEM, syscall.EAGAIN, syscall.EINTR, syscall.EPROTO, syscall.EPERM, syscall.ETIMEDOUT} {
		if errors.Is(err, e) {
			return true
		}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	// net.Error.Temporary is deprecated but still what net/http relies on.
	var te interface{ Temporary() bool }
	return errors.As(err, &te) && te.Temporary()
}

// nextBackoff is the wait after an accept error that followed a wait of d.
func nextBackoff(d time.Duration) time.Duration {
	if d == 0 {
		return acceptBackoffMin
	}
	return min(2*d, acceptBackoffMax)
}

// sleepCtx waits d or until ctx ends; false when ctx ended.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// admit takes a connection slot for c (and tracks it); it returns false
// when the server is closing or full. When full it first tries to evict
// the oldest connection still authenticating, preferring one that has not
// sent its startup packet: a flood of idle sockets accepted after a real
// client then evicts each other rather than the client that is
// authenticating.
func (s *Server) admit(c *conn) (ok bool, closing bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false, true
	}
	s.live[c] = struct{}{}
	if s.slots >= s.opts.MaxConnections {
		var oldest *conn
		for o := range s.live {
			if !o.holdsSlot || o.authenticated {
				continue
			}
			if oldest == nil || (oldest.spoke && !o.spoke) || (oldest.spoke == o.spoke && o.accepted.Before(oldest.accepted)) {
				oldest = o
			}
		}
		if oldest == nil {
			return false, false
		}
		oldest.holdsSlot = false
		s.slots--
		s.floodLogf("wire: connection from %s closed: all %d connection slots are taken and it has not authenticated after %s",
			oldest.raw.RemoteAddr(), s.opts.MaxConnections, time.Since(oldest.accepted).Round(time.Millisecond))
		_ = oldest.raw.Close()
	}
	c.holdsSlot = true
	s.slots++
	return true, false
}

// spoke marks c as having sent its startup packet (admit evicts it last).
func (s *Server) spoke(c *conn) {
	s.mu.Lock()
	c.spoke = true
	s.mu.Unlock()
}

// authenticatedAs marks c as past authentication: it can no longer be
// evicted, and the authentication timeout no longer applies. A non-superuser is refused when fewer than the reserved slots
// are free.
func (s *Server) authenticatedAs(c *conn, superuser bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !c.holdsSlot { // evicted meanwhile
		return errTooManyClients
	}
	if !superuser && s.opts.MaxConnections-s.slots < s.opts.SuperuserReservedConnections {
		return errReservedSlots
	}
	c.authenticated = true
	if !s.closed { // Close's deadlines stay
		_ = c.raw.SetDeadline(time.Time{})
	}
	return nil
}

// Connections reports the connection slots taken (authenticating and
// established connections).
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.slots
}

// reject answers a connection refused for lack of slots: after its startup
// packet (a cancel request is still served), FATAL 53300.
func (s *Server) reject(c *conn) {
	s.floodLogf("wire: connection from %s refused: all %d connection slots are taken by authenticated sessions", c.raw.RemoteAddr(), s.opts.MaxConnections)
	if s.rejecting.Add(1) > maxRejecting {
		s.rejecting.Add(-1)
		return
	}
	defer s.rejecting.Add(-1)
	_ = c.raw.SetDeadline(time.Now().Add(min(rejectTimeout, s.opts.AuthenticationTimeout)))
	if _, ok, err := c.readStartup(); err == nil && ok {
		_ = c.fatal(errTooManyClients)
	}
}

// floodLog rate-limits log lines an attacker can cause in bulk (evicted
// and refused connections, accept errors): at most one line a second,
// with the number of lines left out since. Safe for concurrent use.
type floodLog struct {
	mu         sync.Mutex
	last       time.Time
	suppressed int
}

// floodLogf logs through s.logf unless a line went out less than a
// second ago.
func (s *Server) floodLogf(format string, args ...any) {
	f := &s.flood
	f.mu.Lock()
	now := time.Now()
	if now.Sub(f.last) < time.Second {
		f.suppressed++
		f.mu.Unlock()
		return
	}
	n := f.suppressed
	f.last, f.suppressed = now, 0
	f.mu.Unlock()
	if n > 0 {
		format += " (%d similar lines left out)"
		args = append(args, n)
	}
	s.logf(format, args...)
}

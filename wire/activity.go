package wire

import (
	"time"
)

// activitySession is implemented by sessions that show in
// pg_stat_activity and can be signaled by other sessions
// (*engine.Session): the connection reports each statement's start and
// each return to idle, and hands over its cancel and terminate functions.
type activitySession interface {
	ReportActivity(state, query string)
	SetSignals(cancel, terminate func())
}

// setSignals gives the session its cancel and terminate functions (at
// registration).
func (c *conn) setSignals() {
	if as, ok := c.sess.(activitySession); ok {
		as.SetSignals(c.cancelRunning, c.terminate)
	}
}

// reportActive notes that query starts running.
func (c *conn) reportActive(query string) {
	if as, ok := c.sess.(activitySession); ok {
		as.ReportActivity("active", query)
	}
}

// reportIdle notes the return to idle, with the transaction status.
func (c *conn) reportIdle() {
	as, ok := c.sess.(activitySession)
	if !ok {
		return
	}
	state := "idle"
	switch c.sess.TxStatus() {
	case 'T':
		state = "idle in transaction"
	case 'E':
		state = "idle in transaction (aborted)"
	}
	as.ReportActivity(state, "")
}

// terminate ends the connection as pg_terminate_backend does: the running
// statement is canceled and the client gets FATAL 57P01 "terminating
// connection due to administrator command". Safe from any goroutine.
func (c *conn) terminate() {
	c.terminated.Store(true)
	c.cancelRunning()
	now := time.Now()
	_ = c.raw.SetReadDeadline(now) // wakes a connection waiting for its client
	_ = c.raw.SetWriteDeadline(now.Add(closeGrace))
}

// ending reports whether the connection must end with FATAL 57P01: the
// server is closing or the connection was terminated.
func (c *conn) ending() bool { return c.srv.closing() || c.terminated.Load() }

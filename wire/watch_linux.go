//go:build linux

package wire

import (
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// watchClient cancels the running statement if the client hangs up while
// the statement waits for input (nothing is written meanwhile, so no write
// error would tell). It waits on the socket through the runtime's poller and
// checks for POLLRDHUP, as PostgreSQL's client_connection_check does; data
// the client sends ahead (a Sync, a pipelined query) stays unread. stop ends
// the watch; it must be called, from the connection goroutine, before the
// socket is read again.
func (c *conn) watchClient() (stop func()) {
	sc, ok := c.raw.(syscall.Conn)
	if !ok {
		return func() {}
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		gone := false
		_ = rc.Read(func(fd uintptr) bool {
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
			n, err := unix.Poll(fds, 0)
			if err != nil {
				return err != unix.EINTR && err != unix.EAGAIN
			}
			if n > 0 && fds[0].Revents&(unix.POLLRDHUP|unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0 {
				gone = true
				return true
			}
			return false // nothing yet, or only data: wait for the next event
		})
		if gone {
			c.cancelRunning()
		}
	}()
	return func() {
		// A read deadline wakes the watcher's wait; Server.Close may have
		// set one meanwhile, which must stay.
		_ = c.raw.SetReadDeadline(time.Now())
		<-done
		if !c.ending() { // Close or pg_terminate_backend set one to keep
			_ = c.raw.SetReadDeadline(time.Time{})
			if c.ending() { // they set it just before the reset: set it again
				_ = c.raw.SetReadDeadline(time.Now())
			}
		}
	}
}

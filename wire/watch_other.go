//go:build !linux

package wire

// watchClient does nothing where POLLRDHUP is missing: a client that hangs
// up during a wait is noticed when the next rows are written.
func (c *conn) watchClient() (stop func()) { return func() {} }

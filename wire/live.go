package wire

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/exec"
)

// Results whose rows may wait for input (SUBSCRIBE, FETCH from a
// subscription's cursor, COPY (SUBSCRIBE ...) TO STDOUT) implement
// engine.TryNexter. The wire sends what it has before such a result waits,
// so rows reach the client as they arrive rather than when the (possibly
// never-ending) result ends, and it watches the socket during the wait, so a
// client that goes away ends the statement (and the wire closes its rows).
// A CancelRequest or statement_timeout ends the wait through the
// statement's context (57014), leaving the connection usable.

// nextBatch returns the next batch of it (nil at the end). For a live iterator
// (live is its TryNexter side, or nil) with no batch ready it first calls
// beforeWait, which sends and flushes what the client has not got yet, and
// watches the client while Next waits. Panics become errors (conn.call).
func (c *conn) nextBatch(ctx context.Context, it exec.Iterator, live engine.TryNexter, beforeWait func() error) (arrow.RecordBatch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var b arrow.RecordBatch
	if live != nil {
		ready := false
		if err := c.call(func() error {
			var err error
			b, ready, err = live.TryNext()
			return err
		}); err != nil || ready {
			return b, err
		}
		if err := beforeWait(); err != nil {
			return nil, err
		}
		stop := c.watchClient()
		defer stop()
	}
	err := c.call(func() error {
		var err error
		b, err = it.Next()
		return err
	})
	return b, err
}

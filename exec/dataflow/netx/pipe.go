package netx

import (
	"context"
	"errors"

	"github.com/streamsql/streamsql/exec/stream"
)

// Outbound carries in to the stream id of the Server at addr, in a
// goroutine of its own: it dials, sends every message of in, and closes
// the stream cleanly when in closes. A failure (no connection, a dead
// receiver, the receiver's own failure) is passed to fail; then, and when
// ctx ends, it stops reading in (whose writer must watch ctx as well). It
// returns a channel closed when the goroutine has ended.
func Outbound(ctx context.Context, addr, id string, opt Options, in <-chan stream.Message, fail func(error)) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		s, err := Dial(ctx, addr, id, opt)
		if err != nil {
			if ctx.Err() == nil {
				fail(err)
			}
			return
		}
		if err := Pump(ctx, s, in); err != nil && ctx.Err() == nil && !errors.Is(err, errEnded) {
			fail(err)
		}
	}()
	return done
}

// Inbound expects the stream id on s and returns its messages on a
// channel (Receiver.Chan): closed at the stream's clean end, at ctx's end,
// or after a failure, which is passed to fail.
func (s *Server) Inbound(ctx context.Context, id string, fail func(error)) <-chan stream.Message {
	r, err := s.Expect(id)
	if err != nil {
		fail(err)
		out := make(chan stream.Message)
		close(out)
		return out
	}
	return r.Chan(ctx, fail)
}

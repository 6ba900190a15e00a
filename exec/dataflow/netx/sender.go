package netx

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
)

// Sender is the sending end of one stream. Send and Close are called by
// one goroutine (the exchange's); Abort and Err by any. Its own goroutines
// (reading credits, sending heartbeats) end when the stream does.
type Sender struct {
	id, peer string
	opt      Options
	c        *conn
	enc      encoder

	mu     sync.Mutex
	credit int   // messages the receiver still accepts; guarded by mu
	err    error // why the stream failed; set once, guarded by mu
	wake   chan struct{}
	dead   chan struct{} // closed when the stream fails or ends
	endAck chan struct{} // closed when the receiver acknowledged End
	closed atomic.Bool   // Close or Abort was called
	once   sync.Once
}

// Dial connects to the receiver's Server at addr and opens the stream id.
// It returns once the receiver welcomed it (and granted credit), or with
// the error that refused it.
func Dial(ctx context.Context, addr, id string, opt Options) (*Sender, error) {
	to := opt.timeout()
	dctx, cancel := context.WithTimeout(ctx, opt.connectTimeout())
	defer cancel()
	// A refused connection is retried until the timeout: the receiving
	// node may not listen yet (it starts its part of the job on its own).
	var d net.Dialer
	var nc net.Conn
	for backoff := 10 * time.Millisecond; ; backoff = min(2*backoff, 500*time.Millisecond) {
		var err error
		if nc, err = d.DialContext(dctx, "tcp", addr); err == nil {
			break
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return nil, peerError(id, addr, "dial", err)
		}
		select {
		case <-dctx.Done():
			return nil, peerError(id, addr, "dial", err)
		case <-time.After(backoff):
		}
	}
	s := &Sender{id: id, peer: addr, opt: opt, c: newConn(nc, to),
		wake: make(chan struct{}, 1), dead: make(chan struct{}), endAck: make(chan struct{})}
	hello := binary.BigEndian.AppendUint16(nil, version)
	hello = binary.BigEndian.AppendUint64(hello, opt.Generation)
	hello = append(hello, id...)
	if err := s.c.write(fHello, hello); err != nil {
		nc.Close()
		return nil, peerError(id, addr, "hello", err)
	}
	t, p, err := s.c.read(opt.connectTimeout() + to) // the server may wait for the Expect
	if err != nil {
		nc.Close()
		return nil, peerError(id, addr, "waiting for welcome", err)
	}
	switch {
	case t == fError:
		nc.Close()
		return nil, remoteError(id, "receiver "+addr, p)
	case t != fWelcome || len(p) != 4:
		nc.Close()
		return nil, protocolError(id, addr, fmt.Errorf("frame %d instead of welcome", t))
	}
	s.credit = int(binary.BigEndian.Uint32(p))
	go s.readLoop()
	go s.heartbeats()
	return s, nil
}

// readLoop takes the receiver's frames: credit, heartbeats, EndAck, Error.
func (s *Sender) readLoop() {
	to := s.opt.timeout()
	for {
		t, p, err := s.c.read(to)
		if err != nil {
			s.fail(peerError(s.id, "receiver "+s.peer, "reading", err))
			return
		}
		switch t {
		case fHeartbeat:
		case fCredit:
			if len(p) != 4 {
				s.fail(protocolError(s.id, s.peer, fmt.Errorf("credit frame of %d bytes", len(p))))
				return
			}
			s.mu.Lock()
			s.credit += int(binary.BigEndian.Uint32(p))
			s.mu.Unlock()
			select {
			case s.wake <- struct{}{}:
			default:
			}
		case fEndAck:
			close(s.endAck)
			return
		case fError:
			s.fail(remoteError(s.id, "receiver "+s.peer, p))
			return
		default:
			s.fail(protocolError(s.id, s.peer, fmt.Errorf("unexpected frame type %d", t)))
			return
		}
	}
}

// heartbeats writes a heartbeat every interval until the stream ends.
func (s *Sender) heartbeats() {
	tk := time.NewTicker(s.opt.heartbeat())
	defer tk.Stop()
	for {
		select {
		case <-s.dead:
			return
		case <-s.endAck:
			return
		case <-tk.C:
			if err := s.c.write(fHeartbeat); err != nil {
				s.fail(peerError(s.id, "receiver "+s.peer, "heartbeat", err))
				return
			}
		}
	}
}

// fail ends the stream with err (the first error wins) and closes the
// connection, which ends the goroutines.
func (s *Sender) fail(err error) {
	s.once.Do(func() {
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
		close(s.dead)
		s.c.nc.Close()
	})
}

// Err is why the stream failed (nil while it did not).
func (s *Sender) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Send sends m, blocking while the receiver grants no credit (the
// receiver's backpressure), until ctx ends or the stream fails.
func (s *Sender) Send(ctx context.Context, m stream.Message) error {
	if s.closed.Load() {
		return errEnded
	}
	for {
		s.mu.Lock()
		if s.err != nil {
			err := s.err
			s.mu.Unlock()
			return err
		}
		if s.credit > 0 {
			s.credit--
			s.mu.Unlock()
			break
		}
		s.mu.Unlock()
		select {
		case <-s.wake:
		case <-s.dead:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	t, parts, err := s.enc.encode(m)
	if err != nil {
		err = pgerr.Wrap(err, pgerr.InternalError, "exchange stream %s: encoding: %v", s.id, err)
		s.Abort(err)
		return err
	}
	if err := s.c.write(t, parts...); err != nil {
		err = peerError(s.id, "receiver "+s.peer, "sending", err)
		s.fail(err)
		return err
	}
	return nil
}

// Close ends the stream cleanly: it sends End and waits until the
// receiver acknowledged every message (at most the timeout).
func (s *Sender) Close(ctx context.Context) error {
	if s.closed.Swap(true) {
		return errEnded
	}
	if err := s.Err(); err != nil {
		return err
	}
	if err := s.c.write(fEnd); err != nil {
		err = peerError(s.id, "receiver "+s.peer, "sending end", err)
		s.fail(err)
		return err
	}
	tm := time.NewTimer(s.opt.timeout())
	defer tm.Stop()
	select {
	case <-s.endAck:
		s.fail(errEnded)
		return nil
	case <-s.dead:
		select {
		case <-s.endAck:
			return nil
		default:
		}
		return s.Err()
	case <-ctx.Done():
		s.fail(ctx.Err())
		return ctx.Err()
	case <-tm.C:
		err := pgerr.New(pgerr.ConnectionException, "exchange stream %s: receiver %s did not acknowledge the end within %s", s.id, s.peer, s.opt.timeout())
		s.fail(err)
		return err
	}
}

// Abort fails the stream with err and tells the receiver, whose Recv
// returns it (the sending side's failure crosses the network).
func (s *Sender) Abort(err error) {
	s.closed.Store(true)
	if s.Err() == nil {
		_ = s.c.write(fError, errorPayload(err))
	}
	s.fail(err)
}

// errorPayload is an Error frame's payload: the SQLSTATE, then the message.
func errorPayload(err error) []byte {
	code := pgerr.CodeOf(err)
	if len(code) != 5 {
		code = pgerr.InternalError
	}
	return append([]byte(code), err.Error()...)
}

// stopped is the error a sender whose context ended reports to its
// receiver: the context's cause when it has one (context.WithCancelCause:
// the failure of the sending job, with its SQLSTATE), else 57014.
func stopped(ctx context.Context, id string) error {
	if c := context.Cause(ctx); c != nil && c != ctx.Err() {
		return c
	}
	return pgerr.Wrap(ctx.Err(), pgerr.QueryCanceled, "exchange stream %s: sender stopped: %v", id, ctx.Err())
}

// Pump sends every message of in to s and closes s cleanly when in ends.
// When ctx ends first, it aborts s (ctx's cause, or 57014, reaches the
// receiver). It
// returns the stream's error, if any.
func Pump(ctx context.Context, s *Sender, in <-chan stream.Message) error {
	for {
		var m stream.Message
		var ok bool
		select {
		case m, ok = <-in:
		case <-ctx.Done():
			s.Abort(stopped(ctx, s.id))
			return ctx.Err()
		case <-s.dead:
			return s.Err()
		}
		if !ok {
			return s.Close(ctx)
		}
		if err := s.Send(ctx, m); err != nil {
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				s.Abort(stopped(ctx, s.id))
			}
			return err
		}
	}
}

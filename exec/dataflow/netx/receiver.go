package netx

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
)

// Server accepts the streams of one process: each connection names the
// stream it carries (Hello), and the Server hands it to the Receiver that
// Expect returned for that id. Safe for concurrent use.
type Server struct {
	ln  net.Listener
	opt Options // immutable; the generation is gen

	mu      sync.Mutex
	waiting map[string]*Receiver // expected, not yet connected; guarded by mu
	conns   map[net.Conn]bool    // connections in their handshake; guarded by mu
	gen     uint64               // the generation accepted (SetGeneration); guarded by mu
	// expected is closed (and replaced) when Expect registers a stream
	// or the server closes: handshakes waiting for their stream look again.
	expected chan struct{}
	closed   bool
	wg       sync.WaitGroup
}

// Listen starts a Server on addr ("127.0.0.1:0" picks a port).
func Listen(addr string, opt Options) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, pgerr.Wrap(err, pgerr.ConnectionException, "exchange: listen on %s: %v", addr, err)
	}
	s := &Server{ln: ln, opt: opt, waiting: map[string]*Receiver{}, conns: map[net.Conn]bool{}, expected: make(chan struct{}), gen: opt.Generation}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// SetGeneration makes g the assignment generation the server accepts
// (Options.Generation): streams of an older one are refused from now on;
// a stream of a newer one waits (as for its Expect) for the node to
// learn of its assignment, then must be of the current generation.
func (s *Server) SetGeneration(g uint64) {
	s.mu.Lock()
	s.gen = g
	s.mu.Unlock()
}

// Addr is the address senders dial.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops accepting; receivers not yet connected fail. Receivers
// already connected run on until their stream ends.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	close(s.expected)
	s.expected = make(chan struct{})
	waiting := s.waiting
	s.waiting = map[string]*Receiver{}
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	err := s.ln.Close()
	for _, r := range waiting {
		r.fail(pgerr.New(pgerr.ConnectionException, "exchange stream %s: server closed before the sender connected", r.id))
	}
	s.wg.Wait()
	return err
}

// Expect registers the stream id and returns its Receiver. The sender must
// connect within the timeout, or the Receiver fails.
//
// A stream expected again while its earlier Receiver still waits for its
// sender replaces it; the earlier one fails. That is a job's instance
// started again in the same assignment (a cluster view that could not
// resume from its checkpoint is restarted from its inputs under the
// assignment of the restart), whose earlier start is being stopped: its
// receivers, unconnected, would otherwise keep the stream ids until
// their connect timeout, and the new start would fail on them.
func (s *Server) Expect(id string) (*Receiver, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, pgerr.New(pgerr.ConnectionException, "exchange: server closed")
	}
	if old, dup := s.waiting[id]; dup {
		delete(s.waiting, id)
		old.connTimer.Stop()
		go old.failUnattached(pgerr.New(pgerr.ConnectionException, "exchange stream %s: expected again before its sender connected (its job started again)", id))
	}
	r := &Receiver{id: id, opt: s.opt, attached: make(chan struct{}), dead: make(chan struct{}),
		msgs: make(chan stream.Message, s.opt.credits())}
	s.waiting[id] = r
	close(s.expected)
	s.expected = make(chan struct{})
	r.connTimer = time.AfterFunc(s.opt.connectTimeout(), func() {
		s.mu.Lock()
		if s.waiting[id] == r {
			delete(s.waiting, id)
		}
		s.mu.Unlock()
		r.failUnattached(pgerr.New(pgerr.ConnectionException, "exchange stream %s: no sender connected within %s", id, s.opt.connectTimeout()))
	})
	return r, nil
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return // closed
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			return
		}
		s.conns[nc] = true
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.handshake(nc)
		}()
	}
}

// handshake reads the Hello of a new connection and attaches it to its
// Receiver, or refuses it with an Error frame.
func (s *Server) handshake(nc net.Conn) {
	c := newConn(nc, s.opt.timeout())
	done := func() {
		s.mu.Lock()
		delete(s.conns, nc)
		s.mu.Unlock()
	}
	refuse := func(err error) {
		done()
		_ = c.write(fError, errorPayload(err))
		nc.Close()
	}
	t, p, err := c.read(s.opt.timeout())
	if err != nil {
		done()
		nc.Close()
		return
	}
	if t != fHello || len(p) < 10 {
		refuse(pgerr.New(pgerr.ProtocolViolation, "exchange: expected hello, got frame %d", t))
		return
	}
	if v := binary.BigEndian.Uint16(p); v != version {
		refuse(pgerr.New(pgerr.ProtocolViolation, "exchange: protocol version %d, this node speaks %d", v, version))
		return
	}
	gen := binary.BigEndian.Uint64(p[2:])
	id := string(p[10:])
	s.mu.Lock()
	cur := s.gen
	s.mu.Unlock()
	if gen < cur {
		refuse(pgerr.New(pgerr.ConnectionException, "exchange stream %s: assignment generation %d is not the current %d", id, gen, cur))
		return
	}
	// The receiving side may not have expected the stream yet (the two
	// nodes start their parts of a job independently), nor learned of a
	// newer assignment: wait for the stream up to the timeout; its
	// generation must then be the current one.
	deadline := time.NewTimer(s.opt.connectTimeout())
	defer deadline.Stop()
	var r *Receiver
	for {
		s.mu.Lock()
		r = s.waiting[id]
		delete(s.waiting, id)
		wake, closed := s.expected, s.closed
		s.mu.Unlock()
		if r != nil || closed {
			break
		}
		select {
		case <-wake:
			continue
		case <-deadline.C:
		}
		break
	}
	if r == nil {
		refuse(pgerr.New(pgerr.ConnectionException, "exchange stream %s is not expected here", id))
		return
	}
	s.mu.Lock()
	cur = s.gen
	s.mu.Unlock()
	if gen != cur {
		err := pgerr.New(pgerr.ConnectionException, "exchange stream %s: assignment generation %d is not the current %d", id, gen, cur)
		r.failUnattached(err)
		refuse(err)
		return
	}
	done()
	r.attach(c, nc.RemoteAddr().String())
}

// Receiver is the receiving end of one stream. Recv is called by one
// goroutine (the consuming instance's); Abort, Close and Err by any.
type Receiver struct {
	id   string
	opt  Options
	peer string // the sender's address, set at attach
	c    *conn  // set at attach (before attached is closed)
	dec  decoder

	attached  chan struct{}
	connTimer *time.Timer
	msgs      chan stream.Message // decoded messages; closed after End
	dead      chan struct{}       // closed when the stream fails
	granted   int                 // messages taken since the last Credit (Recv's goroutine)
	ended     atomic.Bool         // Recv returned the end

	mu     sync.Mutex
	err    error // guarded by mu
	late   bool  // the sender did not connect in time; guarded by mu
	once   sync.Once
	gotEnd atomic.Bool // End arrived (readLoop)
}

// attach runs the stream over c: Welcome with the credit, then the
// reading and heartbeat goroutines.
func (r *Receiver) attach(c *conn, peer string) {
	r.connTimer.Stop()
	r.mu.Lock()
	if r.err != nil || r.late { // failed (closed, timed out) before the sender came
		r.mu.Unlock()
		_ = c.write(fError, errorPayload(pgerr.New(pgerr.ConnectionException, "exchange stream %s: the receiver gave up waiting", r.id)))
		c.nc.Close()
		return
	}
	r.c, r.peer = c, peer
	close(r.attached)
	r.mu.Unlock()
	if err := c.write(fWelcome, binary.BigEndian.AppendUint32(nil, uint32(r.opt.credits()))); err != nil {
		r.fail(peerError(r.id, "sender "+peer, "welcome", err))
		return
	}
	go r.readLoop()
	go r.heartbeats()
}

// readLoop decodes the sender's frames into msgs. A sender that sends
// past its credit breaks the protocol (msgs holds exactly the credit).
func (r *Receiver) readLoop() {
	to := r.opt.timeout()
	who := "sender " + r.peer
	for {
		t, p, err := r.c.read(to)
		if err != nil {
			r.fail(peerError(r.id, who, "reading", err))
			return
		}
		switch t {
		case fHeartbeat:
			continue
		case fError:
			r.fail(remoteError(r.id, who, p))
			return
		case fEnd:
			r.gotEnd.Store(true)
			close(r.msgs)
			if err := r.c.write(fEndAck); err != nil {
				r.fail(peerError(r.id, who, "acknowledging the end", err))
				return
			}
			// The sender closes the connection once it has the ack.
			for {
				if _, _, err := r.c.read(to); err != nil {
					r.c.nc.Close()
					return
				}
			}
		}
		m, err := r.dec.decode(t, p)
		if err != nil {
			r.fail(protocolError(r.id, r.peer, err))
			return
		}
		select {
		case r.msgs <- m:
		default:
			r.fail(protocolError(r.id, r.peer, fmt.Errorf("sender passed its credit of %d messages", r.opt.credits())))
			return
		}
	}
}

// heartbeats writes a heartbeat every interval until the stream ends.
func (r *Receiver) heartbeats() {
	tk := time.NewTicker(r.opt.heartbeat())
	defer tk.Stop()
	for {
		select {
		case <-r.dead:
			return
		case <-tk.C:
			if err := r.c.write(fHeartbeat); err != nil {
				if !r.gotEnd.Load() {
					r.fail(peerError(r.id, "sender "+r.peer, "heartbeat", err))
				}
				return
			}
		}
	}
}

func (r *Receiver) fail(err error) {
	r.once.Do(func() {
		r.mu.Lock()
		r.err = err
		c := r.c
		r.mu.Unlock()
		close(r.dead)
		if c != nil {
			c.nc.Close()
		}
	})
}

// failUnattached fails a receiver whose sender never connected.
func (r *Receiver) failUnattached(err error) {
	r.mu.Lock()
	if r.c != nil {
		r.mu.Unlock()
		return
	}
	r.late = true
	r.mu.Unlock()
	r.fail(err)
}

// Err is why the stream failed (nil while it did not).
func (r *Receiver) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Recv returns the next message; ok is false once the sender closed the
// stream cleanly and every message was returned. It grants the sender one
// credit per message taken.
func (r *Receiver) Recv(ctx context.Context) (m stream.Message, ok bool, err error) {
	if r.ended.Load() {
		return m, false, nil
	}
	select {
	case <-r.attached:
	case <-r.dead:
		return m, false, r.Err()
	case <-ctx.Done():
		return m, false, ctx.Err()
	}
	select {
	case m, ok = <-r.msgs:
		if !ok {
			r.ended.Store(true)
			return m, false, nil
		}
	case <-r.dead:
		return m, false, r.Err()
	case <-ctx.Done():
		return m, false, ctx.Err()
	}
	r.granted++
	// After End the sender needs no credit (and may have closed the
	// connection already).
	if r.granted >= max(1, r.opt.credits()/2) && !r.gotEnd.Load() {
		if err := r.c.write(fCredit, binary.BigEndian.AppendUint32(nil, uint32(r.granted))); err != nil && !r.gotEnd.Load() {
			// The connection may have failed under the reader first (it
			// closes the socket after recording why): the first cause is
			// the stream's error, not this write's "closed connection".
			r.fail(peerError(r.id, "sender "+r.peer, "granting credit", err))
			return m, false, r.Err()
		}
		r.granted = 0
	}
	return m, true, nil
}

// Abort fails the stream with err and tells the sender, whose next Send
// returns it.
func (r *Receiver) Abort(err error) {
	select {
	case <-r.attached:
		if r.Err() == nil {
			_ = r.c.write(fError, errorPayload(err))
		}
	default:
	}
	r.fail(err)
}

// Close releases the receiver; a stream not yet ended is aborted.
func (r *Receiver) Close() {
	if !r.ended.Load() {
		r.Abort(pgerr.New(pgerr.QueryCanceled, "exchange stream %s: receiver closed", r.id))
	}
	r.fail(errEnded)
}

// Chan runs the receiver into a channel until the end of the stream
// (then the channel closes), ctx's end, or a failure, which is passed to
// fail before the channel closes. The goroutine owns the receiver.
func (r *Receiver) Chan(ctx context.Context, fail func(error)) <-chan stream.Message {
	out := make(chan stream.Message)
	go func() {
		defer close(out)
		defer r.Close()
		for {
			m, ok, err := r.Recv(ctx)
			if err != nil {
				if ctx.Err() == nil {
					fail(err)
				}
				return
			}
			if !ok {
				return
			}
			select {
			case out <- m:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/types"
)

// conn is one client connection. Everything but the cancel hook is used by
// the connection's own goroutine only: it reads a message (the reader,
// pgproto3.Backend) and runs it to completion (the executor methods) before
// reading the next.
type conn struct {
	srv  *Server
	raw  net.Conn // the accepted socket; Server.Close closes it
	nc   net.Conn // raw, or the TLS connection over it
	be   *pgproto3.Backend
	sr   *sockReader // what be reads through (decode.go)
	sess engine.SessionAPI

	pid    uint32
	secret [4]byte

	// mu guards running: the cancel function of the statement executing now,
	// called by a CancelRequest arriving on another connection.
	mu      sync.Mutex
	running context.CancelFunc
	// terminated is set by pg_terminate_backend (activity.go).
	terminated atomic.Bool

	stmts   map[string]*statement // prepared statements by name ("" unnamed)
	portals map[string]*portal    // portals by name ("" unnamed)
	// skipToSync is set after an error in extended query mode: messages are
	// discarded until the next Sync.
	skipToSync bool

	fo   types.FormatOptions // the session's formatting, refreshed per statement
	wbuf []byte              // scratch buffer for DataRow and CopyData encoding
	// paramStatus holds reportable parameters changed since the last
	// ReadyForQuery; they are sent just before it, as PostgreSQL does.
	paramStatus map[string]string
	// ioErr is the first failure to write to or read from the client; once
	// set the connection ends after the current message.
	ioErr error

	accepted time.Time
	maxBody  int // the message size limit (small until authenticated)
	// holdsSlot, spoke and authenticated are guarded by srv.mu
	// (limits.go); spoke: its startup packet has been read.
	holdsSlot, spoke, authenticated bool
	// notices holds the notices expression evaluation raised (a PL/pgSQL
	// RAISE), sent at the next safe point (drainNotices).
	notices pgerr.NoticeQueue
}

// serveConn runs one connection from its startup packet to its end.
func (s *Server) serveConn(nc net.Conn) {
	defer nc.Close()
	defer func() {
		// Statement panics are recovered where they happen; this is the last
		// line that keeps a bug in one connection from ending the process.
		if r := recover(); r != nil {
			s.logf("wire: connection from %s: panic: %v\n%s", nc.RemoteAddr(), r, debug.Stack())
		}
	}()
	c := &conn{
		srv:      s,
		raw:      nc,
		nc:       nc,
		stmts:    map[string]*statement{},
		portals:  map[string]*portal{},
		accepted: time.Now(),
		maxBody:  maxAuthMessage,
	}
	c.newBackend(nc)
	admitted, closing := s.admit(c)
	if closing {
		return
	}
	defer s.untrack(c)
	if !admitted {
		s.reject(c)
		return
	}
	// Everything up to the end of authentication must be done by then.
	_ = nc.SetDeadline(c.accepted.Add(s.opts.AuthenticationTimeout))
	st, ok, err := c.readStartup()
	if err != nil || !ok {
		if err != nil && !isEOF(err) && !s.closing() {
			s.logf("wire: startup from %s: %v", nc.RemoteAddr(), c.authTimeout(err))
		}
		return
	}
	s.spoke(c)
	method, hbaErr := c.checkHBA(st) // hba.go
	if hbaErr != nil {
		err := c.fatal(hbaErr)
		s.logf("wire: refused %q from %s: %v", st.user, nc.RemoteAddr(), err)
		return
	}
	if err := c.authenticate(st.user, method); err != nil {
		s.logf("wire: authentication of %q from %s: %v", st.user, nc.RemoteAddr(), c.authTimeout(err))
		return
	}
	sess, err := s.newSession(st.user, st.database, st.params)
	if err != nil {
		_ = c.fatal(toPgErr(err))
		return
	}
	c.sess = sess
	defer c.closeSession()
	if err := s.authenticatedAs(c, isSuperuser(sess)); err != nil {
		_ = c.fatal(toPgErr(err))
		return
	}
	c.setMaxBody(s.opts.MaxMessageSize)
	if !s.register(c) {
		_ = c.fatal(pgerr.New(pgerr.AdminShutdown, "the database system is shutting down"))
		return
	}
	defer s.unregister(c)
	if err := c.greet(st); err != nil {
		return
	}
	if err := c.run(); err != nil && !isEOF(err) {
		s.logf("wire: pid %d: %v", c.pid, err)
	}
}

// newBackend reads and writes messages over rw (the socket, or TLS over
// it) through a sockReader and a framer (framer.go).
func (c *conn) newBackend(rw io.ReadWriter) {
	c.sr = &sockReader{r: rw}
	c.be = pgproto3.NewBackend(newFramer(c.sr, &c.maxBody), rw)
	c.be.SetMaxBodyLen(c.maxBody)
}

// setMaxBody bounds the messages read from now on.
func (c *conn) setMaxBody(n int) {
	c.maxBody = n
	c.be.SetMaxBodyLen(n)
}

// authTimeout names a deadline error before login for the log.
func (c *conn) authTimeout(err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() && !c.srv.closing() {
		return fmt.Errorf("authentication timeout (%s): connection closed", c.srv.opts.AuthenticationTimeout)
	}
	return err
}

// isSuperuser reads the session's is_superuser (on unless it says off:
// sessions without roles trust everyone).
func isSuperuser(sess engine.SessionAPI) bool {
	return sess.ParamStatus()["is_superuser"] != "off"
}

// hostOf is the client's IP address (for messages and throttling).
func hostOf(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// closeSession closes every portal and then the session (which rolls back
// an open transaction).
func (c *conn) closeSession() {
	for name := range c.portals {
		c.dropPortal(name)
	}
	c.sess.Close()
}

func isEOF(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed)
}

// run is the message loop. It returns when the client terminates or the
// connection fails.
func (c *conn) run() error {
	for {
		msg, err := c.be.Receive()
		if err != nil && c.malformedMessage(err) {
			if err := c.reportMalformed(err); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return c.readError(err)
		}
		if c.terminated.Load() { // pg_terminate_backend: nothing more runs
			return c.fatal(errShutdown)
		}
		if c.skipToSync {
			switch msg.(type) {
			case *pgproto3.Sync, *pgproto3.Terminate:
			default:
				continue
			}
		}
		if err := c.dispatch(msg); err != nil {
			return err
		}
		if c.ioErr != nil {
			return c.ioErr
		}
	}
}

// errTerminate ends the message loop without an error to log.
var errTerminate = io.EOF

// dispatch runs one message. Errors it returns end the connection; errors of
// statements are reported to the client inside.
func (c *conn) dispatch(msg pgproto3.FrontendMessage) error {
	switch m := msg.(type) {
	case *pgproto3.Query:
		return c.simpleQuery(m.String)
	case *pgproto3.Parse:
		return c.parse(m)
	case *pgproto3.Bind:
		return c.bind(m)
	case *pgproto3.Describe:
		return c.describe(m)
	case *pgproto3.Execute:
		return c.execute(m)
	case *pgproto3.Close:
		return c.closeMsg(m)
	case *pgproto3.Sync:
		return c.sync()
	case *pgproto3.Flush:
		return c.flush()
	case *pgproto3.Terminate:
		return errTerminate
	case *pgproto3.CopyData, *pgproto3.CopyDone, *pgproto3.CopyFail:
		// Left over from a COPY that failed: ignored, as PostgreSQL does.
		return nil
	case *pgproto3.FunctionCall:
		return c.extendedError(pgerr.Unsupported("fastpath function calls are not supported"))
	default:
		return c.fatal(pgerr.New(pgerr.ProtocolViolation, "invalid frontend message type %d", typeByte(msg)))
	}
}

// readError reports a malformed or oversized message (FATAL 08P01) and
// returns the error that ends the connection. (PostgreSQL closes silently on
// a bad length; we say why first.)
func (c *conn) readError(err error) error {
	if isEOF(err) {
		return err
	}
	if c.ending() {
		return c.fatal(errShutdown)
	}
	var tooBig *pgproto3.ExceededMaxBodyLenErr
	if errors.As(err, &tooBig) || strings.HasPrefix(err.Error(), "invalid message length") {
		return c.fatal(pgerr.New(pgerr.ProtocolViolation, "invalid message length"))
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return err
	}
	// pgproto3 reports an unknown type as text; PostgreSQL names its code.
	if t, ok := strings.CutPrefix(err.Error(), "unknown message type: "); ok && len(t) == 1 {
		return c.fatal(pgerr.New(pgerr.ProtocolViolation, "invalid frontend message type %d", t[0]))
	}
	return c.fatal(pgerr.New(pgerr.ProtocolViolation, "invalid frontend message: %v", err))
}

// transactionFailer is implemented by sessions that can be told about an
// error they did not return themselves (a syntax error, a bad Bind
// parameter, a failure while reading result rows), so that an open
// transaction block enters the failed state as in PostgreSQL.
type transactionFailer interface{ FailTransaction() }

// sendError reports a statement error; the transaction block, if any, fails.
func (c *conn) sendError(err error) {
	if c.ioErr != nil {
		return // the connection is ending; nothing more can reach the client
	}
	if c.ending() {
		c.ioErr = c.fatal(errShutdown) // the statement was canceled by Close or pg_terminate_backend
		return
	}
	c.drainNotices()
	c.be.Send(errorResponse(err))
	if tf, ok := c.sess.(transactionFailer); ok {
		_ = c.call(func() error { tf.FailTransaction(); return nil })
	}
}

// extendedError reports an error in extended query mode and discards
// messages until Sync.
func (c *conn) extendedError(err error) error {
	c.sendError(err)
	c.skipToSync = true
	return nil
}

// flush writes what was sent so far to the client, remembering a failure.
func (c *conn) flush() error {
	if c.ioErr != nil {
		return c.ioErr
	}
	if err := c.be.Flush(); err != nil {
		c.ioErr = err
		return err
	}
	return nil
}

// call runs f, a call into the session or one of its iterators, turning a
// panic into an XX000 error.
func (c *conn) call(f func() error) (err error) {
	defer c.recoverTo(&err)
	return f()
}

// errShutdown ends connections when the server closes.
var errShutdown = pgerr.New(pgerr.AdminShutdown, "terminating connection due to administrator command")

// errNoResult reports a session that returned neither a result nor an error.
var errNoResult = errors.New("session returned no result")

// readyForQuery sends ReadyForQuery with the session's transaction status
// and flushes.
func (c *conn) readyForQuery() error {
	if len(c.paramStatus) > 0 {
		names := make([]string, 0, len(c.paramStatus))
		for k := range c.paramStatus {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			c.be.Send(&pgproto3.ParameterStatus{Name: k, Value: c.paramStatus[k]})
		}
		clear(c.paramStatus)
	}
	c.reportIdle() // activity.go
	c.be.Send(&pgproto3.ReadyForQuery{TxStatus: byte(c.sess.TxStatus())})
	return c.flush()
}

// startStatement returns the context for one statement run: canceled by a
// CancelRequest, by Server.Close or by the returned done function.
func (c *conn) startStatement() (ctx context.Context, done func()) {
	ctx, cancel := context.WithCancel(c.srv.ctx)
	ctx = engine.WithNotices(ctx, c.sendNotice)
	ctx = pgerr.WithNoticeQueue(ctx, &c.notices)
	c.setRunning(cancel)
	return ctx, func() {
		c.setRunning(nil)
		cancel()
	}
}

func (c *conn) setRunning(cancel context.CancelFunc) {
	c.mu.Lock()
	c.running = cancel
	c.mu.Unlock()
}

// cancelRunning cancels the statement running now, if any. Safe to call
// from any goroutine.
func (c *conn) cancelRunning() {
	c.mu.Lock()
	if c.running != nil {
		c.running()
	}
	c.mu.Unlock()
}

// sendNotice sends a notice while a statement runs (engine.WithNotices):
// called on the connection's goroutine, from inside Execute.
// drainNotices sends the notices queued by expression evaluation.
func (c *conn) drainNotices() {
	for _, n := range c.notices.Take() {
		c.be.Send(noticeResponse(n))
	}
}

func (c *conn) sendNotice(n *pgerr.Error) {
	c.be.Send(noticeResponse(n))
	_ = c.flush() // a failure is remembered and ends the statement's result
}

// sendResultExtras sends a result's notices and changed parameters.
func (c *conn) sendResultExtras(res *engine.Result) {
	for _, n := range res.Notices {
		c.be.Send(noticeResponse(n))
	}
	for k, v := range res.ParamStatus {
		if c.paramStatus == nil {
			c.paramStatus = map[string]string{}
		}
		c.paramStatus[k] = v
	}
}

// typeByte is the protocol identifier of a frontend message, for errors.
func typeByte(msg pgproto3.FrontendMessage) byte {
	switch msg.(type) {
	case *pgproto3.Query:
		return 'Q'
	case *pgproto3.Parse:
		return 'P'
	case *pgproto3.Bind:
		return 'B'
	case *pgproto3.Describe:
		return 'D'
	case *pgproto3.Execute:
		return 'E'
	case *pgproto3.Close:
		return 'C'
	case *pgproto3.Sync:
		return 'S'
	case *pgproto3.Flush:
		return 'H'
	case *pgproto3.Terminate:
		return 'X'
	case *pgproto3.FunctionCall:
		return 'F'
	case *pgproto3.CopyData:
		return 'd'
	case *pgproto3.CopyDone:
		return 'c'
	case *pgproto3.CopyFail:
		return 'f'
	}
	return 'p'
}

// protocolError is a client message that makes no sense in this state.
func protocolError(format string, args ...any) *pgerr.Error {
	return pgerr.New(pgerr.ProtocolViolation, format, args...)
}

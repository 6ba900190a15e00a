package netx

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/streamsql/streamsql/exec/stream"
	"github.com/streamsql/streamsql/pgerr"
)

// Frame types.
const (
	fHello     byte = 1 // sender -> receiver: version u16, generation u64, stream id
	fWelcome   byte = 2 // receiver -> sender: initial credit u32
	fChunk     byte = 3 // flags u8, ops count u32, ops, Arrow IPC message(s)
	fWatermark byte = 4 // col i64, value i64
	fBarrier   byte = 5 // epoch u64, checkpoint u8
	fCredit    byte = 6 // receiver -> sender: more credit u32
	fHeartbeat byte = 7 // either way, empty
	fEnd       byte = 8 // sender -> receiver: no more messages
	fEndAck    byte = 9 // receiver -> sender: every message arrived
	fError     byte = 10
)

// version is the protocol version of Hello.
const version = 1

// maxFrame bounds a frame's payload (a corrupt length fails the stream
// instead of allocating it).
const maxFrame = 1 << 30

// Chunk frame flags.
const (
	flagSchema = 1 // the IPC bytes begin with a schema message (a new IPC stream)
	flagOps    = 2 // the ops are present (else every row is an Insert)
)

// Options configure both ends of a stream. The zero value is usable.
type Options struct {
	// Credits is the receiver's window: how many messages the sender may
	// send before the consumer takes one (0: stream.ChannelSize).
	Credits int
	// Heartbeat is the interval of heartbeats (0: 500 ms).
	Heartbeat time.Duration
	// Timeout fails a stream whose peer sent nothing for this long, and
	// bounds every write and the connection's setup (0: 5 s).
	Timeout time.Duration
	// ConnectTimeout bounds how long a stream's two ends wait for each
	// other at the start: a Dial retrying a refused connection, a
	// connection waiting for its Expect, an Expect waiting for its sender
	// (0: Timeout). Nodes start their parts of a job independently.
	ConnectTimeout time.Duration
	// Generation is the assignment generation: a Server refuses a sender
	// whose generation differs from its own (a zombie of an older
	// assignment).
	Generation uint64
}

func (o Options) credits() int {
	if o.Credits <= 0 {
		return stream.ChannelSize
	}
	return o.Credits
}

func (o Options) heartbeat() time.Duration {
	if o.Heartbeat <= 0 {
		return 500 * time.Millisecond
	}
	return o.Heartbeat
}

func (o Options) connectTimeout() time.Duration {
	if o.ConnectTimeout <= 0 {
		return o.timeout()
	}
	return o.ConnectTimeout
}

func (o Options) timeout() time.Duration {
	if o.Timeout <= 0 {
		return 5 * time.Second
	}
	return o.Timeout
}

// errEnded is returned by Send after Close.
var errEnded = errors.New("netx: stream closed")

// conn is one end of a stream's connection: framed writes under a mutex
// (the owner's goroutine, the heartbeat and credit writers), framed reads by
// one goroutine. Every write and every read has a deadline.
type conn struct {
	nc      net.Conn
	timeout time.Duration
	r       *bufio.Reader
	wmu     sync.Mutex // guards w, hdr
	w       *bufio.Writer
	hdr     [5]byte
	payload []byte // the last frame read (reused; read goroutine only)
}

func newConn(nc net.Conn, timeout time.Duration) *conn {
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	return &conn{nc: nc, timeout: timeout, r: bufio.NewReaderSize(nc, 64<<10), w: bufio.NewWriterSize(nc, 64<<10)}
}

// write sends one frame whose payload is the concatenation of parts.
func (c *conn) write(t byte, parts ...[]byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	c.hdr[0] = t
	binary.BigEndian.PutUint32(c.hdr[1:], uint32(n))
	_ = c.nc.SetWriteDeadline(time.Now().Add(c.timeout))
	if _, err := c.w.Write(c.hdr[:]); err != nil {
		return err
	}
	for _, p := range parts {
		if _, err := c.w.Write(p); err != nil {
			return err
		}
	}
	return c.w.Flush()
}

// read returns the next frame; its payload is valid until the next read.
func (c *conn) read(deadline time.Duration) (byte, []byte, error) {
	_ = c.nc.SetReadDeadline(time.Now().Add(deadline))
	var h [5]byte
	if _, err := io.ReadFull(c.r, h[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(h[1:])
	if n > maxFrame {
		return 0, nil, fmt.Errorf("frame of %d bytes", n)
	}
	if cap(c.payload) < int(n) {
		c.payload = make([]byte, n)
	}
	p := c.payload[:n]
	if _, err := io.ReadFull(c.r, p); err != nil {
		return 0, nil, err
	}
	return h[0], p, nil
}

// encoder turns messages into frames (one per sender; not concurrent).
type encoder struct {
	schema *arrow.Schema
	ipc    *ipc.Writer
	buf    bytes.Buffer
	head   []byte
}

// encode returns the frame type and payload parts of m (valid until the
// next encode).
func (e *encoder) encode(m stream.Message) (byte, [][]byte, error) {
	switch m.Kind {
	case stream.KindWatermark:
		e.head = binary.BigEndian.AppendUint64(e.head[:0], uint64(int64(m.Watermark.Col)))
		e.head = binary.BigEndian.AppendUint64(e.head, uint64(m.Watermark.Value))
		return fWatermark, [][]byte{e.head}, nil
	case stream.KindBarrier:
		e.head = binary.BigEndian.AppendUint64(e.head[:0], m.Barrier.Epoch)
		var ck byte
		if m.Barrier.Checkpoint {
			ck = 1
		}
		e.head = append(e.head, ck)
		return fBarrier, [][]byte{e.head}, nil
	case stream.KindChunk:
	default:
		return 0, nil, fmt.Errorf("message of kind %d", m.Kind)
	}
	c := m.Chunk
	var flags byte
	sch := c.Rec.Schema()
	if e.ipc == nil || (sch != e.schema && !sch.Equal(e.schema)) {
		if e.ipc != nil {
			_ = e.ipc.Close()
		}
		e.schema = sch
		e.ipc = ipc.NewWriter(&e.buf, ipc.WithSchema(sch))
		flags |= flagSchema
	}
	e.buf.Reset()
	if err := e.ipc.Write(c.Rec); err != nil {
		e.ipc = nil // start a new IPC stream next time
		return 0, nil, fmt.Errorf("arrow ipc: %w", err)
	}
	if c.Ops != nil {
		flags |= flagOps
	}
	e.head = append(e.head[:0], flags)
	e.head = binary.BigEndian.AppendUint32(e.head, uint32(len(c.Ops)))
	var ops []byte
	if c.Ops != nil {
		ops = opsBytes(c.Ops)
	}
	return fChunk, [][]byte{e.head, ops, e.buf.Bytes()}, nil
}

// decoder turns frames back into messages (one per receiver).
type decoder struct {
	ipc  *ipc.Reader
	feed bytes.Reader
}

// decode returns the message of a data frame.
func (d *decoder) decode(t byte, p []byte) (stream.Message, error) {
	switch t {
	case fWatermark:
		if len(p) != 16 {
			return stream.Message{}, fmt.Errorf("watermark frame of %d bytes", len(p))
		}
		return stream.WatermarkMsg(stream.Watermark{Col: int(int64(binary.BigEndian.Uint64(p))), Value: int64(binary.BigEndian.Uint64(p[8:]))}), nil
	case fBarrier:
		if len(p) != 9 {
			return stream.Message{}, fmt.Errorf("barrier frame of %d bytes", len(p))
		}
		return stream.BarrierMsg(stream.Barrier{Epoch: binary.BigEndian.Uint64(p), Checkpoint: p[8] == 1}), nil
	case fChunk:
	default:
		return stream.Message{}, fmt.Errorf("unexpected frame type %d", t)
	}
	if len(p) < 5 {
		return stream.Message{}, fmt.Errorf("chunk frame of %d bytes", len(p))
	}
	flags := p[0]
	nops := int(binary.BigEndian.Uint32(p[1:5]))
	p = p[5:]
	var ops []stream.Op
	if flags&flagOps != 0 {
		if nops > len(p) {
			return stream.Message{}, fmt.Errorf("chunk frame: %d ops in %d bytes", nops, len(p))
		}
		ops = make([]stream.Op, nops)
		for i, b := range p[:nops] {
			if b > byte(stream.UpdateAfter) {
				return stream.Message{}, fmt.Errorf("chunk frame: row op %d", b)
			}
			ops[i] = stream.Op(b)
		}
		p = p[nops:]
	}
	d.feed.Reset(p)
	if flags&flagSchema != 0 {
		if d.ipc != nil {
			d.ipc.Release()
		}
		r, err := ipc.NewReader(&d.feed)
		if err != nil {
			d.ipc = nil
			return stream.Message{}, fmt.Errorf("arrow ipc schema: %w", err)
		}
		d.ipc = r
	} else if d.ipc == nil {
		return stream.Message{}, errors.New("chunk frame before any schema")
	}
	if !d.ipc.Next() {
		err := d.ipc.Err()
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return stream.Message{}, fmt.Errorf("arrow ipc record batch: %w", err)
	}
	if d.feed.Len() != 0 {
		return stream.Message{}, fmt.Errorf("chunk frame: %d bytes after the record batch", d.feed.Len())
	}
	rec := d.ipc.RecordBatch()
	rec.Retain()
	if ops != nil && len(ops) != int(rec.NumRows()) {
		return stream.Message{}, fmt.Errorf("chunk frame: %d ops for %d rows", len(ops), rec.NumRows())
	}
	// Null counts are in the IPC metadata; compute none lazily later.
	return stream.ChunkMsg(&stream.Chunk{Rec: rec, Ops: ops}), nil
}

func (d *decoder) close() {
	if d.ipc != nil {
		d.ipc.Release()
		d.ipc = nil
	}
}

// opsBytes is ops as bytes (stream.Op is a uint8).
func opsBytes(ops []stream.Op) []byte {
	b := make([]byte, len(ops))
	for i, o := range ops {
		b[i] = byte(o)
	}
	return b
}

// peerError is the error a stream fails with when its connection does.
func peerError(id, peer, what string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		err = fmt.Errorf("connection closed before the end of the stream: %w", err)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		err = fmt.Errorf("peer silent past the timeout: %w", err)
	}
	return pgerr.Wrap(err, pgerr.ConnectionException, "exchange stream %s with %s: %s: %v", id, peer, what, err)
}

// protocolError is the error of a frame that breaks the protocol.
func protocolError(id, peer string, err error) error {
	return pgerr.Wrap(err, pgerr.ProtocolViolation, "exchange stream %s with %s: %v", id, peer, err)
}

// remoteError is the error the peer reported (an Error frame: its
// SQLSTATE, then its message); it keeps the peer's SQLSTATE.
func remoteError(id, peer string, p []byte) error {
	code := pgerr.ConnectionException
	if len(p) >= 5 {
		code, p = pgerr.Code(p[:5]), p[5:]
	}
	return pgerr.New(code, "exchange stream %s: %s failed: %s", id, peer, p)
}
